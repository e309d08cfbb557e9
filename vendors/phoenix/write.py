"""Canonical rows -> Phoenix dataset examples, as `create_dataset(examples=[...])` takes them.

`build_example` is also what the reader re-runs to tell an edit made in Phoenix from the copy
evalconv carried.
"""
from __future__ import annotations

from typing import Any, TextIO

from evalconv.canonical.format import LineWriter as BaseLineWriter
from evalconv.canonical import jsonvalue
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.row import Row
from evalconv.canonical.validator import review_mark

from .._common import records as rec
from .._common.grading import effective_evaluator
from .fields import CARRIED, INPUT_KEY, OUTPUT_KEY, VENDOR

STARTER_KEY = "starter_example"  # tells a Phoenix user (the UI, an evaluator) the row is a starter
# envelope markers: which of input / output evalconv wrapped, and an absent expected value
WRAPPED, ABSENT = "wrapped", "absent"


def extension(row: Row) -> dict[str, Any]:
    ext = row.case.get("extensions", {}).get(VENDOR)
    return ext if isinstance(ext, dict) else {}


def output_key(case: Any) -> str:
    """The key a non-dict expected value goes under: the one the Phoenix file used (kept in
    extensions.phoenix.outputKey when evalconv read it), else "expected"."""
    ext = case.get("extensions", {}).get(VENDOR) if isinstance(case, dict) else None
    key = ext.get("outputKey") if isinstance(ext, dict) else None
    return key if isinstance(key, str) and key else OUTPUT_KEY


def build_example(row: Row, report: LossReporter | None) -> dict[str, Any]:
    envelope: dict[str, Any] = {}
    example: dict[str, Any] = {"id": row.id}
    if isinstance(row.input, dict):
        example["input"] = row.input
    else:
        example["input"] = {INPUT_KEY: row.input}
        envelope["input"] = WRAPPED
    if not row.has_expected:
        example["output"] = {}
        envelope["output"] = ABSENT
    elif isinstance(row.expected, dict):
        example["output"] = row.expected
    else:
        example["output"] = {output_key(row.case): row.expected}
        envelope["output"] = WRAPPED
    metadata = row.metadata
    mark = review_mark(row.case)
    if mark and STARTER_KEY not in metadata:  # a mark for people, dropped on read
        metadata = {**metadata, STARTER_KEY: mark}
        envelope["starter"] = True
    example["metadata"] = rec.add_envelope(metadata, envelope)
    ext = extension(row)
    for key in ("splits", "span_id"):
        if key in ext and _fits(key, ext[key]):
            example[key] = ext[key]
    if report is not None:
        note_carried(row, report)
    return example


def note_carried(row: Row, report: LossReporter) -> None:
    """The fields an example carries in its metadata, noted."""
    generic = CARRIED["$.metadata.case.caseId"]
    report.carry_all(((f"$.metadata.case.{name}", CARRIED.get(f"$.metadata.case.{name}", generic))
                      for name in row.case), row.id)
    if rec.ENVELOPE in row.metadata:
        report.carry("$.metadata.evalconv", row.id, CARRIED["$.metadata.evalconv"])


def _fits(key: str, value: Any) -> bool:
    """What create_dataset takes: splits a name or a list of names, span_id a text."""
    if key == "span_id":
        return isinstance(value, str)
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def check_row(row: Row) -> None:
    """Refuse, before anything is noted, a value Phoenix's JSON cannot hold (NaN, infinities)."""
    rec.check_value(row.input, row.id, "$.input", "Phoenix")
    if row.has_expected:
        rec.check_value(row.expected, row.id, "$.expected", "Phoenix")
    rec.check_value(row.metadata, row.id, "$.metadata", "Phoenix")


class ExampleWriter(BaseLineWriter):
    """Streams examples as JSONL, one `create_dataset` example a line."""

    joins = None

    def __init__(self, out: TextIO, report: LossReporter) -> None:
        super().__init__(out)  # LineWriter.write: encode, the first row's joins, keep
        self._out, self._report = out, report
        self._checked = self._unchecked = 0

    def encode(self, row: Row) -> tuple[str, bool]:
        check_row(row)
        return jsonvalue.dumps(build_example(row, self._report)) + "\n", program_checks(row)

    def keep(self, kept: bool) -> None:
        if kept:
            self._checked += 1
        else:
            self._unchecked += 1

    def close(self) -> None:
        if self._checked or self._unchecked:
            self._report.notice(NO_GRADER.format(checked=self._checked, unchecked=self._unchecked))


NO_GRADER = ("Phoenix checks nothing on a dataset example: run an experiment with an evaluator. "
             "evalconv.vendors.phoenix.evaluators.case_check checks {checked} of these cases (reference, "
             "acceptable set, tool calls) and leaves {unchecked} unscored, never passed (judged and rubric "
             "cases, final states, cases a person grades)")


def program_checks(row: Row) -> bool:
    """Does case_check score this row (a program can check it), rather than leave it unscored?"""
    evaluator, _ = effective_evaluator(row)
    oracle = row.case["oracleType"]
    return (evaluator in ("exact-or-programmatic", "trajectory-or-state-check") and row.has_expected
            and oracle in ("reference-answer", "acceptable-set", "expected-tool-calls"))

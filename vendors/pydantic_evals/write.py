"""Canonical rows -> a pydantic-evals Dataset file (YAML or JSON, as `Dataset.from_file` reads it).

Each row is one case: `name` (the id), `inputs` (what the task sees), `metadata` (the canonical
metadata with the case profile, for evaluators only), `expected_output`, and the `evaluators`
`evaluators.plan` chooses from the oracle type. The file is written a case at a time.
"""
from __future__ import annotations

import functools
from typing import Any, TextIO

from evalconv.canonical.format import LineWriter as BaseLineWriter
from evalconv.canonical import jsonvalue
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.row import Row
from evalconv.canonical.validator import review_mark

from .._common import records as rec
from .._common.yaml_emit import Reused, yaml_item
from .evaluators import EQUALS_EXPECTED, NOT_CHECKED_PREFIX, Plan, normal_form, not_checked, plan
from .fields import CARRIED, STARTER_KEY

YAML_JOINS = ("cases:\n-", "-")  # a block sequence under `cases:`; the key comes with the first case
JSON_JOINS = ('{"cases": [\n  ', ",\n  ")

TRACED_NOTICE = ("pydantic-evals' tool evaluators (ToolCorrectness, TrajectoryMatch, ArgumentCorrectness) read the "
                 "run's OpenTelemetry spans: run the task instrumented (logfire, or a pydantic-ai agent) or they "
                 "fail; TrajectoryMatch's order check is a score (1.0 or 0.0), not an assertion")
KEPT_NOTICE = ("evaluators kept from a pydantic-evals file (metadata.case.extensions.pydantic-evals.evaluators) are "
               "written as they are, not derived from the oracle type")
UNACCEPTABLE_NOTICE = ("unacceptableBehavior is not checked by pydantic-evals' programmatic evaluators (only an "
                       "LLMJudge reads it); it is carried in metadata.case")


def blocked_notice(reason: str) -> str:
    return (f"pydantic-evals cannot check these cases: {reason}; each gets an assertion that always fails, "
            f"named '{NOT_CHECKED_PREFIX}...'")


# case field -> (its path, why it is carried), made once per field instead of once a row
_CASE_CARRIED: dict[str, tuple[str, str]] = {}


def _case_carried(name: str) -> tuple[str, str]:
    path = f"$.metadata.case.{name}"
    found = _CASE_CARRIED[name] = (path, CARRIED[path])
    return found


def build_case(row: Row, report: LossReporter) -> dict[str, Any]:
    """The pydantic-evals case of one row (its losses and notices noted in `report`); a row holding
    NaN or an infinity is refused before anything is noted."""
    # The JSON the fingerprints digest covers the whole row but its id: it tells check_value's quick look too
    inputs = rec.sorted_json(row.input)
    expected = rec.sorted_json(row.expected) if row.has_expected else None
    metadata_json = {key: rec.sorted_json(value) for key, value in row.metadata.items()}
    rec.check_row(row, "pydantic-evals", inputs, expected, metadata_json)
    chosen = plan(row)
    envelope: dict[str, Any] = {}
    case: dict[str, Any] = {"name": row.id, "inputs": row.input}
    metadata = row.metadata
    mark = review_mark(row.case)
    if mark and STARTER_KEY not in metadata:  # a mark for people, dropped on read
        metadata = {**metadata, STARTER_KEY: mark}
        envelope["starter"] = True
    if row.has_expected and row.expected is None:
        envelope["expectedNull"] = True
    specs, specs_sum = _specs_and_sum(chosen)
    # inputs, expected_output and the evaluators have no other copy: their fingerprints tell an edit
    sums = envelope[rec.SUMS] = {"inputs": rec.fingerprint(row.input, inputs)}
    if row.has_expected:
        sums["expected_output"] = rec.fingerprint(row.expected, expected)
    sums["evaluators"] = specs_sum
    sums["metadata"] = rec.metadata_sums(row.metadata, metadata_json)
    case["metadata"] = rec.add_envelope(metadata, envelope)
    if row.has_expected:
        case["expected_output"] = row.expected
    case["evaluators"] = specs
    carried = [_CASE_CARRIED.get(name) or _case_carried(name) for name in row.case]
    if rec.ENVELOPE in row.metadata:
        carried.append(("$.metadata.evalconv", CARRIED["$.metadata.evalconv"]))
    report.carry_all(carried, row.id)
    if chosen.blocked:
        report.notice_row(blocked_notice(chosen.blocked), row.id)
    if chosen.traced:
        report.notice_row(TRACED_NOTICE, row.id)
    if chosen.kept:
        report.notice_row(KEPT_NOTICE, row.id)
    elif chosen.evaluator != "llm-judge" and row.case_fields.get("unacceptableBehavior"):
        report.notice_row(UNACCEPTABLE_NOTICE, row.id)
    return case


# Most rows' evaluators are one of a few constant lists: each is one shared `Reused` object, whose
# YAML the emitter writes once, with its fingerprint made once.
_EQUALS_SPECS = Reused([EQUALS_EXPECTED])
_EQUALS = (_EQUALS_SPECS, rec.fingerprint(_EQUALS_SPECS))


@functools.lru_cache(maxsize=256)
def _not_checked_specs(reason: str) -> tuple[Reused, str]:
    specs = Reused([not_checked(reason)])
    return specs, rec.fingerprint(specs)


def _specs_and_sum(chosen: Plan) -> tuple[list[Any], str]:
    """The plan's specs (a shared constant list where they are one) and their fingerprint."""
    if chosen.blocked:
        return _not_checked_specs(chosen.blocked)
    if len(chosen.specs) == 1 and chosen.specs[0] is EQUALS_EXPECTED:
        return _EQUALS
    return chosen.specs, rec.fingerprint(_normal_specs(chosen))


def _normal_specs(chosen: Plan) -> list[Any]:
    """The plan's specs in normal form: evalconv's own are (`short_form` made them); kept ones may not be."""
    return [normal_form(s) for s in chosen.specs] if chosen.kept else chosen.specs


class DatasetWriter(BaseLineWriter):
    """Streams the cases: YAML (the default) or JSON, as the output's name says."""

    def __init__(self, out: TextIO, report: LossReporter, variant: str) -> None:
        super().__init__(out)  # LineWriter.write: encode, the first row's joins, keep
        self._out, self._report, self._variant = out, report, variant
        self._count = 0
        self.joins: tuple[str, str] | None = JSON_JOINS if variant == "json" else YAML_JOINS

    def encode(self, row: Row) -> tuple[str, None]:
        case = build_case(row, self._report)
        if self._variant == "json":
            return JSON_JOINS[1] + jsonvalue.dumps(case, indent=True).replace("\n", "\n  "), None
        return yaml_item(case), None

    def keep(self, kept: None) -> None:
        self._count += 1

    def close(self) -> None:
        if self._variant == "json":
            self._out.write("\n]}\n" if self._count else '{"cases": []}\n')
        elif not self._count:
            self._out.write("cases: []\n")

"""Canonical rows -> Inspect AI samples (JSONL, a JSON array, or csv_dataset's CSV).

`build_sample` is also what the reader re-runs to tell an edit made in Inspect from the copy
evalconv carried: a native value that differs from what this module writes was changed there.
"""
from __future__ import annotations

from typing import Any, TextIO

from evalconv.canonical import jsonvalue
from evalconv.canonical.cells import formula_looking, unguarded_formulas
from evalconv.canonical.errors import RowRefused
from evalconv.canonical.format import JSON_ARRAY_JOINS, LineWriter
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.row import Row
from evalconv.canonical.validator import review_mark

from .._common import records as rec
from .fields import (CARRIED, CARRIED_ORACLES, EXTENSION_FIELDS, MESSAGE_KEYS, MESSAGE_ROLES, NO_TARGET,
                     NO_TARGET_CSV, REASONS, VENDOR)

# csv_dataset reads an empty files/sandbox/setup/choices cell as a value (an empty files cell
# fails to load), so the CSV has only these columns; the sample fields stay carried in
# metadata.case.extensions.inspect (JSONL writes them natively).
CSV_COLUMNS = ("id", "input", "target", "metadata")
CSV_FORMULAS = unguarded_formulas("Inspect", "csv.DictReader, in csv_dataset")
STARTER_KEY = "starter_example"  # tells an Inspect user (scorers, log viewer) the row is a starter


def chat_messages(value: Any) -> list[dict[str, Any]] | None:
    """The messages of a `{"messages": [...]}` input that Inspect keeps exactly, else None."""
    if not (isinstance(value, dict) and value.keys() == {"messages"}):
        return None
    messages = value["messages"]
    if not (isinstance(messages, list) and messages):
        return None
    for m in messages:
        if not (isinstance(m, dict) and m.keys() <= MESSAGE_KEYS and m.get("role") in MESSAGE_ROLES
                and isinstance(m.get("content"), str)):
            return None
    return messages


def extension(row: Row) -> dict[str, Any]:
    ext = row.case.get("extensions", {}).get(VENDOR)
    return ext if isinstance(ext, dict) else {}


def build_sample(row: Row, report: LossReporter, *, csv_cells: bool = False) -> dict[str, Any]:
    """The Inspect sample of one row; `csv_cells` gives csv_dataset's text cells instead."""
    if csv_cells and "\x00" in row.id:
        raise RowRefused(row.id, "a NUL cannot stand in an Inspect CSV id; write JSONL", field="$.id")
    envelope: dict[str, Any] = {}
    ext = extension(row)
    sample: dict[str, Any] = {"id": _sample_id(row.id, ext)}
    sample["input"] = _input(row, envelope, report, csv_cells)
    sample["target"] = _target(row, envelope, report, csv_cells)
    # no other copy of these: the fingerprints tell an edit made in Inspect
    envelope[rec.SUMS] = {**{key: rec.fingerprint(sample[key]) for key in _uncopied(row, envelope)},
                          "metadata": rec.metadata_sums(row.metadata)}
    for key in () if csv_cells else EXTENSION_FIELDS:
        if key in ext:
            sample[key] = ext[key]
    metadata = row.metadata
    mark = review_mark(row.case)
    if mark and STARTER_KEY not in metadata:  # a mark for people, dropped on read
        metadata = {**metadata, STARTER_KEY: mark}
        envelope["starter"] = True
    sample["metadata"] = rec.add_envelope(metadata, envelope)
    for name in row.case:
        report.carry(f"$.metadata.case.{name}", row.id, CARRIED.get(f"$.metadata.case.{name}", ""))
    if rec.ENVELOPE in row.metadata:
        report.carry("$.metadata.evalconv", row.id, CARRIED["$.metadata.evalconv"])
    return _as_cells(sample) if csv_cells else sample


def _uncopied(row: Row, envelope: dict[str, Any]) -> list[str]:
    """The sample fields written from the row with no copy in the envelope or the case profile."""
    keys = [] if "input" in envelope else ["input"]
    if row.has_expected and "expected" not in envelope and envelope.get("target") != "criteria":
        keys.append("target")
    return keys


def _sample_id(row_id: str, ext: dict[str, Any]) -> str | int:
    if ext.get("idType") == "integer" and row_id.isascii() and row_id.isdigit() and str(int(row_id)) == row_id:
        return int(row_id)
    return row_id


def _input(row: Row, envelope: dict[str, Any], report: LossReporter, csv_cells: bool) -> Any:
    value = row.input
    if isinstance(value, str) and not (csv_cells and "\x00" in value):
        if value == "":
            raise RowRefused(row.id, "Inspect refuses an empty input ('No input in dataset')",
                             field="$.input")
        if csv_cells and "\r" in value:
            envelope["input"] = value
            report.carry("$.input", row.id, REASONS["csv.cr"])
        return value
    messages = None if csv_cells else chat_messages(value)
    if messages is not None:
        return messages
    envelope["input"] = value
    report.carry("$.input", row.id, REASONS["input.text"])
    return jsonvalue.dumps(value)


def _target(row: Row, envelope: dict[str, Any], report: LossReporter, csv_cells: bool) -> Any:
    """The target text(s); a case with none gets a target no answer matches, never the "" every answer does."""
    oracle = row.case["oracleType"]
    criteria = row.case.get("evaluationCriteria")
    text = _target_text(row, oracle, criteria, envelope, report, csv_cells)
    if text is not None:
        return text
    typed = extension(row).get("target") if oracle in CARRIED_ORACLES else None  # typed in Inspect
    if (isinstance(typed, str) and typed and not (csv_cells and "\r" in typed)) or (not csv_cells and _texts(typed)):
        return typed
    return NO_TARGET_CSV if csv_cells else list(NO_TARGET)


def _target_text(row: Row, oracle: str, criteria: Any, envelope: dict[str, Any], report: LossReporter,
                 csv_cells: bool) -> Any:
    if not row.has_expected:
        if oracle == "rubric" and isinstance(criteria, list) and criteria:
            envelope["target"] = "criteria"
            return "\n".join(criteria) if csv_cells else list(criteria)
        return None
    expected = row.expected
    why = {"expected-tool-calls": "expected.calls", "expected-final-state": "expected.state",
           "expected-behavior-only": "expected.behavior"}.get(oracle)
    if why is None and isinstance(expected, str) and csv_cells and "\x00" in expected:
        why = "expected.text"  # a NUL cannot stand in a CSV line: JSON text escapes it
    elif why is None and isinstance(expected, str):
        if expected and csv_cells and "\r" in expected:
            envelope["expected"] = expected
            report.carry("$.expected", row.id, REASONS["csv.cr"])
        if expected:
            return expected
        why = "expected.empty"
    elif why is None and oracle == "acceptable-set" and _texts(expected):
        if not csv_cells:
            return list(expected)
        why = "expected.csv"
    elif why is None:
        why = "expected.text"
    envelope["expected"] = expected
    report.carry("$.expected", row.id, REASONS[why])
    return jsonvalue.dumps(expected) if why in ("expected.text", "expected.csv") else None


def _texts(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _as_cells(sample: dict[str, Any]) -> dict[str, str]:
    """csv_dataset's cells: text as is, the rest as JSON text."""
    cells = {}
    for key in CSV_COLUMNS:
        value = sample.get(key)
        if value is None:
            cells[key] = ""
        elif isinstance(value, str):
            cells[key] = value
        elif key == "id":
            cells[key] = str(value)
        else:
            cells[key] = jsonvalue.dumps(value)
    return cells


class SampleWriter(LineWriter):
    """Streams samples: JSONL (the default), a JSON array, or CSV (the variant the output's name says)."""

    def __init__(self, out: TextIO, report: LossReporter, variant: str) -> None:
        super().__init__(out)
        self._report, self._variant = report, variant
        self._count = 0
        self._csv = None
        self.joins = JSON_ARRAY_JOINS if variant == "json" else None
        if variant == "csv":
            self._csv = rec.CSVLines(dialect="unix")  # csv_dataset's default dialect
            out.write(self._csv.line(CSV_COLUMNS))

    def encode(self, row: Row) -> tuple[str, None]:
        # Refused (RowRefused) before build_sample notes anything of the row
        rec.check_value(row.input, row.id, "$.input", "Inspect")
        if row.has_expected:
            rec.check_value(row.expected, row.id, "$.expected", "Inspect")
        rec.check_value(row.metadata, row.id, "$.metadata", "Inspect")
        sample = build_sample(row, self._report, csv_cells=self._csv is not None)
        if self._csv is not None:
            cells = [sample[k] for k in CSV_COLUMNS]
            if formula_looking(cells):
                self._report.notice_row(CSV_FORMULAS, row.id)
            return self._csv.line(cells), None
        if self._variant == "jsonl":
            return jsonvalue.dumps(sample) + "\n", None
        return JSON_ARRAY_JOINS[1] + jsonvalue.dumps(sample, indent=True).replace("\n", "\n  "), None

    def keep(self, kept: None) -> None:
        self._count += 1

    def close(self) -> None:
        if self._variant == "json":
            self._out.write("\n]\n" if self._count else "[]\n")

"""Canonical rows -> Langfuse dataset items: JSONL (one `CreateDatasetItemRequest` body a line,
the default), a JSON array of them, or CSV for the UI's uploader (columns named as its export).

`build_item` is also what the reader re-runs to tell an edit made in Langfuse from what
evalconv wrote.
"""
from __future__ import annotations

import csv
import hashlib
import math
from typing import Any, TextIO

from evalconv.canonical.format import LineWriter as BaseLineWriter
from evalconv.canonical import jsonvalue, paths
from evalconv.canonical.cells import formula_looking, unguarded_formulas
from evalconv.canonical.errors import RowRefused
from evalconv.canonical.format import JSON_ARRAY_JOINS
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.row import Row
from evalconv.canonical.validator import review_mark

from .._common import records as rec
from .fields import CARRIED, CSV_COLUMNS, MAX_ID, NATIVE_EXTRAS, REASONS, STARTER_KEY, VENDOR

CSV_FORMULAS = unguarded_formulas("Langfuse", "the UI's CSV uploader")
NOT_CHECKED = ("Langfuse checks nothing per dataset item (evaluators are functions or LLM-as-a-judge set up for a "
               "run): the oracle type, expected behaviour and criteria are carried in metadata.case for them; "
               "evalconv.vendors.langfuse.evaluators.case_evaluator checks the exact oracle types in run_experiment")
_SAFE_INTEGER = 2 ** 53


def item_id(dataset: str, row_id: str) -> str:
    """The row's Langfuse id, namespaced by its dataset (ids are unique across a project), at most
    255 characters: `<dataset>:<id>`, or `<dataset, cut>:<digest>` when that would be longer."""
    candidate = f"{dataset}:{row_id}"
    if len(candidate) <= MAX_ID:
        return candidate
    digest = hashlib.sha256(candidate.encode("utf-8")).hexdigest()[:40]
    return f"{dataset[:MAX_ID - 1 - len(digest)]}:{digest}"


def js_normal(value: Any) -> Any:
    """The value as it comes back from a JavaScript JSON round trip (Langfuse's server): numbers
    are doubles, printed without a fraction when they are integral and below 1e21."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        number = float(value) if isinstance(value, float) or abs(value) > _SAFE_INTEGER else value
        if isinstance(number, float) and math.isfinite(number) and number.is_integer() and abs(number) < 1e21:
            return int(number)
        return number
    if isinstance(value, list):
        return [js_normal(v) for v in value]
    return {k: js_normal(v) for k, v in value.items()}


def changes_in_javascript(value: Any) -> bool:
    """Whether `js_normal` changes the value or a type in it: one walk that stops at the first
    number that changes (the same answer as comparing `js_normal(value)` with it, without building it)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return False
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer() and abs(value) < 1e21
    if isinstance(value, int):
        if abs(value) <= _SAFE_INTEGER:
            return False
        number = float(value)
        return not (math.isfinite(number) and number.is_integer() and abs(number) < 1e21) or int(number) != value
    if isinstance(value, list):
        return any(changes_in_javascript(v) for v in value)
    return any(changes_in_javascript(v) for v in value.values())


def _same(value: Any) -> Any:
    return value


def extension(row: Row) -> dict[str, Any]:
    ext = row.case.get("extensions", {}).get(VENDOR)
    return ext if isinstance(ext, dict) else {}


def refuse_nul(row: Row, dumped: bytes | None = None) -> None:
    """Postgres jsonb (Langfuse's store) cannot hold a NUL character. `dumped`: the row's JSON
    bytes as orjson wrote them, when the caller has them."""
    value = row.to_json()
    if dumped is None:
        dumped = jsonvalue.dumps(value).encode("utf-8")
    if b"\\u0000" not in dumped:  # JSON text escapes a NUL so: absent, no text holds one
        return
    todo: list[Any] = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str) and "\x00" in item:
            raise RowRefused(row.id, "Langfuse stores items in Postgres, which cannot hold a NUL character in text",
                             field="$")
        if isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)


def build_item(row: Row, dataset: str, report: LossReporter) -> dict[str, Any]:
    """The CreateDatasetItemRequest body of one row (its losses noted in `report`)."""
    envelope: dict[str, Any] = {"id": row.id}
    ext = extension(row)
    item: dict[str, Any] = {"id": item_id(dataset, row.id), "datasetName": dataset}
    if isinstance(ext.get("status"), str):
        item["status"] = ext["status"]
    item["input"] = row.input
    if row.has_expected:
        item["expectedOutput"] = row.expected
        if row.expected is None:
            envelope["expectedNull"] = True
    metadata = row.metadata
    mark = review_mark(row.case)
    if mark and STARTER_KEY not in metadata:  # a mark for people, dropped on read
        metadata = {**metadata, STARTER_KEY: mark}
        envelope["starter"] = True
    exact: dict[str, str] = {}
    carried: list[tuple[str, str]] = [("$.id", CARRIED["$.id"])]
    if changes_in_javascript(row.input):
        exact["input"] = jsonvalue.dumps(row.input)
        carried.append(("$.input", REASONS["numbers"]))
    if row.has_expected and changes_in_javascript(row.expected):
        exact["expectedOutput"] = jsonvalue.dumps(row.expected)
        carried.append(("$.expected", REASONS["numbers"]))
    input_changes = "input" in exact
    expected_changes = "expectedOutput" in exact
    changed = [key for key, value in row.metadata.items() if changes_in_javascript(value)]
    if changed:
        exact["metadata"] = jsonvalue.dumps({k: row.metadata[k] for k in changed})
        carried += [(paths.join("$.metadata", key), REASONS["numbers"]) for key in changed if key != "case"]
    if exact:
        envelope["exact"] = exact
    # input, expectedOutput and the metadata keys have no other copy: their fingerprints tell an edit
    # (of the value JavaScript gives back, which is the value itself unless a number in it changes)
    normal = js_normal if changed else _same
    envelope[rec.SUMS] = {"input": rec.fingerprint(js_normal(row.input) if input_changes else row.input),
                          **({"expectedOutput": rec.fingerprint(js_normal(row.expected) if expected_changes
                                                                else row.expected)} if row.has_expected else {}),
                          "metadata": rec.metadata_sums(normal(row.metadata))}
    item["metadata"] = rec.add_envelope(metadata, envelope)
    for key in NATIVE_EXTRAS[1:]:
        if isinstance(ext.get(key), str):
            item[key] = ext[key]
    carried += [(f"$.metadata.case.{name}", CARRIED[f"$.metadata.case.{name}"]) for name in row.case]
    if rec.ENVELOPE in row.metadata:
        carried.append(("$.metadata.evalconv", CARRIED["$.metadata.evalconv"]))
    report.carry_all(carried, row.id)
    return item


def csv_cells(item: dict[str, Any]) -> list[str]:
    """The CSV line of an item: text fields as they are, input, expectedOutput and metadata as
    JSON text (the UI's uploader parses a cell that is valid JSON); an absent field is empty."""
    cells = []
    for key in CSV_COLUMNS:
        if key not in item:
            cells.append("")
        elif key in ("input", "expectedOutput", "metadata"):
            cells.append(jsonvalue.dumps(item[key]))
        else:
            cells.append(item[key])
    return cells


class ItemWriter(BaseLineWriter):
    """Streams items: JSONL (the default), a JSON array, or CSV, as the output's name says."""

    def __init__(self, out: TextIO, report: LossReporter, variant: str, dataset: str) -> None:
        super().__init__(out)  # LineWriter.write: encode, the first row's joins, keep
        self._out, self._report, self._variant, self._dataset = out, report, variant, dataset
        self._count = 0
        self._csv = None
        self.joins = JSON_ARRAY_JOINS if variant == "json" else None
        if variant == "csv":
            self._csv = rec.CSVLines(lineterminator="\n", quoting=csv.QUOTE_ALL)  # every cell quoted, as Langfuse exports
            out.write(self._csv.line(CSV_COLUMNS))

    def encode(self, row: Row) -> tuple[str, None]:
        value = row.to_json()
        dumped = rec.json_bytes(value)  # one serialisation for both checks
        rec.check_value(value, row.id, "$", "Langfuse", dumped=dumped)  # refused before anything is noted
        refuse_nul(row, dumped)
        item = build_item(row, self._dataset, self._report)
        self._report.notice_row(NOT_CHECKED, row.id)
        if self._csv is not None:
            cells = csv_cells(item)
            if formula_looking(cells):
                self._report.notice_row(CSV_FORMULAS, row.id)
            return self._csv.line(cells), None
        if self._variant == "json":
            return JSON_ARRAY_JOINS[1] + jsonvalue.dumps(item, indent=True).replace("\n", "\n  "), None
        return jsonvalue.dumps(item) + "\n", None

    def keep(self, kept: None) -> None:
        self._count += 1

    def close(self) -> None:
        if self._variant == "json":
            self._out.write("\n]\n" if self._count else "[]\n")

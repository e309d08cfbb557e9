"""Phoenix dataset examples -> canonical rows: create_dataset's examples (JSONL or a JSON array),
the server's examples (with `updated_at`), Phoenix's CSV export (`input_*`, `output_*`,
`metadata_*` columns and `example_id`) and its two JSONL exports (`openai_evals`: messages +
ideal; `openai_ft`: messages + tools).

An example evalconv wrote carries its case profile in `metadata.case`; its native fields win
over the carried copies whenever they differ (an edit made in Phoenix), and the read report says
so. Any other example gets a case profile inferred from its output, each inference reported.
"""
from __future__ import annotations

import csv
from typing import Any, Iterator

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.paths import join
from evalconv.canonical.reporting import QuietLoss, ReadReporter
from evalconv.canonical.row import Row
from evalconv.canonical.source import MAX_LINE_BYTES, Lines, SourceRow

from .._common import records as rec
from .fields import CSV_ID, CSV_PREFIXES, EXAMPLE_KEYS, INPUT_KEY, OUTPUT_KEY, OUTPUT_KEYS, VENDOR
from .csv_export import CELLS, cell_text, cell_value
from .write import ABSENT, STARTER_KEY, WRAPPED, build_example, output_key

csv.field_size_limit(MAX_LINE_BYTES)
EDITED = "edited in Phoenix: the native value differs from the copy evalconv carried; the edit wins"
SERVER_FIELDS = {"updated_at": "Phoenix's revision time, not case data", "node_id": "Phoenix's node id, not case data"}


def read_examples(lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
    def build(record: dict[str, Any], index: int) -> dict[str, Any]:
        return row_value(record, index, report)

    return rec.read_records(lines, build, lambda first, rest: rec.csv_records(
        first, rest, lines, lambda record, index: row_value(_from_cells(record, index, report), index, report, True),
        required=CSV_ID, vendor="Phoenix CSV export"))


def row_value(example: dict[str, Any], index: int, report: ReadReporter, from_csv: bool = False) -> dict[str, Any]:
    """The canonical row of one example (raises RowError); `from_csv`: a row of the CSV export
    layout, which has no splits or span_id and carries the values its cells cannot give back."""
    if "input" not in example and isinstance(example.get("messages"), list):
        example = _from_openai_export(example, index, report)
    for key in ("input", "output"):
        if key not in example:
            raise RowError(f"the example has no {key} (create_dataset needs input and output)", f"$.{key}", None)
        if not isinstance(example[key], dict):
            raise RowError(f"{key} must be an object (Phoenix takes dicts only)", f"$.{key}", None)
    metadata = example.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise RowError("metadata must be an object", "$.metadata", None)
    case = metadata.get("case")
    if isinstance(case, dict) and isinstance(case.get("caseId"), str) and isinstance(case.get("oracleType"), str):
        return _own_row(example, metadata, report, from_csv)
    return _foreign_row(example, metadata, index, report)


def _own_row(example: dict[str, Any], metadata: dict[str, Any], report: ReadReporter,
             from_csv: bool = False) -> dict[str, Any]:
    row_id = metadata["case"]["caseId"]
    if example.get("id") not in (None, row_id):
        report.ignore("$.id", row_id, f"Phoenix's example id {example['id']!r} is not the case id; the case id is kept")
    envelope = metadata.get(rec.ENVELOPE)
    envelope = envelope if isinstance(envelope, dict) else {}
    if from_csv:
        _restore_cells(example, metadata, envelope.get(CELLS), row_id, report)
    meta = {k: v for k, v in metadata.items() if k != rec.ENVELOPE}
    rec.restore_shadowed(meta, envelope, (rec.ENVELOPE,))
    if envelope.get("starter"):
        meta.pop(STARTER_KEY, None)
    value: dict[str, Any] = {"id": row_id, "input": _unwrapped(example["input"], INPUT_KEY, envelope.get("input"),
                                                               "$.input", row_id, report)}
    if envelope.get("output") != ABSENT:
        value["expected"] = _unwrapped(example["output"], output_key(metadata["case"]), envelope.get("output"),
                                       "$.expected", row_id, report)
    elif example["output"] != {}:
        value["expected"] = example["output"]
        report.edit("$.expected", row_id, EDITED)
    value["metadata"] = meta
    _ignore_server_fields(example, row_id, report)
    _take_edits(value, example, report, () if from_csv else ("splits", "span_id"))
    return value


def _restore_cells(example: dict[str, Any], metadata: dict[str, Any], exact: Any, row_id: str,
                   report: ReadReporter) -> None:
    """The values the CSV's cells could not give back, from the envelope, wherever the cell still
    holds the JSON text evalconv wrote for it; otherwise the cell was edited, and the edit wins."""
    if not isinstance(exact, dict):
        return
    for part, path in (("input", "$.input"), ("output", "$.expected"), ("metadata", "$.metadata")):
        values = exact.get(part)
        where = metadata if part == "metadata" else example[part]
        for key, value in (values.items() if isinstance(values, dict) else ()):
            if jsonvalue.same(where.get(key), cell_value(cell_text(value))):
                where[key] = value
            else:
                report.edit(join(path, key) if part == "metadata" else path, row_id, EDITED)


def _unwrapped(value: dict[str, Any], key: str, marker: Any, path: str, row_id: str, report: ReadReporter) -> Any:
    """The value evalconv wrapped as {key: value}; a dict that no longer holds only that key was
    edited in Phoenix, and the dict is the value now."""
    if marker != WRAPPED:
        return value
    if value.keys() == {key}:
        return value[key]
    report.edit(path, row_id, EDITED)
    return value


def _take_edits(value: dict[str, Any], example: dict[str, Any], report: ReadReporter,
                native: tuple[str, ...]) -> None:
    """A wrapped value whose dict gained keys in Phoenix, and the `native` splits / span_id
    changed there (the CSV has neither: their carried copies stand)."""
    try:
        written = build_example(Row.from_json(value), QuietLoss())
    except Exception:  # the carried copy is not a valid row; the validator will say why
        return
    row_id, case = value["id"], value["metadata"]["case"]
    if not jsonvalue.same(written["input"], example["input"]):
        value["input"] = example["input"]
        report.edit("$.input", row_id, EDITED)
    if "expected" in value and not jsonvalue.same(written["output"], example["output"]):
        value["expected"] = example["output"]
        report.edit("$.expected", row_id, EDITED)
    for key in native:
        if not jsonvalue.same(written.get(key), example.get(key)):
            ext = case.setdefault("extensions", {}).setdefault(VENDOR, {})
            if not isinstance(ext, dict):
                continue
            if example.get(key) is None:
                ext.pop(key, None)
            else:
                ext[key] = example[key]
            report.edit(f"$.metadata.case.extensions.{VENDOR}.{key}", row_id, EDITED)


def _ignore_server_fields(example: dict[str, Any], row_id: str, report: ReadReporter) -> None:
    rec.ignore_fields(example, SERVER_FIELDS, row_id, report)
    for key in sorted(set(example) - set(EXAMPLE_KEYS) - set(SERVER_FIELDS)):
        report.ignore(f"$.{key}", row_id, "not a field of a Phoenix example")


def _foreign_row(example: dict[str, Any], metadata: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    raw_id = example.get("id")
    if isinstance(raw_id, str) and raw_id:
        row_id = raw_id
    else:
        row_id = rec.generated_id(VENDOR, index)
        report.infer("$.id", row_id, "the example has no id; numbered by its place in the file")
    source, output = example["input"], example["output"]
    value: dict[str, Any] = {"id": row_id, "input": source}
    if source.keys() == {INPUT_KEY}:
        value["input"] = source[INPUT_KEY]
        report.infer("$.input", row_id, f"the input holds only {INPUT_KEY!r}: its value is the input")
    has_expected = output != {}
    expected: Any = output
    ext = {key: example[key] for key in ("splits", "span_id") if example.get(key) is not None}
    if len(output) == 1 and next(iter(output)) in OUTPUT_KEYS:
        (key, expected), = output.items()
        report.infer("$.expected", row_id, f"the output holds only {key!r}: its value is the reference "
                                           "(written back under the same key)")
        if key != OUTPUT_KEY:
            ext["outputKey"] = key
    if has_expected:
        value["expected"] = expected
    case = rec.imported_case(row_id, expected, has_expected, report, "Phoenix")
    meta = dict(metadata)
    rec.keep_foreign_case(meta, case, VENDOR, row_id, report)
    if ext:
        case.setdefault("extensions", {}).setdefault(VENDOR, {}).update(ext)
        report.infer(f"$.metadata.case.extensions.{VENDOR}", row_id,
                     "the example's splits, span_id or output key: kept here and written back in place")
    _ignore_server_fields(example, row_id, report)
    value["metadata"] = {"case": case, **meta}
    return value


def _from_openai_export(line: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    """A line of Phoenix's `openai_evals` (messages + ideal) or `openai_ft` (messages + tools) export:
    the example as far as the line tells it (Phoenix dropped its id, metadata and other fields)."""
    messages = line["messages"]
    row_id = rec.generated_id(VENDOR, index)
    if "ideal" in line:
        report.infer("$.input", row_id, "a Phoenix openai_evals export line: the messages are the input")
        ideal = line["ideal"]
        return {"input": {"messages": messages}, "output": {OUTPUT_KEY: ideal} if ideal not in ("", None) else {}}
    cut = len(messages)
    while cut > 0 and isinstance(messages[cut - 1], dict) and messages[cut - 1].get("role") == "assistant":
        cut -= 1
    report.infer("$.input", row_id, "a Phoenix openai_ft export line: the messages before the closing assistant "
                                    "messages are the input, those the reference")
    source: dict[str, Any] = {"messages": messages[:cut]}
    if "tools" in line:
        source["tools"] = line["tools"]
    return {"input": source, "output": {"messages": messages[cut:]} if cut < len(messages) else {}}


def _from_cells(record: dict[str, str], index: int, report: ReadReporter) -> dict[str, Any]:
    """An example from a row of Phoenix's CSV export: pandas wrote text as it is, nested values as
    Python literals and missing keys as empty cells (read here as absent)."""
    example: dict[str, Any] = {"input": {}, "output": {}, "metadata": {}}
    for column, cell in record.items():
        if column == CSV_ID:
            example["id"] = cell
            continue
        prefix = next((p for p in CSV_PREFIXES if column.startswith(p)), None)
        if prefix is None:
            raise RowError(f"column {column!r} is not one Phoenix's CSV export writes "
                           "(example_id, input_*, output_*, metadata_*)", f"$.{column}", None)
        if cell != "":
            example[prefix[:-1]][column[len(prefix):]] = cell_value(cell)
    if not example["metadata"].get("case"):
        report.infer("$.input", example.get("id") or rec.generated_id(VENDOR, index),
                     "a Phoenix CSV export row: input_*, output_* and metadata_* columns are the example's keys, "
                     "cells as text (nested values read from their Python literals)")
    return example

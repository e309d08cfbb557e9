"""Langfuse dataset items -> canonical rows: what evalconv wrote (JSONL, a JSON array, CSV), the
SDK's `create_dataset_item` keyword arguments (snake_case), the API's DatasetItem and the UI's
JSON and CSV exports (camelCase, with the fields Langfuse sets).

An item evalconv wrote carries the case id and fingerprints of what it wrote in
`metadata.evalconv`: a value that no longer has its fingerprint was edited in Langfuse, and the
edit is what the row holds (the read report names it). The item id is Langfuse's (namespaced, or
a UUID the UI's uploader gave it): the case id comes from metadata.evalconv.id. An item evalconv
did not write gets an inferred case profile, each inference in the read report.
"""
from __future__ import annotations

from typing import Any, Iterator

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.reporting import ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .._common import records as rec
from .fields import ITEM_FIELDS, NATIVE_EXTRAS, SNAKE, STARTER_KEY, SYSTEM_FIELDS, VENDOR
from .write import js_normal

EDITED = ("edited in Langfuse: it differs from what evalconv wrote (its fingerprint in metadata.evalconv.sums); "
          "the edit is kept")
KNOWN = frozenset(ITEM_FIELDS) | SYSTEM_FIELDS.keys() | {"datasetName"}


def read_items(lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
    names: set[str] = set()

    def build(record: dict[str, Any], index: int, cells: bool = False) -> dict[str, Any]:
        return row_value(record, index, report, names, cells)

    yield from rec.read_records(lines, build, lambda first, rest: rec.csv_records(
        first, rest, lines, lambda record, index: build(record, index, True), "input", "Langfuse"))
    for name in sorted(names):
        report.notes.append(f"items of the Langfuse dataset '{name}': evalconv names a set by its file "
                            "(write with --langfuse-dataset to name the dataset)")


def _camel(record: dict[str, Any]) -> dict[str, Any]:
    """The item with the API's field names (the SDK's keyword arguments are snake_case)."""
    if not any(key in SNAKE for key in record):
        return record
    return {SNAKE.get(key, key): value for key, value in record.items()}


def _cells(record: dict[str, str], own: bool) -> dict[str, Any]:
    """A CSV record's values: input, expectedOutput and metadata are JSON text in what evalconv
    writes; in the UI's export a text value is the text itself and anything else JSON text, so
    a cell that reads as a JSON object or list is that value, any other cell text. Empty is absent."""
    out: dict[str, Any] = {}
    for key, cell in record.items():
        if cell == "":
            continue
        if key in ("input", "expectedOutput", "metadata") and (own or key == "metadata" or cell.lstrip()[:1] in "[{"):
            try:
                out[key] = jsonvalue.loads(cell)
            except jsonvalue.JSONValueError as err:
                if own or key == "metadata":
                    raise RowError(f"{key} cell is not JSON ({err})", f"$.{key}", None) from None
                out[key] = cell
        else:
            out[key] = cell
    return out


def _is_own_csv(record: dict[str, str]) -> bool:
    try:
        metadata = jsonvalue.loads(record.get("metadata") or "null")
    except jsonvalue.JSONValueError:
        return False
    return isinstance(metadata, dict) and isinstance(metadata.get(rec.ENVELOPE), dict) and \
        isinstance(metadata[rec.ENVELOPE].get("id"), str)


def row_value(record: dict[str, Any], index: int, report: ReadReporter, names: set[str],
              cells: bool = False) -> dict[str, Any]:
    """The canonical row of one Langfuse item (raises RowError)."""
    if cells:
        record = _cells(record, _is_own_csv(record))
    record = _camel(record)
    metadata = record.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise RowError("metadata must be an object", "$.metadata", _partial(record))
    problem = jsonvalue.value_problem(record)
    if problem is not None:
        raise RowError(problem[1], problem[0], _partial(record))
    envelope = metadata.get(rec.ENVELOPE)
    if isinstance(envelope, dict) and isinstance(envelope.get("id"), str) and envelope["id"]:
        value = _own_row(record, metadata, envelope, report)
    else:
        value = _foreign_row(record, metadata, index, report)
        if isinstance(record.get("datasetName"), str):
            names.add(record["datasetName"])
    rec.ignore_fields(record, SYSTEM_FIELDS, value["id"], report)
    for key in sorted(record.keys() - KNOWN):
        report.ignore(f"$.{key}", value["id"], "not a Langfuse dataset item field")
    return value


def _partial(record: dict[str, Any]) -> dict[str, Any] | None:
    row_id = record.get("id")
    return {"id": row_id} if isinstance(row_id, str) and row_id else None


def _exact(native: Any, carried: Any) -> Any:
    """The exact value evalconv carried when the native one is it, or what JavaScript made of it."""
    if isinstance(carried, str):
        try:
            value = jsonvalue.loads(carried)
        except jsonvalue.JSONValueError:
            return native
        if jsonvalue.same(js_normal(value), js_normal(native)):
            return value
    return native


def _own_row(record: dict[str, Any], metadata: dict[str, Any], envelope: dict[str, Any],
             report: ReadReporter) -> dict[str, Any]:
    row_id = envelope["id"]
    carried = envelope.get("exact")
    exact: dict[str, Any] = carried if isinstance(carried, dict) else {}
    value: dict[str, Any] = {"id": row_id, "input": _exact(record.get("input"), exact.get("input"))}
    if record.get("expectedOutput") is not None:
        value["expected"] = _exact(record["expectedOutput"], exact.get("expectedOutput"))
    elif envelope.get("expectedNull"):
        value["expected"] = None
    meta = {k: v for k, v in metadata.items() if k != rec.ENVELOPE}
    rec.restore_shadowed(meta, envelope, (rec.ENVELOPE,))
    if envelope.get("starter"):
        meta.pop(STARTER_KEY, None)
    carried_meta = exact.get("metadata")
    if isinstance(carried_meta, str):
        try:
            originals = jsonvalue.loads(carried_meta)
        except jsonvalue.JSONValueError:
            originals = {}
        for key, original in (originals.items() if isinstance(originals, dict) else ()):
            if key in meta and jsonvalue.same(js_normal(original), js_normal(meta[key])):
                meta[key] = original
    sums = envelope.get(rec.SUMS)
    if isinstance(sums, dict):
        if rec.fingerprint(js_normal(value["input"])) != sums.get("input"):
            report.edit("$.input", row_id, "input " + EDITED)
        now = rec.fingerprint(js_normal(value["expected"])) if "expected" in value else None
        if now != sums.get("expectedOutput"):
            report.edit("$.expected", row_id, "expectedOutput " + EDITED)
        rec.name_metadata_edits(js_normal(meta), envelope, "Langfuse", row_id, report)
    case = meta.get("case")
    if isinstance(case, dict):
        meta["case"] = _take_native_extras(dict(case), record, row_id, report)
    value["metadata"] = meta
    return value


def _take_native_extras(case: dict[str, Any], record: dict[str, Any], row_id: str, report: ReadReporter) -> dict[str, Any]:
    """status and the source trace / observation live in extensions.langfuse: a native value
    that differs from it (or is new) was set in Langfuse, and is kept there (ACTIVE, the default,
    is no value)."""
    extensions = case.get("extensions")
    ext = extensions.get(VENDOR) if isinstance(extensions, dict) else None
    kept = dict(ext) if isinstance(ext, dict) else {}
    changed = []
    for key in NATIVE_EXTRAS:
        native = record.get(key)
        native = None if key == "status" and native == "ACTIVE" and "status" not in kept else native
        if not jsonvalue.same(native, kept.get(key)):
            changed.append(key)
            if native is None:
                kept.pop(key, None)
            else:
                kept[key] = native
    if not changed:
        return case
    extensions = case["extensions"] = dict(extensions) if isinstance(extensions, dict) else {}
    if kept:
        extensions[VENDOR] = kept
    else:
        extensions.pop(VENDOR, None)
        if not extensions:
            del case["extensions"]
    for key in changed:
        report.edit(f"$.metadata.case.extensions.{VENDOR}.{key}", row_id,
                    f"{key} set in Langfuse: kept in metadata.case.extensions.{VENDOR}.{key} and written back")
    return case


def _foreign_row(record: dict[str, Any], metadata: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    row_id = record.get("id")
    if not (isinstance(row_id, str) and row_id):
        row_id = rec.generated_id(VENDOR, index)
        report.infer("$.id", row_id, "the item has no id; numbered by its place in the file")
    if "input" not in record:
        report.infer("$.input", row_id, "the item has no input")
    value: dict[str, Any] = {"id": row_id, "input": record.get("input")}
    expected = record.get("expectedOutput")
    if expected is not None:
        value["expected"] = expected
    meta = dict(metadata)
    case = rec.imported_case(row_id, expected, expected is not None, report, "Langfuse")
    rec.keep_foreign_case(meta, case, VENDOR, row_id, report)
    ext = {key: record[key] for key in NATIVE_EXTRAS if isinstance(record.get(key), str)
           and not (key == "status" and record[key] == "ACTIVE")}
    if ext:
        case.setdefault("extensions", {}).setdefault(VENDOR, {}).update(ext)
        report.infer(f"$.metadata.case.extensions.{VENDOR}", row_id,
                     f"the item's {', '.join(ext)}: written back to Langfuse from here")
    value["metadata"] = {"case": case, **meta}
    return value

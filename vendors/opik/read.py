"""Opik items -> canonical rows: dataset items (JSONL as `read_jsonl_from_file` and `insert` take
them, or the JSON array `Dataset.to_json()` gives), test-suite items (`{id, data, assertions,
description, execution_policy}`, JSONL or the array `TestSuite.to_json()` gives) and the CLI's
`opik export dataset` JSON (`{id, name, items: [...]}`, item ids left out).

An item evalconv wrote carries its case profile in `metadata.case` and fingerprints of its input
and expected output in `metadata.evalconv`: a value that no longer has its fingerprint was edited
in Opik, and the edit is what the row holds (the read report names it); native fields (assertions,
description, execution policy, ...) that differ from what evalconv would write are kept in
`metadata.case.extensions.opik` and written back. Any other item gets a case profile inferred from
its `expected_output`, each inference in the read report.
"""
from __future__ import annotations

from typing import Any, Iterator

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.reporting import ReadReporter
from evalconv.canonical.row import Row
from evalconv.canonical.source import Lines, SourceRow, parse_problem

from .._common import records as rec
from .fields import CONTENT_KEYS, MODEL_FIELDS, NATIVE_EXTRAS, STARTER_KEY, SUITE_KEYS, SYSTEM_FIELDS, VENDOR
from .write import SUITE, build_item, item_id

EDITED = "edited in Opik: it differs from what evalconv wrote (its fingerprint in metadata.evalconv.sums); the edit is kept"


def read_items(lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
    index = 0
    for src in rec.read_records(lines, lambda record, _: record):
        if src.value is None or src.problems:
            yield src
            continue
        if is_export(src.value):
            for number, item in enumerate(src.value["items"], 1):
                index += 1
                if not isinstance(item, dict):
                    yield SourceRow(None, src.line, number, parse_problem("each item must be a JSON object"))
                    continue
                yield _row(item, index, report, src.line, number)
            continue
        index += 1
        yield _row(src.value, index, report, src.line, src.record)


def is_export(record: dict[str, Any]) -> bool:
    """`opik export dataset`'s document: the dataset's name and its items."""
    return isinstance(record.get("items"), list) and "name" in record and "input" not in record and "data" not in record


def is_suite_item(record: dict[str, Any]) -> bool:
    return isinstance(record.get("data"), dict) and record.keys() <= set(SUITE_KEYS)


def _row(record: dict[str, Any], index: int, report: ReadReporter, line: int | None, number: int | None) -> SourceRow:
    try:
        return SourceRow(row_value(record, index, report), line, number)
    except RowError as err:
        return SourceRow.failed(err, line, number)


def row_value(record: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    """The canonical row of one item (raises RowError)."""
    suite = is_suite_item(record)
    body = record["data"] if suite else {k: v for k, v in record.items() if k not in MODEL_FIELDS}
    natives = {k: record.get(k) for k in NATIVE_EXTRAS if record.get(k) is not None}
    metadata = body.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raw_id = record.get("id")
        raise RowError("metadata must be an object", "$.data.metadata" if suite else "$.metadata",
                       {"id": raw_id} if isinstance(raw_id, str) and raw_id else None)
    case = metadata.get("case")
    if isinstance(case, dict) and isinstance(case.get("caseId"), str) and isinstance(case.get("oracleType"), str):
        value = _own_row(record, body, metadata, suite, report)
    else:
        value = _foreign_row(record, body, metadata, natives, index, report)
    if not suite:
        rec.ignore_fields(record, SYSTEM_FIELDS, value["id"], report)
    return value


def _own_row(record: dict[str, Any], body: dict[str, Any], metadata: dict[str, Any], suite: bool,
             report: ReadReporter) -> dict[str, Any]:
    row_id = metadata["case"]["caseId"]
    if record.get("id") not in (None, item_id(row_id)):
        report.ignore("$.id", row_id, f"Opik's item id {record['id']!r} is not the one evalconv derives from the case "
                                      "id; the case id (metadata.case.caseId) is kept")
    envelope = metadata.get(rec.ENVELOPE)
    envelope = envelope if isinstance(envelope, dict) else {}
    meta = {k: v for k, v in metadata.items() if k != rec.ENVELOPE}
    rec.restore_shadowed(meta, envelope, (rec.ENVELOPE,))
    if envelope.get("starter"):
        meta.pop(STARTER_KEY, None)
    value: dict[str, Any] = {"id": row_id, "input": body.get("input")}
    if "expected_output" in body:
        value["expected"] = body["expected_output"]
    sums = envelope.get(rec.SUMS)
    if isinstance(sums, dict):
        if rec.fingerprint(value["input"]) != sums.get("input"):
            report.edit("$.input", row_id, "input " + EDITED)
        now = rec.fingerprint(value["expected"]) if "expected" in value else None
        if now != sums.get("expected_output"):
            report.edit("$.expected", row_id, "expected_output " + EDITED)
        rec.name_metadata_edits(meta, envelope, "Opik", row_id, report)
    extra = {k: v for k, v in body.items() if k not in CONTENT_KEYS}
    value["metadata"] = meta
    _take_native_edits(value, record, extra, suite, report)
    return value


def _take_native_edits(value: dict[str, Any], record: dict[str, Any], extra: dict[str, Any], suite: bool,
                       report: ReadReporter) -> None:
    """Native fields (and content keys) that differ from what evalconv writes for the row were set
    in Opik: kept in extensions.opik and written back."""
    try:
        written = build_item(Row.from_json(value), SUITE if suite else "jsonl")
    except Exception:  # the carried profile is not a valid row; the validator will say why
        return
    row_id, case = value["id"], value["metadata"]["case"]
    keys = ("assertions", "description", "execution_policy") if suite else NATIVE_EXTRAS[:-1]
    changed = [k for k in keys if not jsonvalue.same(written.get(k), record.get(k))]
    written_extra = {k: v for k, v in (written["data"] if suite else written).items()
                     if k not in CONTENT_KEYS and k not in MODEL_FIELDS}
    if not changed and jsonvalue.same(written_extra, extra):
        return
    extensions = case.setdefault("extensions", {})
    ext = extensions.setdefault(VENDOR, {}) if isinstance(extensions, dict) else None
    if not isinstance(ext, dict):
        return
    for key in changed:
        if record.get(key) is None:
            ext.pop(key, None)
        else:
            ext[key] = record[key]
        report.edit(f"$.metadata.case.extensions.{VENDOR}.{key}", row_id,
                    f"{key} set in Opik: kept in metadata.case.extensions.{VENDOR}.{key} and written back")
    if not jsonvalue.same(written_extra, extra):
        if extra:
            ext["content"] = extra
        else:
            ext.pop("content", None)
        report.edit(f"$.metadata.case.extensions.{VENDOR}.content", row_id, "item content keys set in Opik (beside "
                    f"input, expected_output, metadata): kept in metadata.case.extensions.{VENDOR}.content")
    if not ext:
        extensions.pop(VENDOR)
    if not extensions:
        del case["extensions"]


def _foreign_row(record: dict[str, Any], body: dict[str, Any], metadata: dict[str, Any], natives: dict[str, Any],
                 index: int, report: ReadReporter) -> dict[str, Any]:
    raw_id = record.get("id")
    if isinstance(raw_id, str) and raw_id:
        row_id = raw_id
    else:
        row_id = rec.generated_id(VENDOR, index)
        report.infer("$.id", row_id, "the item has no id; numbered by its place in the file")
    extra = {k: v for k, v in body.items() if k not in CONTENT_KEYS}
    value: dict[str, Any] = {"id": row_id}
    if "input" in body:
        value["input"] = body["input"]
    else:
        value["input"], extra = extra, {}
        report.infer("$.input", row_id, "the item has no input: its content keys (beside expected_output and "
                                        "metadata) are the input")
    has_expected = "expected_output" in body
    if has_expected:
        value["expected"] = body["expected_output"]
    case = rec.imported_case(row_id, body.get("expected_output"), has_expected, report, "Opik")
    natives = _judged(case, natives, has_expected, row_id, report)
    meta = dict(metadata)
    rec.keep_foreign_case(meta, case, VENDOR, row_id, report)
    ext = dict(natives)
    if extra:
        ext["content"] = extra
    if ext:
        case.setdefault("extensions", {}).setdefault(VENDOR, {}).update(ext)
        report.infer(f"$.metadata.case.extensions.{VENDOR}", row_id,
                     f"the item's {', '.join(sorted(ext))}: kept here and written back to Opik from here")
    value["metadata"] = {"case": case, **meta}
    return value


def _judged(case: dict[str, Any], natives: dict[str, Any], has_expected: bool, row_id: str,
            report: ReadReporter) -> dict[str, Any]:
    """A test-suite item with assertions and no expected output is a rubric an LLM judge grades:
    the assertions are its criteria (and evalconv writes them back as its assertions)."""
    asserted = natives.get("assertions")
    if has_expected or not (isinstance(asserted, list) and asserted
                            and all(isinstance(a, str) and a.strip() for a in asserted)):
        return natives
    case.update(oracleType="rubric", evaluationCriteria=list(dict.fromkeys(asserted)), evaluator="llm-judge")
    report.infer("$.metadata.case.oracleType", row_id, "rubric: the test-suite item's assertions are its criteria, "
                                                       "graded by an LLM judge as Opik grades them")
    return {k: v for k, v in natives.items() if k != "assertions"}

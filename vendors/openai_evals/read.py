"""OpenAI Evals lines -> canonical rows: Evals API items (`{"item": ...}`) and registry samples.

A line evalconv wrote carries its case profile in the item's metadata; its native fields win
over the carried copies whenever they differ (an edit made in the file), and the read report
says so. A line evalconv did not write gets a case profile inferred from its reference, each
inference in the read report.
"""
from __future__ import annotations

from typing import Any, Iterator

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.reporting import QuietLoss, ReadReporter
from evalconv.canonical.row import Row
from evalconv.canonical.source import Lines, SourceRow

from .._common import records as rec
from .fields import ITEM_KEYS, REFERENCE_KEYS, REGISTRY_KEYS, VENDOR
from .write import STARTER_KEY, build_line

EDITED = "edited in the OpenAI Evals file: the native value differs from the copy evalconv carried; the edit wins"


def read_lines(lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
    return rec.read_records(lines, lambda record, index: row_value(record, index, report))


def row_value(line: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    """The canonical row of one line (raises RowError)."""
    if "item" in line:
        item = line["item"]
        if not isinstance(item, dict):
            raise RowError("item must be an object (the Evals API's item is one)", "$.item", None)
        if "sample" in line and not isinstance(line["sample"], dict):
            raise RowError("sample must be an object", "$.sample", None)
        return _row(item, line.get("sample"), "items", index, report)
    if "input" not in line:
        raise RowError("a line needs an item (Evals API) or an input (registry)", "$", None)
    return _row(line, None, "registry", index, report)


def _row(record: dict[str, Any], sample: Any, variant: str, index: int, report: ReadReporter) -> dict[str, Any]:
    at = "$.item" if variant == "items" else "$"
    metadata = record.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise RowError("metadata must be an object", f"{at}.metadata", None)
    case = metadata.get("case")
    if isinstance(case, dict) and isinstance(case.get("caseId"), str) and isinstance(case.get("oracleType"), str):
        return _own_row(record, metadata, variant, report)
    return _foreign_row(record, sample, metadata, variant, index, report)


def _input_of(messages: Any, at: str) -> Any:
    if isinstance(messages, str):
        return messages
    if not (isinstance(messages, list) and messages and all(isinstance(m, dict) for m in messages)):
        raise RowError("the input must be a text or a non-empty list of chat messages", at, None)
    return {"messages": messages}


def _text_of(messages: Any) -> str | None:
    """The text of a prompt of one user message with a text content, else None."""
    if (isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], dict)
            and messages[0].keys() == {"role", "content"} and messages[0]["role"] == "user"
            and isinstance(messages[0]["content"], str)):
        return messages[0]["content"]
    return None


def _own_row(record: dict[str, Any], metadata: dict[str, Any], variant: str, report: ReadReporter) -> dict[str, Any]:
    registry = variant == "registry"
    prompt_key = "input" if registry else "messages"
    row_id = record.get("id")
    if not (isinstance(row_id, str) and row_id):
        raise RowError("id must be a non-empty string", "$.id" if registry else "$.item.id", None)
    envelope = metadata.get(rec.ENVELOPE)
    envelope = envelope if isinstance(envelope, dict) else {}
    meta = {k: v for k, v in metadata.items() if k != rec.ENVELOPE}
    rec.restore_shadowed(meta, envelope, (rec.ENVELOPE,))
    if envelope.get("starter"):
        meta.pop(STARTER_KEY, None)
    rec.name_metadata_edits(meta, envelope, "OpenAI Evals", row_id, report)
    messages = record.get(prompt_key)
    value: dict[str, Any] = {"id": row_id}
    if "input" in envelope:
        value["input"] = envelope["input"]
    elif envelope.get("text") and _text_of(messages) is not None:
        value["input"] = _text_of(messages)
    else:
        value["input"] = _input_of(messages, f"$.{prompt_key}" if registry else f"$.item.{prompt_key}")
    if "expected" in envelope:
        value["expected"] = envelope["expected"]
    elif registry:
        if record.get("ideal") not in (None, []):
            value["expected"] = record["ideal"]
    elif "expected" in record:
        value["expected"] = record["expected"]
    value["metadata"] = meta
    _take_edits(value, record, variant, report)
    return value


def _take_edits(value: dict[str, Any], record: dict[str, Any], variant: str, report: ReadReporter) -> None:
    """Where a native field differs from what evalconv writes for the carried row, the edit wins."""
    try:
        written = build_line(Row.from_json(value), QuietLoss(), variant)
    except Exception:  # the carried copy is not a valid row; the validator will say why
        return
    written = written if variant == "registry" else written["item"]
    row_id, case = value["id"], value["metadata"]["case"]
    prompt_key = "input" if variant == "registry" else "messages"
    if not jsonvalue.same(written.get(prompt_key), record.get(prompt_key)):
        text = _text_of(record.get(prompt_key))
        value["input"] = text if text is not None and isinstance(value["input"], str) else \
            _input_of(record.get(prompt_key), f"$.{prompt_key}")
        report.edit("$.input", row_id, EDITED)
    if variant == "registry" and not jsonvalue.same(written.get("ideal"), record.get("ideal")):
        ideal = record.get("ideal")
        if ideal in (None, []):
            value.pop("expected", None)
        else:
            value["expected"] = ideal
        report.edit("$.expected", row_id, EDITED)
    own = REGISTRY_KEYS if variant == "registry" else ITEM_KEYS
    extra = {k: v for k, v in record.items() if k not in own}
    if not jsonvalue.same(extra, {k: v for k, v in written.items() if k not in own}):
        ext = case.setdefault("extensions", {}).setdefault(VENDOR, {})
        if not isinstance(ext, dict):
            return
        fields = ext.get("fields")
        kept = {k: v for k, v in fields.items() if k in own} if isinstance(fields, dict) else {}
        ext["fields"] = {**kept, **extra}
        report.edit(f"$.metadata.case.extensions.{VENDOR}.fields", row_id, EDITED)


def _foreign_row(record: dict[str, Any], sample: Any, metadata: dict[str, Any], variant: str, index: int,
                 report: ReadReporter) -> dict[str, Any]:
    registry = variant == "registry"
    at = "$" if registry else "$.item"
    row_id = _row_id(record.get("id"), index, report)
    used = {"id", "metadata"}
    if registry:
        value: dict[str, Any] = {"id": row_id, "input": _input_of(record["input"], "$.input")}
        used |= {"input", "ideal"}
        expected, has_expected = record.get("ideal"), record.get("ideal") not in (None, [], "")
    else:
        value = {"id": row_id}
        for key in ("messages", "input"):
            if key in record:
                value["input"] = _input_of(record[key], f"$.item.{key}") if key == "messages" else \
                    (_input_of(record[key], "$.item.input") if isinstance(record[key], list) else record[key])
                used.add(key)
                break
        ref = next((k for k in REFERENCE_KEYS if k in record), None)
        expected, has_expected = (record[ref], True) if ref else (None, False)
        if ref:
            used.add(ref)
            if ref != "expected":
                report.infer("$.expected", row_id, f"the item's {ref} field holds the reference")
        if "input" not in value:
            rest = {k: v for k, v in record.items() if k not in used}
            if not rest:
                raise RowError("the item has no input: no messages, no input, no other field", at, None)
            value["input"] = rest
            used |= set(rest)
            report.infer("$.input", row_id, "the item has no messages or input field: its other fields are the input")
    if has_expected:
        value["expected"] = expected
    case = rec.imported_case(row_id, expected, has_expected, report, "OpenAI Evals")
    if isinstance(expected, list) and all(isinstance(m, str) for m in expected) and expected:
        case["oracleType"] = "acceptable-set"
        report.infer("$.metadata.case.oracleType", row_id, "a list of texts: an answer matching any of them passes")
    meta = dict(metadata)
    rec.keep_foreign_case(meta, case, VENDOR, row_id, report)
    _keep_extras(case, {k: v for k, v in record.items() if k not in used}, sample, row_id, report)
    value["metadata"] = {"case": case, **meta}
    return value


def _row_id(raw_id: Any, index: int, report: ReadReporter) -> str:
    """A foreign line's id: its own text id, its integer id as text, or one numbered by its place."""
    if isinstance(raw_id, str) and raw_id:
        return raw_id
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        report.infer("$.id", str(raw_id), "the item's integer id is kept as text")
        return str(raw_id)
    row_id = rec.generated_id(VENDOR, index)
    report.infer("$.id", row_id, "the line has no id; numbered by its place in the file")
    return row_id


def _keep_extras(case: dict[str, Any], fields: dict[str, Any], sample: Any, row_id: str,
                 report: ReadReporter) -> None:
    """Item fields evalconv does not know, and the line's sample, kept in the case's extensions."""
    ext: dict[str, Any] = {}
    if fields:
        ext["fields"] = fields
        report.infer(f"$.metadata.case.extensions.{VENDOR}.fields", row_id,
                     "item fields evalconv does not know: kept here and written back as item fields")
    if isinstance(sample, dict):
        ext["sample"] = sample
        report.infer(f"$.metadata.case.extensions.{VENDOR}.sample", row_id,
                     "the line's sample (a prior model output): kept here and written back")
    if ext:
        case.setdefault("extensions", {}).setdefault(VENDOR, {}).update(ext)

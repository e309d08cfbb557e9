"""Ragas samples -> canonical rows: JSONL (from_jsonl), JSON arrays (from_list) and to_csv's CSV.

A sample evalconv wrote carries its row in the `evalconv` key; a native field that differs from
what evalconv writes for that row was edited in Ragas, and the edit wins (the read report says
so). A sample evalconv did not write gets an id by position and a case profile inferred from
its fields, each inference in the read report.
"""
from __future__ import annotations

import ast
import csv
from typing import Any, Iterator

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.reporting import QuietLoss, ReadReporter
from evalconv.canonical.row import Row
from evalconv.canonical.source import MAX_LINE_BYTES, Lines, SourceRow

from .._common import records as rec
from .fields import (CONTEXTS, ENVELOPE, EXTENSION_FIELDS, FROM_REFS, MULTI_FIELDS, RUN_FIELDS, RUN_KEY, SINGLE_FIELDS,
                     TYPE_TO_ROLE, VENDOR, WRITTEN)
from .write import build_sample, csv_cell, digest, digest_text

csv.field_size_limit(MAX_LINE_BYTES)
EDITED = "{field} was edited in the Ragas file; the edit is kept (it differs from what evalconv wrote)"
KNOWN = frozenset(SINGLE_FIELDS) | frozenset(MULTI_FIELDS) | {ENVELOPE}
_TEXT_COLUMNS = frozenset({"reference", "response", "persona_name", "query_style", "query_length"})


def read_samples(lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
    def build(record: dict[str, Any], index: int) -> dict[str, Any]:
        return row_value(record, index, report)

    def from_cells(cells: dict[str, str], index: int) -> dict[str, Any]:
        # An empty cell is no value, except user_input: its column is there, so it is text.
        raw = {k: c for k, c in cells.items() if c != "" or k == "user_input"}
        return row_value(_decoded(raw), index, report, raw)

    return rec.read_records(lines, build, lambda first, rest: rec.csv_records(
        first, rest, lines, from_cells, required="user_input", vendor="Ragas"))


def _decoded(raw: dict[str, str]) -> dict[str, Any]:
    """to_csv's cells: text columns as text; the others are Python literals (str() of lists, dicts)."""
    out: dict[str, Any] = {}
    for key, cell in raw.items():
        if key in _TEXT_COLUMNS:
            out[key] = cell
            continue
        try:
            value = ast.literal_eval(cell)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            if key == "user_input" or key not in KNOWN:
                out[key] = cell
                continue
            raise RowError(f"{key} cell is not a list or dict as Ragas' to_csv writes it", f"$.{key}", None) from None
        if key == "user_input" and not _is_messages(value):
            value = cell
        out[key] = value
    return out


def _is_messages(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(m, dict) and m.get("type") in TYPE_TO_ROLE and isinstance(m.get("content"), str) for m in value)


def _natural_input(value: Any) -> Any:
    if isinstance(value, list):
        return {"messages": [{"role": TYPE_TO_ROLE.get(str(m.get("type")), str(m.get("type"))), "content": m.get("content"),
                              **{k: v for k, v in m.items() if k not in ("type", "content")}}
                             for m in value if isinstance(m, dict)]}
    return value


def row_value(sample: dict[str, Any], index: int, report: ReadReporter, raw: dict[str, str] | None = None) -> dict[str, Any]:
    """The canonical row of one Ragas sample (raises RowError); `raw` holds a CSV record's cells."""
    user_input = sample.get("user_input")
    if not (isinstance(user_input, str) or _is_messages(user_input)):
        raise RowError("user_input must be text or a list of human/ai/tool messages", "$.user_input", None)
    env = sample.get(ENVELOPE)
    if (isinstance(env, dict) and isinstance(env.get("id"), str) and env["id"]
            and isinstance(env.get("metadata"), dict) and isinstance(env["metadata"].get("case"), dict)):
        return _own_row(sample, env, report, raw)
    return _foreign_row(sample, index, report)


def _own_row(sample: dict[str, Any], env: dict[str, Any], report: ReadReporter, raw: dict[str, str] | None) -> dict[str, Any]:
    multi = isinstance(sample["user_input"], list)
    metadata = dict(env["metadata"])
    value: dict[str, Any] = {"id": env["id"]}
    value["input"] = env["input"] if "input" in env else _natural_input(sample["user_input"])
    if "expected" in env:
        value["expected"] = env["expected"]
    elif "reference_tool_calls" in sample:
        value["expected"] = _calls(sample["reference_tool_calls"])
    elif "reference" in sample:
        value["expected"] = sample["reference"]
    if not multi:
        for field, key in CONTEXTS.items():
            if field in sample and not (field == "reference_context_ids" and env.get(FROM_REFS) is True):
                metadata[key] = sample[field]
        run = {k: sample[k] for k in RUN_FIELDS if k in sample}
        if run:
            metadata[RUN_KEY] = run
    value["metadata"] = metadata
    _take_edits(value, sample, multi, report, raw)
    return value


def _calls(calls: Any) -> Any:
    if not isinstance(calls, list):
        return calls
    return [{"name": c.get("name"), "arguments": c.get("args", {})} if isinstance(c, dict) else c for c in calls]


def _take_edits(value: dict[str, Any], sample: dict[str, Any], multi: bool, report: ReadReporter,
                raw: dict[str, str] | None) -> None:
    """Where a native field differs from what evalconv wrote, the edit wins and is said. The
    envelope's digests of the native fields as written tell an edit even of a value only the
    native field holds (a text reference, reference contexts); a file without them is compared
    with what evalconv writes for the carried row."""
    env = sample[ENVELOPE]
    digests = env.get(WRITTEN) if isinstance(env.get(WRITTEN), dict) else None
    written: dict[str, Any] = {}
    if digests is None:
        try:
            written = build_sample(Row.from_json(value), QuietLoss(), multi, raw is not None)
        except Exception:  # the carried copy is not a valid row; the validator will say why
            return
    row_id = value["id"]
    for field in sorted((set(digests or written) | set(sample)) - {ENVELOPE}):
        theirs = sample.get(field)
        if _unchanged(field, theirs, sample, digests, written, raw):
            continue
        path, known = _take_edit(value, field, theirs, sample, written, env)
        if not known:
            report.edit(path, row_id, f"{field} is not a Ragas sample field; added in the file, it is kept here")
            continue
        report.edit(path, row_id, EDITED.format(field=field))


def _unchanged(field: str, theirs: Any, sample: dict[str, Any], digests: dict[str, Any] | None,
               written: dict[str, Any], raw: dict[str, str] | None) -> bool:
    """Does the native field hold what evalconv wrote (by its digest, or as written again)?"""
    if digests is not None and raw is not None:  # a CSV cell: "" is no value
        cell = raw.get(field, "")
        return digests[field] == digest_text(cell) if field in digests else cell == ""
    if digests is not None:
        return field in digests and field in sample and digests[field] == digest(theirs, False)
    ours = written.get(field)
    return (csv_cell(ours) == raw.get(field, "")) if raw is not None else jsonvalue.same(ours, theirs)


def _take_edit(value: dict[str, Any], field: str, theirs: Any, sample: dict[str, Any], written: dict[str, Any],
               env: dict[str, Any]) -> tuple[str, bool]:
    """The edited native field into the row: (the row's path it changed, is it a Ragas sample field?)."""
    metadata, case = value["metadata"], value["metadata"]["case"]
    if field == "user_input":
        carried = env.get("input")
        if isinstance(carried, str) and isinstance(theirs, list) and len(theirs) == 1 \
                and theirs[0].get("type") == "human" and theirs[0].keys() <= {"type", "content"}:
            value["input"] = theirs[0]["content"]  # a text input stays text in a multi-turn file
        else:
            value["input"] = _natural_input(theirs)
        return "$.input", True
    if field == "reference" and ("reference_tool_calls" in sample or "reference_tool_calls" in written):
        case["expectedBehavior"] = theirs if isinstance(theirs, str) else ""
        return "$.metadata.case.expectedBehavior", True
    if field in ("reference", "reference_tool_calls"):
        if theirs is None:
            value.pop("expected", None)
        else:
            value["expected"] = _calls(theirs) if field == "reference_tool_calls" else theirs
        return "$.expected", True
    if field == "reference_context_ids" and env.get(FROM_REFS) is True:  # written from the references
        _set(case, "contextRefs", refs_from_ids(case.get("contextRefs"), theirs))
        return "$.metadata.case.contextRefs", True
    if field in CONTEXTS:
        _set(metadata, CONTEXTS[field], theirs)
        return f"$.metadata.{CONTEXTS[field]}", True
    if field in RUN_FIELDS:
        run = metadata.setdefault(RUN_KEY, {})
        _set(run, field, theirs)
        if not run:
            metadata.pop(RUN_KEY)
        return f"$.metadata.{RUN_KEY}.{field}", True
    # rubrics, the synthetic-test fields, and any field Ragas itself has no name for
    ext = case.setdefault("extensions", {}).setdefault(VENDOR, {})
    _set(ext, field, theirs)
    if not ext:
        del case["extensions"][VENDOR]
        if not case["extensions"]:
            del case["extensions"]
    return f"$.metadata.case.extensions.{VENDOR}.{field}", field in EXTENSION_FIELDS


def refs_from_ids(refs: Any, ids: Any) -> Any:
    """Context references after an edit of the reference_context_ids written from them: a source
    still listed keeps its reference (snapshot, span); a new one is a reference without a
    snapshot, which the validator asks a person to name (evidence-without-snapshot)."""
    if not isinstance(ids, list):
        return None if ids is None else ids  # not a list of ids: the schema says what is wrong
    unused = [ref for ref in refs if isinstance(ref, dict)] if isinstance(refs, list) else []
    out = []
    for source in ids:
        kept = next((ref for ref in unused if ref.get("source") == source), None)
        if kept is not None:
            unused.remove(kept)
        out.append(kept if kept is not None else {"source": source})
    return out


def _set(target: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value


def _foreign_row(sample: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    row_id = rec.generated_id(VENDOR, index)
    report.infer("$.id", row_id, "Ragas samples have no id; numbered by place in the file")
    value: dict[str, Any] = {"id": row_id, "input": _natural_input(sample["user_input"])}
    calls, reference = sample.get("reference_tool_calls"), sample.get("reference")
    case: dict[str, Any]
    if calls:
        value["expected"] = _calls(calls)
        case = rec.imported_case(row_id, value["expected"], True, report, "Ragas")
        if isinstance(reference, str):
            case["expectedBehavior"] = reference
            report.infer("$.metadata.case.expectedBehavior", row_id, "the sample's reference: the outcome in words")
    else:
        has = isinstance(reference, str)
        if has:
            value["expected"] = reference
        case = rec.imported_case(row_id, reference, has, report, "Ragas")
    rubrics = sample.get("rubrics")
    if isinstance(rubrics, dict) and rubrics and "expected" not in value:
        case["oracleType"] = "rubric"
        case["evaluationCriteria"] = [str(v) for v in rubrics.values()]
        report.infer("$.metadata.case.oracleType", row_id, "the sample has rubrics and no reference")
    metadata: dict[str, Any] = {}
    for field, key in CONTEXTS.items():
        if field in sample:
            metadata[key] = sample[field]
            report.infer(f"$.metadata.{key}", row_id, f"the sample's {field}: a label, not input")
    run = {k: sample[k] for k in RUN_FIELDS if k in sample}
    if run:
        metadata[RUN_KEY] = run
        report.infer(f"$.metadata.{RUN_KEY}", row_id, "run output (response, retrieved contexts), kept beside the case")
    ext = {k: sample[k] for k in EXTENSION_FIELDS if sample.get(k) is not None}
    if ext:
        case.setdefault("extensions", {})[VENDOR] = ext
    for key in sorted(sample.keys() - KNOWN):
        case.setdefault("extensions", {}).setdefault(VENDOR, {})[key] = sample[key]
        report.ignore(f"$.{key}", row_id, f"not a Ragas sample field; kept in metadata.case.extensions.{VENDOR}.{key}")
    value["metadata"] = {"case": case, **metadata}
    return value

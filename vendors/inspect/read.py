"""Inspect AI samples -> canonical rows: JSON arrays, JSONL and csv_dataset CSV.

A sample evalconv wrote carries its case profile in `metadata.case`; its native fields win over
the carried copies whenever they differ (an edit made in Inspect), and the read report says so.
A sample evalconv did not write gets a case profile inferred from its target, each inference
in the read report. `FieldSpec` maps other column names onto Inspect's sample fields.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from typing import Any, Iterator

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import ReadError, RowError
from evalconv.canonical.reporting import QuietLoss, ReadReporter
from evalconv.canonical.row import Row
from evalconv.canonical.source import MAX_LINE_BYTES, Lines, SourceRow

from .._common import records as rec
from .fields import CARRIED_ORACLES, EXTENSION_FIELDS, NO_TARGET_CSV, SAMPLE_FIELDS, VENDOR
from .write import STARTER_KEY, build_sample

csv.field_size_limit(MAX_LINE_BYTES)
EDITED = "edited in Inspect: the native value differs from the copy evalconv carried; the edit wins"
EDITED_ONLY_COPY = ("edited in Inspect: the value differs from what evalconv wrote (its fingerprint in "
                    "metadata.evalconv.sums); the edit is what the row holds")


@dataclass(frozen=True)
class FieldSpec:
    """Inspect's FieldSpec: which record key holds each sample field (metadata: keys to collect)."""

    input: str = "input"
    target: str = "target"
    choices: str = "choices"
    id: str = "id"
    metadata: tuple[str, ...] | None = None
    sandbox: str = "sandbox"
    files: str = "files"
    setup: str = "setup"
    description: str = "description"
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, mapping: dict[str, Any], source: str) -> "FieldSpec":
        unknown = set(mapping) - set(SAMPLE_FIELDS)
        if unknown:
            kind = "sample fields" if len(unknown) > 1 else "sample field"
            raise ReadError(f"field spec: unknown {kind} {', '.join(sorted(unknown))} "
                            f"(known: {', '.join(SAMPLE_FIELDS)})", source=source)
        meta = mapping.get("metadata")
        if meta is not None and not (isinstance(meta, list) and all(isinstance(m, str) for m in meta)):
            raise ReadError("field spec: metadata must be a list of column names", source=source)
        for key, value in mapping.items():
            if key != "metadata" and not isinstance(value, str):
                raise ReadError(f"field spec: {key} must name a column", source=source)
        args = {k: v for k, v in mapping.items() if k != "metadata"}
        return cls(**args, metadata=tuple(meta) if meta is not None else None)

    def apply(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record with Inspect's own field names (the default spec changes nothing)."""
        if self == FieldSpec():
            return record
        out = {name: record[getattr(self, name)] for name in SAMPLE_FIELDS
               if name != "metadata" and getattr(self, name) in record}
        if self.metadata is not None:
            out["metadata"] = {key: record.get(key) for key in self.metadata}
        elif "metadata" in record:
            out["metadata"] = record["metadata"]
        return out


def read_samples(lines: Lines, report: ReadReporter, spec: FieldSpec | None = None) -> Iterator[SourceRow]:
    spec = spec or FieldSpec()

    def build(record: dict[str, Any], index: int, cells: bool = False) -> dict[str, Any]:
        return row_value(spec.apply(record), index, report, cells)

    return rec.read_records(lines, build, lambda first, rest: rec.csv_records(
        first, rest, lines, lambda record, index: build(record, index, True)))


def row_value(sample: dict[str, Any], index: int, report: ReadReporter, cells: bool = False) -> dict[str, Any]:
    """The canonical row of one Inspect sample (raises RowError)."""
    sample = _decoded(sample) if cells else sample
    metadata = sample.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise RowError("metadata must be an object", "$.metadata", None)
    if "input" not in sample or sample["input"] in (None, "", []):
        raise RowError("the sample has no input (Inspect refuses it too)", "$.input", None)
    case = metadata.get("case")
    if isinstance(case, dict) and isinstance(case.get("caseId"), str) and isinstance(case.get("oracleType"), str):
        return _own_row(sample, metadata, report, cells)
    return _foreign_row(sample, metadata, index, report)


def _decoded(cells: dict[str, Any]) -> dict[str, Any]:
    """csv_dataset's reading of text cells: empty is absent; metadata, sandbox lists and files are JSON."""
    out: dict[str, Any] = {}
    for key, cell in cells.items():
        if cell == "":
            continue
        if key in ("metadata", "files") or (key == "sandbox" and cell.lstrip().startswith("[")):
            try:
                out[key] = jsonvalue.loads(cell)
            except jsonvalue.JSONValueError as err:
                raise RowError(f"{key} cell is not JSON ({err})", f"$.{key}", None) from None
        elif key == "choices":
            parts = cell.split(",")
            out[key] = [p.strip() for p in (parts if len(parts) > 1 else cell.split()) if p.strip()]
        else:
            out[key] = cell
    return out


def _natural_input(value: Any) -> Any:
    return {"messages": value} if isinstance(value, list) else value


def _own_row(sample: dict[str, Any], metadata: dict[str, Any], report: ReadReporter, cells: bool) -> dict[str, Any]:
    raw_id = sample.get("id")
    row_id = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else ""
    if not row_id:
        raise RowError("id must be a non-empty string or an integer", "$.id", None)
    envelope = metadata.get(rec.ENVELOPE)
    envelope = envelope if isinstance(envelope, dict) else {}
    meta = {k: v for k, v in metadata.items() if k != rec.ENVELOPE}
    rec.restore_shadowed(meta, envelope, (rec.ENVELOPE,))
    if envelope.get("starter"):
        meta.pop(STARTER_KEY, None)
    rec.name_metadata_edits(meta, envelope, "Inspect", row_id, report)
    value: dict[str, Any] = {"id": row_id}
    value["input"] = envelope["input"] if "input" in envelope else _natural_input(sample["input"])
    target = sample.get("target")
    if "expected" in envelope:
        value["expected"] = envelope["expected"]
    elif (envelope.get("target") != "criteria" and metadata["case"]["oracleType"] not in CARRIED_ORACLES
          and _blank(target) is not None):
        value["expected"] = target
    value["metadata"] = meta
    _take_edits(value, sample, envelope, report, cells)
    return value


def _take_edits(value: dict[str, Any], sample: dict[str, Any], envelope: dict[str, Any], report: ReadReporter,
                cells: bool) -> None:
    """Where a native field differs from what evalconv writes for the carried row, the edit wins."""
    try:
        written = build_sample(Row.from_json(value), QuietLoss(), csv_cells=cells)
    except Exception:  # the carried copy is not a valid row; the validator will say why
        return
    written = _decoded(written) if cells else written
    row_id, case = value["id"], value["metadata"]["case"]
    if not jsonvalue.same(written["input"], sample["input"]):
        value["input"] = _natural_input(sample["input"])
        report.edit("$.input", row_id, EDITED)
    native, ours = sample.get("target"), written.get("target")
    if not jsonvalue.same(_blank(native), _blank(ours)):
        if case["oracleType"] in CARRIED_ORACLES:
            _take_typed_target(case, native, row_id, report)
        elif envelope.get("target") == "criteria" and "expected" not in value:
            criteria = native.split("\n") if isinstance(native, str) else native
            if criteria in (None, ""):
                case.pop("evaluationCriteria", None)
            else:
                case["evaluationCriteria"] = criteria
            report.edit("$.metadata.case.evaluationCriteria", row_id, EDITED)
        else:
            if _blank(native) is None:
                value.pop("expected", None)
            else:
                value["expected"] = native
            report.edit("$.expected", row_id, EDITED)
    for key in rec.edited_fields(sample, envelope):  # fields with no other copy than their fingerprint
        report.edit("$.expected" if key == "target" else f"$.{key}", row_id, EDITED_ONLY_COPY)
    ext = case.get("extensions", {}).get(VENDOR)
    for key in EXTENSION_FIELDS:
        if not jsonvalue.same(sample.get(key), written.get(key)):
            ext = case.setdefault("extensions", {}).setdefault(VENDOR, ext or {})
            if key in sample:
                ext[key] = sample[key]
            else:
                ext.pop(key, None)
            report.edit(f"$.metadata.case.extensions.{VENDOR}.{key}", row_id, EDITED)


def _take_typed_target(case: dict[str, Any], native: Any, row_id: str, report: ReadReporter) -> None:
    """A target typed on a case whose expected value is not a text (tool calls, a final state,
    behaviour) is kept beside that value, in extensions.inspect.target, never in its place."""
    extensions = case.setdefault("extensions", {})
    ext = extensions.setdefault(VENDOR, {})
    if _blank(native) is None:
        ext.pop("target", None)
        if not ext:
            del extensions[VENDOR]
        if not extensions:
            del case["extensions"]
    else:
        ext["target"] = native
    report.edit(f"$.metadata.case.extensions.{VENDOR}.target", row_id,
                f"the target was edited in Inspect on an {case['oracleType']} case, whose expected value is "
                f"not a text: kept in metadata.case.extensions.{VENDOR}.target (written back as the target); "
                "the expected value is unchanged")


def _blank(value: Any) -> Any:
    return None if value in ("", [], None, NO_TARGET_CSV) else value


def _foreign_row(sample: dict[str, Any], metadata: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    raw_id = sample.get("id")
    ext: dict[str, Any] = {}
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        row_id = str(raw_id)
        ext["idType"] = "integer"
    elif isinstance(raw_id, str) and raw_id:
        row_id = raw_id
    else:
        row_id = rec.generated_id(VENDOR, index)
        report.infer("$.id", row_id, "the sample has no id; numbered by its place in the file")
    value: dict[str, Any] = {"id": row_id, "input": _natural_input(sample["input"])}
    target = sample.get("target")
    if isinstance(target, list) and len(target) == 1:
        target = target[0]
    has_expected = target not in (None, "", [])
    if has_expected:
        value["expected"] = target
    meta = dict(metadata)
    case = rec.imported_case(row_id, target, has_expected, report, "Inspect")
    if isinstance(target, list):
        case["oracleType"] = "acceptable-set"
        report.infer("$.metadata.case.oracleType", row_id,
                     "several targets: Inspect's match/includes pass on any of them")
    for key in EXTENSION_FIELDS:
        if key in sample and sample[key] is not None:
            ext[key] = sample[key]
    if "choices" in ext:
        report.infer(f"$.metadata.case.extensions.{VENDOR}.choices", row_id,
                     "multiple choice: the choices go back to Inspect from here; other tools do not show them")
    rec.keep_foreign_case(meta, case, VENDOR, row_id, report)
    if ext:
        case.setdefault("extensions", {}).setdefault(VENDOR, {}).update(ext)
    value["metadata"] = {"case": case, **meta}
    return value

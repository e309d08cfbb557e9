"""LangSmith dataset examples: JSONL for `Client.create_examples`, and what users download.

Writes one `{id, inputs, outputs, metadata, split}` example a line. Reads those back exactly,
plus `list_examples()` dumps (JSON or JSONL), `create_examples` files and the UI's CSV download.
The rules are in docs/vendors/langsmith.md; its field table is `FIELD_MAP` rendered.
"""
from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any, Iterator, TextIO

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.format import FieldLoss, Format, LineWriter, Variant, WriteOptions
from evalconv.canonical.head import record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.row import Row
from evalconv.canonical.schema import CASE_FIELDS
from evalconv.canonical.source import Lines, SourceRow
from evalconv.canonical.validator import review_mark

from .._common import records as rec
from .csv_export import is_langsmith_csv, read_csv

VENDOR = "langsmith"
# uuid5(NAMESPACE_URL, "https://evalconv.dev/vendors/langsmith"): the namespace of derived example ids.
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://evalconv.dev/vendors/langsmith")
_NAMESPACE_BYTES = ID_NAMESPACE.bytes
INPUT_KEY = "input"        # a non-object input is written as {"input": value}
EXPECTED_KEY = "expected"  # expected is written as outputs {"expected": value}, whatever its type
CRITERIA_KEY = "criteria"  # evaluationCriteria, also in outputs: the judge's reference
SPLIT_KEY = "dataset_split"
OUTPUTS_KEY = "outputs"  # extensions.langsmith.outputs: outputs keys added in LangSmith
EDITED = ("edited in LangSmith: it differs from what evalconv wrote (its fingerprint in metadata.evalconv.sums); "
          "the edit is kept")
# Top-level metadata keys LangSmith users filter and group by -> the case field projected there.
PROJECTIONS = {"case_family": "caseFamily", "oracle_type": "oracleType"}
STARTER_KEY = "starter_example"  # metadata key that tells a LangSmith user a row is a starter example
SYSTEM_FIELDS = {
    "dataset_id": "the dataset it lives in; set by LangSmith",
    "created_at": "set by LangSmith",
    "modified_at": "set by LangSmith",
    "source_run_id": "a link to a LangSmith run, meaningful only inside LangSmith",
    "attachments": "attachment links work only live in LangSmith",
    "name": "set by LangSmith",
    "runs": "runs are results, not case data",
    "use_source_run_io": "an upload option, not case data",
    "use_source_run_attachments": "an upload option, not case data",
}
KNOWN_FIELDS = {"id", "inputs", "outputs", "reference_outputs", "metadata", "split", *SYSTEM_FIELDS}

_CASE_REASON = "LangSmith has no case profile; carried for the round trip, nothing in LangSmith reads it"
_PROJECTED_REASON = _CASE_REASON + "; also a top-level metadata key so the UI can filter and group by it"


def _case_entry(name: str) -> FieldLoss:
    if name == "extensions":
        return FieldLoss("$.metadata.case.extensions", "carried", "metadata.case.extensions; "
                         "extensions.langsmith.outputs also native, as outputs keys beside expected",
                         "outputs keys added in LangSmith (a rationale, say) are kept here and go back in place")
    projected = {v: k for k, v in PROJECTIONS.items()}.get(name)
    if projected:
        return FieldLoss(f"$.metadata.case.{name}", "carried",
                         f"metadata.case.{name}, also metadata.{projected}", _PROJECTED_REASON)
    return FieldLoss(f"$.metadata.case.{name}", "carried", f"metadata.case.{name}", _CASE_REASON)


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "carried", "id = uuid5 of the id (an id already in lowercase UUID form is used as "
              "is); the id itself in metadata.evalconv.id", "LangSmith example ids must be UUIDs"),
    FieldLoss("$.input", "native", 'inputs; a value that is not an object is wrapped as {"input": value}',
              "LangSmith passes inputs to the target, and inputs must be an object"),
    FieldLoss("$.expected", "native", 'outputs.expected, for every type of value (one shape across the '
              'dataset, so one evaluator reads reference_outputs["expected"]); absent: no such key',
              "evaluators receive outputs as reference_outputs; `outputs` is the key every SDK version accepts"),
    FieldLoss("$.metadata.case.evaluationCriteria", "native", "outputs.criteria (a non-empty list), and "
              "metadata.case.evaluationCriteria", "rubric criteria are labels: LangSmith's LLM-as-judge "
              "evaluators read them from reference_outputs"),
    *(_case_entry(name) for name in CASE_FIELDS),
    FieldLoss("$.metadata.dataset_split", "native", "split (LangSmith keeps it as metadata.dataset_split)",
              "LangSmith's own split; evalconv never writes metadata.dataset_split itself"),
    FieldLoss("$.metadata.dataset_split", "carried", "metadata.evalconv.shadowed.dataset_split",
              "a value that is not a string or a list of strings cannot be a LangSmith split"),
    FieldLoss("$.metadata.evalconv", "carried", "metadata.evalconv.shadowed.evalconv",
              "metadata.evalconv holds evalconv's bookkeeping in LangSmith"),
    FieldLoss("$.metadata.<other keys>", "native", "metadata.<key>",
              "LangSmith metadata is free-form; the UI filters and groups examples by its keys"),
)
_MAP = {(f.path, f.fate): f for f in FIELD_MAP}


_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def example_id(row_id: str) -> str:
    """The LangSmith id: the row's id if it is already a UUID in canonical form, else a uuid5."""
    if _CANONICAL_UUID.fullmatch(row_id):
        try:
            if str(uuid.UUID(row_id)) == row_id:
                return row_id
        except ValueError:
            pass
    return uuid5(row_id)


def uuid5(name: str) -> str:
    """`str(uuid.uuid5(ID_NAMESPACE, name))`, without building a UUID object (a row at a time)."""
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name.encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # the RFC 4122 variant
    text = digest.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _is_split(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(s, str) for s in value))


def _extension(row: Row) -> dict[str, Any]:
    ext = row.case.get("extensions", {}).get(VENDOR)
    return ext if isinstance(ext, dict) else {}


def example_record(row: Row) -> dict[str, Any]:
    """The `create_examples` dict for one row."""
    envelope: dict[str, Any] = {"id": row.id}
    wrapped: list[str] = []
    record: dict[str, Any] = {"id": example_id(row.id)}
    if isinstance(row.input, dict):
        record["inputs"] = row.input
    else:
        record["inputs"], wrapped = {INPUT_KEY: row.input}, [INPUT_KEY]
    outputs: dict[str, Any] = {}
    if row.has_expected:  # always wrapped: one shape across the dataset, so one evaluator reads it
        outputs[EXPECTED_KEY] = row.expected
        wrapped.append(EXPECTED_KEY)
    criteria = row.case.get("evaluationCriteria")
    if criteria:  # labels: where LangSmith's LLM-as-judge evaluators read references
        outputs[CRITERIA_KEY] = criteria
        envelope["criteria"] = True
    extra = _extension(row).get(OUTPUTS_KEY)
    if isinstance(extra, dict):  # outputs keys added in LangSmith, kept in the case's extensions
        outputs.update((k, v) for k, v in extra.items() if k not in outputs)
    if outputs:
        record["outputs"] = outputs
    metadata = {k: v for k, v in row.metadata.items() if k != SPLIT_KEY}
    projected = [key for key, field in PROJECTIONS.items() if field in row.case and key not in row.metadata]
    metadata.update((key, row.case_fields[PROJECTIONS[key]]) for key in projected)
    mark = review_mark(row.case)
    if mark and STARTER_KEY not in row.metadata:  # a mark, dropped on read like a projection
        metadata[STARTER_KEY] = mark
        projected.append(STARTER_KEY)
    split = row.metadata.get(SPLIT_KEY)
    if SPLIT_KEY in row.metadata:
        if _is_split(split):
            envelope["split"] = "string" if isinstance(split, str) else "list"
        else:
            envelope["shadowed"] = {SPLIT_KEY: split}
    if wrapped:
        envelope["wrapped"] = wrapped
    if projected:
        envelope["projected"] = projected
    # inputs, expected and the split have no other copy: their fingerprints tell an edit
    envelope[rec.SUMS] = {"inputs": rec.fingerprint(record["inputs"]),
                          **({"expected": rec.fingerprint(row.expected)} if row.has_expected else {}),
                          **({"split": rec.fingerprint(split)} if "split" in envelope else {}),
                          "metadata": rec.metadata_sums({k: v for k, v in row.metadata.items()
                                                         if k != SPLIT_KEY or "split" not in envelope})}
    record["metadata"] = rec.add_envelope(metadata, envelope)
    if "split" in envelope:
        record["split"] = split
    return record


class LangSmith(Format):
    name = VENDOR
    title = "LangSmith dataset examples (JSONL; reads list_examples dumps and the CSV download)"
    extensions = (".langsmith.jsonl", ".jsonl", ".json", ".csv")
    variants = (Variant("jsonl", "JSONL", (".jsonl", ".ndjson")),)
    streaming_read = True
    streaming_write = True
    write_shape = "line-per-row"
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        return _confidence(head)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> "LangSmithWriter":
        self.write_variant(options.path)  # refuses a name that promises another format
        return LangSmithWriter(out, report)

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return rec.read_records(lines, lambda record, index: row_value(record, index, report),
                                other=lambda first, rest: read_csv(first, rest, lines, report))


def _confidence(head: str) -> float:
    keys = record_keys(head)
    if keys is None:
        return 1.0 if is_langsmith_csv(head) else 0.0
    if keys.top & {"inputs", "outputs", "reference_outputs"}:
        return 1.0 if keys.top <= KNOWN_FIELDS else 0.5  # beside keys an example has not
    return 1.0 if "dataset_id" in keys.top and keys.top <= KNOWN_FIELDS else 0.0


class LangSmithWriter(LineWriter):
    """One example record a line."""

    def __init__(self, out: TextIO, report: LossReporter) -> None:
        super().__init__(out)
        self._report = report

    def encode(self, row: Row) -> tuple[str, None]:
        rec.check_value(row.to_json(), row.id, "$", "LangSmith")
        record = example_record(row)
        text = jsonvalue.dumps(record) + "\n"
        self._report_row(row, record)
        return text, None

    def _report_row(self, row: Row, record: dict[str, Any]) -> None:
        paths = ["$.id"] if record["id"] != row.id else []
        paths += [f"$.metadata.case.{name}" for name, value in row.case_fields.items()
                  if name != "evaluationCriteria" or not value]
        shadowed = record["metadata"].get(rec.ENVELOPE, {}).get("shadowed", {})
        paths += [f"$.metadata.{key}" for key in (SPLIT_KEY, rec.ENVELOPE) if key in shadowed]
        self._report.carry_all([(path, _MAP[(path, "carried")].reason) for path in paths], row.id)



def row_value(record: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    """The canonical row of one LangSmith example (raises RowError)."""
    metadata = record.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise RowError("metadata must be an object", "$.metadata", _partial(record))
    envelope = metadata.get(rec.ENVELOPE)
    if isinstance(envelope, dict) and isinstance(envelope.get("id"), str) and envelope["id"]:
        value = _own_row(record, metadata, envelope, report)
    else:
        value = _foreign_row(record, metadata, index, report)
    rec.ignore_fields(record, SYSTEM_FIELDS, value["id"], report)
    for key in record.keys() - KNOWN_FIELDS:
        report.ignore(f"$.{key}", value["id"], "not a LangSmith example field")
    return value


def _partial(record: dict[str, Any]) -> dict[str, Any] | None:
    row_id = record.get("id")
    return {"id": row_id} if isinstance(row_id, str) and row_id else None


def _outputs(record: dict[str, Any], row_id: str, report: ReadReporter) -> Any:
    outputs = record.get("outputs")
    alias = record.get("reference_outputs")
    if outputs is None:
        return alias
    if alias is not None and not jsonvalue.same(alias, outputs):
        report.ignore("$.reference_outputs", row_id, "the record also has outputs, which win")
    return outputs


def _own_row(record: dict[str, Any], metadata: dict[str, Any], envelope: dict[str, Any],
             report: ReadReporter) -> dict[str, Any]:
    row_id = envelope["id"]
    partial = {"id": row_id}
    wrapped = _strings(envelope.get("wrapped"))
    value: dict[str, Any] = {"id": row_id, "input": _unwrap(record.get("inputs"), INPUT_KEY in wrapped,
                                                             INPUT_KEY, "$.inputs", partial)}
    outputs, criteria = _outputs_and_criteria(record, envelope, wrapped, row_id, report)
    sums = envelope.get(rec.SUMS)
    extra: dict[str, Any] = {}
    if isinstance(sums, dict):  # written with fingerprints: outputs holds expected and the kept extra keys
        if outputs is not None and not isinstance(outputs, dict):
            raise RowError("outputs must be an object", "$.outputs", partial)
        extra = {k: v for k, v in (outputs or {}).items() if k != EXPECTED_KEY}
        if outputs is not None and EXPECTED_KEY in outputs:
            value["expected"] = outputs[EXPECTED_KEY]
        _name_edits(value, record, sums, row_id, report)
    elif outputs is not None:
        value["expected"] = _unwrap(outputs, EXPECTED_KEY in wrapped, EXPECTED_KEY, "$.outputs", partial)
    projected = _strings(envelope.get("projected"))
    meta = {k: v for k, v in metadata.items() if k not in (rec.ENVELOPE, SPLIT_KEY) and k not in projected}
    user = dict(meta)  # the row's own metadata as it is now, before the case takes the native edits
    rec.restore_shadowed(user, envelope, (SPLIT_KEY, rec.ENVELOPE))
    rec.name_metadata_edits(user, envelope, "LangSmith", row_id, report)
    if isinstance(meta.get("case"), dict):
        meta["case"] = _case_with_edits(dict(meta["case"]), metadata, envelope, projected, criteria,
                                        extra if isinstance(sums, dict) else None, row_id, report)
    rec.restore_shadowed(meta, envelope, (SPLIT_KEY, rec.ENVELOPE))
    _take_split(record, metadata, envelope, meta, row_id, report)
    if isinstance(sums, dict) and "split" in sums and SPLIT_KEY in meta and \
            rec.fingerprint(meta[SPLIT_KEY]) != sums["split"]:
        report.edit(f"$.metadata.{SPLIT_KEY}", row_id, "the split was changed in LangSmith; the edit is kept")
    value["metadata"] = meta
    return value


def _outputs_and_criteria(record: dict[str, Any], envelope: dict[str, Any], wrapped: list[str], row_id: str,
                          report: ReadReporter) -> tuple[Any, Any]:
    """The example's outputs, and the criteria evalconv put beside expected (taken out of them)."""
    outputs = _outputs(record, row_id, report)
    criteria: Any = None
    if envelope.get("criteria") and isinstance(outputs, dict):
        outputs = dict(outputs)
        criteria = outputs.pop(CRITERIA_KEY, None)
        if not outputs and EXPECTED_KEY not in wrapped:
            outputs = None
    return outputs, criteria


def _case_with_edits(case: dict[str, Any], metadata: dict[str, Any], envelope: dict[str, Any], projected: list[str],
                     criteria: Any, extra: dict[str, Any] | None, row_id: str, report: ReadReporter) -> dict[str, Any]:
    """The case, with the edits made in LangSmith's own fields (criteria, projected metadata,
    extra outputs keys) taken."""
    if envelope.get("criteria"):
        rec.take_native_edit(case, "evaluationCriteria", criteria or None, "$.outputs.criteria", "LangSmith",
                             row_id, report)
    for key in projected:
        if key in PROJECTIONS:
            rec.take_native_edit(case, PROJECTIONS[key], metadata.get(key), f"$.metadata.{key}", "LangSmith",
                                 row_id, report)
    if extra is not None:
        _take_extra_outputs(case, extra, row_id, report)
    return case


def _take_split(record: dict[str, Any], metadata: dict[str, Any], envelope: dict[str, Any], meta: dict[str, Any],
                row_id: str, report: ReadReporter) -> None:
    """LangSmith's split into the row's metadata.dataset_split, unless the row had its own."""
    found = record.get("split")
    if found is None:
        found = metadata.get(SPLIT_KEY)
    if found is None:
        return
    if SPLIT_KEY in meta:
        report.ignore("$.split", row_id, "LangSmith's split; the row's own dataset_split is kept")
    elif envelope.get("split") == "string" and isinstance(found, list) and len(found) == 1:
        meta[SPLIT_KEY] = found[0]
    elif envelope.get("split") or found not in ("base", ["base"]):
        meta[SPLIT_KEY] = found
        if not envelope.get("split"):
            report.edit(f"$.metadata.{SPLIT_KEY}", row_id, "a split set in LangSmith after export; kept")
    else:
        report.ignore("$.split", row_id, "LangSmith's default split 'base'; the row had no split")


def _name_edits(value: dict[str, Any], record: dict[str, Any], sums: dict[str, Any], row_id: str,
                report: ReadReporter) -> None:
    """inputs and outputs.expected have no copy: a value whose fingerprint changed was edited."""
    if rec.fingerprint(record.get("inputs")) != sums.get("inputs"):
        report.edit("$.input", row_id, "inputs " + EDITED)
    now = rec.fingerprint(value["expected"]) if "expected" in value else None
    if now != sums.get("expected"):
        report.edit("$.expected", row_id, "outputs.expected " + EDITED)


def _take_extra_outputs(case: dict[str, Any], extra: dict[str, Any], row_id: str, report: ReadReporter) -> None:
    """outputs keys other than expected and criteria (added in LangSmith) live in extensions.langsmith.outputs."""
    extensions = case.get("extensions")
    ext = extensions.get(VENDOR) if isinstance(extensions, dict) else None
    kept = ext.get(OUTPUTS_KEY) if isinstance(ext, dict) else None
    if jsonvalue.same(extra, kept if isinstance(kept, dict) else {}):
        return
    extensions = case["extensions"] = dict(extensions) if isinstance(extensions, dict) else {}
    ext = extensions[VENDOR] = dict(ext) if isinstance(ext, dict) else {}
    if extra:
        ext[OUTPUTS_KEY] = extra
    else:
        ext.pop(OUTPUTS_KEY, None)
        if not ext:
            del extensions[VENDOR]
        if not extensions:
            del case["extensions"]
    report.edit(f"$.metadata.case.extensions.{VENDOR}.{OUTPUTS_KEY}", row_id,
                f"outputs keys {', '.join(sorted(extra)) or '(none)'} set in LangSmith beside expected: kept in "
                f"metadata.case.extensions.{VENDOR}.{OUTPUTS_KEY} and written back in outputs")


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _unwrap(value: Any, wrapped: bool, key: str, path: str, partial: dict[str, Any]) -> Any:
    if not isinstance(value, dict):
        raise RowError(f"{path[2:]} must be an object", path, partial)
    if not wrapped:
        return value
    if key not in value:
        raise RowError(f"{path[2:]} has no '{key}' key, which evalconv wrapped the value in",
                            path, partial)
    return value[key]


def _foreign_row(record: dict[str, Any], metadata: dict[str, Any], index: int,
                 report: ReadReporter) -> dict[str, Any]:
    row_id = record.get("id")
    if not (isinstance(row_id, str) and row_id):
        row_id = rec.generated_id(VENDOR, index)
        report.infer("$.id", row_id, "the example has no id; numbered by its place in the file")
    partial = {"id": row_id}
    inputs = record.get("inputs")
    if inputs is None:
        report.infer("$.input", row_id, "the example has no inputs")
    elif not isinstance(inputs, dict):
        raise RowError("inputs must be an object", "$.inputs", partial)
    outputs = _outputs(record, row_id, report)
    if outputs is not None and not isinstance(outputs, dict):
        raise RowError("outputs must be an object", "$.outputs", partial)
    meta = dict(metadata)
    split = record.get("split")
    if split is not None:
        if SPLIT_KEY in meta and not jsonvalue.same(meta[SPLIT_KEY], split):
            report.ignore("$.split", row_id, "metadata.dataset_split is LangSmith's stored split and wins")
        else:
            meta[SPLIT_KEY] = split
    case = rec.imported_case(row_id, outputs, outputs is not None, report, "LangSmith")
    rec.keep_foreign_case(meta, case, VENDOR, row_id, report)
    value: dict[str, Any] = {"id": row_id, "input": inputs}
    if outputs is not None:
        value["expected"] = outputs
    value["metadata"] = {"case": case, **meta}
    return value


FORMAT = LangSmith()

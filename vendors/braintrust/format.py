"""Braintrust dataset records: JSONL that `bt datasets create --file` and `Dataset.insert(**r)` load.

Writes `{id, tags, input, expected, metadata}` a line, nothing else (`bt` denies unknown keys).
Reads those back exactly, plus `fetch()` dumps and `bt sync` JSONL (system fields reported,
not kept), `bt` files and plain JSON arrays. The rules are in docs/vendors/braintrust.md; its
field table is `FIELD_MAP` rendered.
"""
from __future__ import annotations

from typing import Any, Iterator, TextIO

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.format import FieldLoss, Format, LineWriter, Variant, WriteOptions
from evalconv.canonical.head import record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.row import Row
from evalconv.canonical.schema import CASE_FIELDS
from evalconv.canonical.source import Lines, SourceRow
from evalconv.canonical.review import is_placeholder
from evalconv.canonical.validator import is_starter

from .._common import records as rec

VENDOR = "braintrust"
# bt_safe_deep_copy replaces a container nested deeper than this with a placeholder string.
MAX_DEPTH = 199
# Facet tags: the case field -> the tag prefix (one tag per list item for linkedConcerns).
TAG_FACETS = {"caseFamily": "family:", "oracleType": "oracle:", "linkedConcerns": "concern:"}
STARTER_TAG = "starter-example"  # on starter rows: an example, not a validated gold-standard answer
PLACEHOLDER_TAG = "placeholder-behavior"  # on imported rows whose expected behaviour a reviewer must write
SYSTEM_FIELDS = {
    "_xact_id": "Braintrust's transaction (version) id",
    "created": "set by Braintrust on insert",
    "_pagination_key": "Braintrust's paging cursor",
    "project_id": "the project it lives in",
    "dataset_id": "the dataset it lives in",
    "span_id": "trace plumbing",
    "root_span_id": "trace plumbing",
    "span_parents": "trace plumbing",
    "is_root": "trace plumbing",
    "origin": "a link to another Braintrust object, meaningful only inside Braintrust",
    "comments": "UI comments, not case data",
    "audit_data": "UI audit trail, not case data",
    "facets": "UI facets, not case data",
    "classifications": "UI classifications, not case data",
}
RECORD_FIELDS = {"id", "input", "expected", "output", "metadata", "tags"}

EDITED = ("edited in Braintrust: it differs from what evalconv wrote (its fingerprint in metadata.evalconv.sums); "
          "the edit is kept")
_CASE_REASON = "Braintrust has no case profile; carried for the round trip, nothing in Braintrust reads it"


def _case_entry(name: str) -> FieldLoss:
    prefix = TAG_FACETS.get(name)
    where = f"metadata.case.{name}"
    if prefix:
        each = " for each item" if name == "linkedConcerns" else ""
        return FieldLoss(f"$.metadata.case.{name}", "carried", f"{where}, also tag {prefix}<value>{each}",
                         _CASE_REASON + "; the tag lets the UI filter by it")
    return FieldLoss(f"$.metadata.case.{name}", "carried", where, _CASE_REASON)


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "native", "id", "any string; Braintrust upserts by it"),
    FieldLoss("$.input", "native", "input", "passed to the task"),
    FieldLoss("$.expected", "native", "expected; absent: left out (a null is marked in "
              "metadata.evalconv.expectedNull)", "passed to scorers; Braintrust stores a missing "
              "expected as null, so the mark tells the two apart"),
    *(_case_entry(name) for name in CASE_FIELDS),
    FieldLoss("$.metadata.tags", "native", "metadata.tags; a list of strings is also copied to the "
              "native tags", "Braintrust filters and groups records by tags"),
    FieldLoss("$.metadata.evalconv", "carried", "metadata.evalconv.shadowed.evalconv",
              "metadata.evalconv holds evalconv's bookkeeping in Braintrust"),
    FieldLoss("$.metadata.<other keys>", "native", "metadata.<key>",
              "Braintrust passes metadata to scorers and tasks and filters on it"),
)
_CARRIED = {f.path: f.reason for f in FIELD_MAP if f.fate == "carried"}
_CASE_CARRIED = {path.removeprefix("$.metadata.case."): (path, reason) for path, reason in _CARRIED.items()
                 if path.startswith("$.metadata.case.")}  # case field -> (path, reason), for carry_all


def facet_tags(case: Any, metadata: dict[str, Any]) -> list[str]:
    """The native tags of a row: its facets, then its metadata.tags strings, each once."""
    case = case if isinstance(case, dict) else {}
    tags = [STARTER_TAG] if is_starter(case) else [PLACEHOLDER_TAG] if is_placeholder(case) else []
    for field, prefix in TAG_FACETS.items():
        values = case.get(field)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str):
                tags.append(prefix + value)
    own = metadata.get("tags")
    if isinstance(own, list):
        tags += [t for t in own if isinstance(t, str)]
    return list(dict.fromkeys(tags))


def dataset_record(row: Row) -> dict[str, Any]:
    """The `bt` / `Dataset.insert` record for one row (tags second, so detection sees them)."""
    record: dict[str, Any] = {"id": row.id, "tags": facet_tags(row.case, row.metadata), "input": row.input}
    envelope: dict[str, Any] = {}
    if row.has_expected:
        record["expected"] = row.expected
        if row.expected is None:
            envelope["expectedNull"] = True
    # input, expected and the metadata keys have no other copy: their fingerprints tell an edit
    envelope[rec.SUMS] = {"input": rec.fingerprint(row.input),
                          **({"expected": rec.fingerprint(row.expected)} if row.has_expected else {}),
                          "metadata": rec.metadata_sums(row.metadata)}
    record["metadata"] = rec.add_envelope(row.metadata, envelope)
    return record


class Braintrust(Format):
    name = VENDOR
    title = "Braintrust dataset records (JSONL; reads fetch dumps, bt files and JSON arrays)"
    extensions = (".braintrust.jsonl", ".jsonl", ".json")
    variants = (Variant("jsonl", "JSONL", (".jsonl", ".ndjson")),)
    streaming_read = True
    streaming_write = True
    write_shape = "line-per-row"
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        return 1.0 if _looks_like_records(head) else 0.0

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> "BraintrustWriter":
        self.write_variant(options.path)  # refuses a name that promises another format
        return BraintrustWriter(out, report)

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return rec.read_records(lines, lambda record, index: row_value(record, index, report))


def _looks_like_records(head: str) -> bool:
    keys = record_keys(head)
    if not keys or not keys.top:
        return False
    top = keys.top
    if "input" not in top or not top <= RECORD_FIELDS | SYSTEM_FIELDS.keys():
        return False
    if "tags" in top or top & SYSTEM_FIELDS.keys():
        return True
    return bool(top & {"expected", "output"}) and not keys.has("metadata", "case")


class BraintrustWriter(LineWriter):
    """One dataset record a line."""

    def __init__(self, out: TextIO, report: LossReporter) -> None:
        super().__init__(out)
        self._report = report

    def encode(self, row: Row) -> tuple[str, None]:
        record = dataset_record(row)
        for key in ("input", "expected", "metadata", "tags"):
            if key in record:
                rec.check_value(record[key], row.id, f"$.{key}", "Braintrust", MAX_DEPTH)
        text = jsonvalue.dumps(record) + "\n"
        carried = [_CASE_CARRIED[name] for name in row.case]
        if rec.ENVELOPE in row.metadata:
            carried.append(("$.metadata.evalconv", _CARRIED["$.metadata.evalconv"]))
        self._report.carry_all(carried, row.id)
        return text, None


def row_value(record: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    """The canonical row of one Braintrust record (raises RowError)."""
    row_id = record.get("id")
    partial = {"id": row_id} if isinstance(row_id, str) and row_id else None
    metadata = record.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise RowError("metadata must be an object", "$.metadata", partial)
    tags = record.get("tags") or []
    if not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise RowError("tags must be a list of strings", "$.tags", partial)
    case = metadata.get("case")
    if isinstance(case, dict) and isinstance(case.get("caseId"), str) and isinstance(case.get("oracleType"), str):
        value = _own_row(record, metadata, tags, partial, report)
    else:
        value = _foreign_row(record, metadata, tags, index, report)
    rec.ignore_fields(record, SYSTEM_FIELDS, value["id"], report)
    for key in record.keys() - RECORD_FIELDS - SYSTEM_FIELDS.keys():
        report.ignore(f"$.{key}", value["id"], "not a Braintrust dataset field")
    return value


def _expected(record: dict[str, Any]) -> tuple[bool, Any]:
    """(present, value), `output` being Braintrust's legacy name for expected."""
    for key in ("expected", "output"):
        if record.get(key) is not None:
            return True, record[key]
    return ("expected" in record or "output" in record), None


def _own_row(record: dict[str, Any], metadata: dict[str, Any], tags: list[str],
             partial: dict[str, Any] | None, report: ReadReporter) -> dict[str, Any]:
    if partial is None:
        raise RowError("id must be a non-empty string", "$.id", None)
    row_id = partial["id"]
    envelope = metadata.get(rec.ENVELOPE)
    envelope = envelope if isinstance(envelope, dict) else {}
    value: dict[str, Any] = {"id": row_id, "input": record.get("input")}
    present, expected = _expected(record)
    if expected is not None or (present and envelope.get("expectedNull")):
        value["expected"] = expected
    meta = {k: v for k, v in metadata.items() if k != rec.ENVELOPE}
    rec.restore_shadowed(meta, envelope, (rec.ENVELOPE,))
    _name_edits(value, meta, envelope, row_id, report)
    if isinstance(meta.get("case"), dict):
        meta["case"] = _take_tag_edits(dict(meta["case"]), tags, meta.get("tags"), row_id, report)
    known = set(facet_tags(meta.get("case"), meta))
    extra = [t for t in tags if t not in known]
    if extra:
        own = meta.get("tags")
        if own is None or (isinstance(own, list) and all(isinstance(t, str) for t in own)):
            meta["tags"] = (own or []) + extra
            report.edit("$.metadata.tags", row_id, f"tags {', '.join(extra)} added in Braintrust after export; "
                        "kept in metadata.tags")
        else:
            report.ignore("$.tags", row_id, "tags added in Braintrust; metadata.tags is not a list to keep them in")
    value["metadata"] = meta
    return value


def _name_edits(value: dict[str, Any], meta: dict[str, Any], envelope: dict[str, Any], row_id: str,
                report: ReadReporter) -> None:
    """input, expected and metadata have no copy: a value whose fingerprint changed was edited in
    Braintrust (the edit is what the row holds); a metadata key added or removed there too."""
    sums = envelope.get(rec.SUMS)
    if not isinstance(sums, dict):
        return  # written before fingerprints were kept
    if rec.fingerprint(value["input"]) != sums.get("input"):
        report.edit("$.input", row_id, "input " + EDITED)
    if (rec.fingerprint(value["expected"]) if "expected" in value else None) != sums.get("expected"):
        report.edit("$.expected", row_id, "expected " + EDITED)
    rec.name_metadata_edits(meta, envelope, "Braintrust", row_id, report)


def _take_tag_edits(case: dict[str, Any], tags: list[str], own: Any, row_id: str, report: ReadReporter) -> dict[str, Any]:
    """A facet tag that names another value than the carried case field was edited in
    Braintrust: the edit wins (one tag per single-valued field; the concern tags as a list)."""
    own_tags = {t for t in own if isinstance(t, str)} if isinstance(own, list) else set()
    for name, prefix in TAG_FACETS.items():
        values = [t[len(prefix):] for t in tags if t.startswith(prefix) and t not in own_tags]
        if name not in case or not values:
            continue
        native: Any = values if name == "linkedConcerns" else values[0] if len(values) == 1 else None
        written = list(dict.fromkeys(case[name])) if isinstance(case[name], list) else case[name]
        if native is not None and not jsonvalue.same(native, written):  # the tags keep each value once
            rec.take_native_edit(case, name, native, f"tag {prefix}<value>", "Braintrust", row_id, report)
    return case


def _foreign_row(record: dict[str, Any], metadata: dict[str, Any], tags: list[str], index: int,
                 report: ReadReporter) -> dict[str, Any]:
    row_id = record.get("id")
    if not (isinstance(row_id, str) and row_id):
        row_id = rec.generated_id(VENDOR, index)
        report.infer("$.id", row_id, "the record has no id; numbered by its place in the file")
    if "input" not in record:
        report.infer("$.input", row_id, "the record has no input")
    value: dict[str, Any] = {"id": row_id, "input": record.get("input")}
    present, expected = _expected(record)
    if expected is not None:
        value["expected"] = expected
    elif present:
        report.infer("$.expected", row_id, "a null expected is Braintrust's 'no expected'; read as absent")
    meta = dict(metadata)
    case = rec.imported_case(row_id, expected, expected is not None, report, "Braintrust")
    rec.keep_foreign_case(meta, case, VENDOR, row_id, report)
    if tags:
        if "tags" not in meta:
            meta["tags"] = tags
            report.infer("$.metadata.tags", row_id, "the record's tags")
        else:
            case.setdefault("extensions", {}).setdefault(VENDOR, {})["tags"] = tags
            report.infer(f"$.metadata.case.extensions.{VENDOR}", row_id,
                         "the record's tags (its metadata already has a tags key)")
    value["metadata"] = {"case": case, **meta}
    return value


FORMAT = Braintrust()

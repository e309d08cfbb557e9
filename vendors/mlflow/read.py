"""MLflow GenAI evaluation dataset records -> canonical rows.

Reads what `merge_records` takes (JSONL, a JSON array) and what `to_df()` gives, saved with
`df.to_json(orient="records", lines=True)` (or `orient="records"`): MLflow's own columns are
reported and not kept. A record evalconv wrote carries its case profile in the tag `case` and its
id in `case_id`; a value edited in MLflow wins over the copy and the read report names it. A
record evalconv did not write gets a case profile inferred from its expectations.
"""
from __future__ import annotations

from typing import Any, Iterator

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.reporting import ReadReporter
from evalconv.canonical.source import Lines, SourceRow
from evalconv.vendors._common import records as rec

from .fields import (CASE_TAG, CHECK_KEY, EXPECTATIONS_EXT, GUIDELINES, ID_TAG, INPUT_KEY, MLFLOW_TAG_PREFIX,
                     RECORD_FIELDS, STARTER_TAG, SYSTEM_FIELDS, VENDOR)

EDITED = ("edited in MLflow: it differs from what evalconv wrote (its fingerprint in tags.evalconv.sums); "
          "the edit is kept")


def read_records(lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
    return rec.read_records(lines, lambda record, index: row_value(record, index, report))


def _object(record: dict[str, Any], key: str, partial: dict[str, Any] | None) -> dict[str, Any]:
    value = record.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RowError(f"{key} must be an object (MLflow refuses anything else)", f"$.{key}", partial)
    return value


def row_value(record: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    """The canonical row of one MLflow record (raises RowError)."""
    tags = _object(record, "tags", None)
    own_id = tags.get(ID_TAG)
    partial = {"id": own_id} if isinstance(own_id, str) and own_id else None
    if "inputs" not in record:
        raise RowError("the record has no inputs (MLflow refuses it too)", "$.inputs", partial)
    inputs = _object(record, "inputs", partial)
    expectations = _object(record, "expectations", partial)
    case, envelope = tags.get(CASE_TAG), tags.get(rec.ENVELOPE)
    if (partial and isinstance(case, dict) and isinstance(case.get("caseId"), str)
            and isinstance(case.get("oracleType"), str) and isinstance(envelope, dict)):
        value = _own_row(partial["id"], inputs, expectations, tags, envelope, report)
    else:
        value = _foreign_row(record, inputs, expectations, tags, index, report)
    rec.ignore_fields(record, SYSTEM_FIELDS, value["id"], report)
    for key in record.keys() - RECORD_FIELDS - SYSTEM_FIELDS.keys():
        report.ignore(f"$.{key}", value["id"], "not an MLflow dataset record field")
    return value


def _own_row(row_id: str, inputs: dict[str, Any], expectations: dict[str, Any], tags: dict[str, Any],
             envelope: dict[str, Any], report: ReadReporter) -> dict[str, Any]:
    partial = {"id": row_id}
    if envelope.get("wrapped"):
        if INPUT_KEY not in inputs:
            raise RowError(f"inputs has no '{INPUT_KEY}' key, which evalconv wrapped the value in", "$.inputs", partial)
        value: dict[str, Any] = {"id": row_id, "input": inputs[INPUT_KEY]}
    else:
        value = {"id": row_id, "input": inputs}
    expectations = dict(expectations)
    expectations.pop(CHECK_KEY, None)  # derived from the case profile
    key = envelope.get("expected")
    if isinstance(key, str) and key in expectations:
        value["expected"] = expectations.pop(key)
    elif envelope.get("expectedNull"):
        value["expected"] = None
    guidelines = expectations.pop(GUIDELINES, None) if envelope.get("guidelines") else None
    meta: dict[str, Any] = {}
    for name, tag in tags.items():
        if name in (ID_TAG, CASE_TAG, rec.ENVELOPE, STARTER_TAG):  # a user key of these names is shadowed
            continue
        if name.startswith(MLFLOW_TAG_PREFIX):
            report.ignore(f"$.tags.{name}", row_id, "MLflow's own tag")
            continue
        meta[name] = tag
    rec.restore_shadowed(meta, envelope, tuple(_shadowed_keys(envelope)))
    _name_edits(value, inputs, envelope, row_id, report)
    rec.name_metadata_edits(meta, envelope, "MLflow", row_id, report)
    case = dict(tags[CASE_TAG])
    if envelope.get("guidelines"):
        rec.take_native_edit(case, "evaluationCriteria", guidelines or None, "expectations.guidelines", "MLflow",
                             row_id, report)
    _take_extra_expectations(case, expectations, row_id, report)
    value["metadata"] = {"case": case, **meta}
    return value


def _shadowed_keys(envelope: dict[str, Any]) -> list[str]:
    shadowed = envelope.get("shadowed")
    return list(shadowed) if isinstance(shadowed, dict) else []


def _name_edits(value: dict[str, Any], inputs: dict[str, Any], envelope: dict[str, Any], row_id: str,
                report: ReadReporter) -> None:
    sums = envelope.get(rec.SUMS)
    if not isinstance(sums, dict):
        return
    if rec.fingerprint(inputs) != sums.get("inputs"):
        report.edit("$.input", row_id, "inputs " + EDITED)
    if (rec.fingerprint(value["expected"]) if "expected" in value else None) != sums.get("expected"):
        report.edit("$.expected", row_id, "the expected value " + EDITED)


def _take_extra_expectations(case: dict[str, Any], extra: dict[str, Any], row_id: str, report: ReadReporter) -> None:
    """Expectations evalconv does not map live in extensions.mlflow.expectations; a change made in
    MLflow (a key added, changed or removed) is kept there and named."""
    extensions = case.get("extensions")
    ext = extensions.get(VENDOR) if isinstance(extensions, dict) else None
    kept = ext.get(EXPECTATIONS_EXT) if isinstance(ext, dict) else None
    written = {k: v for k, v in kept.items() if v is not None} if isinstance(kept, dict) else {}
    if jsonvalue.same(extra, written):  # the writer leaves out a null (evaluate refuses it)
        return
    extensions = case["extensions"] = dict(extensions) if isinstance(extensions, dict) else {}
    ext = extensions[VENDOR] = dict(ext) if isinstance(ext, dict) else {}
    if extra:
        ext[EXPECTATIONS_EXT] = extra
    else:
        ext.pop(EXPECTATIONS_EXT, None)
        if not ext:
            del extensions[VENDOR]
        if not extensions:
            del case["extensions"]
    report.edit(f"$.metadata.case.extensions.{VENDOR}.{EXPECTATIONS_EXT}", row_id,
                f"expectations {', '.join(sorted(extra)) or '(none)'} set in MLflow beside what evalconv wrote: kept "
                f"in metadata.case.extensions.{VENDOR}.{EXPECTATIONS_EXT} and written back in expectations")


# ---------------------------------------------------------------- records evalconv did not write

def _foreign_row(record: dict[str, Any], inputs: dict[str, Any], expectations: dict[str, Any],
                 tags: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    row_id = tags.get(ID_TAG)
    if not (isinstance(row_id, str) and row_id):
        row_id = record.get("dataset_record_id")
        if isinstance(row_id, str) and row_id:
            report.infer("$.id", row_id, "MLflow's dataset_record_id (the record has no case_id tag)")
        else:
            row_id = rec.generated_id(VENDOR, index)
            report.infer("$.id", row_id, "the record has no case_id tag; numbered by its place in the file")
    extra = dict(expectations)
    value: dict[str, Any] = {"id": row_id, "input": inputs}
    oracle, why = "expected-behavior-only", "no expected_response, expected_tool_calls or guidelines"
    if "expected_response" in extra:
        value["expected"] = extra.pop("expected_response")
        oracle, why = "reference-answer", "expectations.expected_response is the reference"
    elif isinstance(extra.get("expected_tool_calls"), list):
        value["expected"] = extra.pop("expected_tool_calls")
        oracle, why = "expected-tool-calls", "expectations.expected_tool_calls"
    case: dict[str, Any] = {"caseId": row_id, "oracleType": oracle, "expectedBehavior": "", "provenance": "imported"}
    guidelines = extra.get(GUIDELINES)
    if isinstance(guidelines, list) and guidelines and all(isinstance(g, str) and g for g in guidelines):
        case["evaluationCriteria"] = extra.pop(GUIDELINES)
        report.infer("$.metadata.case.evaluationCriteria", row_id, "expectations.guidelines")
        if "expected" not in value:
            case["oracleType"], why = "rubric", "guidelines and no reference: a rubric case"
    elif "expected" not in value and extra.get("expected_facts"):
        case["oracleType"], why = "rubric", "expected_facts and no reference: a rubric case (the facts kept in extensions.mlflow)"
    report.infer("$.metadata.case.oracleType", row_id, why)
    report.infer("$.metadata.case.provenance", row_id, "imported: an MLflow record evalconv did not write")
    report.infer("$.metadata.case.expectedBehavior", row_id, "left empty: MLflow records do not say it in words; fill it in")
    if extra:
        case["extensions"] = {VENDOR: {EXPECTATIONS_EXT: extra}}
        report.infer(f"$.metadata.case.extensions.{VENDOR}", row_id,
                     f"expectations {', '.join(sorted(extra))} kept for the way back (evalconv does not map them)")
    meta = {}
    for name, tag in tags.items():
        if name.startswith(MLFLOW_TAG_PREFIX):
            report.ignore(f"$.tags.{name}", row_id, "MLflow's own tag")
        elif name != ID_TAG:
            meta[name] = tag
    rec.keep_foreign_case(meta, case, VENDOR, row_id, report)
    value["metadata"] = {"case": case, **meta}
    return value

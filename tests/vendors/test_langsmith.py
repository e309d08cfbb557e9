"""LangSmith: each mapping rule, the readers on the vendor's own files, detection, errors, docs."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

import evalconv
from conftest import row
from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import UsageError, WriteError
from evalconv.canonical.row import Row
from evalconv.registry import REGISTRY
from evalconv.vendors.langsmith import format as ls
from roundtrip_helpers import read_text, write_text
from interop import vendor_fixtures

FIXTURES, MANIFEST = vendor_fixtures("langsmith")


def one(value: dict) -> tuple[dict, evalconv.LossReport]:
    text, loss = write_text("langsmith", [Row.from_json(value)])
    return jsonvalue.loads(text), loss


def back(value: dict) -> dict:
    text, _ = write_text("langsmith", [Row.from_json(value)])
    [checked], _ = read_text("langsmith", text)
    assert checked.row is not None, checked.findings
    return checked.row.to_json()


# ---------------------------------------------------------------- writer rules

def test_id_is_a_stable_uuid5_and_the_original_is_carried():
    record, loss = one(row("cs-refund-1"))
    assert record["id"] == str(uuid.uuid5(ls.ID_NAMESPACE, "cs-refund-1")) == ls.example_id("cs-refund-1")
    assert record["metadata"]["evalconv"]["id"] == "cs-refund-1"
    assert "$.id" in loss.carried.paths_for("cs-refund-1")
    assert back(row("cs-refund-1"))["id"] == "cs-refund-1"


def test_an_id_that_is_already_a_canonical_uuid_is_kept_native():
    rid = "12ea79fa-7587-465f-a731-ee86831a856a"
    record, loss = one(row(rid))
    assert record["id"] == rid and "$.id" not in loss.carried.paths_for(rid)
    upper = rid.upper()
    assert one(row(upper))[0]["id"] != upper  # LangSmith would lowercase it: derive instead
    assert back(row(upper))["id"] == upper


@pytest.mark.parametrize("value", ["Can I return it?", 7, 1.0, None, True, [1, "a"], {"input": "x"}, {}])
def test_input_is_an_object_wrapped_when_it_is_not_one(value):
    source = {**row(), "input": value}
    record, _ = one(source)
    if isinstance(value, dict):
        assert record["inputs"] == value
        assert "input" not in record["metadata"]["evalconv"]["wrapped"]
    else:
        assert record["inputs"] == {"input": value}
        assert record["metadata"]["evalconv"]["wrapped"][0] == "input"
    assert jsonvalue.same(back(source), source)


@pytest.mark.parametrize("expected", [(), (None,), ("Yes",), ({"answer": "Yes"},), ([{"name": "f"}],)])
def test_expected_goes_to_outputs(expected):
    source = row(expected=expected)
    record, _ = one(source)
    if expected == ():
        assert "outputs" not in record
    else:  # one shape for every value, objects too (issue 14)
        assert record["outputs"] == {"expected": expected[0]}
        assert "expected" in record["metadata"]["evalconv"]["wrapped"]
    assert jsonvalue.same(back(source), source)


def test_files_written_before_every_expected_was_wrapped_still_read():
    source = row(expected=({"answer": "Yes"},))
    record, _ = one(source)
    record["outputs"] = record["outputs"]["expected"]
    record["metadata"]["evalconv"]["wrapped"].remove("expected")
    del record["metadata"]["evalconv"]["sums"]  # nor kept fingerprints
    checked, _ = read_text("langsmith", jsonvalue.dumps(record) + "\n")
    assert jsonvalue.same(checked[0].row.to_json(), source)


@pytest.mark.parametrize("expected", [(), ("Yes",)])
def test_criteria_are_reference_outputs_and_edits_there_win(expected):
    source = row(expected=expected, evaluator="llm-judge", oracle="rubric" if expected == () else "reference-answer",
                 evaluationCriteria=["Names the amount", "Cites the policy"])
    record, report = one(source)
    assert record["outputs"]["criteria"] == ["Names the amount", "Cites the policy"]
    assert "$.metadata.case.evaluationCriteria" not in {p for p, _ in report.carried.entries}
    assert jsonvalue.same(back(source), source)
    record["outputs"]["criteria"] = ["Names the amount"]
    checked, read_report = read_text("langsmith", jsonvalue.dumps(record) + "\n")
    assert checked[0].row.case["evaluationCriteria"] == ["Names the amount"]
    assert [e["path"] for e in read_report.to_json()["edited"]] == ["$.metadata.case.evaluationCriteria"]


def test_an_edited_projection_wins_and_is_said():
    source = row(expected=("Yes",), caseFamily="refunds")
    record, _ = one(source)
    record["metadata"]["case_family"] = "returns"
    checked, read_report = read_text("langsmith", jsonvalue.dumps(record) + "\n")
    assert checked[0].row.case["caseFamily"] == "returns"
    [entry] = read_report.to_json()["edited"]
    assert entry["path"] == "$.metadata.case.caseFamily" and "metadata.case_family was edited" in entry["reason"]


def test_labels_never_reach_inputs():
    source = row(expected=("secret answer",), unacceptableBehavior=["leak"], evaluationCriteria=["c"])
    record, _ = one(source)
    assert record["inputs"] == {"input": "Question?"}
    assert "secret answer" not in json.dumps(record["inputs"])


def test_case_profile_is_carried_and_family_and_oracle_are_projected():
    source = row(caseFamily="refunds", linkedConcerns=["fraud"])
    record, loss = one(source)
    meta = record["metadata"]
    assert meta["case"] == source["metadata"]["case"]
    assert meta["case_family"] == "refunds" and meta["oracle_type"] == "reference-answer"
    assert meta["evalconv"]["projected"] == ["case_family", "oracle_type"]
    carried = loss.carried.paths_for("cs-1")
    assert carried == {"$.id", *(f"$.metadata.case.{k}" for k in source["metadata"]["case"])}
    assert not loss.lossy
    assert jsonvalue.same(back(source), source)


def test_user_keys_named_like_a_projection_win():
    source = row(caseFamily="refunds")
    source["metadata"]["case_family"] = {"mine": 1}
    record, _ = one(source)
    assert record["metadata"]["case_family"] == {"mine": 1}
    assert record["metadata"]["evalconv"]["projected"] == ["oracle_type"]
    assert jsonvalue.same(back(source), source)


@pytest.mark.parametrize("split", ["test", ["base", "smoke"], []])
def test_dataset_split_becomes_the_native_split(split):
    source = row()
    source["metadata"]["dataset_split"] = split
    record, loss = one(source)
    assert record["split"] == split and "dataset_split" not in record["metadata"]
    assert "$.metadata.dataset_split" not in loss.carried.paths_for("cs-1")
    assert jsonvalue.same(back(source), source)


def test_a_split_that_cannot_be_a_split_is_shadowed():
    source = row()
    source["metadata"]["dataset_split"] = {"not": "a split"}
    record, loss = one(source)
    assert "split" not in record and "dataset_split" not in record["metadata"]
    assert record["metadata"]["evalconv"]["shadowed"] == {"dataset_split": {"not": "a split"}}
    assert "$.metadata.dataset_split" in loss.carried.paths_for("cs-1")
    assert jsonvalue.same(back(source), source)


def test_a_user_evalconv_key_is_shadowed_and_restored():
    source = row()
    source["metadata"]["evalconv"] = {"id": "not ours"}
    record, loss = one(source)
    assert record["metadata"]["evalconv"]["shadowed"] == {"evalconv": {"id": "not ours"}}
    assert "$.metadata.evalconv" in loss.carried.paths_for("cs-1")
    assert jsonvalue.same(back(source), source)


def test_loss_report_reasons_come_from_the_field_map():
    _, loss = one(row(caseFamily="f"))
    reasons = {(f.path, f.reason) for f in ls.FIELD_MAP}
    assert all((path, reason) in reasons for (path, reason) in loss.carried.entries)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinities_are_refused(bad):
    with pytest.raises(WriteError) as err:
        write_text("langsmith", [Row.from_json({**row(), "input": {"x": [bad]}})])
    assert "cs-1" in str(err.value) and "$.input" in str(err.value)


def test_the_writer_refuses_a_non_jsonl_name(tmp_path):
    with pytest.raises(UsageError):
        evalconv.write([Row.from_json(row())], str(tmp_path / "out.json"), to="langsmith")
    report = evalconv.write([Row.from_json(row())], str(tmp_path / "out.langsmith.jsonl"), to="langsmith")
    assert report.rows == 1


# ---------------------------------------------------------------- readers on LangSmith's own files

@pytest.mark.parametrize("entry", MANIFEST["files"], ids=lambda e: e["path"])
def test_fixture_reads_into_valid_imported_rows(entry):
    path = FIXTURES / Path(entry["path"]).name
    result = evalconv.read(str(path))
    assert result.format == "langsmith"
    assert result.log.error_count == 0, result.log.errors
    assert len(result.rows) == entry["rows"]
    for r in result.rows:
        assert r.case["provenance"] == "imported" and r.case["caseId"] == r.id
    inferred = {p for p, _ in result.report.inferred.entries}
    assert {"$.metadata.case.oracleType", "$.metadata.case.provenance"} <= inferred
    for fact in entry["facts"]:
        got = result.rows[fact["row"]]
        if fact["id"]:
            assert got.id == fact["id"]["value"]
        if entry["kind"].startswith("ui-download-csv"):
            assert got.input == {k[len("input_"):]: v for k, v in fact["input"]["value"].items()}
            assert got.expected == {k[len("output_"):]: v for k, v in fact["expected"]["value"].items()}
            continue
        assert jsonvalue.same(got.input, fact["input"]["value"])
        assert jsonvalue.same(got.expected, fact["expected"]["value"])
        assert jsonvalue.same(got.metadata["dataset_split"], fact["split"])
        user = {k: v for k, v in got.metadata.items() if k not in ("case", "dataset_split")}
        assert jsonvalue.same(user, {k: v for k, v in fact["metadata"].items() if k != "dataset_split"})


def test_dump_system_fields_are_reported_not_kept():
    result = evalconv.read(str(FIXTURES / "examples_dump.jsonl"))
    ignored = {p for p, _ in result.report.ignored.entries}
    assert {"$.dataset_id", "$.created_at", "$.modified_at"} <= ignored
    assert all(set(r.metadata) <= {"case", "dataset_split", "category", "source", "ticket_id", "product",
                                   "schema_version", "reviewed_by"} for r in result.rows)


def test_oracle_types_are_inferred_from_the_outputs():
    result = evalconv.read(str(FIXTURES / "create_examples.jsonl"))
    assert [r.case["oracleType"] for r in result.rows] == [
        "expected-tool-calls", "expected-tool-calls", "reference-answer", "reference-answer",
        "reference-answer", "expected-tool-calls"]
    assert [r.id for r in result.rows] == [f"langsmith-{n}" for n in range(1, 7)]


def test_reference_outputs_alias_and_missing_outputs():
    text = (json.dumps({"id": "a", "inputs": {"q": 1}, "reference_outputs": {"a": 2}}) + "\n"
            + json.dumps({"id": "b", "inputs": {"q": 1}, "outputs": None}) + "\n")
    checked, report = read_text("langsmith", text)
    assert checked[0].row.expected == {"a": 2}
    assert not checked[1].row.has_expected
    assert checked[1].row.case["oracleType"] == "expected-behavior-only"


def test_a_foreign_metadata_case_moves_to_extensions():
    text = json.dumps({"id": "a", "inputs": {}, "metadata": {"case": "ticket-7"}}) + "\n"
    [checked], _ = read_text("langsmith", text)
    assert checked.row.case["extensions"] == {"langsmith": {"metadata.case": "ticket-7"}}


def test_split_set_in_langsmith_after_export_is_kept_and_base_is_ignored():
    record, _ = one(row())
    dumped = [{**record, "metadata": {**record["metadata"], "dataset_split": s}} for s in (["base"], ["gold"])]
    dumped[1]["id"] = ls.example_id("cs-2")
    dumped[1]["metadata"]["evalconv"] = {**dumped[1]["metadata"]["evalconv"], "id": "cs-2"}
    dumped[1]["metadata"]["case"] = {**dumped[1]["metadata"]["case"], "caseId": "cs-2"}
    checked, report = read_text("langsmith", "".join(json.dumps(d) + "\n" for d in dumped))
    assert "dataset_split" not in checked[0].row.metadata
    assert checked[1].row.metadata["dataset_split"] == ["gold"]
    assert ("$.split" in report.ignored.paths_for("cs-1")
            and "$.metadata.dataset_split" in report.edited.paths_for("cs-2"))


@pytest.mark.parametrize("line, path, words", [
    ('{"id": "x", "inputs": "a string"}', "$.inputs", "inputs must be an object"),
    ('{"id": "x", "inputs": {}, "outputs": "s"}', "$.outputs", "outputs must be an object"),
    ('{"id": "x", "inputs": {}, "metadata": []}', "$.metadata", "metadata must be an object"),
    ('{"id": "x", "inputs": {}, "metadata": {"evalconv": {"id": "r", "wrapped": ["input"]}}}',
     "$.inputs", "no 'input' key"),
    ('{"id": "x", "inputs": {", ', "$", "not valid JSON"),
])
def test_bad_records_are_parse_findings_with_a_path(line, path, words):
    text = '{"id": "ok", "inputs": {"q": 1}}\n' + line + "\n"
    checked, _ = read_text("langsmith", text)
    assert checked[0].row is not None
    [finding] = checked[1].errors
    assert finding.path == path and words in finding.message and finding.line == 2


def test_a_csv_without_input_columns_is_unreadable(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("question,answer\nq,a\n")
    with pytest.raises(evalconv.ReadError, match="no input_<key> column"):
        evalconv.read(str(path), from_="langsmith")


def test_csv_cells_stay_text_and_empty_cells_are_absent():
    checked, _ = read_text("langsmith", 'input_q,input_n,output_a\r\n"x, y",,"{""a"":1}"\r\n')
    got = checked[0].row
    assert got.input == {"q": "x, y"} and got.expected == {"a": '{"a":1}'}


# ---------------------------------------------------------------- detection and docs

def test_detection_claims_langsmith_only():
    fmt = REGISTRY.get("langsmith")
    canonical = jsonvalue.dumps(row()) + "\n"
    assert not fmt.detect(canonical)
    assert not fmt.detect('[{"input": "q", "expected_output": "a", "additional_metadata": null}]')
    assert not fmt.detect('{"id": "r", "input": "q", "expected": "a", "_xact_id": "1", "dataset_id": "d"}')
    assert not fmt.detect("id,input,case.oracleType\n")
    assert fmt.detect('{"dataset_id": "7cb68b90-d037-455b-97b1-f20cac2a0fe2", "inputs": {')  # cut off
    assert fmt.detect('[\n  {\n    "inputs": {"q": 1}, "outputs": null}]')
    assert fmt.detect("input_question,output_answer\r\n")
    text, _ = write_text("langsmith", [Row.from_json(row())])
    assert fmt.detect(text)
    for name in ("a.langsmith.jsonl", "a.jsonl", "a.json", "a.csv"):
        assert fmt.matches_path(name)


def test_the_langsmith_cli_export_array_reads():
    text = json.dumps([{"inputs": {"q": "a"}, "outputs": {"a": "b"}}, {"inputs": {"q": "c"}, "outputs": None}])
    checked, _ = read_text("langsmith", text)
    assert [c.row.id for c in checked] == ["langsmith-1", "langsmith-2"]
    assert checked[0].row.expected == {"a": "b"} and not checked[1].row.has_expected


# ---------------------------------------------------------------- hostile input never escapes as a traceback

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from strategies import json_values  # noqa: E402

_ENVELOPES = st.fixed_dictionaries({"id": st.one_of(st.just("r"), json_values)}, optional={
    "wrapped": json_values, "projected": json_values, "split": json_values, "shadowed": json_values})
_RECORDS = st.fixed_dictionaries({}, optional={
    "id": json_values, "inputs": json_values, "outputs": json_values, "reference_outputs": json_values,
    "split": json_values, "dataset_id": json_values,
    "metadata": st.one_of(json_values, st.fixed_dictionaries({}, optional={
        "evalconv": st.one_of(_ENVELOPES, json_values), "case": json_values, "dataset_split": json_values,
        "case_family": json_values}))})


@settings(max_examples=300)
@given(records=st.lists(_RECORDS, max_size=4))
def test_any_record_reads_to_a_row_or_a_finding(records):
    checked, _ = read_text("langsmith", "".join(jsonvalue.dumps(r) + "\n" for r in records))
    assert len(checked) == len(records)


def test_langsmith_edits_to_every_native_field_are_kept_and_named(tmp_path, capsys):
    """Issue 24: an added outputs key (a rationale) was dropped and a changed split kept unreported."""
    from conftest import run_cli
    source = row(expected=("Yes",), oracle="reference-answer", caseFamily="refunds",
                 evaluationCriteria=["Polite"])
    source["input"] = {"question": "Refund?"}
    source["metadata"]["dataset_split"] = "smoke"
    record, _ = one(source)
    record["inputs"] = {"question": "Refund now?"}
    record["outputs"].update(expected="No", rationale="policy 4.2")
    record["outputs"]["criteria"] = ["Polite", "Brief"]
    record["split"] = "regression"
    record["metadata"]["case_family"] = "billing"
    record["metadata"]["reviewer"] = "dana"
    [checked], report = read_text("langsmith", jsonvalue.dumps(record) + "\n")
    got = checked.row
    assert got.input == {"question": "Refund now?"} and got.expected == "No"
    assert got.metadata["dataset_split"] == "regression" and got.metadata["reviewer"] == "dana"
    assert got.case["extensions"]["langsmith"]["outputs"] == {"rationale": "policy 4.2"}
    assert got.case["evaluationCriteria"] == ["Polite", "Brief"] and got.case["caseFamily"] == "billing"
    assert report.edited.paths_for("cs-1") == {
        "$.input", "$.expected", "$.metadata.dataset_split", "$.metadata.case.evaluationCriteria",
        "$.metadata.case.caseFamily", "$.metadata.case.extensions.langsmith.outputs", "$.metadata.reviewer"}
    assert not report.inferred.entries
    again, _ = one(got.to_json())  # the rationale goes back where LangSmith shows it
    assert again["outputs"]["rationale"] == "policy 4.2"
    [checked], report = read_text("langsmith", jsonvalue.dumps(again) + "\n")
    assert checked.row == got and not report.edited.entries
    path = tmp_path / "edited.langsmith.jsonl"
    path.write_text(jsonvalue.dumps(record) + "\n", encoding="utf-8")
    code, err = run_cli([str(path), "--from", "langsmith", "--to", "jsonl", "-o", str(tmp_path / "out.jsonl")], capsys)
    assert code == 0
    for where in ("$.input", "$.expected", "$.metadata.dataset_split", "$.metadata.case.extensions.langsmith.outputs"):
        assert f"row 'cs-1' {where}" in err, err

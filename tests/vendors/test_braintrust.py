"""Braintrust: each mapping rule, the reader on the vendor's own files, detection, errors, docs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalconv
from conftest import row
from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import UsageError, WriteError
from evalconv.canonical.row import Row
from evalconv.registry import REGISTRY
from evalconv.vendors.braintrust import format as bt
from roundtrip_helpers import read_text, write_text
from interop import vendor_fixtures

FIXTURES, MANIFEST = vendor_fixtures("braintrust")


def one(value: dict) -> tuple[dict, evalconv.LossReport]:
    text, loss = write_text("braintrust", [Row.from_json(value)])
    return jsonvalue.loads(text), loss


def back(text: str) -> dict:
    [checked], _ = read_text("braintrust", text)
    assert checked.row is not None, checked.findings
    return checked.row.to_json()


# ---------------------------------------------------------------- writer rules

def test_record_is_the_canonical_row_plus_facet_tags():
    source = row("cs-refund", caseFamily="refunds", linkedConcerns=["fraud", "pii"])
    source["metadata"]["source"] = "faq"
    record, loss = one(source)
    assert list(record) == ["id", "tags", "input", "expected", "metadata"]
    assert record["id"] == "cs-refund" and record["input"] == "Question?" and record["expected"] == "Yes"
    sums = record["metadata"].pop("evalconv")["sums"]  # only the fingerprints that name an edit
    assert record["metadata"] == source["metadata"] and set(sums) == {"input", "expected", "metadata"}
    assert record["tags"] == ["family:refunds", "oracle:reference-answer", "concern:fraud", "concern:pii"]
    assert loss.carried.paths_for("cs-refund") == {f"$.metadata.case.{k}" for k in source["metadata"]["case"]}
    assert not loss.lossy
    record["metadata"]["evalconv"] = {"sums": sums}
    assert jsonvalue.same(back(jsonvalue.dumps(record) + "\n"), source)


def test_metadata_tags_become_native_tags_once():
    source = row(linkedConcerns=["x"])
    source["metadata"]["tags"] = ["concern:x", "mine", "mine", 3]
    record, _ = one(source)
    assert record["tags"] == ["oracle:reference-answer", "concern:x", "mine"]
    assert record["metadata"]["tags"] == ["concern:x", "mine", "mine", 3]
    assert jsonvalue.same(back(jsonvalue.dumps(record) + "\n"), source)


def test_labels_never_reach_input():
    record, _ = one(row(expected=("secret",), unacceptableBehavior=["leak"]))
    assert record["input"] == "Question?"


@pytest.mark.parametrize("expected", [(), (None,), ("x",), ({"a": [1, 1.0]},)])
def test_absent_and_null_expected_survive_braintrusts_null(expected):
    source = row(expected=expected)
    record, _ = one(source)
    assert ("expected" in record) == (expected != ())
    envelope = {k: v for k, v in record["metadata"]["evalconv"].items() if k != "sums"}
    assert envelope == ({"expectedNull": True} if expected == (None,) else {})
    assert jsonvalue.same(back(jsonvalue.dumps(record) + "\n"), source)
    stored = {**record, "expected": record.get("expected")}  # what Braintrust stores and fetch() returns
    assert jsonvalue.same(back(jsonvalue.dumps(stored) + "\n"), source)


def test_a_user_evalconv_key_is_shadowed_and_restored():
    source = row()
    source["metadata"]["evalconv"] = "mine"
    record, loss = one(source)
    assert record["metadata"]["evalconv"]["shadowed"] == {"evalconv": "mine"}
    assert "$.metadata.evalconv" in loss.carried.paths_for("cs-1")
    assert jsonvalue.same(back(jsonvalue.dumps(record) + "\n"), source)


def test_tags_added_in_braintrust_are_kept_in_metadata_tags():
    record, _ = one(row())
    record["tags"] = record["tags"] + ["reviewed"]
    got = back(jsonvalue.dumps(record) + "\n")
    assert got["metadata"]["tags"] == ["reviewed"]


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_values_braintrust_would_coerce_are_refused(bad):
    with pytest.raises(WriteError, match=r"cs-1.*Braintrust") as err:
        write_text("braintrust", [Row.from_json({**row(), "expected": {"score": bad}})])
    assert err.value.field == "$.expected.score"


def test_nesting_deeper_than_braintrust_keeps_is_refused():
    deep = 1
    for _ in range(bt.MAX_DEPTH):
        deep = [deep]
    write_text("braintrust", [Row.from_json({**row(), "input": deep})])
    with pytest.raises(WriteError, match="nested deeper"):
        write_text("braintrust", [Row.from_json({**row(), "input": [deep]})])


def test_the_writer_refuses_a_non_jsonl_name(tmp_path):
    with pytest.raises(UsageError):
        evalconv.write([Row.from_json(row())], str(tmp_path / "out.csv"), to="braintrust")


# ---------------------------------------------------------------- readers on Braintrust's own files

@pytest.mark.parametrize("entry", MANIFEST["files"], ids=lambda e: e["path"])
def test_fixture_reads_into_valid_imported_rows(entry):
    result = evalconv.read(str(FIXTURES / Path(entry["path"]).name))
    assert result.format == "braintrust"
    assert result.log.error_count == 0, result.log.errors
    assert len(result.rows) == entry["rows"]
    for r in result.rows:
        assert r.case["provenance"] == "imported" and r.case["caseId"] == r.id
    for fact in entry["facts"]:
        got = result.rows[fact["row"]]
        assert got.id == (fact["id"]["value"] if fact["id"] else f"braintrust-{fact['row'] + 1}")
        assert jsonvalue.same(got.input, fact["input"]["value"])
        assert jsonvalue.same(got.expected, fact["expected"]["value"])
        user = {k: v for k, v in got.metadata.items() if k not in ("case", "tags")}
        assert jsonvalue.same(user, fact["metadata"])
        assert got.metadata.get("tags") == fact.get("tags")


def test_fetch_dump_system_fields_are_reported_not_kept():
    result = evalconv.read(str(FIXTURES / "fetch_dump.jsonl"))
    ignored = {p for p, _ in result.report.ignored.entries}
    assert ignored == {"$._xact_id", "$.created", "$._pagination_key", "$.project_id", "$.dataset_id",
                       "$.span_id", "$.root_span_id", "$.is_root"}
    assert all("_xact_id" not in json.dumps(r.to_json()) for r in result.rows)


def test_oracle_types_are_inferred():
    rows = evalconv.read(str(FIXTURES / "bt_create.jsonl")).rows
    assert {r.case["oracleType"] for r in rows} == {"expected-tool-calls"}
    text = '{"input": "q"}\n{"input": "q", "expected": null, "output": "legacy"}\n{"input": "q", "expected": null}\n'
    checked, report = read_text("braintrust", text)
    assert [c.row.case["oracleType"] for c in checked] == [
        "expected-behavior-only", "reference-answer", "expected-behavior-only"]
    assert checked[1].row.expected == "legacy" and not checked[2].row.has_expected
    assert "$.expected" in report.inferred.paths_for("braintrust-3")


def test_foreign_tags_with_a_metadata_tags_key_go_to_extensions():
    text = '{"id": "a", "input": 1, "metadata": {"tags": "x", "case": 5}, "tags": ["t"]}\n'
    got = back(text)
    assert got["metadata"]["tags"] == "x"
    assert got["metadata"]["case"]["extensions"] == {"braintrust": {"tags": ["t"], "metadata.case": 5}}


def test_rows_document_and_pretty_printed_objects_are_read():
    doc = json.dumps({"rows": [{"id": "a", "input": 1}, {"id": "b", "input": 2}]}, indent=2)
    assert [c.row.id for c in read_text("braintrust", doc)[0]] == ["a", "b"]
    pretty = json.dumps({"id": "a", "input": 1}, indent=2) + "\n" + json.dumps({"id": "b", "input": 2}, indent=2)
    assert [c.row.id for c in read_text("braintrust", pretty)[0]] == ["a", "b"]


@pytest.mark.parametrize("line, path, words", [
    ('{"id": "x", "input": 1, "metadata": [1]}', "$.metadata", "metadata must be an object"),
    ('{"id": "x", "input": 1, "tags": "t"}', "$.tags", "tags must be a list of strings"),
    ('{"id": 5, "input": 1, "metadata": {"case": {"caseId": "5", "oracleType": "rubric"}}}', "$.id", "id must"),
    ("[1, 2]", "$", "must be a JSON object"),
    ('{"id": "x", ', "$", "not valid JSON"),
])
def test_bad_records_are_parse_findings_with_a_path(line, path, words):
    checked, _ = read_text("braintrust", '{"id": "ok", "input": 1}\n' + line + "\n")
    assert checked[0].row is not None
    [finding] = checked[1].errors
    assert finding.path == path and words in finding.message and finding.line == 2


def test_text_that_is_not_json_records_is_unreadable():
    with pytest.raises(evalconv.ReadError, match="expected JSON records"):
        read_text("braintrust", "id,input\n")


# ---------------------------------------------------------------- detection and docs

def test_detection_claims_braintrust_only():
    fmt = REGISTRY.get("braintrust")
    assert not fmt.detect(jsonvalue.dumps(row()) + "\n")  # canonical row: metadata.case, no tags
    assert not fmt.detect(jsonvalue.dumps({**row(), "metadata": {"case": {}, "x": 1}}))
    assert not fmt.detect('[{"input": "q", "expected_output": "a", "additional_metadata": null}]')
    assert not fmt.detect('{"inputs": {"q": 1}, "outputs": {"a": 1}}')
    assert not fmt.detect('{"vars": {"q": 1}, "assert": []}')
    assert fmt.detect('[\n  {\n    "input": "q",\n    "expected": {"a": ')  # cut off
    assert fmt.detect('{"id": "r", "_xact_id": "1", "input": "q"')
    long_input = {"id": "cs-1", "tags": ["oracle:rubric"], "input": "x" * 9000}
    assert fmt.detect(jsonvalue.dumps(long_input)[:8192])
    text, _ = write_text("braintrust", [Row.from_json(row())])
    assert fmt.detect(text) and not REGISTRY.get("langsmith").detect(text)
    assert REGISTRY.detect("set.jsonl", text).name == "braintrust"
    for name in ("a.braintrust.jsonl", "a.jsonl", "a.json"):
        assert fmt.matches_path(name)


# ---------------------------------------------------------------- hostile input never escapes as a traceback

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from strategies import json_values  # noqa: E402

_CASES = st.fixed_dictionaries({"caseId": json_values, "oracleType": json_values}, optional={
    "caseFamily": json_values, "linkedConcerns": json_values})
_RECORDS = st.fixed_dictionaries({}, optional={
    "id": json_values, "input": json_values, "expected": json_values, "output": json_values,
    "tags": st.one_of(json_values, st.lists(st.text(max_size=3))), "_xact_id": json_values,
    "metadata": st.one_of(json_values, st.fixed_dictionaries({}, optional={
        "case": st.one_of(_CASES, json_values), "tags": json_values,
        "evalconv": st.one_of(st.fixed_dictionaries({}, optional={
            "shadowed": json_values, "expectedNull": json_values}), json_values)}))})


@settings(max_examples=300)
@given(records=st.lists(_RECORDS, max_size=4))
def test_any_record_reads_to_a_row_or_a_finding(records):
    checked, _ = read_text("braintrust", "".join(jsonvalue.dumps(r) + "\n" for r in records))
    assert len(checked) == len(records)


def test_an_edited_facet_tag_wins_and_is_said():
    """Issue 14: an edit in Braintrust's native field wins over the copy in metadata.case, and
    the read says so; an edit to expected (no copy but its fingerprint) is named too (issue 24)."""
    value = row("cs-1", caseFamily="refunds", linkedConcerns=["money", "trust"])
    text, _ = write_text("braintrust", [Row.from_json(value)])
    record = jsonvalue.loads(text)
    record["tags"] = ["family:returns", "oracle:reference-answer", "concern:money"]
    record["expected"] = "Edited"
    checked, report = read_text("braintrust", jsonvalue.dumps(record) + "\n")
    got = checked[0].row
    assert got.case["caseFamily"] == "returns" and got.case["linkedConcerns"] == ["money"]
    assert got.expected == "Edited"
    edited = {e["path"]: e["ids"] for e in report.to_json()["edited"]}
    assert edited == {"$.metadata.case.caseFamily": ["cs-1"], "$.metadata.case.linkedConcerns": ["cs-1"],
                      "$.expected": ["cs-1"]}
    _, quiet = read_text("braintrust", text)
    assert "edited" not in quiet.to_json()


def test_braintrust_edits_to_expected_metadata_and_tags_are_kept_and_named(tmp_path, capsys):
    """Issue 24: a changed expected, an added metadata key and added tags read back with no word."""
    from conftest import run_cli
    source = row("cs-1", caseFamily="refunds")
    source["metadata"].update(source="faq", tags=["mine"])
    record, _ = one(source)
    record["input"] = "Question, edited?"
    record["expected"] = "No"
    record["metadata"]["reviewer"] = "dana"
    record["metadata"]["source"] = "chat"
    record["metadata"]["case"]["expectedBehavior"] = "Says no."
    record["tags"] = [*record["tags"], "reviewed"]
    [checked], report = read_text("braintrust", jsonvalue.dumps(record) + "\n")
    got = checked.row
    assert got.input == "Question, edited?" and got.expected == "No"
    assert got.metadata["reviewer"] == "dana" and got.metadata["tags"] == ["mine", "reviewed"]
    assert got.case["expectedBehavior"] == "Says no."
    assert report.edited.paths_for("cs-1") == {"$.input", "$.expected", "$.metadata.reviewer", "$.metadata.source",
                                                "$.metadata.case", "$.metadata.tags"}
    assert not report.inferred.entries
    again, _ = one(got.to_json())
    [checked], report = read_text("braintrust", jsonvalue.dumps(again) + "\n")
    assert checked.row == got and not report.edited.entries
    path = tmp_path / "edited.braintrust.jsonl"
    path.write_text(jsonvalue.dumps(record) + "\n", encoding="utf-8")
    code, err = run_cli([str(path), "--from", "braintrust", "--to", "jsonl", "-o", str(tmp_path / "out.jsonl")], capsys)
    assert code == 0
    for where in ("$.expected", "$.metadata.reviewer", "$.metadata.tags"):
        assert f"row 'cs-1' {where}" in err, err

"""Schema versions (issue 28 §3): a row is checked against its own version, `schema --version N`
prints each, and every canonical format holds version 2's fields exactly."""
from __future__ import annotations

import json

import pytest
from versioned_sets import CANONICAL, EVIDENCE_ROW, findings, read_back, run, v2, write_set

from conftest import ROOT, row
from evalconv.canonical import schema
from evalconv.canonical.row import Row


# ------------------------------------------------------------------ the published schemas

def test_version_1_is_the_schema_published_before_versions_byte_for_byte():
    published = (ROOT / "canonical" / "schema" / "row.schema.json").read_text("utf-8")
    assert json.loads(run("schema", "--version", "1").stdout) == json.loads(published)
    assert "schemaVersion" not in json.loads(published)["definitions"]["caseProfile"]["properties"]


def test_version_2_is_version_1_plus_the_evidence_fields():
    one, two = schema.row_schema(1), schema.row_schema(2)
    added = set(schema.ADDED_IN[2])
    assert added == {"schemaVersion", "contextRefs", "targetTurn", "permission"}
    profile_one, profile_two = one["definitions"]["caseProfile"], two["definitions"]["caseProfile"]
    assert {k: v for k, v in profile_two["properties"].items() if k not in added} == profile_one["properties"]
    assert profile_two["required"] == profile_one["required"] + ["schemaVersion"]
    assert {k: v for k, v in two["definitions"].items() if k in one["definitions"] and k != "caseProfile"} == \
        {k: v for k, v in one["definitions"].items() if k != "caseProfile"}
    assert json.loads(run("schema", "--version", "2").stdout) == two
    assert json.loads(run("schema").stdout) == two  # the latest by default


def test_schema_version_that_does_not_exist_is_a_usage_error():
    result = run("schema", "--version", "3")
    assert result.exit_code == 2 and "the versions are 1, 2" in result.output


# ------------------------------------------------------------------ a row is read as its own version

@pytest.mark.parametrize("fmt", CANONICAL)
def test_a_version_1_row_with_a_version_2_field_is_an_error_naming_the_version(tmp_path, fmt):
    bad = row("old", contextRefs=[{"source": "kb", "snapshot": "1"}])
    path = write_set([row("ok"), bad], tmp_path / f"set.{fmt}")
    found = [f for f in findings(path) if f["severity"] == "error"]
    assert [(f["code"], f["id"], f["path"]) for f in found] == [("schema", "old", "$.metadata.case.contextRefs")]
    assert "field of schema version 2" in found[0]["message"] and "follows version 1" in found[0]["message"]


@pytest.mark.parametrize("fmt", CANONICAL)
@pytest.mark.parametrize("version, words", [(3, "schema version 3 is not one"), (0, "schema version 0 is not one"),
                                            (True, "must be an integer"), (2.0, "must be an integer")])
def test_an_unknown_schema_version_is_an_error_never_another_version(tmp_path, fmt, version, words):
    path = write_set([row("x", schemaVersion=version)], tmp_path / f"set.{fmt}")
    found = findings(path)
    assert [(f["code"], f["path"]) for f in found] == [("schema", "$.metadata.case.schemaVersion")]
    assert words in found[0]["message"]


def test_a_row_that_says_version_1_is_read_as_version_1(tmp_path, write_jsonl):
    path = write_jsonl([row("a", schemaVersion=1), row("b")])
    assert findings(path) == []


def test_reading_a_version_1_set_says_so_in_a_note(tmp_path, write_jsonl):
    path = write_jsonl([row("a"), v2("b")])
    result = run("validate", path)
    assert result.exit_code == 0
    assert "note:" in result.output and "1 row at schema version 1" in result.output
    assert "warning[" not in result.output and "0 warnings" in result.output
    data = json.loads(run("validate", path, "--format", "json").stdout)
    assert data["files"][0]["schema_versions"] == {"1": 1, "2": 1}
    assert "note" not in run("validate", write_jsonl([v2("c")], "new.jsonl")).output


# ------------------------------------------------------------------ the canonical formats hold version 2 exactly


@pytest.mark.parametrize("fmt", CANONICAL)
def test_version_2_fields_and_markers_round_trip_in_every_canonical_format(tmp_path, fmt, write_jsonl):
    rows = [EVIDENCE_ROW, v2("big-turn", targetTurn=10**30), v2("empty-refs", contextRefs=[]), row("v1-row"),
            row("says-1", schemaVersion=1)]
    source = write_jsonl(rows)
    out = tmp_path / f"out.{fmt}"
    result = run(source, "--to", fmt, "-o", out)
    assert result.exit_code == 0 and "lossless" in result.output
    assert read_back(out) == rows


def test_a_hand_written_sheet_with_version_2_columns_reads_the_obvious_way(tmp_path):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("id,input,case.caseId,case.oracleType,case.expectedBehavior,case.provenance,case.schemaVersion,"
                     "case.contextRefs,case.permission\r\n"
                     'a,Q?,a,expected-behavior-only,Refuses.,expert-authored, 2 ,"[{""source"":""kb"",""snapshot"":""v1""}]",'
                     '"{""callerRole"":""guest"",""resourceScope"":""own-orders""}"\r\n', encoding="utf-8")
    (value,) = read_back(sheet)
    assert value["metadata"]["case"]["schemaVersion"] == 2
    assert value["metadata"]["case"]["contextRefs"] == [{"source": "kb", "snapshot": "v1"}]
    assert value["metadata"]["case"]["permission"] == {"callerRole": "guest", "resourceScope": "own-orders"}


def test_regression_a_schema_version_cell_that_is_not_an_integer_names_the_cell(tmp_path):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("id,input,case.caseId,case.oracleType,case.expectedBehavior,case.provenance,case.schemaVersion\r\n"
                     "a,Q?,a,expected-behavior-only,Refuses.,expert-authored,2.0\r\n", encoding="utf-8")
    result = run("validate", sheet)
    assert result.exit_code == 1
    assert "$.metadata.case.schemaVersion: error[parse]: 'case.schemaVersion' holds '2.0', which is not an integer" \
        in result.output


def test_regression_a_parquet_file_written_before_version_2_columns_still_reads(tmp_path, write_jsonl):
    """Files written before the four version-2 columns existed have none of them."""
    import pyarrow.parquet as pq

    rows = [row("a"), row("b", scenario="s")]
    new = tmp_path / "new.parquet"
    assert run(write_jsonl(rows), "--to", "parquet", "-o", new).exit_code == 0
    table = pq.read_table(new)
    old = tmp_path / "old.parquet"
    pq.write_table(table.drop_columns([f"case.{f}" for f in schema.ADDED_IN[2]]), old)
    assert read_back(old) == rows


def test_regression_a_dataframe_kept_version_2_integers_and_objects_as_text(tmp_path):
    """to_dataframe put schemaVersion and contextRefs in pandas string columns: they came back "2"."""
    import evalconv

    rows = [Row.from_json(EVIDENCE_ROW), Row.from_json(row("plain")), Row.from_json(v2("big", targetTurn=10**30))]
    back = evalconv.from_dataframe(evalconv.to_dataframe(rows))
    assert not back.log.errors and back.rows == rows

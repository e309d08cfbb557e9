"""Issue 26 item 7: a row added to a sheet by hand needs its id once (a blank case.caseId cell
means the row's id), a missing caseId elsewhere says it is the id, and `new --list` explains the
R and B codes its families give."""
from __future__ import annotations

import json

from click.testing import CliRunner

from evalconv.cli import cli

HEADER = "id,input,case.caseId,case.oracleType,case.expectedBehavior,case.provenance\r\n"
WRITTEN = "r-1,Where is my parcel?,r-1,expected-behavior-only,Ask for the order number.,expert-authored\r\n"
BY_HAND = "r-2,Can I change my address?,,expected-behavior-only,Offer the address form.,expert-authored\r\n"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_blank_case_id_cell_means_the_rows_id(tmp_path):
    sheet = tmp_path / "set.csv"
    sheet.write_text(HEADER + WRITTEN + BY_HAND, encoding="utf-8", newline="")
    assert run("validate", sheet).exit_code == 0
    out = tmp_path / "set.jsonl"
    assert run(sheet, "--to", "jsonl", "-o", out).exit_code == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["metadata"]["case"]["caseId"] for r in rows] == ["r-1", "r-2"]
    assert list(rows[1]["metadata"]["case"])[0] == "caseId"
    back = tmp_path / "back.csv"
    assert run(out, "--to", "csv", "-o", back).exit_code == 0
    assert back.read_bytes() == (HEADER + WRITTEN + BY_HAND.replace(",,", ",r-2,", 1)).encode("utf-8")


def test_a_file_evalconv_wrote_round_trips_byte_for_byte_with_the_case_id_filled(tmp_path):
    sheet = tmp_path / "set.csv"
    sheet.write_bytes((HEADER + WRITTEN).encode("utf-8"))
    mid, back = tmp_path / "mid.jsonl", tmp_path / "back.csv"
    assert run(sheet, "--to", "jsonl", "-o", mid).exit_code == 0
    assert run(mid, "--to", "csv", "-o", back).exit_code == 0
    assert back.read_bytes() == sheet.read_bytes()


def test_blank_case_id_with_another_case_id_in_case_json_keeps_the_check(tmp_path):
    sheet = tmp_path / "set.csv"
    sheet.write_text(HEADER.replace("\r\n", ",case:json\r\n")
                     + BY_HAND.replace("\r\n", ',"{""caseId"": ""other""}"\r\n'), encoding="utf-8")
    result = run("validate", sheet)
    assert result.exit_code == 1 and "id-mismatch" in result.output


def test_missing_case_id_error_says_same_as_id(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"id": "a", "input": "hi", "metadata": {"case": {
        "oracleType": "expected-behavior-only", "expectedBehavior": "x", "provenance": "imported"}}}) + "\n")
    result = run("validate", path)
    assert result.exit_code == 1
    assert "missing required field 'caseId' (same as id)" in result.output


def test_new_list_gives_the_legend_of_the_r_and_b_codes():
    out = run("new", "--list").stdout
    assert "case.reversibility: R0 no state change, R1 the actor can undo it" in out
    assert "case.blastRadius: B0 one record" in out and "B3 outside" in out
    assert "  ordered-multi-step" in out and "R2 B0" in out
    listing = json.loads(run("new", "--list", "--format", "json").stdout)
    assert listing["legend"]["reversibility"]["R3"] == "no way back"
    assert "| `R0` | reversibility: no state change |" in run("new", "--list", "--format", "markdown").stdout

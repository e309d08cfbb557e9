"""Issue 12 §2: the CSV evalconv writes is a sheet a person would edit: only the columns the set
uses, the user's metadata keys in their own columns, typed columns only where a row needs them."""
from __future__ import annotations

import copy
import csv
import io
import json

import pytest

from conftest import ROOT, row
from evalconv.canonical import csv_format
from evalconv.canonical.row import Row
from evalconv.cli import main
from roundtrip_helpers import read_text, write_text

HAND_WRITTEN = (
    "id,input,expected,case.caseId,case.oracleType,case.expectedBehavior,case.provenance,"
    "case.unacceptableBehavior,case.evaluator,metadata.reason,metadata.owner\r\n"
    "r-1,Where is my order?,It ships Monday.,r-1,reference-answer,States the ship date.,expert-authored,"
    "Invents a date|Blames the customer,exact-or-programmatic,A customer asked this in May,ana\r\n"
    'r-2,"Refund, please",Refund issued,r-2,reference-answer,"Says ""refund issued"".",observed-incident,'
    "Refuses,exact-or-programmatic,Incident 42,bo\r\n"
)


def header_and_cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))


def run(args: list[str], capsys) -> int:
    try:
        main(args)
    except SystemExit as done:
        capsys.readouterr()
        return done.code
    return 0


@pytest.mark.parametrize("middle", ["jsonl", "json"])
def test_a_hand_written_sheet_comes_back_with_the_same_header_and_cells(middle, tmp_path, capsys):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(HAND_WRITTEN, encoding="utf-8", newline="")
    assert run([str(sheet), "--to", middle, "-o", str(tmp_path / f"set.{middle}")], capsys) == 0
    assert run([str(tmp_path / f"set.{middle}"), "--to", "csv", "-o", str(tmp_path / "back.csv")], capsys) == 0
    back = (tmp_path / "back.csv").read_bytes().decode("utf-8")
    assert header_and_cells(back) == header_and_cells(HAND_WRITTEN)
    assert back == HAND_WRITTEN  # byte for byte, CRLF included


def test_the_shipped_example_sheet_comes_back_identical(tmp_path, capsys):
    example = ROOT / "docs" / "examples" / "support-sheet.csv"
    assert run([str(example), "--to", "jsonl", "-o", str(tmp_path / "set.jsonl")], capsys) == 0
    assert run([str(tmp_path / "set.jsonl"), "--to", "csv", "-o", str(tmp_path / "back.csv")], capsys) == 0
    assert header_and_cells((tmp_path / "back.csv").read_text(encoding="utf-8")) == \
        header_and_cells(example.read_text(encoding="utf-8"))


def test_only_used_columns_in_the_documented_order():
    a = row("a", scenario="On the phone")
    a["metadata"].update({"reason": "seen in May", "owner": "ana"})
    b = row("b", expected=())
    b["metadata"].update({"team": "support", "reason": "a gap"})
    text, _ = write_text("csv", [Row.from_json(a), Row.from_json(b)])
    assert header_and_cells(text)[0] == [
        "id", "input", "expected", "case.caseId", "case.oracleType", "case.expectedBehavior",
        "case.provenance", "case.scenario", "metadata.reason", "metadata.owner", "metadata.team"]


def test_typed_columns_appear_only_for_the_rows_that_need_them():
    plain, typed = row("a"), row("b", expected=({"total": 1.0},))
    typed["metadata"]["score"] = 3
    typed["metadata"]["case"]["unacceptableBehavior"] = []
    typed["metadata"]["case"]["extensions"] = {"acme": {"v": 1}}
    text, _ = write_text("csv", [Row.from_json(plain), Row.from_json(typed)])
    header, first, second = header_and_cells(text)
    assert header == ["id", "input", "expected", "expected:json", "case.caseId", "case.oracleType",
                      "case.expectedBehavior", "case.provenance", "case.extensions", "case:json", "metadata:json"]
    assert first[2] == "Yes" and first[3] == "" and second[3] == '{"total":1.0}'
    assert second[-2:] == ['{"unacceptableBehavior":[]}', '{"score":3}']
    checked, _ = read_text("csv", text)
    assert [c.row.to_json() for c in checked] == [plain, typed]


def test_a_plain_key_with_a_value_that_is_not_text_in_one_row():
    rows = [row("a"), row("b"), row("c")]
    rows[0]["metadata"]["reason"] = "text"
    rows[1]["metadata"]["reason"] = ""
    rows[2]["metadata"]["reason"] = ["a", "list"]
    text, _ = write_text("csv", [Row.from_json(r) for r in rows])
    assert header_and_cells(text)[0][-2:] == ["metadata.reason", "metadata:json"]
    checked, _ = read_text("csv", text)
    assert [c.row.to_json() for c in checked] == rows


def test_a_column_first_needed_after_the_spool_moved_to_a_file(monkeypatch):
    """Rows wait for the header in a temp file once they pass SPOOL_MEMORY; a column the last
    row alone needs still lands in the header, and every earlier row is widened to match."""
    monkeypatch.setattr(csv_format, "SPOOL_MEMORY", 2000)
    rows = [row(f"r{i}", scenario=f"line {i}\nwith a break, and \"quotes\"") for i in range(300)]
    for i in range(0, 300, 7):
        rows[i]["metadata"][f"k{i % 3}"] = f"v{i}"
    rows[-1]["expected"] = 1
    rows[-1]["metadata"]["late"] = "last"
    text, _ = write_text("csv", [Row.from_json(r) for r in rows], excel_safe=True)
    header = header_and_cells(text)[0]
    assert header[:4] == ["id", "input", "expected", "expected:json"]
    assert header[-4:] == ["metadata.k0", "metadata.k1", "metadata.k2", "metadata.late"]
    checked, _ = read_text("csv", text)
    assert [c.row.to_json() for c in checked] == rows


def test_metadata_key_order_is_first_seen_across_rows():
    rows = [row("a"), row("b")]
    rows[0]["metadata"].update({"z": "1", "a": "2"})
    rows[1]["metadata"].update({"m": "3", "z": "4"})
    text, _ = write_text("csv", [Row.from_json(r) for r in copy.deepcopy(rows)])
    assert [c for c in header_and_cells(text)[0] if c.startswith("metadata.")] == \
        ["metadata.z", "metadata.a", "metadata.m"]


def test_golden_set_through_csv_is_lossless(tmp_path, capsys):
    src = ROOT / "golden_roundtrips" / "support-agent.jsonl"
    assert run([str(src), "--to", "csv", "-o", str(tmp_path / "s.csv")], capsys) == 0
    assert run([str(tmp_path / "s.csv"), "--to", "jsonl", "-o", str(tmp_path / "back.jsonl")], capsys) == 0
    lines = src.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in (tmp_path / "back.jsonl").read_text(encoding="utf-8").splitlines()] == \
        [json.loads(x) for x in lines]

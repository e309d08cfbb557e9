"""Issue 26 item 16: "1 errors", "1 differences" — a count of one is singular in everything the CLI
prints (text, markdown, JSON-free pages' words), through the one helper `canonical.suggest.count`."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, row
from evalconv.canonical.suggest import count

RUNS = ROOT / "tests" / "fixtures" / "runs"
WRONG = re.compile(r"(?<![\d.,])1 (errors|differences|rows|warnings|cases|files|results|attempts|fields|values|"
                   r"edits|families|examples|verdicts|pairs|entries|groups|routes)\b|\(s\)")


def _run(args: list[str], capsys) -> str:
    from evalconv.cli import main

    try:
        main([str(a) for a in args])
    except SystemExit:
        pass
    out, err = capsys.readouterr()
    return out + err


@pytest.fixture
def one(tmp_path) -> dict[str, Path]:
    """A set of one row with one warning, a set of one invalid row, a one-row sheet, one case of a run."""
    paths = {name: tmp_path / name for name in ("one.jsonl", "bad.jsonl", "sheet.csv", "case.jsonl")}
    warned = row("p-1", provenance="starter-example")  # the one warning: a starter example
    paths["one.jsonl"].write_text(json.dumps(warned) + "\n", encoding="utf-8")
    bad = row("b-1")
    del bad["metadata"]["case"]["provenance"]  # the one error
    paths["bad.jsonl"].write_text(json.dumps(bad) + "\n", encoding="utf-8")
    paths["sheet.csv"].write_text("question,answer\nWhat is one plus one?,2\n", encoding="utf-8")
    first = (RUNS / "cases.jsonl").read_text(encoding="utf-8").splitlines()[0]
    paths["case.jsonl"].write_text(first + "\n", encoding="utf-8")
    return paths


def test_the_helper_says_one_and_many():
    assert count(1, "error") == "1 error" and count(2, "error") == "2 errors" and count(0, "row") == "0 rows"
    assert count(1, "case family", "case families") == "1 case family"
    assert count(12000, "row", grouped=True) == "12,000 rows"


def test_no_command_says_1_errors(one, tmp_path, capsys):
    said = {}
    commands = {
        "validate": ["validate", one["one.jsonl"], one["bad.jsonl"]],
        "convert": [one["one.jsonl"], "--to", "csv", "-o", tmp_path / "o.csv"],
        "convert-bad": [one["bad.jsonl"], "--to", "csv", "-o", tmp_path / "b.csv"],
        "stats": ["stats", one["one.jsonl"], "--family-min", "1"],
        "stats-markdown": ["stats", one["one.jsonl"], "--format", "markdown"],
        "import": ["import", one["sheet.csv"], "-o", tmp_path / "i.jsonl"],
        "new": ["new", "customer-support", "--case-family", "policy-answer", "-o", tmp_path / "n.jsonl"],
        "report": ["report", RUNS / "promptfoo" / "results.json", "--cases", one["case.jsonl"]],
        "runs-import": ["runs", "import", RUNS / "promptfoo" / "results.json", "--store", tmp_path / "store"],
        "roundtrip": ["roundtrip", one["one.jsonl"], "--via", "csv"],
        "folder": [tmp_path / "sets", "--to", "json", "-o", tmp_path / "out"],
    }
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets" / "a.jsonl").write_text(one["one.jsonl"].read_text(encoding="utf-8"), encoding="utf-8")
    for name, args in commands.items():
        said[name] = _run(args, capsys)
    assert "1 row, 0 errors, 1 warning" in said["validate"] and "1 error," in said["validate"]
    assert "1 row written" in said["convert"] and "1 row in 1 file" in said["stats"]
    assert "1 case," in said["report"] and "1 file, 1 row" in said["folder"]
    for name, text in said.items():
        wrong = [m.group(0) for m in WRONG.finditer(text)]
        assert not wrong, f"{name}: {wrong} in\n{text}"


def test_the_pages_say_one_row_too(one, tmp_path, capsys):
    _run(["stats", one["one.jsonl"], "--html", tmp_path / "s.html"], capsys)
    _run(["report", RUNS / "promptfoo" / "results.json", "--cases", one["case.jsonl"], "--html", tmp_path / "r.html"],
         capsys)
    for page in ("s.html", "r.html"):
        text = re.sub(r"<script.*?</script>", "", (tmp_path / page).read_text(encoding="utf-8"), flags=re.S)
        wrong = [m.group(0) for m in WRONG.finditer(re.sub(r"<[^>]+>", " ", text))]
        assert not wrong, f"{page}: {wrong}"

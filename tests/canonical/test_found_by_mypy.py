"""Regressions for bugs that mypy found when it first ran over the whole package."""
from __future__ import annotations

import json

import evalconv
import pytest
from click.testing import CliRunner
from evalconv.cli import cli

from conftest import row


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_keep_going_to_a_folder_format_without_o_is_a_usage_error_not_a_crash(tmp_path):
    """`--to hf --keep-going` with no -o took the ledger's place from a missing output name
    (None + str): an internal error, exit 70. It is the folder format's one-line -o error."""
    src = tmp_path / "set.jsonl"
    src.write_text(json.dumps(row("a")) + "\n", encoding="utf-8")
    result = _run("convert", src, "--to", "hf", "--keep-going")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == ["evalconv: error: format 'hf' writes a folder; name it with -o DIR"]
    with pytest.raises(evalconv.UsageError, match="writes a folder"):
        evalconv.convert(str(src), None, to="hf", keep_going=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set.jsonl"]  # no ledger, nothing else


def test_a_sheet_map_to_a_list_item_is_refused_naming_the_column(tmp_path):
    """A map sending a column to `metadata.tags[0]` was taken, then built `{"tags": {0: ...}}`
    on every row, which failed validation row by row ("a key is int"). The map is refused."""
    src = tmp_path / "sheet.csv"
    src.write_text("question,answer,tag\nWhat?,Yes,a\n", encoding="utf-8")
    mapping = tmp_path / "map.yaml"
    mapping.write_text("question: input\nanswer: expected\ntag: metadata.tags[0]\n", encoding="utf-8")
    result = _run("import", src, "--map", mapping, "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 2, result.output
    assert "column 'tag'" in result.stderr and "list item" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "out.jsonl").exists()
    mapping.write_text("question: input\nanswer: expected\ntag: metadata.labels.first\n", encoding="utf-8")
    result = _run("import", src, "--map", mapping, "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8"))["metadata"]["labels"] == {"first": "a"}

"""Issue 26 item 5: a team's own sheet given to convert or validate is named as such, with the
`evalconv import` command that makes a set of it, rather than blaming the delimiter."""
from __future__ import annotations

import shlex

import pytest
from click.testing import CliRunner

from evalconv.cli import cli

OWN_SHEET = "Question,Answer,Notes\r\nHow do I reset my password?,Open Settings,common\r\n"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _says_own_sheet(output: str, path) -> None:
    assert "looks like a team's own sheet" in output
    assert f"evalconv import {shlex.quote(str(path))} -o set.csv" in output
    assert "delimiter" not in output and "Traceback" not in output


@pytest.mark.parametrize("command", [["--to", "promptfoo", "-o", "out.yaml"], ["validate"]])
def test_own_csv_sheet_is_named_with_the_import_command(tmp_path, command):
    path = tmp_path / "messy.csv"
    path.write_text(OWN_SHEET, encoding="utf-8")
    args = ["validate", path] if command == ["validate"] else [path, *command[:-1], tmp_path / command[-1]]
    result = run(*args)
    assert result.exit_code == 2
    _says_own_sheet(result.output, path)
    assert result.output.count("\n") == 1 and not (tmp_path / "out.yaml").exists()


def test_own_tsv_sheet_is_named_rather_than_undetectable(tmp_path):
    path = tmp_path / "team sheet.tsv"
    path.write_text(OWN_SHEET.replace(",", "\t"), encoding="utf-8")
    for args in (["validate", path], [path, "--to", "jsonl"]):
        result = run(*args)
        assert result.exit_code == 2 and "cannot tell the format" not in result.output
        _says_own_sheet(result.output, path)


def test_the_suggested_import_command_makes_a_set_that_validates(tmp_path):
    path = tmp_path / "messy.tsv"
    path.write_text(OWN_SHEET.replace(",", "\t"), encoding="utf-8")
    command = shlex.split(run("validate", path).output.split("make it a set with: ")[1])
    assert command[:3] == ["evalconv", "import", str(path)]
    out = tmp_path / "set.csv"
    assert run(*command[1:4], out).exit_code == 0
    assert run("validate", out).exit_code == 0


def test_own_sheet_in_a_folder_conversion_is_named(tmp_path):
    folder = tmp_path / "sets"
    folder.mkdir()
    (folder / "messy.csv").write_text(OWN_SHEET, encoding="utf-8")
    result = run(folder, "--to", "promptfoo", "-o", tmp_path / "out")
    assert result.exit_code == 1
    _says_own_sheet(result.output, folder / "messy.csv")


def test_one_cell_header_of_canonical_names_still_blames_the_delimiter(tmp_path):
    path = tmp_path / "piped.csv"
    path.write_text("id|input|case.caseId\nr-1|hi|r-1\n", encoding="utf-8")
    result = run("validate", path)
    assert result.exit_code == 2 and "delimiter looks wrong" in result.output
    assert "own sheet" not in result.output

"""Read options are typed and declared by each format, as writer options are (issue 27, step 5):
a reader is told `--delimiter` or `--allow-outside-refs` through its format's `read_options`, and
an option no format declares, a value of the wrong type or an option of another format is refused
in one place (the registry), in one line naming the file. Before, they were an untyped dict
threaded through six application modules, and a misapplied one was silently ignored."""
from __future__ import annotations

import dataclasses
import json

import pytest

import evalconv
from conftest import ROOT, row, run_main
from evalconv.canonical.csv_format import CSVReadOptions
from evalconv.canonical.format import Format, ReadOptions, option
from evalconv.canonical.source import Lines
from evalconv.registry import REGISTRY

REQUIRED = "id;input;expected;case.caseId;case.oracleType;case.expectedBehavior;case.provenance\r\n"


def semicolon_sheet(path) -> str:
    path.write_text(REQUIRED + "r-1;Hi;Hello;r-1;reference-answer;Greets back.;expert-authored\r\n", encoding="utf-8")
    return str(path)


def jsonl(path) -> str:
    path.write_text(json.dumps(row("a")) + "\n", encoding="utf-8")
    return str(path)


run = run_main  # the CLI in this process: exit code, stdout, stderr


def test_a_declared_read_option_reaches_the_reader():
    @dataclasses.dataclass(frozen=True)
    class _Told(ReadOptions):
        depth: int = option(1, flag="--depth", help="h", goes_with="is for test")

    class _Deep(Format):
        name = "test-deep"
        read_options = _Told

        def read(self, lines, report):
            yield from ()

    made = _Deep().make_read_options(depth=3)
    assert isinstance(made, _Told) and made.depth == 3
    lines = Lines(open(ROOT / "pyproject.toml", "rb"), source="x")
    lines.options = made
    assert lines.told(_Told).depth == 3
    assert lines.told(CSVReadOptions) == CSVReadOptions()  # lines told nothing of this kind: the defaults
    assert lines.options.get("depth") == 3  # the contract before read options were typed
    with pytest.raises(evalconv.UsageError, match="--depth: True is not"):
        _Deep().make_read_options(depth=True)
    with pytest.raises(evalconv.UsageError, match="format 'test-deep' has no option 'deep'"):
        _Deep().make_read_options(deep=3)


def test_a_read_option_not_declared_with_option_is_an_error_at_import():
    with pytest.raises(TypeError, match="option"):
        @dataclasses.dataclass(frozen=True)
        class _Told(ReadOptions):
            depth: int = 1

        class _Bad(Format):
            read_options = _Told
    with pytest.raises(TypeError, match="ReadOptions subclass"):
        class _Worse(Format):
            read_options = dict  # type: ignore[assignment]


def test_read_and_write_options_never_share_a_name_or_a_flag():
    reading, writing = REGISTRY.declared_read_options(), REGISTRY.declared_options()
    assert {"delimiter", "allow_outside_refs"} <= set(reading)
    assert not set(reading) & set(writing)
    flags = [f.metadata["flag"] for f in [*reading.values(), *writing.values()]]
    assert len(flags) == len(set(flags))


def test_read_options_are_checked_in_one_place_for_the_library(tmp_path):
    sheet, lines_file = semicolon_sheet(tmp_path / "s.csv"), jsonl(tmp_path / "a.jsonl")
    assert [r.id for r in evalconv.read(sheet, delimiter=";").rows] == ["r-1"]
    assert [r.id for r in evalconv.read(sheet, delimiter="semicolon").rows] == ["r-1"]
    with pytest.raises(evalconv.UsageError) as refused:
        evalconv.read(lines_file, delimiter=";")
    assert str(refused.value) == f"{lines_file}: --delimiter separates canonical CSV cells; it goes with a CSV input"
    with pytest.raises(evalconv.UsageError, match="--allow-outside-refs follows promptfoo's file references"):
        evalconv.read(sheet, allow_outside_refs=True)
    with pytest.raises(evalconv.UsageError, match="format 'csv' has no option 'delimter'"):
        evalconv.read(sheet, delimter=";")
    with pytest.raises(evalconv.UsageError, match="--delimiter: 3 is not"):
        evalconv.read(sheet, delimiter=3)
    with pytest.raises(evalconv.UsageError, match="--delimiter takes one character"):
        evalconv.read(sheet, delimiter="ab")
    # at their defaults, another format's options are not given
    assert evalconv.read(lines_file, delimiter=None, allow_outside_refs=False).format == "jsonl"
    assert evalconv.validate_file(lines_file, delimiter=";").unreadable.endswith("it goes with a CSV input")


def test_convert_splits_read_options_from_writer_options(tmp_path):
    sheet = semicolon_sheet(tmp_path / "s.csv")
    result = evalconv.convert(sheet, str(tmp_path / "o.csv"), to="csv", delimiter=";", excel_safe=True)
    assert result.rows_written == 1
    with pytest.raises(evalconv.UsageError, match="--excel-safe guards CSV cells"):
        evalconv.convert(sheet, str(tmp_path / "o.jsonl"), to="jsonl", delimiter=";", excel_safe=True)
    assert not (tmp_path / "o.jsonl").exists()


def test_a_misapplied_read_option_on_the_command_line_is_one_line(tmp_path, capsys):
    lines_file = jsonl(tmp_path / "a.jsonl")
    for command in (["convert", lines_file, "--to", "csv"], ["validate", lines_file]):
        code, out, err = run([*command, "--delimiter", ";"], capsys)
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
        assert "--delimiter separates canonical CSV cells; it goes with a CSV input" in err and lines_file in err
    code, _, err = run(["convert", lines_file, "--to", "csv", "--delimiter", "ab"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--delimiter takes one character" in err


def test_in_a_folder_a_read_option_goes_to_the_files_of_its_format(tmp_path, capsys):
    sets = tmp_path / "sets"
    sets.mkdir()
    semicolon_sheet(sets / "s.csv")
    jsonl(sets / "a.jsonl")
    code, _, err = run(["convert", str(sets), "--to", "jsonl", "-o", str(tmp_path / "out"), "--delimiter", ";"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.jsonl", "s.jsonl"]
    code, out, err = run(["validate", str(sets), "--delimiter", ";", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["valid"], err


def test_the_command_line_offers_every_declared_read_option():
    from click.testing import CliRunner

    from evalconv.cli import cli
    for command in ("convert", "validate"):
        help_text = CliRunner().invoke(cli, [command, "--help"]).output
        for declared in REGISTRY.declared_read_options().values():
            assert declared.metadata["flag"] in help_text

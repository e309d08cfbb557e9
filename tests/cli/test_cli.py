"""The CLI: every exit code, atomic output, and JSON output equal to the library's."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

import evalconv
from conftest import ROOT, row
from evalconv.cli import cli

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def bad_row():
    value = row("bad", evaluator="pairwise-preference")
    return value


def test_convert_to_file_is_lossless_and_exit_0(tmp_path):
    out = tmp_path / "set.csv"
    result = run(GOLDEN, "--to", "csv", "-o", out)
    assert result.exit_code == 0, result.output
    assert "10 rows written" in result.stderr and "lossless" in result.stderr
    assert evalconv.read(str(out)).rows == evalconv.read(str(GOLDEN)).rows


def test_convert_short_form_equals_convert_command(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run(GOLDEN, "--to", "json", "-o", a)
    run("convert", GOLDEN, "--to", "json", "-o", b)
    assert a.read_bytes() == b.read_bytes()


def test_convert_to_stdout(tmp_path):
    result = run(GOLDEN, "--to", "jsonl")
    assert result.exit_code == 0
    assert [json.loads(l) for l in result.stdout.splitlines()] == [json.loads(l) for l in GOLDEN.read_text().splitlines()]


def test_format_from_content_when_the_extension_says_nothing(tmp_path):
    src = tmp_path / "set.txt"
    src.write_bytes(GOLDEN.read_bytes())
    result = run(src, "--to", "json")
    assert result.exit_code == 0 and json.loads(result.stdout)[0]["id"] == "cs-refund-valid-receipt"


def test_invalid_rows_write_nothing_and_exit_1(tmp_path, write_jsonl):
    src = write_jsonl([row("a"), bad_row()])
    out = tmp_path / "out.csv"
    result = run(src, "--to", "csv", "-o", out)
    assert result.exit_code == 1
    assert "error[inadmissible-evaluator]" in result.stderr and "nothing written" in result.stderr
    assert not out.exists() and os.listdir(tmp_path) == ["set.jsonl"]


def test_invalid_rows_print_nothing_on_stdout(write_jsonl):
    result = run(write_jsonl([row("a"), bad_row()]), "--to", "csv")
    assert result.exit_code == 1 and result.stdout == ""


def test_keep_going_writes_valid_rows_and_a_ledger(tmp_path, write_jsonl):
    src = write_jsonl([row("a"), bad_row(), row("c")])
    out = tmp_path / "out.jsonl"
    result = run(src, "--to", "jsonl", "-o", out, "--keep-going")
    assert result.exit_code == 1
    assert [json.loads(l)["id"] for l in out.read_text().splitlines()] == ["a", "c"]
    [entry] = [json.loads(l) for l in (tmp_path / "out.jsonl.rejected.jsonl").read_text().splitlines()]
    assert entry["row"] == 2 and entry["line"] == 2 and entry["id"] == "bad"
    assert entry["value"] == bad_row() and entry["findings"][0]["code"] == "inadmissible-evaluator"
    assert "1 rejected to" in result.stderr


def test_output_equal_to_input_is_refused(tmp_path):
    src = tmp_path / "set.jsonl"
    src.write_bytes(GOLDEN.read_bytes())
    result = run(src, "--to", "jsonl", "-o", src)
    assert result.exit_code == 2 and "never overwrites its input" in result.stderr
    assert src.read_bytes() == GOLDEN.read_bytes()


@pytest.mark.parametrize("args,fragment", [
    (["missing.csv", "--to", "json"], "missing.csv: no such file"),
    ([str(GOLDEN), "--to", "nope"], "unknown format 'nope'"),
    ([str(GOLDEN)], "name the output format with --to FORMAT"),
    ([str(GOLDEN), "--to", "json", "--from", "nope"], "unknown format 'nope'"),
])
def test_usage_errors_exit_2(args, fragment):
    result = run(*args)
    assert result.exit_code == 2 and fragment in result.stderr
    assert "Traceback" not in result.stderr


def test_unreadable_input_exit_2_one_line_and_no_output(tmp_path):
    src = tmp_path / "set.json"
    src.write_text('[{"id": "a"}', encoding="utf-8")
    out = tmp_path / "out.csv"
    result = run(src, "--to", "csv", "-o", out)
    assert result.exit_code == 2 and not out.exists()
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"evalconv: error: {src}:1: ")


def test_report_is_written_as_json(tmp_path):
    report = tmp_path / "loss.json"
    result = run(GOLDEN, "--to", "csv", "-o", tmp_path / "o.csv", "--report", report)
    assert result.exit_code == 0
    written = json.loads(report.read_text())
    notices = written.pop("notices")  # the golden set's formula-injection row, unguarded without --excel-safe
    assert written == {"format": "csv", "output": str(tmp_path / "o.csv"), "rows": 10,
                       "lossy": False, "dropped": [], "carried": []}
    assert len(notices) == 1 and "--excel-safe" in notices[0] and "'=cs-formula-injection'" in notices[0]


def test_validate_exit_codes(tmp_path, write_jsonl):
    assert run("validate", GOLDEN).exit_code == 0
    assert run("validate", write_jsonl([row("a"), bad_row()])).exit_code == 1
    missing = run("validate", GOLDEN, tmp_path / "nope.jsonl")
    assert missing.exit_code == 2 and "nope.jsonl: no such file" in missing.stderr


def test_validate_warnings_do_not_fail():
    result = run("validate", GOLDEN)
    assert result.exit_code == 0 and "warning[starter-example]" in result.stderr


def test_validate_json_equals_the_library(write_jsonl):
    src = str(write_jsonl([row("a"), bad_row(), row("a")]))
    result = run("validate", src, str(GOLDEN), "--format", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == evalconv.validate([src, str(GOLDEN)]).to_json()
    files = json.loads(result.stdout)["files"]
    assert [f["code"] for f in files[0]["errors"]] == ["inadmissible-evaluator", "duplicate-id"]
    assert set(files[0]) >= {"path", "format", "rows", "errors", "warnings"}


def test_schema_command_prints_the_published_schema():
    from evalconv.canonical.schema import row_schema
    result = run("schema")
    assert result.exit_code == 0 and json.loads(result.stdout) == row_schema()
    profile = json.loads(run("schema", "--case-profile", "--version", "1").stdout)
    assert profile["required"] == ["caseId", "oracleType", "expectedBehavior", "provenance"]
    profile = json.loads(run("schema", "--case-profile").stdout)  # the latest version by default
    assert profile["required"] == ["caseId", "oracleType", "expectedBehavior", "provenance", "schemaVersion"]


def test_formats_command_lists_every_registered_format():
    result = run("formats", "--format", "json")
    names = [f["name"] for f in json.loads(result.stdout)]
    assert names == evalconv.REGISTRY.names() and {"csv", "json", "jsonl"} <= set(names)
    text = run("formats").stdout
    assert all(name in text for name in names)


def test_version_and_help():
    assert run("--version").exit_code == 0
    help_text = run("--help").stdout
    assert "validate" in help_text and "formats" in help_text and "schema" in help_text


def test_standard_input_is_detected_by_content():
    result = CliRunner().invoke(cli, ["-", "--to", "json"], input=GOLDEN.read_bytes())
    assert result.exit_code == 0 and json.loads(result.stdout)[0]["id"] == "cs-refund-valid-receipt"
    assert "<stdin> (jsonl)" in result.stderr


def test_promptfoo_config_is_written_only_when_the_tests_are(tmp_path, write_jsonl):
    if "promptfoo" not in evalconv.REGISTRY.names():
        pytest.skip("promptfoo is not registered")
    config = tmp_path / "promptfooconfig.yaml"
    bad = run(write_jsonl([row("a"), bad_row()]), "--to", "promptfoo", "-o", tmp_path / "t.yaml", "--config", config)
    assert bad.exit_code == 1 and not config.exists() and not (tmp_path / "t.yaml").exists()
    good = run(GOLDEN, "--to", "promptfoo", "-o", tmp_path / "t.yaml", "--config", config)
    assert good.exit_code == 0 and config.exists() and "t.yaml" in config.read_text()


def test_config_is_refused_for_other_formats_and_folders(tmp_path):
    assert "goes with --to promptfoo" in run(GOLDEN, "--to", "csv", "--config", tmp_path / "c.yaml").stderr
    folder = run(GOLDEN.parent, "--to", "promptfoo", "-o", tmp_path / "o", "--config", tmp_path / "c.yaml")
    assert folder.exit_code == 2 and "not a folder" in folder.stderr


@pytest.mark.parametrize("flag", ["--ledger", "--report"])
def test_no_side_output_may_land_on_the_input(tmp_path, write_jsonl, flag):
    src = write_jsonl([row("a"), bad_row()])
    before = src.read_bytes()
    args = [src, "--to", "jsonl", "-o", tmp_path / "o.jsonl", flag, src] + (["--keep-going"] if flag == "--ledger" else [])
    result = run(*args)
    assert result.exit_code == 2 and "never overwrites its input" in result.stderr
    assert src.read_bytes() == before and not (tmp_path / "o.jsonl").exists()


def test_the_ledger_may_not_be_the_output(tmp_path, write_jsonl):
    out = tmp_path / "o.jsonl"
    result = run(write_jsonl([row("a")]), "--to", "jsonl", "-o", out, "--keep-going", "--ledger", out)
    assert result.exit_code == 2 and "name the same file" in result.stderr


@pytest.mark.parametrize("target,fragment", [("missing-folder/o.jsonl", "does not exist"), (".", "is a folder")])
def test_an_output_that_cannot_be_written_is_refused_before_reading(tmp_path, target, fragment):
    result = run(GOLDEN, "--to", "jsonl", "-o", tmp_path / target)
    assert result.exit_code == 2 and fragment in result.stderr and "evalconv-tmp" not in result.stderr


def test_outputs_get_an_ordinary_file_mode(tmp_path):
    import stat
    out = tmp_path / "o.jsonl"
    out.write_text("old")
    out.chmod(0o644)
    assert run(GOLDEN, "--to", "jsonl", "-o", out).exit_code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    fresh = tmp_path / "fresh.jsonl"
    run(GOLDEN, "--to", "jsonl", "-o", fresh)
    assert stat.S_IMODE(fresh.stat().st_mode) & 0o044  # readable by others, as umask allows


def test_dash_output_is_standard_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(GOLDEN, "--to", "jsonl", "-o", "-")
    assert result.exit_code == 0 and result.stdout.count("\n") == 10 and not (tmp_path / "-").exists()


def test_keep_going_to_standard_output_needs_a_ledger(write_jsonl):
    result = run(write_jsonl([row("a")]), "--to", "jsonl", "--keep-going")
    assert result.exit_code == 2 and "needs --ledger" in result.stderr


def test_excel_safe_goes_with_csv_only():
    result = run(GOLDEN, "--to", "jsonl", "--excel-safe")
    assert result.exit_code == 2 and "goes with a CSV output" in result.stderr


def test_a_report_that_cannot_be_written_is_said(tmp_path, write_jsonl):
    result = run(write_jsonl([row("a"), bad_row()]), "--to", "jsonl", "-o", tmp_path / "o.jsonl",
                 "--report", tmp_path / "r.json")
    assert result.exit_code == 1 and "no loss report written" in result.stderr


def test_non_utf8_standard_output_gets_the_utf8_bytes(tmp_path, write_jsonl):
    import subprocess
    import sys
    code = "import sys; from evalconv.cli import main; sys.argv[0] = 'evalconv'; main()"
    import os
    value = row("é")
    value["input"] = "café 日本 🙂"
    src = write_jsonl([value])
    runs = [subprocess.run([sys.executable, "-c", code, str(src), "--to", "csv"], capture_output=True,
                           env={**os.environ, "PYTHONIOENCODING": encoding}, timeout=60) for encoding in ("ascii", "utf-8")]
    assert [r.returncode for r in runs] == [0, 0] and runs[0].stdout == runs[1].stdout
    assert b"Traceback" not in runs[0].stderr and not runs[0].stdout.isascii()


def test_validate_says_when_a_canonical_name_was_read_as_a_vendor(tmp_path):
    if "braintrust" not in evalconv.REGISTRY.names():
        pytest.skip("braintrust is not registered")
    src = tmp_path / "set.jsonl"
    src.write_text('{"id": "a", "input": "q", "expected": "x"}\n', encoding="utf-8")  # no metadata
    result = run("validate", src)
    assert "was read as braintrust by its content" in result.stderr and "--from" in result.stderr
    assert run("validate", src, "--from", "jsonl").exit_code == 1

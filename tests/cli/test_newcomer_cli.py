"""The second hour of a new user, through the CLI (issue 26, items 10, 11 and 16)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import run_cli


def _run(args, tmp_path, stdin=None, env=None):
    return subprocess.run([sys.executable, "-m", "evalconv", *args], cwd=tmp_path, input=stdin, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def test_new_refuses_to_overwrite_an_edited_set_without_force(tmp_path, capsys):
    target = tmp_path / "keep.csv"
    assert run_cli(["new", "customer-support", "-o", str(target)], capsys)[0] == 0
    target.write_text(target.read_text("utf-8").replace("Customer", "Edited customer", 1), encoding="utf-8")
    edited = target.read_bytes()
    code, err = run_cli(["new", "customer-support", "-o", str(target)], capsys)
    assert code == 2 and "exists" in err and "--force" in err and target.read_bytes() == edited
    assert run_cli(["new", "customer-support", "-o", str(target), "--force"], capsys)[0] == 0
    assert target.read_bytes() != edited


def test_import_refuses_to_overwrite_an_existing_set_without_force(tmp_path, capsys):
    sheet = tmp_path / "answers.csv"
    sheet.write_text("question,answer\nWhat is 2+2?,4\n", encoding="utf-8")
    out = tmp_path / "set.jsonl"
    out.write_text("my edits\n", encoding="utf-8")
    code, err = run_cli(["import", str(sheet), "-o", str(out)], capsys)
    assert code == 2 and "--force" in err and out.read_text("utf-8") == "my edits\n"
    assert run_cli(["import", str(sheet), "-o", str(out), "--force"], capsys)[0] == 0
    assert json.loads(out.read_text("utf-8").splitlines()[0])["input"] == "What is 2+2?"


def test_convert_takes_the_format_from_the_output_extension(tmp_path, capsys):
    source = tmp_path / "set.csv"
    assert run_cli(["new", "customer-support", "-o", str(source)], capsys)[0] == 0
    code, err = run_cli([str(source), "-o", str(tmp_path / "x.jsonl")], capsys)
    assert code == 0, err
    assert all(json.loads(line)["id"] for line in (tmp_path / "x.jsonl").read_text("utf-8").splitlines())
    code, _ = run_cli([str(source), "-o", str(tmp_path / "tests.yaml")], capsys)
    assert code == 0 and (tmp_path / "tests.yaml").read_text("utf-8").lstrip().startswith("-")


def test_convert_without_to_says_why_it_cannot_tell(tmp_path, capsys):
    source = tmp_path / "set.csv"
    run_cli(["new", "customer-support", "-o", str(source)], capsys)
    code, err = run_cli([str(source)], capsys)
    assert code == 2 and "--to FORMAT" in err and "standard output" in err
    code, err = run_cli([str(source), "-o", str(tmp_path / "x.txt")], capsys)
    assert code == 2 and "names no format" in err and not (tmp_path / "x.txt").exists()


def test_to_yaml_suggests_promptfoo(tmp_path, capsys):
    source = tmp_path / "set.csv"
    run_cli(["new", "customer-support", "-o", str(source)], capsys)
    code, err = run_cli([str(source), "--to", "yaml"], capsys)
    assert code == 2 and "--to promptfoo" in err


def test_python_m_evalconv_and_short_version(tmp_path):
    for args in (["-V"], ["--version"]):
        done = _run(args, tmp_path)
        assert done.returncode == 0 and done.stdout.startswith("evalconv, version ")


def test_shell_completion_completes_commands_and_formats(tmp_path):
    script = _run([], tmp_path, env={"_EVALCONV_COMPLETE": "bash_source"})
    assert script.returncode == 0 and "_evalconv_completion" in script.stdout
    words = _run([], tmp_path, env={"_EVALCONV_COMPLETE": "bash_complete", "COMP_WORDS": "evalconv val", "COMP_CWORD": "1"})
    assert "validate" in words.stdout
    formats = _run([], tmp_path, env={"_EVALCONV_COMPLETE": "bash_complete", "COMP_WORDS": "evalconv s.csv --to pro",
                                      "COMP_CWORD": "3"})
    assert "promptfoo" in formats.stdout


def test_import_reads_a_sheet_from_standard_input(tmp_path):
    done = _run(["import", "-", "-o", "set.jsonl"], tmp_path, stdin="question,answer\nWhat is 2+2?,4\n")
    assert done.returncode == 0, done.stderr
    assert "1 row written" in done.stderr and "1 rows" not in done.stderr
    assert json.loads((tmp_path / "set.jsonl").read_text("utf-8"))["expected"] == "4"

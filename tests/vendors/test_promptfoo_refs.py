"""Issue 12 §6: promptfoo files that name other files. `refs_project/` is laid out as real
projects are (defaultTest in its own file, vars files beside the config, a vars glob, a list of
vars files, tests pulled in by a glob whose vars are relative to their own folder). It is
hand-written; promptfoo 0.121.20 itself loads it here (`eval` with the echo provider), and
evalconv must read the very tests promptfoo runs."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import evalconv

from conftest import run_cli
from interop import require_promptfoo

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "vendors" / "promptfoo" / "refs_project"
CONFIG = PROJECT / "promptfooconfig.yaml"


@pytest.mark.interop
def test_evalconv_reads_the_tests_promptfoo_runs(tmp_path):
    binary = require_promptfoo()
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"}
    subprocess.run([binary, "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-share", "--no-table",
                    "--no-progress-bar", "-o", str(tmp_path / "out.json")], cwd=project, env=env,
                   capture_output=True, text=True, timeout=300)
    ran = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    ran = sorted((r["testCase"] for r in ran), key=lambda t: t["metadata"]["case_id"])
    rows = sorted(evalconv.read(str(project / "promptfooconfig.yaml")).rows, key=lambda r: r.id)
    assert [r.id for r in rows] == [t["metadata"]["case_id"] for t in ran] and len(rows) == 4
    for row, test in zip(rows, ran):
        vars_ = test["vars"]
        assert row.input == (vars_["input"] if list(vars_) == ["input"] else vars_), row.id
        assert row.case["extensions"]["promptfoo"]["assert"] == test["assert"], row.id
        assert {k: v for k, v in row.metadata.items() if k != "case"} == test["metadata"], row.id


def test_references_are_followed_relative_to_the_file_naming_them_and_kept_in_the_report():
    result = evalconv.read(str(CONFIG))
    assert result.log.error_count == 0
    rows = {r.id: r for r in result.rows}
    assert rows["rf-cancel-201"].input.startswith("My connection dropped")
    assert rows["rf-refund-202"].input["order_id"] == "TH-100378"  # the later file wins, as in promptfoo
    assert rows["rf-tone-203"].input == {"input": "The zip on my jacket broke on the first day.",
                                         "customer_tier": "gold"}
    assert rows["rf-esc-204"].input.startswith("My ski binding")
    assert rows["rf-esc-204"].metadata["suite"] == "cancellations-and-refunds"  # defaultTest from its file
    notes = " ".join(result.report.notes)
    for ref in ("'file://defaults.yaml'", "'vars/cancelled_connection.yaml'", "'vars/tone_*.yaml'",
                "'vars/binding_injury.yaml'", "'vars/locale.json'"):
        assert f"(named as {ref})" in notes


def test_a_reference_leaving_the_folder_is_refused_unless_allowed(tmp_path, capsys):
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (tmp_path / "secret.yaml").write_text("input: not yours\n")
    (project / "sub" / "tests.yaml").write_text("- description: leaks\n  vars: ../../secret.yaml\n"
                                                "  metadata: {case_id: x-1}\n")
    code, err = run_cli(["validate", str(project / "sub" / "tests.yaml")], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "the vars file '../../secret.yaml' leads outside" in err and "--allow-outside-refs" in err
    code, err = run_cli(["validate", str(project / "sub" / "tests.yaml"), "--allow-outside-refs"], capsys)
    assert code == 0, err
    (project / "config.yaml").write_text(f"tests:\n  - file://{tmp_path / 'secret.yaml'}\n")
    code, err = run_cli([str(project / "config.yaml"), "--to", "jsonl"], capsys)
    assert code == 2 and "the tests file" in err and "leads outside" in err


def test_a_file_url_in_vars_is_read_and_the_report_says_promptfoo_would_not(tmp_path):
    (tmp_path / "v.yaml").write_text("input: hello\n")
    (tmp_path / "t.yaml").write_text("- vars: file://v.yaml\n  metadata: {case_id: u-1}\n")
    result = evalconv.read(str(tmp_path / "t.yaml"))
    assert result.rows[0].input == "hello"
    assert any("does not follow file:// in vars" in note for note in result.report.notes)


def test_a_missing_vars_file_is_one_clear_line(tmp_path, capsys):
    (tmp_path / "t.yaml").write_text("- vars: vars/missing.yaml\n  metadata: {case_id: m-1}\n")
    code, err = run_cli(["validate", str(tmp_path / "t.yaml")], capsys)
    assert code == 2 and "vars: no file matches 'vars/missing.yaml'" in err and err.count("\n") == 1

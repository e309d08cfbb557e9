"""The published pre-commit hooks install from this repository and gate a test repository."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, row
from interop import REQUIRED

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def _pre_commit() -> list[str]:
    exe = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or shutil.which("pre-commit")
    if exe is None:
        if REQUIRED:
            pytest.fail("pre-commit is required (it is in the test extra)")
        pytest.skip("pre-commit is not installed")
    return [exe]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.mark.interop
def test_hooks_pass_a_good_set_and_fail_a_bad_one(tmp_path):
    pre_commit = _pre_commit()
    head = git(ROOT, "rev-parse", "HEAD").strip()
    if git(ROOT, "status", "--porcelain", "--", ".pre-commit-hooks.yaml", "converters", "canonical", "pyproject.toml"):
        pytest.skip("pre-commit installs the committed tree; commit first")
    repo = tmp_path / "sets-repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {ROOT}\n  rev: {head}\n  hooks:\n"
        "  - id: evalconv-validate\n    args: [--require, metadata.reason]\n  - id: evalconv-roundtrip\n"
        "    args: [--via, csv, --via, jsonl]\n", encoding="utf-8")
    good = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    for r in good:
        r["metadata"].setdefault("reason", "covered")
    (repo / "good.jsonl").write_text("".join(json.dumps(r) + "\n" for r in good), encoding="utf-8")
    git(repo, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    ok = subprocess.run([*pre_commit, "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    (repo / "bad.jsonl").write_text(json.dumps(row("no-reason")) + "\n", encoding="utf-8")
    git(repo, "add", ".")
    bad = subprocess.run([*pre_commit, "run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env)
    assert bad.returncode == 1
    assert "missing-required-field" in bad.stdout and "bad.jsonl" in bad.stdout

"""promptfoo runs on a Node.js it supports (issue 26: the README said Node 20+, while the pinned
promptfoo 0.121.20 warns that support for Node 20 has ended and asks for 22.22+)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import NODE_BIN, ROOT
from interop import REQUIRED, require_promptfoo


def _engines_range() -> str:
    binary = Path(require_promptfoo()).resolve()
    package = next(p / "package.json" for p in binary.parents if (p / "package.json").exists()
                   and json.loads((p / "package.json").read_text("utf-8")).get("name") == "promptfoo")
    return json.loads(package.read_text("utf-8"))["engines"]["node"]


def _node_version() -> tuple[int, int]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("no node on the PATH")
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    major, minor = re.match(r"v(\d+)\.(\d+)", out).groups()  # type: ignore[union-attr]
    return int(major), int(minor)


def _satisfies(version: tuple[int, int], spec: str) -> bool:
    """promptfoo's engines range ("^20.20.0 || >=22.22.0"): the two forms npm ranges use here."""
    for alternative in spec.split("||"):
        match = re.fullmatch(r"\s*(\^|>=)(\d+)\.(\d+)\.\d+\s*", alternative)
        assert match, f"an engines range this test does not know: {alternative!r}"
        op, major, minor = match.group(1), int(match.group(2)), int(match.group(3))
        if op == "^" and version[0] == major and version[1] >= minor:
            return True
        if op == ">=" and version >= (major, minor):
            return True
    return False


@pytest.mark.interop
def test_promptfoo_runs_on_a_node_it_supports():
    assert _satisfies(_node_version(), _engines_range())


@pytest.mark.interop
def test_the_suite_runs_promptfoo_on_node_22_as_the_readme_says():
    if not (NODE_BIN / "node").exists():
        if REQUIRED:
            pytest.fail("the README's test command installs node@22 into .ci/node; it is missing")
        pytest.skip("Node 22 is not installed in .ci/node")
    assert shutil.which("node") == str(NODE_BIN / "node")
    assert _node_version() >= (22, 22)
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "node@22" in readme and "Node.js 20+" not in readme


def test_engines_ranges_are_read_as_npm_reads_them():
    spec = "^20.20.0 || >=22.22.0"
    assert _satisfies((20, 20), spec) and _satisfies((22, 22), spec) and _satisfies((24, 1), spec)
    assert not _satisfies((20, 19), spec) and not _satisfies((22, 21), spec) and not _satisfies((21, 0), spec)

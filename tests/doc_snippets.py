"""The python blocks of docs/vendors/*.md, run against a fresh export of a small set.

A block runs unless the last non-blank line before its fence is `<!-- not-run: reason -->`. Each
`set.<format>.<ext>` name a block mentions is exported from the small set (the golden set and
two tool-call cases: ordered calls, no call) into the folder the block runs in.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import ROOT

PAGES = sorted((ROOT / "docs" / "vendors").glob("*.md"))
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
_FENCE = re.compile(r"^( *)```python[ \t]*\n(.*?)^\1```", re.S | re.M)
_NOT_RUN = re.compile(r"^\s*<!--\s*not-run:\s*(.+?)\s*-->\s*$")
_SET_NAME = re.compile(r"\bset\.([a-z]+)\.(jsonl|json|csv|yaml)\b")

_TOOL = {"provenance": "expert-authored", "evaluator": "trajectory-or-state-check", "oracleType": "expected-tool-calls"}
EXTRA_ROWS = [
    {"id": "refund-in-order", "input": "Refund order A1.",
     "expected": [{"name": "lookup_order", "arguments": {"order_id": "A1"}},
                  {"name": "issue_refund", "arguments": {"order_id": "A1"}}],
     "metadata": {"case": {"caseId": "refund-in-order", "expectedBehavior": "Looks the order up, then refunds it",
                           "unacceptableBehavior": ["calls delete_account"], **_TOOL}}},
    {"id": "no-tool-needed", "input": "What is 2 + 2?", "expected": [],
     "metadata": {"case": {"caseId": "no-tool-needed", "expectedBehavior": "Answers without a tool", **_TOOL}}},
]


@dataclass(frozen=True)
class Snippet:
    page: str
    line: int
    code: str
    not_run: str | None  # the reason, when the page marks the block as not runnable

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def snippets(page: Path) -> list[Snippet]:
    text = page.read_text(encoding="utf-8")
    out = []
    for found in _FENCE.finditer(text):
        indent = len(found.group(1))
        code = "".join(line[indent:] if line[:indent].isspace() else line
                       for line in found.group(2).splitlines(keepends=True))
        before = [line for line in text[:found.start()].splitlines() if line.strip()]
        mark = _NOT_RUN.match(before[-1]) if before else None
        out.append(Snippet(page.name, text.count("\n", 0, found.start()) + 1, code, mark.group(1) if mark else None))
    return out


def all_snippets() -> list[Snippet]:
    return [s for page in PAGES for s in snippets(page)]


def small_set(folder: Path) -> Path:
    from evalconv.canonical import jsonvalue
    path = folder / "set.jsonl"
    lines = GOLDEN.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines) + "".join(jsonvalue.dumps(r) + "\n" for r in EXTRA_ROWS), encoding="utf-8")
    return path


def run(snippet: Snippet, folder: Path) -> dict[str, Any]:
    """Export what the block names into `folder`, run it there, and give back its namespace."""
    import evalconv
    source = small_set(folder)
    for name in sorted({m.group(0) for m in _SET_NAME.finditer(snippet.code)}):
        result = evalconv.convert(str(source), str(folder / name), to=name.split(".")[1])
        assert result.exit_code == 0, f"{snippet.name}: exporting {name} failed"
    namespace: dict[str, Any] = {"__name__": "__doc_snippet__"}
    here = os.getcwd()
    os.chdir(folder)
    try:
        exec(compile(snippet.code, snippet.name, "exec"), namespace)
    finally:
        os.chdir(here)
    return namespace


def snippet_defining(page: str, name: str) -> Snippet:
    return next(s for s in all_snippets() if s.page == page and re.search(rf"^def {name}\b", s.code, re.M))

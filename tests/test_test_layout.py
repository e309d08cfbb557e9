"""The tests' own house rules (issue 27): no test module imports another (what several share lives
in a helper module), and test module names are unique, as pytest imports them by basename."""
from __future__ import annotations

import ast
import functools
import re
from collections import Counter

from conftest import ROOT

TESTS = ROOT / "tests"


@functools.cache
def _test_modules() -> tuple:
    return tuple(p for p in TESTS.rglob("test_*.py") if "fixtures" not in p.relative_to(TESTS).parts)


def _is_test_module(name: str) -> bool:
    """`name` is one of these tests (by basename, as pytest puts each test folder on sys.path, or
    dotted from tests/), not a library module that happens to be called test_* (deepeval.test_case)."""
    parts = name.split(".")
    basenames = {p.stem for p in _test_modules()}
    return (len(parts) == 1 and name in basenames) or (TESTS.joinpath(*parts).with_suffix(".py").exists()
                                                          and parts[-1].startswith("test_"))


def test_no_test_module_imports_another():
    offenders = []
    for path in _test_modules():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.relative_to(TESTS)}:{node.lineno}: {name}" for name in names if _is_test_module(name)]
    assert offenders == []


def test_test_module_names_are_unique():
    counts = Counter(p.name for p in _test_modules())
    assert [name for name, n in counts.items() if n > 1] == []


ROOMS = {"canonical", "formats", "engine", "runs", "coverage", "lifecycle", "authoring", "interop", "cli", "pages",
         "vendors"}


def test_tests_mirror_the_packages():
    """Each test folder is a room of the code (CONTRIBUTING.md, "Where a test goes"), and each room
    of converters/ it names exists, so a renamed package takes its tests with it."""
    folders = {p.relative_to(TESTS).parts[0] for p in _test_modules() if len(p.relative_to(TESTS).parts) > 1}
    assert folders <= ROOMS, folders - ROOMS
    for room in folders - {"formats", "canonical", "vendors"}:
        assert (ROOT / "converters" / room / "__init__.py").exists(), room


def test_every_test_path_the_docs_and_code_name_exists():
    """A moved test module leaves no stale `tests/...py` path in the docs, comments or docstrings."""
    named = re.compile(r"(?<![\w/])tests/[\w/]*test_\w+\.py")
    stale = []
    for path in [*ROOT.glob("*.md"), *ROOT.joinpath("docs").rglob("*.md"), *ROOT.joinpath("converters").rglob("*.py"),
                 *ROOT.joinpath("canonical").rglob("*.py"), *ROOT.joinpath("vendors").rglob("*.py"), *_test_modules()]:
        stale += [f"{path.relative_to(ROOT)}: {m}" for m in named.findall(path.read_text("utf-8"))
                  if not (ROOT / m).exists() and "packs" not in path.name]
    assert stale == []

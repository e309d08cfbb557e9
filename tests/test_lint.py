"""ruff and mypy are clean: the settings are in pyproject.toml, so these are the same checks an editor runs.

mypy checks the `evalconv` package as it is imported. `pyproject.toml` maps three folders
(converters/, canonical/, vendors/) into it, which mypy cannot follow, so the check lays out the
import tree as links under the temp folder and runs mypy there with a cache beside it (a clean
cache takes ~7 s on an idle machine, a warm one under a second). Run it alone: `python tests/test_lint.py`.
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from conftest import ROOT


def test_ruff_is_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", str(ROOT)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean():
    code, output = run_mypy()
    assert code == 0, output


def test_mypy_passes_with_the_test_extra_alone():
    """Regression: without the interop extra mypy failed ("Cannot find implementation or library
    stub for module named ragas"). A library the package imports (anywhere, lazily too) that
    neither the dependencies nor the test extra install needs a mypy override that lets it be
    missing (`ignore_missing_imports`), as the vendors' own libraries have."""
    from importlib.metadata import packages_distributions

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    installed = {_dist_name(req) for req in [*project["project"]["dependencies"],
                                             *project["project"]["optional-dependencies"]["test"]]}
    may_be_missing = {module for override in project["tool"]["mypy"]["overrides"]
                      if override.get("ignore_missing_imports") for module in override["module"]}
    dists = packages_distributions()
    unguarded = sorted(top for top in _imported_libraries()
                       if not installed & {_dist_name(d) for d in dists.get(top, [])}
                       and not {top, f"{top}.*"} <= may_be_missing)
    assert not unguarded, f"add a [[tool.mypy.overrides]] with ignore_missing_imports for {unguarded}"


def _dist_name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0]).lower()


def _imported_libraries() -> set[str]:
    """The top-level names of every outside module the package's source imports."""
    folders = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    tops: set[str] = set()
    for folder in set(folders.values()):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    tops.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    tops.add(node.module.split(".")[0])
    return tops - set(sys.stdlib_module_names) - {"evalconv", "__future__"}


def run_mypy() -> tuple[int, str]:
    """mypy's exit code and its report, with paths given as the repository's own files."""
    work = Path(tempfile.gettempdir()) / f"evalconv-mypy-{hashlib.sha1(str(ROOT).encode()).hexdigest()[:10]}"
    tree = work / "tree"
    _link_import_tree(ROOT, tree)
    env = {**os.environ, "MYPYPATH": str(tree)}
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                             "--cache-dir", str(work / "cache"), "--no-error-summary", "--hide-error-context",
                             "-p", "evalconv"], capture_output=True, text=True, cwd=tree, env=env)
    lines = [_repository_path(line, tree) for line in (result.stdout + result.stderr).splitlines()]
    return result.returncode, "\n".join(lines)


def _link_import_tree(root: Path, tree: Path) -> None:
    """`tree/evalconv/...` as the package-dir mapping in pyproject.toml lays it out, made of links."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    top, = (name for name in mapping if "." not in name)
    package = tree / top
    package.mkdir(parents=True, exist_ok=True)
    for entry in list(package.iterdir()):
        entry.unlink()  # every entry is a link made by an earlier run: unlinking never follows it
    links = {child.name: child for child in (root / mapping[top]).iterdir() if child.name != "__pycache__"}
    for name, folder in mapping.items():
        if name.count(".") == 1 and name.startswith(top + "."):
            links[name.split(".")[1]] = root / folder
    for name, target in links.items():
        (package / name).symlink_to(target)


def _repository_path(line: str, tree: Path) -> str:
    path, sep, rest = line.partition(":")
    if sep and (tree / path).exists():
        return f"{os.path.relpath(os.path.realpath(tree / path), ROOT)}:{rest}"
    return line


if __name__ == "__main__":
    code, output = run_mypy()
    print(output)
    sys.exit(code)

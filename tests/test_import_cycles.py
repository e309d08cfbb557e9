"""No import cycles in `evalconv`, counting every import: at module level, inside functions (lazy
imports) and under `if TYPE_CHECKING:`. A cycle hidden in a function still means two modules that
cannot be understood, tested or moved apart, and a lazy import that breaks one is the next one's
bug. The graph is built from the source (`ast`), so the check needs no library installed."""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from conftest import ROOT


def _module_files(root: Path) -> dict[str, Path]:
    """Module name -> file, as `pyproject.toml`'s package-dir maps the folders into `evalconv`."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    out: dict[str, Path] = {}
    for package, folder in mapping.items():
        base = root / folder
        for path in base.rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            name = ".".join([package, *parts[:-1]] + ([] if parts[-1] == "__init__" else [parts[-1]]))
            out.setdefault(name, path)  # `evalconv.canonical` is its own folder, not converters/canonical
    return out


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the evalconv modules it imports anywhere in its text (`from m import n` is an
    edge to m.n when that is a module, else to m)."""
    files = _module_files(root)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in files)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*base_parts, *([node.module] if node.module else [])])
                else:
                    base = node.module or ""
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    if target in files:
                        edges.add(target)
                    elif base in files:
                        edges.add(base)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_cycle_finder_sees_lazy_and_type_checking_imports(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.package-dir]\ntop = "src"\n', encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
                                           encoding="utf-8")
    (tmp_path / "src" / "b.py").write_text("def f():\n    from . import c\n", encoding="utf-8")
    (tmp_path / "src" / "c.py").write_text("import top.a\nfrom top import d\n", encoding="utf-8")
    (tmp_path / "src" / "d.py").write_text("from .a import thing\n", encoding="utf-8")
    graph = import_graph(tmp_path)
    assert graph["top.c"] == {"top.a", "top.d"} and graph["top.d"] == {"top.a"}
    assert cycles(graph) == [["top.a", "top.b", "top.c", "top.d"]]


def test_evalconv_has_no_import_cycles():
    graph = import_graph()
    assert len(graph) > 100 and "evalconv.engine.parallel" in graph
    assert cycles(graph) == []

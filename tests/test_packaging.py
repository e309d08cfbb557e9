"""The wheel holds every package: a subpackage missing from pyproject's list imports in an editable
install and fails in a real one (the pre-commit hooks install evalconv non-editable)."""

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"converters": "evalconv", "canonical": "evalconv.canonical", "vendors": "evalconv.vendors"}


def _packages_on_disk() -> set[str]:
    found = set()
    for folder, dotted in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            # canonical/ and vendors/ sit beside converters/, not inside it
            if folder == "converters" and rel.parts and rel.parts[0] in {"canonical", "vendors"}:
                continue
            found.add(".".join([dotted, *rel.parts]))
    return found


def test_regression_evalconv_lifecycle_was_left_out_of_the_wheel():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    missing = sorted(_packages_on_disk() - listed)
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
    stale = sorted(listed - _packages_on_disk())
    assert not stale, f"listed in pyproject.toml but not on disk: {stale}"


def test_regression_numpy_was_used_by_the_parquet_writer_but_not_declared():
    """pyarrow 26 stopped pulling numpy in, and a default install's roundtrip gate failed its
    parquet and hf routes: what a default route imports is a declared dependency."""
    import ast

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = {d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in config["project"]["dependencies"]}
    tree = ast.parse((ROOT / "canonical" / "parquet_format.py").read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    third_party = imported - set(sys.stdlib_module_names)
    assert third_party and third_party <= declared, sorted(third_party - declared)

"""Interop tests run the vendors' own code. Locally a missing vendor skips; in CI
(EVALCONV_REQUIRE_INTEROP=1) it fails, so CI can never pass without running them."""
from __future__ import annotations

import importlib
import json
import os
import shutil
from pathlib import Path
from types import ModuleType

import pytest

REQUIRED = os.environ.get("EVALCONV_REQUIRE_INTEROP") == "1"
ROOT = Path(__file__).resolve().parent.parent


def _missing(what: str) -> None:
    if REQUIRED:
        pytest.fail(f"{what} is required for the interop tests (EVALCONV_REQUIRE_INTEROP=1)")
    pytest.skip(f"{what} is not installed")


def require_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        _missing(f"python package '{name}'")
        raise  # unreachable


def vendor_module(module: str, *, name: str):
    """A module-scoped fixture called `name` that gives the vendor's `module`: `deepeval = vendor_module(
    "deepeval.dataset", name="deepeval")` in a test file, then a test takes `deepeval` as an argument."""
    @pytest.fixture(scope="module", name=name)
    def fixture() -> ModuleType:
        return require_module(module)
    return fixture


def vendor_fixtures(vendor: str) -> tuple[Path, dict]:
    """The folder of the files `vendor`'s own code made (tests/fixtures/vendors/<vendor>) and its
    MANIFEST.json, which says how each was made ({} where there is none)."""
    folder = ROOT / "tests" / "fixtures" / "vendors" / vendor
    manifest = folder / "MANIFEST.json"
    return folder, (json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else {})


def promptfoo_bin() -> str | None:
    """The promptfoo CLI: $EVALCONV_PROMPTFOO, .ci/node (what .ci/run installs), or the PATH."""
    for candidate in (os.environ.get("EVALCONV_PROMPTFOO"),
                      str(ROOT / ".ci" / "node" / "node_modules" / ".bin" / "promptfoo"),
                      shutil.which("promptfoo")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def require_promptfoo() -> str:
    found = promptfoo_bin()
    if found is None:
        _missing("the promptfoo CLI (npm install --prefix .ci/node promptfoo@0.121.20)")
    return found  # type: ignore[return-value]

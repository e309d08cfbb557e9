"""Interop tests run the vendors' own code. Locally a missing vendor skips; in CI
(EVALCONV_REQUIRE_INTEROP=1) it fails, so CI can never pass without running them."""
from __future__ import annotations

import importlib
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

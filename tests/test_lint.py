"""ruff is clean: the settings are in pyproject.toml, so this is the same check an editor runs."""
from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_ruff_is_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", str(ROOT)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr

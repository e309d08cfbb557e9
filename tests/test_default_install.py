"""A default install passes its own gate (issue 26: `evalconv roundtrip set.csv` exited 1 on
`pip install -e .`, as the parquet and hf routes needed pyarrow, an extra)."""
from __future__ import annotations

import subprocess
import sys
import tomllib

from conftest import ROOT, run_cli


def test_default_install_depends_on_pyarrow():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert any(dep.startswith("pyarrow") for dep in project["dependencies"])


def test_default_install_roundtrip_gate_passes_on_the_shipped_sample(capsys):
    code, err = run_cli(["roundtrip", str(ROOT / "docs" / "examples" / "support-sheet.csv")], capsys)
    assert code == 0, err


def test_start_up_does_not_import_pyarrow():
    probe = "import sys, evalconv.cli; print('pyarrow' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["False", "False"]

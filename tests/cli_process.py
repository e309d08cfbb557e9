"""The evalconv console script as a real process (its path beside this Python), and a test run
alone in a fresh interpreter."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

FRESH = "EVALCONV_FRESH_PROCESS"


def evalconv_command() -> list[str]:
    script = shutil.which("evalconv", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-c", "from evalconv.cli import main; main()"]


def in_a_fresh_process(test_file: str, test_name: str) -> bool:
    """True inside a fresh interpreter; outside one, run the test there and check that it passed.
    For a test that needs the process to itself (process-wide state a library keeps; worker
    processes started by fork, which a worker of the test run holding other tests' threads cannot
    do)."""
    if os.environ.get(FRESH) == test_name:
        return True
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                           f"{test_file}::{test_name}"], env={**os.environ, FRESH: test_name}, cwd=root,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"^\W*1 passed", done.stdout, re.M), done.stdout[-2000:]  # not skipped, nor deselected
    return False

"""The evalconv console script as a real process (its path beside this Python)."""
from __future__ import annotations

import os
import shutil
import sys


def evalconv_command() -> list[str]:
    script = shutil.which("evalconv", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-c", "from evalconv.cli import main; main()"]

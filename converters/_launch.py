"""The `evalconv` console script: signal handlers first, then the (slow) imports.

A Ctrl-C or SIGTERM while the command line's modules load stops with one line, as it does
later, instead of a traceback. Standard streams the caller closed (`>&-`) are held open on
/dev/null, so no file evalconv opens takes their number; Python itself sees them as closed.
"""
from __future__ import annotations

import os
import sys
from typing import Any


def main() -> Any:
    # OpenBLAS (under numpy, which pyarrow loads) allocates a buffer per thread as it loads and
    # exits the process when it cannot; evalconv does no linear algebra: one thread.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from . import _stopping as stopping  # not under cli/: importing cli/ loads click and the common helpers

    stopping.install()
    try:
        _hold_closed_std_streams()
        from .cli import main as cli_main
    except KeyboardInterrupt as err:  # while the command line's modules load
        stopping.exit_quietly(err)
    except MemoryError as err:
        stopping.out_of_memory(err)
    return cli_main()


def _hold_closed_std_streams() -> None:
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


if __name__ == "__main__":
    sys.exit(main())

"""Ctrl-C and SIGTERM in the command line: stop, clean up, one line, exit 130 or 143.

Both raise `KeyboardInterrupt` (SIGTERM as its subclass `Terminated`), so every `with` block
on the way out removes its temporary files. The first signal stops the run; later ones (a
terminal sends Ctrl-C to the whole process group, people press it twice) are ignored while the
run cleans up, so no traceback comes out of the clean-up or of the interpreter's shutdown. A
signal more than `FORCE_AFTER_SECONDS` after the first ends the process at once, in case the
clean-up hangs (a temporary file may then stay; the next run removes it).

Library callers keep Python's own handlers: only the command line installs these.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any, NoReturn

FORCE_AFTER_SECONDS = 3.0
EXIT_CODES: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}
WORDS: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is."""


_stopping_since: float | None = None


def install() -> None:
    """Route SIGINT and SIGTERM through `_on_signal` (the main thread only)."""
    global _stopping_since
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers belong to the main thread
    if signal.getsignal(signal.SIGINT) is _on_signal:
        return  # in place already (the console script sets them first)
    _stopping_since = None
    for signum in EXIT_CODES:
        signal.signal(signum, _on_signal)


def _on_signal(signum: int, frame: Any) -> None:
    global _stopping_since
    if _stopping_since is not None:
        if time.monotonic() - _stopping_since > FORCE_AFTER_SECONDS:
            os._exit(EXIT_CODES.get(signum, 130))
        return
    _stopping_since = time.monotonic()
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def finishing() -> None:
    """The run is over (its outputs published or discarded): a signal now is ignored, so
    nothing interrupts the interpreter's shutdown. Ignored by the OS, not just by the handler:
    Python puts the default handlers back as it shuts down, and a Ctrl-C landing then would kill
    the process (exit -2) after its one line was printed."""
    global _stopping_since
    if _stopping_since is None:
        _stopping_since = time.monotonic()
    if signal.getsignal(signal.SIGINT) is _on_signal:
        try:
            for signum in EXIT_CODES:
                signal.signal(signum, signal.SIG_IGN)
        except ValueError:  # not the main thread
            pass


def signal_of(err: BaseException) -> int:
    return signal.SIGTERM if isinstance(err, Terminated) else signal.SIGINT


def exit_quietly(err: KeyboardInterrupt | BrokenPipeError) -> NoReturn:
    """The one way the command line ends early without an error of its own: Ctrl-C or SIGTERM
    (one line, 130 or 143; atomic writes leave nothing half-written), or a reader that went
    away (`| head`: 141 in silence, as Unix tools do)."""
    if isinstance(err, BrokenPipeError):
        finishing()
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
    exit_stopped(err)


def exit_stopped(err: BaseException) -> NoReturn:
    """One line on stderr, exit 130 (Ctrl-C) or 143 (SIGTERM)."""
    finishing()
    signum = signal_of(err)
    try:
        if sys.stderr is not None:
            sys.stderr.write(f"evalconv: {WORDS[signum]}\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        pass
    sys.exit(EXIT_CODES[signum])


def out_of_memory(err: MemoryError) -> NoReturn:
    """One line, exit 2: running out of memory (`ulimit -v`, a container's limit) is the
    environment's condition, not a bug. Ended with `os._exit`: an interpreter short of memory
    can crash on its way out (a library half loaded), after its one line was said."""
    finishing()
    where = getattr(err, "evalconv_source", None)
    what = f": {err}" if str(err) else ""
    try:
        if sys.stderr is not None:
            sys.stderr.write(f"evalconv: out of memory{f' while reading {where}' if where else ''}{what}; "
                             f"nothing was written (give it more memory: ulimit -v, the container's limit)\n")
            sys.stderr.flush()
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError, MemoryError):
        pass
    os._exit(OUT_OF_MEMORY)


OUT_OF_MEMORY = 2  # a usage or environment problem, as unreadable input is

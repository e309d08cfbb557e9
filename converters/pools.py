"""Worker processes that never outlive the run that started them, nor print a traceback.

A plain process pool leaves its workers waiting forever when the parent is killed, and on
Ctrl-C every worker prints its own traceback. Here a worker exits on its own when the parent
is gone, and Ctrl-C stops only the task in hand: the task returns `INTERRUPTED`, and its output,
being atomic, is discarded. A worker is never killed mid-task, since a worker killed while it
sends a result leaves the pool waiting forever for the rest of the message.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable

PARENT_CHECK_SECONDS = 0.2
INTERRUPTED = None  # what a task stopped by Ctrl-C returns

_in_task = False  # in a worker: Ctrl-C interrupts only while this is set


class WorkerPool(ProcessPoolExecutor):
    """A process pool whose workers go when the parent goes. Leaving the `with` block on an
    exception (Ctrl-C, an unreadable file) interrupts the tasks in hand and drops the rest."""

    def __init__(self, jobs: int, context: Any = None) -> None:
        super().__init__(max_workers=jobs, mp_context=context, initializer=_worker_setup,
                         initargs=(os.getpid(),))

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        return super().submit(_interruptible, fn, *args, **kwargs)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type is None:
            self.shutdown(wait=True)
            return False
        for process in list((getattr(self, "_processes", None) or {}).values()):
            try:  # a worker told directly, in case Ctrl-C reached only this process
                os.kill(process.pid, signal.SIGINT)
            except (OSError, TypeError):
                pass
        self.shutdown(wait=True, cancel_futures=True)
        return False


def _interruptible(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    global _in_task
    _in_task = True
    try:
        return fn(*args, **kwargs)
    except KeyboardInterrupt:
        return INTERRUPTED
    finally:
        _in_task = False


def _on_interrupt(signum: int, frame: Any) -> None:
    if _in_task:
        raise KeyboardInterrupt


def _worker_setup(parent: int) -> None:
    """In each worker: Ctrl-C stops the task in hand only, and the worker exits when the
    parent is gone (killed, say)."""
    signal.signal(signal.SIGINT, _on_interrupt)
    forked = os.getppid() == parent  # else a fork server's child: its parent is the server

    def watch() -> None:
        while True:
            time.sleep(PARENT_CHECK_SECONDS)
            if forked and os.getppid() != parent:
                os._exit(1)
            if not forked:
                try:
                    os.kill(parent, 0)
                except ProcessLookupError:
                    os._exit(1)
                except PermissionError:
                    pass

    threading.Thread(target=watch, daemon=True, name="evalconv-parent-watch").start()

"""Worker processes that never outlive the run that started them, nor print a traceback.

A plain process pool leaves its workers waiting forever when the parent is killed, and on
Ctrl-C every worker prints its own traceback. Here a worker exits on its own when the parent
is gone, and Ctrl-C stops the task in hand and every later one: they return `INTERRUPTED`, and
their outputs, being atomic, are discarded. A worker is never killed mid-task, since a worker killed while it
sends a result leaves the pool waiting forever for the rest of the message.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures import TimeoutError as NotYet
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal, cast

from ..canonical.errors import EvalconvError, ReadError, UsageError

PARENT_CHECK_SECONDS = 0.2
WAIT_STEP_SECONDS = 0.1  # how long Ctrl-C may wait while the parent waits for a worker's answer
INTERRUPTED = None  # what a task stopped by Ctrl-C returns

_in_task = False      # in a worker: Ctrl-C raises only while a task runs
_interrupted = False  # in a worker: Ctrl-C came; every task from now on returns INTERRUPTED


@dataclass(frozen=True)
class Failed:
    """A worker's `EvalconvError`, as plain values (an exception with keyword arguments does not
    always unpickle): the parent raises it again."""

    kind: str
    message: str
    source: str | None
    line: int | None
    field: str | None

    @classmethod
    def of(cls, err: EvalconvError) -> "Failed":
        return cls(type(err).__name__, err.message, err.source, err.line, err.field)

    def raise_again(self) -> None:
        kind = {"ReadError": ReadError, "UsageError": UsageError}.get(self.kind, EvalconvError)
        raise kind(self.message, source=self.source, line=self.line, field=self.field)



def start_method() -> str | None:
    """fork on Linux (no interpreter to start, nothing to import) unless other threads run:
    forking a threaded process (a library caller's) can deadlock the child. Else a fork
    server; None where neither exists (Windows)."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else None


class WorkerPool(ProcessPoolExecutor):
    """A process pool whose workers go when the parent goes. Leaving the `with` block on an
    exception (Ctrl-C, an unreadable file) interrupts the tasks in hand and drops the rest."""

    def __init__(self, jobs: int) -> None:
        method = start_method()
        context = multiprocessing.get_context(method)
        self._pid_queue = context.SimpleQueue()  # each worker says who it is, for Ctrl-C
        self._worker_pids: set[int] = set()
        super().__init__(max_workers=jobs, mp_context=context,
                         initializer=_worker_setup, initargs=(os.getpid(), self._pid_queue))

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        # A worker forks inside submit; Ctrl-C is held until the worker has its own handler.
        held = _hold_interrupts()
        try:
            return super().submit(_interruptible, fn, *args, **kwargs)
        finally:
            _release_interrupts(held)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        if exc_type is None:
            self.shutdown(wait=True)
            return False
        for pid in self.worker_pids() if os.name == "posix" else ():
            try:  # a worker told directly, in case Ctrl-C reached only this process
                os.kill(pid, signal.SIGINT)
            except OSError:
                pass
        self.shutdown(wait=True, cancel_futures=True)
        return False

    def worker_pids(self) -> set[int]:
        """The workers started so far (each one reports its pid as it starts)."""
        try:
            while not self._pid_queue.empty():
                self._worker_pids.add(self._pid_queue.get())
        except (OSError, EOFError):
            pass
        return set(self._worker_pids)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        # The pool's own lock is taken with Ctrl-C held (see `answer_of`: held at the signal, the
        # manager thread blocks on it for ever); the wait for the workers stays interruptible.
        # typeshed calls the manager thread a _ThreadWakeup; it is the thread
        manager = cast("threading.Thread | None", self._executor_manager_thread)
        results = self._result_queue
        held = _hold_interrupts()
        try:
            super().shutdown(wait=False, cancel_futures=cancel_futures)
        finally:
            _release_interrupts(held)
        if wait:
            if manager is not None:
                manager.join()
            if results is not None:
                results.close()
            self._pid_queue.close()


def answer_of(future: Future) -> Any:
    """`future.result()`, with Ctrl-C and SIGTERM held off while the future's lock is held.

    Python runs a signal handler between two steps of the main thread, and one of them is the start
    of `Condition.__exit__`: a handler that raises there (as the command line's do) leaves the
    future's lock held for ever, and the pool's manager thread, cancelling that future at shutdown,
    blocks on it, so the process hangs (a SIGTERM landing as a chunk finished did, under load). Held,
    the signal is handled after the wait, outside the lock; a wait in steps keeps Ctrl-C prompt."""
    while True:
        held = _hold_interrupts()
        try:
            return future.result(timeout=WAIT_STEP_SECONDS)
        except NotYet:
            continue
        finally:
            _release_interrupts(held)


def finished_in_turn(futures: list[Future]) -> Iterator[Future]:
    """The futures as they finish (`as_completed`, whose wait takes every future's lock), with
    Ctrl-C held off while the locks are held, as in `answer_of`."""
    pending = set(futures)
    while pending:
        held = _hold_interrupts()
        try:
            done, pending = wait(pending, timeout=WAIT_STEP_SECONDS, return_when=FIRST_COMPLETED)
        finally:
            _release_interrupts(held)
        yield from done


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _hold_interrupts() -> Any:
    if hasattr(signal, "pthread_sigmask"):
        return signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    return None


def _release_interrupts(held: Any) -> None:
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _interruptible(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    global _in_task
    if _interrupted:
        return INTERRUPTED
    _in_task = True
    try:
        return fn(*args, **kwargs)
    except KeyboardInterrupt:
        return INTERRUPTED
    finally:
        _in_task = False


def _on_interrupt(signum: int, frame: Any) -> None:
    global _interrupted
    _interrupted = True
    if _in_task:
        raise KeyboardInterrupt


def _worker_setup(parent: int, pids: Any) -> None:
    """In each worker: Ctrl-C (or SIGTERM) stops the task in hand only, and the worker exits
    when the parent is gone (killed, say)."""
    for signum in _STOP_SIGNALS:
        signal.signal(signum, _on_interrupt)
    if hasattr(signal, "pthread_sigmask"):  # held since the fork (see WorkerPool.submit)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    pids.put(os.getpid())
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

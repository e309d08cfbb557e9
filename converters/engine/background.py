"""One function run in a worker process while the caller does something else (`diff`: the base's
table read while the parent reads the head). The worker is a `pools.WorkerPool`'s: it goes when
the parent goes, and leaving the `with` block on an error or Ctrl-C stops it."""
from __future__ import annotations

from typing import Any, Callable

from ..canonical.errors import EvalconvError
from .pools import INTERRUPTED, Failed, WorkerPool, answer_of, start_method


def _carried(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except EvalconvError as err:
        return Failed.of(err)


class Background:
    """`fn(*args)` running in a worker process; `result()` waits for it (its error raised here)."""

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self._pool = WorkerPool(1)
        try:
            self._future = self._pool.submit(_carried, fn, *args)
        except BaseException:
            self._pool.shutdown(wait=True, cancel_futures=True)
            raise

    def result(self) -> Any:
        out = answer_of(self._future)
        if out is INTERRUPTED:
            raise KeyboardInterrupt
        if isinstance(out, Failed):
            out.raise_again()
        return out

    def __enter__(self) -> "Background":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._pool.__exit__(*exc)


def in_background(fn: Callable[..., Any], *args: Any) -> Background | None:
    """`fn(*args)` started in a worker process, or None where none can be had (Windows, a
    process limit): the caller then runs it itself. `fn` is a module's function (it is pickled
    by name)."""
    if start_method() is None:
        return None
    try:
        return Background(fn, *args)
    except OSError:
        return None

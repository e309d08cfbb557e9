"""The progress bar of the long commands, on a terminal only (issue 26 item 13).

The library tells a watcher how its reads advance (`evalconv.sources.watching`, `Progress`)
and never prints; this module draws what it is told with `tqdm`: rows and bytes, the rate and,
when the size is known, the time left. Nothing is drawn when standard error is not a terminal
(a pipe, a file, CI), with `-q`, or when the command is done before `DELAY` seconds: piped
output stays byte for byte what it was, and `tqdm` is imported only once a bar is drawn (about
40 ms on this machine), so start-up is unchanged everywhere else.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

import click

from ..sources import Progress, watching
from .common import quiet as quieted

DELAY = 0.5  # seconds of work before a bar appears; EVALCONV_PROGRESS_DELAY overrides (the tests set 0)
REDRAW = 0.1  # seconds between two redraws at most


def on_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    except (ValueError, AttributeError):  # closed or replaced standard error
        return False


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("EVALCONV_PROGRESS_DELAY", DELAY)))
    except ValueError:
        return DELAY


class Bar:
    """One tqdm bar at a time: a new one when the source (or what is counted) changes."""

    def __init__(self) -> None:
        self._start = time.monotonic()
        self._delay = _delay()
        self._bar: Any = None
        self._key: tuple[str, str] | None = None
        self._began = self._start
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        kind = "bytes" if p.read is not None and p.size else "steps" if p.steps else "rows"
        key = (p.source, kind)
        if key != self._key:
            self._close()
            self._key = key
        if self._bar is None:
            if p.done or now - self._start < self._delay:
                self._began = now if p.done else self._began  # the next source's rate counts from here
                return
            self._bar = self._open(p, kind)
        elif not p.done and now - self._last < REDRAW:
            return
        self._last = now
        self._advance(p, kind, now)
        if p.done:
            self._close()
            self._began = now

    def _open(self, p: Progress, kind: str) -> Any:
        # only on a terminal, once a bar is due; tqdm ships no type hints (its stubs are another package)
        from tqdm import tqdm  # type: ignore[import-untyped]

        width = _width()
        common = {"file": sys.stderr, "leave": False, "desc": _short(p.source), "mininterval": REDRAW,
                  **({"dynamic_ncols": True} if width is None else {"ncols": width})}
        if kind == "bytes":
            return tqdm(total=p.size, unit="B", unit_scale=True, unit_divisor=1024, **common)
        if kind == "steps":
            return tqdm(total=p.steps, unit=f" {p.unit}", **common)
        return tqdm(total=None, unit=f" {p.unit}", unit_scale=True, **common)

    def _advance(self, p: Progress, kind: str, now: float) -> None:
        bar = self._bar
        target = p.read if kind == "bytes" else p.step if kind == "steps" else p.rows
        if target is not None and target > bar.n:
            bar.update(target - bar.n)
        if kind == "bytes":  # tqdm's own rate is of bytes: the rows' beside it
            elapsed = max(now - self._began, 1e-6)
            bar.set_postfix_str(f"{p.rows:,} rows, {p.rows / elapsed:,.0f} rows/s", refresh=False)
        elif kind == "steps" and p.unit != "row":
            bar.set_postfix_str(f"{p.rows:,} rows", refresh=False)
        bar.refresh()

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def write(self, message: str) -> None:
        """A line on standard error above the bar (the bar is drawn again below it)."""
        if self._bar is None:
            click.echo(message, err=True)
        else:
            self._bar.write(message, file=sys.stderr)


@contextmanager
def shown(quiet: bool = False, *, data_to_terminal: bool = False) -> Iterator[Bar | None]:
    """A bar for what the library reads inside the block, when standard error is a terminal
    (not with -q, nor when the data itself goes to that terminal: `convert` to standard output).
    The bar is gone when the block ends, before the command prints its findings."""
    if quiet or quieted() or not on_terminal() or (data_to_terminal and sys.stdout.isatty()):
        yield None
        return
    bar = Bar()
    try:
        with watching(bar):
            yield bar
    finally:
        bar._close()


def _width() -> int | None:
    """None when the terminal knows its width (tqdm follows it as it changes); else COLUMNS or
    80 (a terminal of unknown size, 0 columns, would get no bar at all)."""
    try:
        if os.get_terminal_size(sys.stderr.fileno()).columns > 0:
            return None
    except (OSError, ValueError, AttributeError):
        pass
    try:
        return max(20, int(os.environ.get("COLUMNS", "80")))
    except ValueError:
        return 80


def _short(source: str, width: int = 32) -> str:
    return source if len(source) <= width else "…" + source[-(width - 1):]

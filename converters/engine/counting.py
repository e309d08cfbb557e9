"""`stats` on two cores for a large JSONL file: each worker counts a chunk (cut at line ends,
as `parallel` cuts them for validate), the parent adds the counters up in file order. A file that
changes meanwhile (truncated, rewritten, replaced) is an `InputChanged`, as in `parallel`.

What a count is stays in `coverage/stats.py`, which hands its two functions over (`Counting`):
one makes a chunk's counter, one counts rows into it; the engine only cuts, hands out and adds."""
from __future__ import annotations

import io
import os
from collections import deque
from concurrent.futures import Future
from typing import Any, Callable, Iterator, NamedTuple

from ..canonical.errors import ReadError
from ..canonical.json_format import JSONL_FORMAT
from ..canonical.source import Lines
from .parallel import _chunks
from .pools import INTERRUPTED, WorkerPool, answer_of
from ..reports import ReadReport
from ..sources import InputChanged, Progress, changed, identity, tell

__all__ = ["count_in_chunks"]

_CHANGED = "changed"  # a worker's answer when its chunk is not the file the run started with


class Counting(NamedTuple):
    """How `stats` counts, handed to the workers (module-level functions: they cross by name).
    `start(label, slices, crosstabs, samples, wanted)` -> (a chunk's counter, its file stats);
    `add_rows(counter, rows, file_stats)` counts rows into them (raising a `ReadError` partway)."""

    start: Callable[..., tuple[Any, Any]]
    add_rows: Callable[[Any, Iterator[Any], Any], None]


def _count_chunk(path: str, start: int, end: int, expected: tuple[int, int, int, int], label: str,
                 slices: list[str], crosstabs: list[tuple[str, str]], samples: int,
                 wanted: list[Any], counting: Counting) -> tuple[Any, ...]:
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
        info = os.fstat(f.fileno())
    now = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if len(data) != end - start or now != expected:  # as `parallel` checks a chunk
        return _CHANGED, changed(label, expected, now).message
    lines = Lines(io.BytesIO(data), source=label, at_start=start == 0)
    counter, part = counting.start(label, slices, crosstabs, samples, wanted)
    error = None
    try:
        counting.add_rows(counter, JSONL_FORMAT.read(lines, ReadReport("jsonl")), part)
    except ReadError as err:
        error = (err.message, err.line, err.field)
    return counter, part.invalid, lines.number, error


def count_in_chunks(counter: Any, path: str, result: Any, jobs: int, counting: Counting) -> None:
    """Count `path` into `counter` (and its rows into `result`, a `stats.FileStats`)."""
    slices = list(counter.tallies)
    crosstabs = [(a, b) for a, b, *_ in counter.cross]
    line_base = 0
    expected = identity(path)  # every chunk must come from this file, unchanged
    cuts = _chunks(path, expected[2])
    pending: deque[tuple[int, Future]] = deque()  # (where the chunk ends, its answer)
    with WorkerPool(jobs) as pool:
        while True:
            while len(pending) < 2 * jobs and (cut := next(cuts, None)) is not None:  # flat memory
                wanted = [t.still_wanted() for t in [*counter.tallies.values(), *(c[4] for c in counter.cross)]]
                pending.append((cut[1], pool.submit(_count_chunk, path, *cut, expected, result.path, slices,
                                                    crosstabs, counter.samples, wanted, counting)))
            if not pending:
                break
            end, future = pending.popleft()
            answer = answer_of(future)
            if answer is INTERRUPTED:
                raise KeyboardInterrupt
            if isinstance(answer[0], str):  # _CHANGED
                raise InputChanged(answer[1], source=result.path)
            part, invalid, line_count, error = answer
            counter.merge(part, line_base)
            result.rows += part.rows
            result.invalid += invalid
            if error is not None:
                message, line, field = error
                raise ReadError(message, source=result.path, line=None if line is None else line + line_base,
                                field=field)
            line_base += line_count
            tell(Progress(result.path, result.rows, end, expected[2], done=not pending))
    try:
        now = identity(path)
    except OSError:
        now = None
    if now != expected:  # changed after the last chunk was read
        raise changed(result.path, expected, now)

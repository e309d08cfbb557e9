"""What the parent writes for rows another process wrote: one valid row (`Encoded`), or a run of
valid rows with nothing to report (`CleanRows`), each carrying the bytes (or a record batch's
slice) and what the writer kept of them. The workers' checked rows carry these as payloads, as
the serial path's carry `Row`s."""
from __future__ import annotations

from array import array
import itertools
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from ..reports import ChunkLosses, Recorded

Runs = list[tuple[int, Any]]  # (byte offset, what the writer kept for the bytes from there)


@dataclass(slots=True)
class Encoded:
    """A valid row a worker already wrote, as UTF-8; the parent writes it as it is."""

    data: bytes
    runs: Runs | None = None  # a writer that wrote in runs (CSV: under which columns)
    parts: "list[Any] | None" = None  # a split writer: what to replay for the row
    losses: "tuple[ChunkLosses, int, int] | None" = None  # and its carried fields (chunk, row, row + 1)
    noted: "list[Recorded]" = field(default_factory=list)  # a writer without per-row losses: its notes

    def texts(self) -> list[bytes]:
        return [self.data]


@dataclass(slots=True)
class CleanRows:
    """Consecutive valid rows with nothing to report, already written as UTF-8. Read like a
    `Checked` row: `count` rows, no findings, and itself as the payload to write."""

    count: int
    data: bytes
    runs: Runs | None = None
    parts: "list[Any] | None" = None  # a split writer: what to replay for each row
    ends: Any = None  # a split writer: (chunk's row ends, start, stop, where `data` starts in the chunk)
    losses: "tuple[ChunkLosses, int, int] | None" = None  # and the rows' carried fields (chunk, start, stop)
    findings: tuple = ()
    noted: "list[Recorded]" = field(default_factory=list)  # a writer without per-row losses: the rows' notes

    def texts(self) -> list[bytes]:
        """Each row's text (a split writer's rows)."""
        ends, first, stop, at = self.ends
        data, start, out = self.data, 0, []
        for end in ends[first:stop]:
            out.append(data[start:end - at])
            start = end - at
        return out

    @property
    def row(self) -> "CleanRows":
        return self


def runs_in(runs: Runs | None, start: int, end: int) -> Runs | None:
    """The runs of `data[start:end]`, offsets made relative to `start`."""
    if runs is None:
        return None
    out: Runs = []
    # from the last run that starts at or before `start` (a chunk has dozens of runs, and is cut
    # into as many payloads as it has rows with something to say)
    for at, what in itertools.islice(runs, max(bisect_right(runs, start, key=_offset) - 1, 0), None):
        if at >= end:
            break
        out.append((max(at - start, 0), what))
    return out


def _offset(run: tuple[int, Any]) -> int:
    return run[0]


class RowNotes:
    """What a writer that keeps nothing of each row (`LineWriter.per_row` False: the canonical
    CSV's formula-looking cells) noted while encoding a part's rows, by row index, in order: the
    parent notes them for the rows it writes, as the writer would have (few rows note anything)."""

    __slots__ = ("rows", "recorded")

    def __init__(self) -> None:
        self.rows = array("Q")
        self.recorded: list[Recorded] = []

    def add(self, i: int, recorded: Recorded) -> None:
        self.rows.append(i)
        self.recorded.append(recorded)

    def between(self, start: int, stop: int) -> list[Recorded]:
        """The notes of rows start..stop, in order."""
        if not self.rows:
            return []
        lo = bisect_left(self.rows, start)
        return self.recorded[lo:bisect_left(self.rows, stop, lo)]


def noted_in(notes: RowNotes | None, start: int, stop: int) -> list[Recorded]:
    return [] if notes is None else notes.between(start, stop)

"""What the parent writes for rows another process wrote: one valid row (`Encoded`), or a run of
valid rows with nothing to report (`CleanRows`), each carrying the bytes (or a record batch's
slice) and what the writer kept of them. The workers' checked rows carry these as payloads, as
the serial path's carry `Row`s."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..reports import ChunkLosses

Runs = list[tuple[int, Any]]  # (byte offset, what the writer kept for the bytes from there)


@dataclass(slots=True)
class Encoded:
    """A valid row a worker already wrote, as UTF-8; the parent writes it as it is."""

    data: bytes
    runs: Runs | None = None  # a writer that wrote in runs (CSV: under which columns)
    parts: "list[Any] | None" = None  # a split writer: what to replay for the row
    losses: "tuple[ChunkLosses, int, int] | None" = None  # and its carried fields (chunk, row, row + 1)

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
    for i, (at, what) in enumerate(runs):
        until = runs[i + 1][0] if i + 1 < len(runs) else None
        if until is not None and until <= start:
            continue
        if at >= end:
            break
        out.append((max(at - start, 0), what))
    return out

"""A target format's writer run for a part of a file that another process writes: a worker's
chunk, or a partition an engine (Dask, Ray, Spark) wrote. How it writes follows the format's
declared `write_shape`:

- "line-per-row": the format's own `LineWriter` encodes each row into a byte sink (its header,
  written when it opens, is the file's: the parent writes it). A writer that says something of
  each row (`per_row`) has its loss-report calls recorded and what it kept of each row listed,
  for the parent to replay (`split_writers.ReplayWriter`); one that does not leaves `runs`, what
  it kept for each stretch of its bytes (the canonical CSV: the columns), for `write_lines`, and
  the few rows it noted something of (`noted`: the CSV's formula-looking cells), for the parent
  to note for the rows it writes.
- "columnar": the rows become one record batch of the canonical columns.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TextIO, cast

from ..canonical import jsonvalue, parquet_format
from ..canonical.errors import RowRefused
from ..canonical.findings import Finding
from ..canonical.format import Format, LineWriter, WriteOptions
from ..canonical.row import Row
from ..reports import ChunkLosses, LossRecorder
from .payloads import RowNotes, Runs
from .split_writers import Part, RowRejected, encode_row, refusal, refused_finding, write_row

_NOTHING = object()  # kept by no row yet


class ByteSink:
    """A text stream for a worker's writer: keeps what is written as UTF-8, so that the text
    crosses to the parent and onto disk without being decoded and encoded again."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        self.parts.append(data)
        self.size += len(data)
        return len(text)


def per_row(writer: Any) -> bool:
    """Does the parent replay what the writer noted and kept of each row? (A writer of the
    contract before `LineWriter`, with `encode` and `keep` of its own, does.)"""
    return not isinstance(writer, LineWriter) or writer.per_row


class ChunkWriter:
    """Rows through `fmt`'s writer (None: validating only, nothing written), for the parent to
    write: `data()`, and where row i ends in it (`end()` after each row)."""

    def __init__(self, fmt: Format | None, options: WriteOptions) -> None:
        self.sink = ByteSink()
        self.columns: parquet_format.Columns | None = None
        self.runs: Runs | None = None
        self.parts: list[Part | None] | None = None
        self.losses: ChunkLosses | None = None
        self.noted: RowNotes | None = None
        self._recorder: LossRecorder | None = None
        self._rows = 0  # rows added so far (None included): the next row's index
        self._writer: Any = None
        self._last: Any = _NOTHING
        if fmt is None:
            return
        if fmt.write_shape == "columnar":
            self.columns = self._writer = parquet_format.Columns()
            return
        assert fmt.write_shape == "line-per-row", f"{fmt.name} is written by one process"
        recorder = LossRecorder()
        self._writer = fmt.open_writer(cast(TextIO, self.sink), recorder, options)
        self.sink.parts, self.sink.size = [], 0  # the header is the file's: the parent writes it
        self._recorder = recorder
        if per_row(self._writer):
            self.parts, self.losses = [], ChunkLosses()
        else:
            self.runs, self.noted = [], RowNotes()

    def add(self, row: Row | None) -> Finding | None:
        """Row `row` (None: a row left out, which adds nothing) into the part; the writer's
        refusal of it, if it refused it."""
        at = self._rows
        self._rows += 1
        if self.parts is not None:
            assert self._recorder is not None and self.losses is not None
            part = None if row is None else encode_row(self._writer, self._recorder, row, self.sink, self.losses,
                                                       len(self.parts))
            if isinstance(part, RowRejected):
                self.parts.append(None)
                return part.finding
            self.parts.append(part)
            return None
        if row is None or self._writer is None:
            return None
        try:
            if self.runs is None:
                write_row(self._writer, row)  # columns
            else:
                self._encode_line(row, at)
        except RowRefused as err:
            return refused_finding(err)
        return None

    def _encode_line(self, row: Row, at: int) -> None:
        assert self._recorder is not None and self.noted is not None
        try:
            try:
                text, kept = self._writer.encode(row)
            except jsonvalue.JSONValueError as err:
                raise refusal(row, err) from None
        except RowRefused:
            self._recorder.take()  # a writer notes nothing of a row it refuses
            raise
        noted = self._recorder.take()
        if noted is not None:
            self.noted.add(at, noted)
        if kept is not self._last:
            assert self.runs is not None
            self.runs.append((self.sink.size, kept))
            self._last = kept
        self.sink.write(text)

    def end(self) -> int:
        """Where the rows so far end in `data()` (rows, for columns)."""
        return self.sink.size if self.columns is None else len(self.columns)

    def data(self) -> Any:
        """The rows' text as UTF-8, or for columns a record batch (the columns start again empty)."""
        if self.columns is None:
            return b"".join(self.sink.parts)
        return self.columns.batch()


@dataclass(slots=True)
class RowSlice:
    """Rows start..stop of a record batch, cut like bytes (`s[a:b]`, `len(s)`): what a worker
    hands the parent for a columnar target."""

    batch: Any
    start: int
    stop: int

    def __getitem__(self, cut: slice) -> "RowSlice":
        start, stop, _ = cut.indices(self.stop - self.start)
        return RowSlice(self.batch, self.start + start, self.start + max(start, stop))

    def __len__(self) -> int:
        return self.stop - self.start


def cuttable(data: Any) -> Any:
    """A part's data, cut like bytes: a record batch as a `RowSlice` of it."""
    return data if isinstance(data, bytes) else RowSlice(data, 0, data.num_rows)

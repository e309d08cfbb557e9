"""Line writers that say something of each row (`LineWriter.per_row`: the vendor writers) on two
cores: what a worker leaves for the parent a row at a time, and how the parent writes it. A worker encodes each row through the format's own writer,
its loss-report calls recorded; the parent writes the text as it is, notes the losses and hands
what the writer kept of each row to its own writer, so that the file and the report are what one
core gives."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TextIO, TypeAlias, cast

from ..canonical import jsonvalue
from ..canonical.errors import EvalconvError, RowRefused
from ..canonical.findings import Finding
from ..canonical.format import HoldingWriter, LineWriter, RowWriter, first_row
from ..canonical.row import Row
from ..reports import ChunkLosses, LossRecorder, LossReport, Recorded, replay
from .payloads import CleanRows, Encoded



class TextSink(Protocol):
    def write(self, text: str) -> int: ...


class EncodedOutput(Protocol):
    """An output that takes UTF-8 text another process encoded (`AtomicOutput`)."""

    @property
    def stream(self) -> TextIO: ...
    def write_encoded(self, data: bytes) -> None: ...


@dataclass(frozen=True, slots=True)
class Refused:
    """An error a writer raised in a worker that is not the refusal of one row: the parent
    raises the same error where the serial path raises it, when it comes to write the row."""

    kind: type[EvalconvError]
    message: str
    field: str | None

    def error(self) -> EvalconvError:
        return self.kind(self.message, field=self.field)


@dataclass(frozen=True, slots=True)
class RowRejected:
    """A row the writer refused (`RowRefused`) in a worker: the parent rejects it as the serial
    path does (`refused_finding`), unless the set rules reject it first."""

    finding: Finding


# What a worker's split writer leaves for the parent, a row at a time: the loss report's calls
# and what the writer keeps of the row, or an error it raised (a row it refused is rejected
# in the worker: `RowRejected`).
Part: TypeAlias = "tuple[Recorded | None, Any] | Refused"


def refusal(row: Row, err: jsonvalue.JSONValueError) -> RowRefused:
    """A row built in code can hold what JSON cannot (NaN); read rows cannot."""
    return RowRefused(row.id, f"cannot be written: {err}")


def write_row(writer: Any, row: Any) -> None:
    """`writer.write(row)`, a value JSON cannot hold refused as `RowRefused`."""
    try:
        writer.write(row)
    except jsonvalue.JSONValueError as err:
        raise refusal(row, err) from None


def refused_finding(err: RowRefused) -> Finding:
    """A writer's refusal of one row as the row's finding (located by the caller)."""
    return Finding("refused-by-target", err.reason, err.field or "$")


WRITE_BYTES = 1024 * 1024  # the workers' text goes to the output this much at a time


class ReplayWriter:
    """For a line writer that says something of each row: the workers' text as it is; the rows' losses noted in the parent's
    report (their carried fields a key at a time for a run of rows), and what the writer keeps
    of each row handed to the parent's writer.

    A row with a finding ends a stretch of clean rows, so the engine hands over a few rows at a
    time: their text is written a MiB at a time, and their carried fields are noted for the
    longest run of consecutive rows of a chunk (one look per key, not one per stretch). `finish`
    writes and notes what is pending; call it before the format's writer closes."""

    def __init__(self, out: EncodedOutput, writer: RowWriter, report: LossReport) -> None:
        self._out, self._writer, self._report = out, cast(LineWriter, writer), report
        self._first = True
        self._holder = writer if isinstance(writer, HoldingWriter) else None
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._carry: tuple[ChunkLosses, int, int] | None = None  # rows whose carried fields are not noted yet

    def write(self, rows: Encoded | CleanRows) -> None:
        holder = self._holder
        if holder is not None:
            if holder.holding:
                self.finish()  # what is pending goes before the text the writer writes
                self._hand_over(rows, holder)
                return
            self._first = not holder.started
        data = rows.data
        if self._first and data:  # the file's first row: a JSON array's opening, not its comma
            if self._writer.joins is not None:
                data = first_row(data.decode("utf-8"), self._writer.joins).encode("utf-8")
            self._first = False
        if data:
            self._pending.append(data)
            self._pending_size += len(data)
            if self._pending_size >= WRITE_BYTES:
                self._write_pending()
        assert rows.losses is not None  # a split writer's rows
        losses, start, stop = rows.losses
        if not losses.others:
            self._carry_later(losses, start, stop)
        else:
            self._carry_now()  # an earlier chunk's rows first
        with self._report.gathering():  # each notice written once for the stretch, not once a row
            for at, part in enumerate(rows.parts or (), start):
                if isinstance(part, Refused):
                    raise part.error()
                recorded, kept = part
                if losses.others:  # carries under other rows' ids: row by row, in order
                    losses.carry_rows(self._report, at, at + 1)
                if recorded is not None:
                    replay(recorded, self._report)
                self._writer.keep(kept)

    def finish(self) -> None:
        self._carry_now()
        self._write_pending()

    def _write_pending(self) -> None:
        if self._pending:
            pending = self._pending
            self._out.write_encoded(pending[0] if len(pending) == 1 else b"".join(pending))
            self._pending, self._pending_size = [], 0

    def _carry_later(self, losses: ChunkLosses, start: int, stop: int) -> None:
        # Each key's rows are noted in row order either way: a run is noted before a later one
        # starts, and what else a row records (its drops, its notices) goes elsewhere in the report.
        pending = self._carry
        if pending is not None and pending[0] is losses and pending[2] == start:
            self._carry = (losses, pending[1], stop)
            return
        self._carry_now()
        self._carry = (losses, start, stop)

    def _carry_now(self) -> None:
        if self._carry is not None:
            losses, start, stop = self._carry
            self._carry = None
            losses.carry_rows(self._report, start, stop)

    def _hand_over(self, rows: Encoded | CleanRows, holder: HoldingWriter) -> None:
        """A row at a time: the writer writes the text or holds the row. A held row's losses are
        the writer's to note when it writes it; a written row's are noted after what the writer
        noted for the rows it held before it, as on one core."""
        assert rows.losses is not None
        losses, start, _ = rows.losses
        for at, (text, part) in enumerate(zip(rows.texts(), rows.parts or ()), start):
            if isinstance(part, Refused):
                raise part.error()
            recorded, kept = part
            if holder.put(text.decode("utf-8"), kept):
                losses.carry_rows(self._report, at, at + 1)
                if recorded is not None:
                    replay(recorded, self._report)
        self._out.stream.flush()  # its text before the next bytes the workers wrote


def encode_row(writer: LineWriter, recorder: LossRecorder, row: Row, sink: TextSink, losses: ChunkLosses,
               at: int) -> "Part | RowRejected":
    """Row `at` through a split writer in a worker: its text into `sink`, its carried fields into
    `losses`, and its part."""
    try:
        try:
            text, kept = writer.encode(row)
        except jsonvalue.JSONValueError as err:
            raise refusal(row, err) from None
    except RowRefused as err:
        recorder.take()  # a writer notes nothing of a row it refuses; if it did, it is not the parent's
        return RowRejected(refused_finding(err))
    except EvalconvError as err:
        recorder.take()
        return Refused(type(err), err.message, err.field)
    sink.write(text)
    return losses.add(at, recorder.take()), kept

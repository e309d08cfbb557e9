"""Two cores for the big common case: a UTF-8 JSONL file validated, or converted to a format whose
writer is not a "document" (`Format.write_shape`: canonical CSV, JSONL, Parquet, and the vendor
formats whose writers write a row on its own).

The file is cut into chunks at line ends. Worker processes parse, check and encode their chunks
(everything but the set rules); the parent takes the results in file order, applies the set
rules (duplicate ids, case families) and writes. Findings, row numbers and lines come out as the
serial path gives them. Anything else (a pipe, another encoding, another format) runs serially.

On Linux, from a single-threaded process, the workers are forked (no interpreter to start,
nothing to import); elsewhere a fork server starts them. They are started before any output
file is opened, since a forked worker holds every file its parent had open, and the output's
temp file and its lock must not outlive a killed parent. Workers go when the parent goes
(`pools.WorkerPool`).
"""
from __future__ import annotations

import codecs
import io
import os
from array import array
from collections import deque
from typing import TYPE_CHECKING, Any, Generator, Iterator, NamedTuple, Protocol, cast

from ..atomic import AtomicFolder, AtomicOutput
from ..canonical import jsonvalue
from ..canonical.errors import ReadError
from ..canonical.format import ColumnarWriter, LineWriter, RowWriter, WriteOptions
from ..canonical.json_format import JSONL_FORMAT
from ..canonical.row import Row
from ..canonical.source import Lines, SourceRow
from ..canonical.validator import Checked, Validator
from ..registry import REGISTRY
from ..reports import ChunkLosses, LossReport, ReadReport, replay
from ..sources import InputChanged, Progress, changed, identity, tell
from .chunk_writer import ChunkWriter, RowSlice, per_row
from .payloads import CleanRows, Encoded, RowNotes, Runs, noted_in, runs_in
from .set_keys import SetKeys
from .split_writers import WRITE_BYTES, EncodedOutput, ReplayWriter

if TYPE_CHECKING:
    from concurrent.futures import Future

CHUNK_BYTES = 1024 * 1024  # 4 MiB: 176 MB for the process tree at 1M rows; 1 MiB: 142 MB, 3-5% slower
PARALLEL_MIN_BYTES = 8 * 1024 * 1024  # below this, starting workers costs more than it saves
# What the workers do for each `Format.write_shape` (a "document" is written by one process):
# - "columnar": each worker builds its chunk's valid rows as one Arrow record batch, and the
#   parent only cuts the batches into row groups and writes them.
# - "line-per-row": workers encode the rows; the parent writes the text as it is and, for a
#   writer that says something of each row (`LineWriter.per_row`), replays the losses and what
#   the writer keeps of each row (`ReplayWriter`).


class PayloadWriter(Protocol):
    """What `row_writer` gives: it writes a valid `Checked` row's payload (a `Row`, or what the
    workers wrote), whichever implementation checked it."""

    def write(self, row: Any) -> None: ...


def checked_rows(source: str, fmt_in: str, rows: Iterator[SourceRow], *, to: str | None,
                 encoding: str | None, jobs: int | None, label: str, options: WriteOptions,
                 require: tuple[str, ...] = (), engine: Any = None, output: str | None = None,
                 contexts: Any = None) -> Any:
    """The checked rows of one input, as a context manager: `Workers` for a file worth
    splitting, else `SerialRows` over `rows`. Enter it before opening any output (workers
    start at once and must not hold the output's temp file). `engine`: a cluster's engine
    (`dask_engine.DaskEngine`), whose checker reads the file's row groups there (`output`: the
    file written, for the writers' variant)."""
    if engine is not None:
        return engine.checker(source, fmt_in, to=to, label=label, options=options, output=output, require=require)
    jobs = default_jobs() if jobs is None else jobs
    if eligible(source, fmt_in, to, encoding, jobs, options):
        try:
            return Workers(source, label=label, to=to, options=options,
                           require=require, jobs=jobs, contexts=contexts)
        except OSError:  # no processes to be had (a process limit, say): one core will do
            pass
    return SerialRows(rows)


class SerialRows:
    """The rows read here, checked one at a time: `Checked` rows carrying `Row`s."""

    def __init__(self, rows: Iterator[SourceRow]) -> None:
        self._rows = rows

    def checked(self, validator: Validator) -> Iterator[Checked[Row]]:
        return validator.check_all(self._rows)

    def row_writer(self, writer: RowWriter, out: AtomicOutput | AtomicFolder, to: str,
                   report: LossReport) -> PayloadWriter:
        """What writes a valid row's payload: here the format's own writer."""
        return writer

    def finish(self, row_writer: Any) -> None:
        """What `row_writer` holds, written (before the format's writer closes): nothing here."""

    def __enter__(self) -> "SerialRows":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


def eligible(path: str, fmt_in: str, to: str | None, encoding: str | None, jobs: int,
             options: WriteOptions | None = None) -> bool:
    if jobs < 2 or fmt_in != "jsonl" or not parts_written(to):
        return False
    if encoding not in (None, "utf-8", "utf8") or path == "-":
        return False
    try:
        if not (os.path.isfile(path) and os.path.getsize(path) >= PARALLEL_MIN_BYTES):
            return False
    except OSError:
        return False
    from .pools import start_method  # only large files need the pool's imports

    return start_method() is not None  # Windows: serial


def parts_written(to: str | None) -> bool:
    """Can parts of a file in format `to` be written by other processes (None: validating only)?"""
    return to is None or REGISTRY.get(to).write_shape != "document"


def _answers_grow(to: str | None) -> bool:
    """Is a worker's answer for a chunk larger than the chunk? A vendor line writer's is (its
    losses and what it keeps of each row cross too; a DeepEval golden carries the row); a
    lossless format's line writer notes nothing, and its answer is its text."""
    if to is None:
        return False
    fmt = REGISTRY.get(to)
    return fmt.write_shape == "line-per-row" and not fmt.lossless


def default_jobs() -> int:
    return min(2, os.cpu_count() or 1)


class EncodedWriter:
    """For a line writer that keeps nothing of each row: the workers' text, through the
    writer's `write_lines`, and what the writer noted of the rows, in the parent's report.

    The engine hands over a few rows at a time (a row with a finding ends a stretch of clean
    rows): they go to `write_lines` a MiB at a time, their runs shifted to match. `finish`
    writes what is pending; call it before the format's writer closes."""

    def __init__(self, writer: LineWriter, report: LossReport) -> None:
        self._writer, self._report = writer, report
        self._data: list[bytes] = []
        self._runs: list[tuple[int, Any]] = []
        self._size = 0

    def write(self, rows: Encoded | CleanRows) -> None:
        assert rows.runs is not None  # what `encode` kept, a stretch at a time
        for recorded in rows.noted:
            replay(recorded, self._report)
        if not rows.data:
            return
        size = self._size
        self._runs.extend((at + size, kept) for at, kept in rows.runs)
        self._data.append(rows.data)
        self._size = size + len(rows.data)
        if self._size >= WRITE_BYTES:
            self.finish()

    def finish(self) -> None:
        if self._data:
            data = self._data[0] if len(self._data) == 1 else b"".join(self._data)
            self._writer.write_lines(data, self._runs)
            self._data, self._runs, self._size = [], [], 0


class SliceWriter:
    """For a "columnar" target: the rows come as slices of the workers' record batches
    (`RowSlice`), handed to the format's writer as they are."""

    def __init__(self, writer: RowWriter) -> None:
        assert isinstance(writer, ColumnarWriter), "a columnar format's writer takes slices"
        self._writer = writer

    def write(self, rows: Encoded | CleanRows) -> None:
        cut = cast(RowSlice, rows.data)  # what a columnar chunk holds
        self._writer.write_slice(cut.batch, cut.start, cut.stop)

    def finish(self) -> None:
        pass  # nothing held


def writer_for(out: AtomicOutput | AtomicFolder | EncodedOutput, writer: RowWriter, to: str,
               report: LossReport) -> "EncodedWriter | SliceWriter | ReplayWriter":
    """What writes the parts other processes wrote, through the format's own `writer`."""
    if REGISTRY.get(to).write_shape == "columnar":
        return SliceWriter(writer)
    if per_row(writer):
        assert not isinstance(out, AtomicFolder)  # a folder format is columnar
        return ReplayWriter(out, writer, report)
    assert isinstance(writer, LineWriter)
    return EncodedWriter(writer, report)


def _chunks(path: str, size: int | None = None, chunk: int | None = None) -> Iterator[tuple[int, int]]:
    size = os.path.getsize(path) if size is None else size
    chunk = CHUNK_BYTES if chunk is None else chunk
    with open(path, "rb") as f:
        start = 0
        while start < size:
            f.seek(min(start + chunk, size))
            f.readline()  # on to the end of the line the cut fell in
            end = min(f.tell(), size) if start + chunk < size else size
            yield start, end
            start = end


class _Chunk(NamedTuple):
    """A worker's answer for one chunk, in columns: most rows need only their key and their
    text, and a few large objects cross between processes far faster than many small ones."""

    data: Any          # the rows the worker found valid, written one after another, as UTF-8
                       # (a "columnar" target: a RowSlice of one record batch, cut the same way)
    ends: array        # ends[i]: where row i ends in `data` (a rejected row adds nothing)
    lines: array       # lines[i]: row i's line in the chunk
    keys: SetKeys      # what the set rules look at, for each row
    notes: dict        # i -> (findings, rejected by the worker?, the row's value if so), for rows with either
    line_count: int
    error: tuple | None
    runs: Runs | None = None  # the writer's runs over `data`, when it writes in runs
    parts: list | None = None  # a split writer: parts[i], what to replay for row i (None: rejected)
    losses: ChunkLosses | None = None  # a split writer: the chunk's carried fields, a key at a time
    refused: dict | None = None  # i -> (the writer's refusal finding, the row's value), for rows it refused
    versions: dict | None = None  # rows by the schema version they say
    noted: RowNotes | None = None  # a line writer that keeps nothing of each row: what it noted of some rows


def _check_chunk(path: str, start: int, end: int, expected: tuple[int, int, int, int], label: str,
                 to: str | None, options: WriteOptions, require: tuple[str, ...], contexts: Any = None) -> _Chunk:
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
        now = os.fstat(f.fileno())
    if len(data) != end - start or (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) != expected:
        moved = changed(label, expected, (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns))
        return _Chunk(b"", array("Q"), array("Q"), SetKeys(), {}, 0, ("changed", moved.message))
    lines = Lines(io.BytesIO(data), source=label, at_start=start == 0)
    validator = Validator(source=label, require=require, contexts=contexts)
    writer = ChunkWriter(REGISTRY.get(to) if to else None, options)
    ends, line_numbers, keys, notes, refused = array("Q"), array("Q"), SetKeys(), {}, {}
    error: tuple[str, int | None, str | None] | None = None
    try:
        for src in JSONL_FORMAT.read(lines, ReadReport("jsonl")):
            checked = validator.check_row(src)
            refusal = writer.add(checked.row)
            if refusal is not None:
                refused[len(keys)] = (refusal, src.value)
            if checked.findings or checked.row is None:
                rejected = checked.row is None
                notes[len(keys)] = (checked.findings, rejected, src.value if rejected else None)
            keys.add(checked.key)
            ends.append(writer.end())
            assert src.line is not None  # JSONL rows have their line
            line_numbers.append(src.line)
    except ReadError as err:
        error = (err.message, err.line, err.field)
    payload = writer.data()
    if writer.columns is not None:
        payload = RowSlice(payload, 0, payload.num_rows)
    return _Chunk(payload, ends, line_numbers, keys, notes, lines.number, error, writer.runs, writer.parts,
                  writer.losses, refused, dict(validator.versions), writer.noted)


class Workers:
    """Worker processes checking one large JSONL file a chunk at a time, in file order.

    Create it before opening any output: the first chunks are handed out at once, which starts
    (forks) the workers."""

    def __init__(self, path: str, *, label: str, to: str | None, options: WriteOptions,
                 require: tuple[str, ...] = (), jobs: int = 2, contexts: Any = None) -> None:
        from .pools import WorkerPool

        self._path, self._label, self._to, self._jobs = path, label, to, jobs
        self._identity = identity(path)  # the chunks must all come from this file, unchanged
        self._task = (self._identity, label, to, options, require, contexts)
        self._pool = WorkerPool(jobs)
        # A vendor writer's answer for a chunk is larger than its input (a DeepEval golden carries
        # the row): half the chunk keeps the answers in flight, and so the memory, the same.
        self._chunks = _chunks(path, self._identity[2], CHUNK_BYTES // 2 if _answers_grow(to) else None)
        self._pending: deque[tuple[int, int, Future]] = deque()
        try:
            self._hand_out()
        except BaseException as err:
            self._pool.__exit__(type(err), err, err.__traceback__)
            raise

    def _hand_out(self) -> None:
        """Keep two chunks a worker queued, so no worker waits for the parent."""
        while len(self._pending) < self._jobs * 2 and (cut := next(self._chunks, None)) is not None:
            self._pending.append((*cut, self._pool.submit(_check_chunk, self._path, *cut, *self._task)))

    def checked(self, validator: Validator) -> Iterator[Checked[Encoded] | CleanRows]:
        """The same `Checked` rows, in the same order, as the serial reader and validator give,
        except that valid rows carry `Encoded` text instead of a `Row`, and runs of valid rows
        with nothing to report come as `CleanRows` (validating only, `to=None`: just counted).
        An input that changes meanwhile (truncated, rewritten, replaced) is an `InputChanged`."""
        line_base = 0
        while self._pending:
            start, end, future = self._pending.popleft()
            self._hand_out()
            line_base = yield from _merge(self._path, start, end, future, line_base, self._label,
                                          validator, self._to)
            tell(Progress(self._label, validator.count, end, self._identity[2], done=not self._pending))
        try:
            now = identity(self._path)
        except OSError:
            now = None
        if now != self._identity:
            raise changed(self._label, self._identity, now)

    def row_writer(self, writer: RowWriter, out: AtomicOutput | AtomicFolder, to: str,
                   report: LossReport) -> "EncodedWriter | SliceWriter | ReplayWriter":
        """What writes a valid row's payload: the workers' text, as it is (or, for a format
        that is not text, the slices of their record batches)."""
        return writer_for(out, writer, to, report)

    def finish(self, row_writer: "EncodedWriter | SliceWriter | ReplayWriter") -> None:
        """What `row_writer` holds, written (before the format's writer closes)."""
        row_writer.finish()

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._pool.__exit__(*exc)


def _merge(path: str, start: int, end: int, future: Future, line_base: int, label: str,
           validator: Validator, to: str | None) -> Generator[Checked[Encoded] | CleanRows, None, int]:
    from .pools import INTERRUPTED, answer_of

    chunk = answer_of(future)
    if chunk is INTERRUPTED:  # Ctrl-C reached the worker
        raise KeyboardInterrupt
    if chunk.error is not None and chunk.error[0] == "changed":
        raise InputChanged(chunk.error[1], source=label)
    data, ends, lines, notes, ids = chunk.data, chunk.ends, chunk.lines, chunk.notes, chunk.keys.ids
    refused = chunk.refused or {}
    base = validator.count
    later = validator.set_findings_many(chunk.keys, base + 1)
    validator.count += len(ids)
    validator.versions.update(chunk.versions or {})
    reread = _Reread(path, start, end)
    done = 0  # rows before this index are handed on
    for i in sorted(notes.keys() | later.keys() | refused.keys()):
        row_from = ends[i - 1] if i else 0
        if i > done and to is not None:  # the clean rows before this one (rejected rows wrote nothing)
            at = ends[done - 1] if done else 0
            yield CleanRows(i - done, data[at:row_from], runs_in(chunk.runs, at, row_from),
                            *_split_parts(chunk, done, i, at), noted=noted_in(chunk.noted, done, i))
        done = i + 1
        number, line = base + i + 1, lines[i] + line_base
        findings, rejected, value = notes.get(i, ((), False, None))
        located = [f.locate(row=number, id=f.id, line=line, record=None, source=label) for f in findings]
        located += [f.locate(row=number, id=ids[i], line=line, record=None, source=label) for f in later.get(i, ())]
        ok = not rejected and not any(f.severity == "error" for f in located)
        if not ok and not rejected and i not in refused:  # the set rules rejected it: the ledger wants the row
            value = reread(lines[i])
        if i in refused:  # the writer refused it (after the set rules, as on one core)
            finding, value = refused[i]
            if ok:
                located.append(finding.locate(row=number, id=ids[i], line=line, record=None, source=label))
            ok = False
        encoded = Encoded(data[row_from:ends[i]], runs_in(chunk.runs, row_from, ends[i]),
                          None if chunk.parts is None else [chunk.parts[i]],
                          None if chunk.losses is None else (chunk.losses, i, i + 1),
                          noted_in(chunk.noted, i, i + 1)) if ok else None
        yield Checked(SourceRow(value, line), number, located, encoded)
    if len(ids) > done and to is not None:
        at = ends[done - 1] if done else 0
        yield CleanRows(len(ids) - done, data[at:], runs_in(chunk.runs, at, len(data)),
                        *_split_parts(chunk, done, len(ids), at), noted=noted_in(chunk.noted, done, len(ids)))
    if chunk.error is not None:
        message, line, field = chunk.error
        raise ReadError(message, source=label, line=None if line is None else line + line_base, field=field)
    return line_base + chunk.line_count


def _split_parts(chunk: _Chunk, start: int, stop: int, at: int) -> tuple[list | None, Any, Any]:
    """Rows start..stop of a split writer's chunk: their parts, where each one's text ends in the
    bytes from `at`, and their carried fields."""
    if chunk.parts is None or chunk.losses is None:
        return None, None, None
    return chunk.parts[start:stop], (chunk.ends, start, stop, at), (chunk.losses, start, stop)


class _Reread:
    """Rows the set rules rejected, read again for the error ledger (their chunk split once)."""

    def __init__(self, path: str, start: int, end: int) -> None:
        self._where = (path, start, end)
        self._lines: list[bytes] | None = None

    def __call__(self, line: int) -> Any:
        if self._lines is None:
            path, start, end = self._where
            try:
                with open(path, "rb") as f:
                    f.seek(start)
                    self._lines = f.read(end - start).split(b"\n")
            except OSError:
                self._lines = []
        try:
            raw = self._lines[line - 1]
            return jsonvalue.loads(raw.removeprefix(codecs.BOM_UTF8) if line == 1 else raw)
        except (IndexError, jsonvalue.JSONValueError):
            return None

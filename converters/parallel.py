"""Two cores for the big common case: a UTF-8 JSONL file validated, or converted to canonical CSV
or JSONL.

The file is cut into chunks at line ends. Worker processes parse, check and encode their chunks
(everything but the set rules); the parent takes the results in file order, applies the set
rules (duplicate ids, case families) and writes. Findings, row numbers and lines come out as the
serial path gives them. Anything else (a pipe, another encoding, another format) runs serially.
"""
from __future__ import annotations

import io
import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple

from .canonical import jsonvalue
from .canonical.errors import ReadError
from .canonical.json_format import JSONL_FORMAT
from .canonical.source import Lines, SourceRow
from .canonical.validator import Checked, Validator, _case, set_key
from .registry import REGISTRY
from .reports import LossReport, ReadReport

CHUNK_BYTES = 4 * 1024 * 1024
PARALLEL_MIN_BYTES = 2 * CHUNK_BYTES   # below this, starting workers costs more than it saves
LINE_PER_ROW = ("csv", "jsonl")        # writers whose output is one self-contained text per row


def eligible(path: str, fmt_in: str, to: str | None, encoding: str | None, jobs: int) -> bool:
    if jobs < 2 or fmt_in != "jsonl" or (to is not None and to not in LINE_PER_ROW):
        return False
    if "forkserver" not in multiprocessing.get_all_start_methods():  # Windows: serial
        return False
    if encoding not in (None, "utf-8", "utf8") or path == "-":
        return False
    try:
        return os.path.isfile(path) and os.path.getsize(path) >= PARALLEL_MIN_BYTES
    except OSError:
        return False


def default_jobs() -> int:
    return min(2, os.cpu_count() or 1)


@dataclass(slots=True)
class Encoded:
    """A valid row already encoded by a worker; the parent writes its text as it is."""

    text: str


class EncodedWriter:
    def __init__(self, out: Any) -> None:
        self._out = out

    def write(self, row: Encoded) -> None:
        self._out.write(row.text)


def _chunks(path: str) -> Iterator[tuple[int, int]]:
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        start = 0
        while start < size:
            f.seek(min(start + CHUNK_BYTES, size))
            f.readline()  # on to the end of the line the cut fell in
            end = min(f.tell(), size) if start + CHUNK_BYTES < size else size
            yield start, end
            start = end


class _Record(NamedTuple):
    """One row, as a worker sends it back."""

    line: int                       # in the chunk
    offset: int                     # byte offset of its line in the chunk
    key: Any                        # what the set rules look at, or None
    findings: list | None
    text: str | None                # encoded row; "" when valid and nothing is written; None: rejected
    value: Any                      # the row, when the worker rejected it (for the error ledger)


def _check_chunk(path: str, start: int, end: int, label: str, to: str | None,
                 options: dict[str, Any], require: tuple[str, ...]) -> tuple[list[_Record], int, Any]:
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    offsets = [0]
    for line in data.split(b"\n")[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    lines = Lines(io.BytesIO(data), source=label, at_start=start == 0)
    validator = Validator(source=label, require=require, set_rules=False)
    buffer = io.StringIO(newline="")
    writer = REGISTRY.get(to).open_writer(buffer, LossReport(to), options) if to else None
    records: list[_Record] = []
    try:
        for src in JSONL_FORMAT.read(lines, ReadReport("jsonl")):
            checked = validator.check(src)
            value = src.value
            key = set_key(value, _case(value)) if isinstance(value, dict) and not src.problems else None
            text = None  # None: rejected here; "" when valid and nothing is written
            if checked.row is not None:
                text = ""
                if writer is not None:
                    buffer.seek(0)
                    buffer.truncate(0)
                    writer.write(checked.row)
                    text = buffer.getvalue()
            records.append(_Record(src.line, offsets[src.line - 1], key, checked.findings or None, text,
                                   value if checked.row is None else None))
    except ReadError as err:
        return records, lines.number, (err.message, err.line, err.field)
    return records, lines.number, None


def checked_rows(path: str, *, label: str, to: str | None, options: dict[str, Any],
                 require: tuple[str, ...] = (), jobs: int = 2, validator: Validator | None = None
                 ) -> Iterator[Checked]:
    """The same `Checked` rows, in the same order, as the serial reader and validator give;
    valid rows carry `Encoded` text instead of a `Row` when `to` is set. Validating only
    (`to=None`), rows with nothing to report are counted, not yielded."""
    validator = validator or Validator(source=label, require=require)
    line_base = 0
    # Not fork: a forked worker would inherit the output's temp file and its lock, and outlive
    # a killed parent holding both, so a rerun could not sweep the dead temp file.
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("forkserver")) as pool:
        pending: list[tuple[int, Future]] = []
        chunks = _chunks(path)
        for start, end in chunks:
            pending.append((start, pool.submit(_check_chunk, path, start, end, label, to, options, require)))
            if len(pending) < jobs * 2:
                continue
            line_base = yield from _merge(path, *pending.pop(0), line_base, label, validator)
        while pending:
            line_base = yield from _merge(path, *pending.pop(0), line_base, label, validator)


def _merge(path: str, start: int, future: Future, line_base: int, label: str,
           validator: Validator) -> Iterator[Checked]:
    records, line_count, error = future.result()
    for line, offset, key, findings, text, value in records:
        validator.count += 1
        number = validator.count
        located = [f.locate(row=number, id=f.id, line=line + line_base, record=None, source=label)
                   for f in findings or ()]
        if key is not None:
            located += [f.locate(row=number, id=key[0], line=line + line_base, record=None, source=label)
                        for f in validator.set_findings(key, number)]
        ok = text is not None and not any(f.severity == "error" for f in located)
        if ok and not located and not text:
            continue  # validating only: a clean row has nothing to hand on
        if value is None and not ok:
            value = _reread(path, start + offset)
        yield Checked(SourceRow(value, line + line_base), number, located, Encoded(text) if ok else None)
    if error is not None:
        message, line, field = error
        raise ReadError(message, source=label, line=None if line is None else line + line_base, field=field)
    return line_base + line_count


def _reread(path: str, offset: int) -> Any:
    """A row the set rules rejected, read again for the error ledger."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return jsonvalue.loads(f.readline())
    except (OSError, jsonvalue.JSONValueError):
        return None

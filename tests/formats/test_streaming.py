"""Streaming is a property, not a timing: converting a file hands rows to the writer while the
reader is still in the middle of the file (issue 8).

The input is a named pipe fed by a thread that writes the first part of the file, then waits
until the writer has received a row (or a timeout) before writing the rest. A reader that
loads the whole file first can only produce its first row after the feeder has finished, so
the test tells the two apart by order, whatever the speed of the machine.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

import evalconv
from evalconv import REGISTRY
from evalconv.canonical.format import Format

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes (POSIX)")

ROWS = 2000
WAIT_S = 10.0  # how long the feeder holds back the rest of the file; only a failing run waits


def _rows(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        row_id = f"stream-{i:05d}"
        out.append({"id": row_id, "input": {"messages": [{"role": "user", "content": f"Question {i}, with a comma"}]},
                    "expected": [f"answer {i}", "another | answer"],
                    "metadata": {"case": {"caseId": row_id, "oracleType": "acceptable-set",
                                          "expectedBehavior": "Gives one of the acceptable answers.",
                                          "provenance": "synthetic-perturbation",
                                          "evaluator": "exact-or-programmatic", "caseFamily": "streaming",
                                          "linkedConcerns": ["streaming", "memory"]},
                                 "reason": "x" * 100}})
    return out


class _Feeder(threading.Thread):
    """Writes `data` into a named pipe: the first part, then (once the writer has a row, or
    after WAIT_S) the rest."""

    def __init__(self, pipe: Path, data: bytes, first_part: int, wait: float) -> None:
        super().__init__(daemon=True)
        self.pipe, self.data, self.first_part, self.wait = pipe, data, first_part, wait
        self.writer_has_a_row = threading.Event()
        self.finished = threading.Event()

    def run(self) -> None:
        with open(self.pipe, "wb") as out:
            out.write(self.data[:self.first_part])
            out.flush()
            self.writer_has_a_row.wait(self.wait)
            out.write(self.data[self.first_part:])
            # Before the close: a reader sees the end of the file only at the close, so a greedy
            # reader's first row always finds this set. Set after it, a loaded machine could run the
            # reader's whole file and first row before this thread got to it (a flaky failure).
            self.finished.set()


class _SpyFormat(Format):
    """A writer that notes, for each row it receives, whether the feeder had finished the file."""

    name = "test-streaming-spy"
    title = "test spy"
    streaming_write = True

    def __init__(self) -> None:
        self.feeder: _Feeder | None = None
        self.ids: list[str] = []
        self.file_done_at_first_row: bool | None = None

    def open_writer(self, out: Any, report: Any, options: dict[str, Any]) -> "_SpyFormat":
        return self

    def write(self, row: evalconv.Row) -> None:
        assert self.feeder is not None
        if not self.ids:
            self.file_done_at_first_row = self.feeder.finished.is_set()
            self.feeder.writer_has_a_row.set()
        self.ids.append(row.id)

    def close(self) -> None:
        pass


@pytest.fixture
def spy():
    fmt = _SpyFormat()  # a test-only registry entry, removed again after the test
    REGISTRY.register(fmt.name, fmt)
    yield fmt
    REGISTRY.unregister(fmt.name)


def _convert_through_pipe(tmp_path: Path, spy: _SpyFormat, data: bytes, from_: str,
                          wait: float = WAIT_S) -> evalconv.ConversionResult:
    pipe = tmp_path / f"input.{from_}"
    os.mkfifo(pipe)
    # Well past the reader's look-ahead (an 8 KB peek and a read buffer), well short of the file.
    feeder = _Feeder(pipe, data, first_part=len(data) // 4, wait=wait)
    spy.feeder = feeder
    feeder.start()
    result = evalconv.convert(str(pipe), str(tmp_path / "out.spy"), to=spy.name, from_=from_)
    feeder.join(wait + 5)
    return result


def _jsonl_bytes(rows: list[dict[str, Any]]) -> bytes:
    from evalconv.canonical import jsonvalue
    return "".join(jsonvalue.dumps(r) + "\n" for r in rows).encode("utf-8")


# A binary file's index comes last (Parquet's footer): such a reader streams row group by row
# group from a file (tests/formats/test_parquet.py holds it to that) and spools a pipe to disk first. A
# folder (hf) cannot come through a pipe; its data files are Parquet.
STREAMING_READERS = [f.name for f in REGISTRY.all()
                     if f.streaming_read and f.can_write and not f.binary and not f.folder]


def test_the_streaming_claims_cover_the_canonical_formats():
    assert {"jsonl", "csv", "json"} <= set(STREAMING_READERS)


@pytest.mark.parametrize("from_", STREAMING_READERS)
def test_the_writer_gets_the_first_row_before_the_reader_reaches_the_end(tmp_path, spy, from_, monkeypatch):
    """Every format that says it streams (`evalconv formats`) is held to it. A JSON array is
    read through a window of 1 MiB; a smaller one here lets a quarter of the file span several."""
    from evalconv.canonical import json_format
    monkeypatch.setattr(json_format, "_REFILL_CHARS", 8192)
    rows = _rows(ROWS)
    data = _jsonl_bytes(rows)
    if from_ != "jsonl":
        source = tmp_path / "set.jsonl"
        source.write_bytes(data)
        written = tmp_path / f"set{REGISTRY.get(from_).output_suffix}"
        evalconv.convert(str(source), str(written), to=from_, from_="jsonl")
        data = written.read_bytes()
    assert len(data) > 200_000  # big enough that no buffer swallows it whole

    result = _convert_through_pipe(tmp_path, spy, data, from_)

    assert result.exit_code == 0 and result.rows_read == ROWS
    assert spy.ids == [r["id"] for r in rows]  # every row, in order
    assert spy.file_done_at_first_row is False, (
        f"the {from_} reader produced its first row only after the whole file was written: it is not lazy")


def test_the_check_catches_a_reader_that_loads_the_whole_file(tmp_path, spy, monkeypatch):
    """The same harness fails for a reader that reads everything first (so the test above means something)."""
    from evalconv.canonical.json_format import JSONL_FORMAT

    real_read = type(JSONL_FORMAT).read

    def greedy_read(self, lines, report):
        return iter(list(real_read(self, lines, report)))

    monkeypatch.setattr(type(JSONL_FORMAT), "read", greedy_read)
    result = _convert_through_pipe(tmp_path, spy, _jsonl_bytes(_rows(ROWS)), "jsonl", wait=0.5)
    assert result.rows_read == ROWS
    assert spy.file_done_at_first_row is True

"""The CSV writer's spool (rows wait there for the header) replayed onto a file as bytes: the
same bytes as the text path, whichever way the copy goes."""
from __future__ import annotations

import errno
import io
import os

import pytest

from conftest import row
from evalconv.canonical import csv_format
from evalconv.canonical.row import Row


def _rows(n: int = 400) -> list[Row]:
    rows = [row(f"r{i}", scenario=f"line {i}\nwith a break, and \"quotes\" — ünïcode") for i in range(n)]
    for i in range(0, n, 9):
        rows[i]["metadata"][f"k{i % 4}"] = f"v{i}"  # columns arrive late: earlier runs are widened
    return [Row.from_json(r) for r in rows]


def _through_text(rows: list[Row], excel_safe: bool = False) -> bytes:
    out = io.StringIO(newline="")  # no byte stream under it: the text path
    writer = csv_format.CSVWriter(out, excel_safe=excel_safe)
    for r in rows:
        writer.write(r)
    writer.close()
    return out.getvalue().encode("utf-8")


def _onto_file(path, rows: list[Row], excel_safe: bool = False) -> bytes:
    with open(path, "w", encoding="utf-8", newline="") as out:  # as AtomicOutput opens its temp file
        writer = csv_format.CSVWriter(out, excel_safe=excel_safe)
        for r in rows:
            writer.write(r)
        writer.close()
        out.write("")  # text after the copy still lands at the end
    return path.read_bytes()


@pytest.mark.parametrize("spool_memory", [csv_format.SPOOL_MEMORY, 3000])  # in memory, and in a temp file
@pytest.mark.parametrize("excel_safe", [False, True])
def test_spool_copied_as_bytes_equals_the_text_path(tmp_path, monkeypatch, spool_memory, excel_safe):
    monkeypatch.setattr(csv_format, "SPOOL_MEMORY", spool_memory)
    rows = _rows()
    assert _onto_file(tmp_path / "out.csv", rows, excel_safe) == _through_text(rows, excel_safe)


def test_spool_copy_falls_back_where_the_kernel_refuses(tmp_path, monkeypatch):
    """copy_file_range across file systems (EXDEV) or onto a pipe (EINVAL), after a first part
    was copied: the rest goes through memory, from where the kernel stopped."""
    monkeypatch.setattr(csv_format, "SPOOL_MEMORY", 3000)
    real, calls = os.copy_file_range, []

    def partly(src, dst, count, offset_src=None, offset_dst=None):
        calls.append(count)
        if len(calls) > 1:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real(src, dst, min(count, 777), offset_src)

    monkeypatch.setattr(os, "copy_file_range", partly)
    rows = _rows()
    assert _onto_file(tmp_path / "out.csv", rows) == _through_text(rows)
    assert len(calls) >= 2  # the kernel path was taken, then left


def test_regression_a_lone_surrogate_is_still_refused_when_the_spool_is_copied_as_bytes(tmp_path, monkeypatch):
    """A Row made in code can hold a lone surrogate (a read row cannot: the reader refuses it).
    The text path refused it when writing; a byte copy must not write it as invalid UTF-8."""
    monkeypatch.setattr(csv_format, "SPOOL_MEMORY", 3000)
    rows = _rows()
    rows[300] = Row.from_json({**rows[300].to_json(), "input": "bad \ud800 text"})  # in a run copied as it is
    with pytest.raises(UnicodeEncodeError):
        _onto_file(tmp_path / "out.csv", rows)

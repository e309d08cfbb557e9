"""Where a diff keeps what it found while it runs: files in a temporary folder of the system's
(never beside the sets), removed when the diff is done, also on an error or Ctrl-C. Memory holds
counts only, whatever the size of the change; the report is printed from the files at the end.

A `Journal` is one kind of entry (added, removed, changed, findings) as JSON lines in the order
found; `Held` is the head's changed rows, pickled, until the base's second pass reads their old
values.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
from itertools import islice
from typing import Any, BinaryIO, Iterator, Sequence, overload

import orjson

from .table import OffsetTable

STDLIB = b"~"  # a line the standard library wrote: orjson refuses its value (an integer beyond 64 bits)


def _encode(entry: Any) -> tuple[bytes, bool]:
    try:
        return orjson.dumps(entry), False
    except TypeError:
        return STDLIB + json.dumps(entry, ensure_ascii=True, separators=(",", ":")).encode("ascii"), True


def _decode(line: bytes) -> Any:
    return json.loads(line[1:]) if line[:1] == STDLIB else orjson.loads(line)


class Spool:
    """A temporary folder for one run's journals; `close()` (or leaving the `with`) removes it."""

    def __init__(self) -> None:
        self.folder: str | None = tempfile.mkdtemp(prefix="evalconv-diff-")
        self._files = 0
        self._open: list[Journal | Held] = []

    def file(self, name: str) -> str:
        """A new file's path in the spool (the caller writes it)."""
        if self.folder is None:
            raise RuntimeError("the spool is closed")
        self._files += 1
        return os.path.join(self.folder, f"{self._files:05d}-{name}")

    def journal(self, name: str) -> "Journal":
        opened = Journal(self.file(name + ".jsonl"))
        self._open.append(opened)
        return opened

    def held(self) -> "Held":
        opened = Held(self.file("held.pickle"))
        self._open.append(opened)
        return opened

    def close(self) -> None:
        for opened in self._open:
            opened.close()
        self._open.clear()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> "Spool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Streamed(Sequence[Any]):
    """Entries read back from the spool as they are iterated: `len` and slices without holding them."""

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        size = len(self)
        if isinstance(index, slice):
            return list(islice(iter(self), *index.indices(size)))
        if not -size <= index < size:
            raise IndexError("index out of range")
        return next(islice(iter(self), index % size, None))


class Journal(Streamed):
    """JSON-ready entries appended in order and read back in order; only their count is held.
    `stdlib`: some entry is one orjson refuses, so the whole report prints as the standard
    library writes it (as `jsonvalue.dumps` would print it whole)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._out: BinaryIO | None = open(path, "wb")
        self._count = 0
        self.stdlib = False

    def append(self, entry: Any) -> None:
        assert self._out is not None, "a journal is appended to before it is closed"
        line, stdlib = _encode(entry)
        self._out.write(line + b"\n")
        self._count += 1
        self.stdlib |= stdlib

    def finish(self) -> None:
        """No more entries: the file is flushed and the writer closed."""
        if self._out is not None:
            self._out.close()
            self._out = None

    close = finish

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        if self._out is not None:
            self._out.flush()
        if not self._count:
            return
        with open(self._path, "rb") as f:
            for line in islice(f, self._count):
                yield _decode(line)


class Picked(Streamed):
    """The entries of some journals, in order, whose `field` is one of `values`; `count`: how many."""

    def __init__(self, journals: list[Journal], field: str, values: set[Any], count: int) -> None:
        self._journals, self._field, self._values, self._count = journals, field, values, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        if not self._count:
            return
        for journal in self._journals:
            for entry in journal:
                if entry.get(self._field) in self._values:
                    yield entry


class Held:
    """The head's rows that changed, by id key, until the base's second pass: on disk, with an
    offset a key (16 bytes an id in machine-word arrays). A later row of the same id replaces an
    earlier one, and `pop` takes a row once."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._file: BinaryIO | None = open(path, "w+b")
        self._offsets = OffsetTable()

    def put(self, key: int, held: Any) -> None:
        assert self._file is not None
        self._file.seek(0, os.SEEK_END)
        self._offsets.put(key, self._file.tell())
        pickle.dump(held, self._file, protocol=pickle.HIGHEST_PROTOCOL)

    def __len__(self) -> int:
        return len(self._offsets)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, int) and self._offsets.get(key) >= 0

    def pop(self, key: int) -> Any:
        offset = self._offsets.pop(key)
        if offset < 0:
            raise KeyError(key)
        assert self._file is not None
        self._file.seek(offset)
        return pickle.load(self._file)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

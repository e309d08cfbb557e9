"""Is a set file laid out as evalconv writes it? The rows as read are written again, to a sink
that only hashes, and the hash is compared with the file's: when they differ, rewriting the set
(`retire`) changes the bytes of untouched rows too (the same cases, another layout: a sheet made
by hand, another delimiter), and the report says so before a reviewer meets it in a git diff."""
from __future__ import annotations

import hashlib
import io
from typing import Any

from ..canonical.format import Format, WriteOptions
from ..canonical.row import Row
from ..reports import LossReport


class _HashSink(io.RawIOBase):
    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.position = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.digest.update(data)
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position


class LayoutCheck:
    """Feed it every row of the file in order (`add`), then ask `same_as(file_hash)`: True when
    evalconv writes exactly the file's bytes for them, None when that cannot be told."""

    def __init__(self, fmt: Format, options: WriteOptions) -> None:
        self._sink = _HashSink()
        self._stream = io.TextIOWrapper(io.BufferedWriter(self._sink), encoding="utf-8", newline="")
        self._writer: Any = None
        try:
            self._writer = fmt.open_writer(self._stream, LossReport(fmt.name, None), options)
        except Exception:  # a writer that needs a real file: no answer, nothing else changes
            self._writer = None

    def add(self, value: Any) -> None:
        if self._writer is None:
            return
        try:
            self._writer.write(Row.from_json(value))
        except Exception:  # a row the writer cannot take (one being retired may be invalid)
            self._writer = None

    def same_as(self, file_hash: str) -> bool | None:
        if self._writer is None:
            return None
        try:
            self._writer.close()
            self._stream.flush()
        except Exception:
            return None
        return f"sha256:{self._sink.digest.hexdigest()}" == file_hash

"""The sizes of a Parquet column chunk's pages, read from their headers before any page is.

A page is decompressed whole: a 50 KB file can hold one zstd page of 1.5 GiB. Its uncompressed
size is in the page header (Thrift compact protocol, parquet-format's `PageHeader`: field 2
`uncompressed_page_size`, field 3 `compressed_page_size`), so a page too large to read is refused
from its header, at the cost of reading a few bytes per page. Only column chunks whose total
(from the footer) is over the limit are scanned.
"""
from __future__ import annotations

from typing import IO, Iterator

_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)
_MAX_NESTING = 16  # PageHeader nests three levels (header, data page header, statistics)


class BadHeader(ValueError):
    """The bytes are not a page header (the file is damaged): pyarrow will say so itself."""


def page_sizes(stream: IO[bytes], start: int, length: int) -> Iterator[int]:
    """The uncompressed size of each page in the `length` bytes from `start` (one column chunk)."""
    end = start + length
    position = start
    while position < end:
        stream.seek(position)
        reader = _Reader(stream)
        fields = reader.struct(0)
        uncompressed, compressed = fields.get(2), fields.get(3)
        if uncompressed is None or compressed is None or compressed < 0 or uncompressed < 0:
            raise BadHeader("a page header without its sizes")
        yield uncompressed
        position += reader.taken + compressed


class _Reader:
    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.taken = 0

    def _byte(self) -> int:
        data = self._stream.read(1)
        if not data:
            raise BadHeader("the page header is cut off")
        self.taken += 1
        return data[0]

    def _skip_bytes(self, count: int) -> None:
        if count < 0:
            raise BadHeader("a negative length")
        self._stream.seek(count, 1)
        self.taken += count

    def _varint(self) -> int:
        value = shift = 0
        while True:
            byte = self._byte()
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 70:
                raise BadHeader("a varint too long")

    def _int(self) -> int:
        raw = self._varint()
        return (raw >> 1) ^ -(raw & 1)  # zigzag

    def struct(self, depth: int) -> dict[int, int]:
        """The struct's integer fields by id; every other field is skipped."""
        if depth > _MAX_NESTING:
            raise BadHeader("nested too deep")
        fields: dict[int, int] = {}
        last = 0
        while True:
            head = self._byte()
            kind = head & 0x0F
            if kind == _STOP:
                return fields
            delta = head >> 4
            last = last + delta if delta else self._int()
            if kind in (_I16, _I32, _I64):
                fields[last] = self._int()
            else:
                self._skip(kind, depth)

    def _skip(self, kind: int, depth: int) -> None:
        if kind in (_TRUE, _FALSE):
            return
        if kind == _BYTE:
            self._skip_bytes(1)
        elif kind in (_I16, _I32, _I64):
            self._varint()
        elif kind == _DOUBLE:
            self._skip_bytes(8)
        elif kind == _BINARY:
            self._skip_bytes(self._varint())
        elif kind in (_LIST, _SET):
            head = self._byte()
            size, item = head >> 4, head & 0x0F
            if size == 15:
                size = self._varint()
            for _ in range(size):
                self._skip_item(item, depth)
        elif kind == _MAP:
            size = self._varint()
            if size:
                types = self._byte()
                for _ in range(size):
                    self._skip_item(types >> 4, depth)
                    self._skip_item(types & 0x0F, depth)
        elif kind == _STRUCT:
            self.struct(depth + 1)
        else:
            raise BadHeader(f"unknown field type {kind}")

    def _skip_item(self, kind: int, depth: int) -> None:
        if kind in (_TRUE, _FALSE):  # a boolean in a collection is a byte
            self._skip_bytes(1)
        else:
            self._skip(kind, depth + 1)

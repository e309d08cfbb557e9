"""What diff's first pass keeps of the base: its ids' table (`DigestTable`), each row's schema
version (1 byte a row) and, for a JSONL base, each row's line, so that the second pass reads only
the rows it needs. Read here, or in a worker process beside the head (`read_base_saved`): then
the arrays cross in a spool file, read straight into the parent's arrays, not pickled."""
from __future__ import annotations

import os
from array import array
from collections import Counter
from dataclasses import dataclass, field

from ..sources import reading
from .digest import content_digest, id_key, row_id, schema_version, version_byte
from .table import DigestTable, read_into


@dataclass
class BaseSide:
    format: str | None = None
    table: DigestTable = field(default_factory=DigestTable)
    versions: bytearray = field(default_factory=bytearray)
    lines: "array[int]" = field(default_factory=lambda: array("I"))
    counts: Counter = field(default_factory=Counter)  # rows by schema version as written
    without_id: int = 0


@dataclass(frozen=True)
class SavedBase:
    """A `BaseSide` whose arrays are in a file: what a worker process sends back."""
    format: str | None
    counts: Counter
    without_id: int
    capacity: int
    size: int
    rows: int
    lines: int

    def load(self, path: str) -> BaseSide:
        """The side, its arrays read from `path` (which is removed)."""
        try:
            with open(path, "rb") as src:
                table = DigestTable.load(src, self.capacity, self.size)
                versions = bytearray(self.rows)
                read_into(src, versions)
                lines = array("I", [0]) * self.lines  # no zeroed bytes copy beside it
                read_into(src, lines)
        finally:
            os.remove(path)
        return BaseSide(self.format, table, versions, lines, self.counts, self.without_id)


def by_line(fmt: str, encoding: str | None, path: str) -> bool:
    """Can this file's rows be found again by their line (a UTF-8 JSONL file)?"""
    return fmt == "jsonl" and encoding in (None, "utf-8", "utf8", "utf-8-sig") and os.path.isfile(path)


def read_base(base: str, from_: str | None, encoding: str | None) -> BaseSide:
    """The base's first pass: every row's id and content hash, no row kept."""
    side = BaseSide()
    table, versions, lines = side.table, side.versions, side.lines
    with reading(base, from_=from_, encoding=encoding) as (fmt, rows, _):
        side.format = fmt.name
        numbered = by_line(fmt.name, encoding, base)
        for number, src in enumerate(rows, 1):
            if numbered:
                lines.append(src.line or 0)
            version = schema_version(src.value)
            versions.append(version_byte(version))
            side.counts[version] += 1
            found = row_id(src.value)
            if found is None:
                side.without_id += 1
                continue
            table.add(id_key(found), content_digest(src.value), number)
    return side


def read_base_saved(path: str, base: str, from_: str | None, encoding: str | None) -> SavedBase:
    """`read_base` in a worker process: the arrays written to `path`, the rest returned."""
    side = read_base(base, from_, encoding)
    with open(path, "wb") as out:
        capacity, size = side.table.save(out)
        out.write(side.versions)
        side.lines.tofile(out)
    return SavedBase(side.format, side.counts, side.without_id, capacity, size, len(side.versions), len(side.lines))

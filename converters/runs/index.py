"""The run store's id index: which ids the store holds, kept on disk so that an import's memory
does not grow with the store.

`DIR/index.sqlite3` (SQLite from Python's standard library) holds every attempt id with a digest
of what the attempt did, every result id with a digest of what it judged and every ledger id,
each with the line it is on and a checksum of that line, and for each JSONL file how far it has been indexed: its size, inode,
modification time, last 4 KiB and line count, and how many ids the index holds for it with a
checksum over them. It is a cache of the JSONL files, which stay the truth. On open the index
checks itself: a part whose ids do not add up to what it recorded (ids lost or edited, fields out
of range) is dropped and rebuilt from its file, as is a missing or unreadable index; a file that
only grew is indexed from where the index stopped, once the bytes before that point are checked
to be the ones indexed; any other change rebuilds that file's part, and a line that differs from
what the index knew of it is reported, with its file and line. The whole import holds SQLite's
write lock, so two imports into one store run one after the other.
"""
from __future__ import annotations

import json
import os
import sqlite3
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, NamedTuple

import orjson

from ..canonical import runs
from ..canonical.errors import ReadError, UsageError, WriteError
from ..canonical.opening import not_regular, refusal

INDEX = "index.sqlite3"
FORMAT = "evalconv-run-index 3"  # 3: results carry a content digest too
KINDS = {kind: number for number, kind in enumerate(runs.KINDS)}  # stored: the table's order is the format
_TAIL = 4096
_CACHE_KIB = 8192  # SQLite's page cache: the index's memory, whatever the store's size
DAMAGE_KEPT = 1000  # damaged lines listed (all are counted)


class Key(NamedTuple):
    """What the index keeps of a stored record: its id (None: the record has no usable id) and an
    attempt's content digest, and why the line is damaged when it is (None: it is sound)."""
    id: str | None
    digest: bytes | None = None
    damage: str | None = None


class Stored(NamedTuple):
    digest: bytes | None
    line: int


Keyer = Callable[[str, Mapping[str, Any]], Key]


@dataclass
class Damage:
    """Lines of the store's files that are not what an import wrote: one entry a line."""
    count: int = 0
    lines: list[dict[str, Any]] = field(default_factory=list)

    def add(self, path: str, line: int, reason: str) -> None:
        self.count += 1
        if len(self.lines) < DAMAGE_KEPT:
            self.lines.append({"file": path, "line": line, "reason": reason})


def _line_sum(text: bytes) -> int:
    return zlib.crc32(text.rstrip(b"\r\n"))


def _row_sum(record_id: Any, digest: Any, line: Any, line_sum: Any) -> int:
    """One id row's share of its part's checksum (any damaged field changes it)."""
    head = f"{record_id}\0{line}\0{line_sum}".encode("utf-8", "surrogatepass")
    return zlib.crc32(digest if isinstance(digest, bytes) else repr(digest).encode(), zlib.crc32(head))


class StoreIndex:
    def __init__(self, folder: str, files: dict[str, str], keyer: Keyer, lock_timeout: float = 60.0) -> None:
        self._folder, self._files, self._keyer = folder, files, keyer
        self._path = os.path.join(folder, INDEX)
        self.damage = Damage()
        self._parts: dict[str, list[int]] = {}  # kind -> [lines, ids, checksum] as the files now stand
        for name in (*files.values(), INDEX, INDEX + "-wal"):
            check_regular(os.path.join(folder, name))
        self._db = self._connect(lock_timeout)
        try:
            self._sync_all()
        except sqlite3.DatabaseError as err:
            self._db.close()
            if not _damaged_database(err):
                raise self._failed(err) from None
            self._db = self._remade(lock_timeout)  # corrupt pages found while checking: start afresh
            try:
                self._sync_all()
            except sqlite3.Error as again:
                self._db.close()
                raise self._failed(again) from None

    def _connect(self, lock_timeout: float) -> sqlite3.Connection:
        try:
            return self._open(self._path, lock_timeout)
        except sqlite3.DatabaseError as err:
            if _busy(err):
                raise UsageError(f"another import into this run store is still running ({INDEX} is locked)",
                                 source=self._folder) from None
            if not _damaged_database(err):
                raise self._failed(err) from None
            return self._remade(lock_timeout)

    def _remade(self, lock_timeout: float) -> sqlite3.Connection:
        _remove(self._path)  # not an index evalconv can read: it is only a cache, so make it again
        self.damage = Damage()
        self._parts = {}
        try:
            return self._open(self._path, lock_timeout)
        except sqlite3.DatabaseError as again:
            raise self._failed(again) from None

    def _sync_all(self) -> None:
        for kind in self._files:
            self._sync(kind, self._checked(kind))

    def _failed(self, err: sqlite3.Error) -> WriteError:
        return WriteError(f"cannot use the run store's id index: {err} (the index is a cache of the JSONL files: "
                          f"delete {INDEX} and import again)", source=self._path)

    @staticmethod
    def _open(path: str, lock_timeout: float) -> sqlite3.Connection:
        db = sqlite3.connect(path, timeout=lock_timeout, isolation_level=None)
        try:
            db.create_function("row_sum", 4, _row_sum, deterministic=True)
            db.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            db.execute("PRAGMA journal_mode=WAL")  # a large import spills to the log, not to memory
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("BEGIN IMMEDIATE")
            row = None
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
                row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if row is None or row[0] != FORMAT:
                for table in ("meta", "ids", "files"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
                db.execute("CREATE TABLE ids (kind INTEGER, id TEXT, digest BLOB, line INTEGER, line_sum INTEGER, "
                           "PRIMARY KEY (kind, id)) WITHOUT ROWID")
                db.execute("CREATE TABLE files (kind TEXT PRIMARY KEY, size INTEGER, inode INTEGER, mtime_ns INTEGER, "
                           "tail BLOB, lines INTEGER, ids INTEGER, checksum INTEGER)")
                db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
        except BaseException:
            db.close()
            raise
        return db

    # ---- keeping the index true to the files
    def _checked(self, kind: str) -> tuple[int, int, int, bytes, int] | None:
        """The part's file row (size, inode, mtime, tail, lines) when its ids add up to it; else the
        part is dropped (None) and will be rebuilt from the file."""
        row = self._db.execute("SELECT size, inode, mtime_ns, tail, lines, ids, checksum FROM files WHERE kind = ?",
                               (kind,)).fetchone()
        if row is not None and _well_formed(row):
            count, checksum = self._db.execute(
                "SELECT count(*), coalesce(sum(row_sum(id, digest, line, line_sum)), 0) FROM ids WHERE kind = ?",
                (KINDS[kind],)).fetchone()
            if (count, checksum) == row[5:]:
                self._parts[kind] = [row[4], count, checksum]
                return row[:5]
        self._db.execute("DELETE FROM ids WHERE kind = ?", (KINDS[kind],))
        self._db.execute("DELETE FROM files WHERE kind = ?", (kind,))
        self._parts[kind] = [0, 0, 0]
        return None

    def _sync(self, kind: str, row: tuple[int, int, int, bytes, int] | None) -> None:
        path = os.path.join(self._folder, self._files[kind])
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            stat = None
        if row is not None and stat is not None and (stat.st_size, stat.st_ino, stat.st_mtime_ns) == row[:3]:
            return  # just as the index left it
        reference = False
        if row is not None and stat is not None and stat.st_ino == row[1] and stat.st_size > row[0] \
                and _bytes_before(path, row[0], len(row[3])) == row[3]:
            start, lines = row[0], row[4]  # it only grew: index what was added
        else:
            start, lines = 0, 0
            if row is not None:  # changed in place: rebuild, comparing each line with what was indexed
                reference = True
                self._db.execute("CREATE TEMP TABLE IF NOT EXISTS known (id TEXT PRIMARY KEY, line_sum INTEGER) "
                                 "WITHOUT ROWID")
                self._db.execute("DELETE FROM known")
                self._db.execute("INSERT INTO known SELECT id, line_sum FROM ids WHERE kind = ?", (KINDS[kind],))
                self._db.execute("DELETE FROM ids WHERE kind = ?", (KINDS[kind],))
            self._parts[kind] = [0, 0, 0]
        if stat is not None:
            lines = self._index_lines(kind, path, start, lines, row[4] if reference and row else -1)
        self._parts[kind][0] = lines

    def _index_lines(self, kind: str, path: str, start: int, lines: int, known_lines: int) -> int:
        """Index the lines from byte `start` (line `lines` + 1); with `known_lines` >= 0, report a
        line that is not what the index knew."""
        part = self._parts[kind]
        name = os.path.join(self._folder, self._files[kind])
        for number, text, record, why in _lines(path, start, lines):
            lines = number
            if record is None:
                if why is not None:
                    self.damage.add(name, number, why)
                continue
            key = self._keyer(kind, record)
            if key.damage is not None:
                self.damage.add(name, number, key.damage)
            if key.id is None:
                continue
            line_sum = _line_sum(text)
            if known_lines >= 0 and key.damage is None:
                was = self._db.execute("SELECT line_sum FROM known WHERE id = ?", (key.id,)).fetchone()
                if was is not None and was[0] != line_sum:
                    self.damage.add(name, number, f"{key.id} changed since it was stored (the store is append-only)")
                elif was is None and number <= known_lines:
                    self.damage.add(name, number, f"{key.id} is not the record stored on this line "
                                                  f"(the line was changed in place)")
            self._insert(kind, key.id, key.digest, number, line_sum, part)
        return lines

    def _insert(self, kind: str, record_id: str, digest: bytes | None, line: int, line_sum: int,
                part: list[int]) -> bool:
        cursor = self._db.execute("INSERT OR IGNORE INTO ids VALUES (?, ?, ?, ?, ?)",
                                  (KINDS[kind], record_id, digest, line, line_sum))
        if cursor.rowcount != 1:
            return False  # a second line with a stored id: the first one counts
        part[1] += 1
        part[2] += _row_sum(record_id, digest, line, line_sum)
        return True

    def _remember(self, kind: str) -> None:
        path = os.path.join(self._folder, self._files[kind])
        if not os.path.exists(path):
            self._db.execute("DELETE FROM files WHERE kind = ?", (kind,))
            return
        stat = os.stat(path)
        tail = _bytes_before(path, stat.st_size, _TAIL)
        self._db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (kind, stat.st_size, stat.st_ino, stat.st_mtime_ns, tail, *self._parts[kind]))

    # ---- what an import asks
    def add(self, kind: str, record_id: str, text: bytes, digest: bytes | None = None) -> Stored | None:
        """Record the id of the line `text` about to be appended: None when it is new, else what is
        stored with it (the digest, the line)."""
        part = self._parts[kind]
        try:
            if self._insert(kind, record_id, digest, part[0] + 1, _line_sum(text), part):
                part[0] += 1
                return None
            row = self._db.execute("SELECT digest, line FROM ids WHERE kind = ? AND id = ?",
                                   (KINDS[kind], record_id)).fetchone()
        except sqlite3.Error as err:  # the disk filled up, the file went away
            raise self._failed(err) from None
        return Stored(row[0], row[1])

    def commit(self) -> None:
        """Save the index once the files it describes are on disk (call after they are closed)."""
        try:
            for kind in self._files:
                self._remember(kind)
            self._db.execute("COMMIT")
        except sqlite3.Error as err:  # the lines are on disk: the next import indexes them
            raise self._failed(err) from None
        finally:
            self._db.close()

    def abandon(self) -> None:
        """Leave the index as it was: the next import indexes whatever was appended."""
        self._db.close()  # closing inside the transaction rolls it back


def _well_formed(row: tuple[Any, ...]) -> bool:
    size, inode, mtime, tail, lines, ids, checksum = row
    ints = (size, inode, mtime, lines, ids, checksum)
    return all(type(v) is int for v in ints) and size >= 0 and lines >= 0 and ids >= 0 \
        and isinstance(tail, bytes) and len(tail) == min(size, _TAIL)


def check_regular(path: str) -> None:
    """A store file that is a FIFO, a device or a socket would block or never end: refused
    (`canonical.opening` says what it is, as every reader does)."""
    kind = not_regular(path)
    if kind is not None:
        raise ReadError(f"the run store file {os.path.basename(path)} {refusal(kind).removeprefix('it ')}", source=path)


def _busy(err: sqlite3.DatabaseError) -> bool:
    return getattr(err, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED") or "locked" in str(err)


def _damaged_database(err: sqlite3.DatabaseError) -> bool:
    return getattr(err, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT") \
        or "malformed" in str(err) or "not a database" in str(err)


def _remove(path: str) -> None:
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        if os.path.exists(name):
            os.remove(name)


def _bytes_before(path: str, end: int, size: int) -> bytes:
    with open(path, "rb") as stream:
        stream.seek(max(0, end - size))
        return stream.read(min(end, size))


def read_line(text: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """One store line: (its JSON object, None), (None, why it is not one), or (None, None) for a
    blank line."""
    if not text.strip():
        return None, None
    try:
        record = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            decoded = text.decode("utf-8")
        except UnicodeDecodeError as err:
            return None, f"not UTF-8: byte 0x{text[err.start]:02x} at column {err.start + 1}"
        try:  # what orjson refuses and the store's reader takes (NaN, a lone surrogate)
            record = json.loads(decoded)
        except ValueError as err:
            return None, f"not JSON: {err}"
    if not isinstance(record, dict):
        return None, "not a JSON object"
    return record, None


def _lines(path: str, start: int, before: int) -> Iterator[tuple[int, bytes, dict[str, Any] | None, str | None]]:
    """(line number, bytes, record, why it is not one) for each line from byte `start`."""
    with open(path, "rb") as stream:
        stream.seek(start)
        for number, text in enumerate(stream, before + 1):
            record, why = read_line(text)
            yield number, text, record, why

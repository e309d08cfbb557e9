"""The run store's id index: which ids the store holds, kept on disk so that an import's memory
does not grow with the store.

`DIR/index.sqlite3` (SQLite from Python's standard library) holds every attempt id with a digest
of what the attempt did, every result id and every ledger id, and for each JSONL file how far it
has been indexed: its size, inode, modification time and its last 4 KiB. It is a cache of the
JSONL files, which stay the truth: a missing or unreadable index is rebuilt from them; a file that
only grew (an import cut short before the index was saved, an older evalconv) is indexed from
where the index stopped, once the bytes before that point are checked to be the ones indexed;
any other change rebuilds that file's part. The whole import holds SQLite's write lock, so two
imports into one store run one after the other.
"""
from __future__ import annotations

import json
import os
import sqlite3
from typing import Any, Callable, Iterator

import orjson

from .canonical.errors import UsageError, WriteError

INDEX = "index.sqlite3"
FORMAT = "evalconv-run-index 1"
KINDS = {"attempt": 0, "result": 1, "ledger": 2}
_TAIL = 4096
_CACHE_KIB = 8192  # SQLite's page cache: the index's memory, whatever the store's size

# (kind, record) -> (id, digest or None), or None for a record without a usable id.
Keyer = Callable[[str, dict[str, Any]], "tuple[str, bytes | None] | None"]


class StoreIndex:
    def __init__(self, folder: str, files: dict[str, str], keyer: Keyer, lock_timeout: float = 60.0) -> None:
        self._folder, self._files, self._keyer = folder, files, keyer
        self._path = path = os.path.join(folder, INDEX)
        try:
            self._db = self._open(path, lock_timeout)
        except sqlite3.DatabaseError as err:
            if _busy(err):
                raise UsageError(f"another import into this run store is still running ({INDEX} is locked)",
                                 source=folder) from None
            if getattr(err, "sqlite_errorname", "") not in ("SQLITE_NOTADB", "SQLITE_CORRUPT"):
                raise self._failed(err) from None
            _remove(path)  # not an index evalconv can read: it is only a cache, so make it again
            try:
                self._db = self._open(path, lock_timeout)
            except sqlite3.DatabaseError as again:
                raise self._failed(again) from None
        try:
            for kind in files:
                self._sync(kind)
        except sqlite3.Error as err:
            self._db.close()
            raise self._failed(err) from None

    def _failed(self, err: sqlite3.Error) -> WriteError:
        return WriteError(f"cannot use the run store's id index: {err} (the index is a cache of the JSONL files: "
                          f"delete {INDEX} and import again)", source=self._path)

    @staticmethod
    def _open(path: str, lock_timeout: float) -> sqlite3.Connection:
        db = sqlite3.connect(path, timeout=lock_timeout, isolation_level=None)
        try:
            db.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            db.execute("PRAGMA journal_mode=WAL")  # a large import spills to the log, not to memory
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("BEGIN IMMEDIATE")
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            db.execute("CREATE TABLE IF NOT EXISTS ids (kind INTEGER, id TEXT, digest BLOB, PRIMARY KEY (kind, id)) WITHOUT ROWID")
            db.execute("CREATE TABLE IF NOT EXISTS files (kind TEXT PRIMARY KEY, size INTEGER, inode INTEGER, "
                       "mtime_ns INTEGER, tail BLOB)")
            row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if row is None or row[0] != FORMAT:
                db.execute("DELETE FROM ids")
                db.execute("DELETE FROM files")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (FORMAT,))
        except BaseException:
            db.close()
            raise
        return db

    # ---- keeping the index true to the files
    def _sync(self, kind: str) -> None:
        path = os.path.join(self._folder, self._files[kind])
        row = self._db.execute("SELECT size, inode, mtime_ns, tail FROM files WHERE kind = ?", (kind,)).fetchone()
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            stat = None
        if row is not None and stat is not None and (stat.st_size, stat.st_ino, stat.st_mtime_ns) == row[:3]:
            return  # just as the index left it
        start = 0
        if row is not None and stat is not None and stat.st_ino == row[1] and stat.st_size > row[0] \
                and _bytes_before(path, row[0], len(row[3])) == row[3]:
            start = row[0]  # it only grew: index what was added
        elif row is not None or stat is not None:
            self._db.execute("DELETE FROM ids WHERE kind = ?", (KINDS[kind],))
        if stat is not None:
            for record in _records(path, start):
                key = self._keyer(kind, record)
                if key is not None:
                    self._db.execute("INSERT OR REPLACE INTO ids VALUES (?, ?, ?)", (KINDS[kind], *key))
        self._remember(kind)

    def _remember(self, kind: str) -> None:
        path = os.path.join(self._folder, self._files[kind])
        if not os.path.exists(path):
            self._db.execute("DELETE FROM files WHERE kind = ?", (kind,))
            return
        stat = os.stat(path)
        tail = _bytes_before(path, stat.st_size, _TAIL)
        self._db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                         (kind, stat.st_size, stat.st_ino, stat.st_mtime_ns, tail))

    # ---- what an import asks
    def add(self, kind: str, record_id: str, digest: bytes | None = None) -> tuple[bool, bytes | None]:
        """Record the id; (True, None) when it is new, else (False, the digest stored with it)."""
        try:
            cursor = self._db.execute("INSERT OR IGNORE INTO ids VALUES (?, ?, ?)", (KINDS[kind], record_id, digest))
            if cursor.rowcount == 1:
                return True, None
            row = self._db.execute("SELECT digest FROM ids WHERE kind = ? AND id = ?", (KINDS[kind], record_id)).fetchone()
        except sqlite3.Error as err:  # the disk filled up, the file went away
            raise self._failed(err) from None
        return False, row[0]

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


def _busy(err: sqlite3.DatabaseError) -> bool:
    return getattr(err, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED") or "locked" in str(err)


def _remove(path: str) -> None:
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        if os.path.exists(name):
            os.remove(name)


def _bytes_before(path: str, end: int, size: int) -> bytes:
    with open(path, "rb") as stream:
        stream.seek(max(0, end - size))
        return stream.read(min(end, size))


def _records(path: str, start: int) -> Iterator[dict[str, Any]]:
    """The JSON objects on the lines from byte `start` (lines that are not one are not ids)."""
    with open(path, "rb") as stream:
        stream.seek(start)
        for line in stream:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                try:  # what orjson refuses and the store's reader takes (NaN, a lone surrogate)
                    record = json.loads(line)
                except ValueError:
                    continue
            if isinstance(record, dict):
                yield record

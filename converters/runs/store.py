"""The run store: a folder of append-only JSONL files beside the case set.

`attempts.jsonl`, `results.jsonl` and `ledger.jsonl`, one record a line. Importing only ever
appends: a record whose id is already there is skipped (ids are stable, so importing the same
run twice adds nothing), a rerun adds attempts, a rescoring adds results. Attempts and results
are immutable: one arriving with a known id but different content is refused and counted as a
conflict, and the store keeps what it had. An interrupted import is completed by importing again.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from ..canonical import runs
from ..canonical.errors import ReadError, UsageError
from .index import Key, StoreIndex, check_regular, read_line

FILES = {kind: f"{what.plural}.jsonl" for kind, what in runs.KINDS.items()}  # one file per kind of record
ATTEMPTS, RESULTS, LEDGER = FILES["attempt"], FILES["result"], FILES["ledger"]


def is_store(path: str) -> bool:
    return os.path.isdir(path) and any(os.path.exists(os.path.join(path, f)) for f in (ATTEMPTS, RESULTS))


# What an attempt did. Where it was read from, and what one output file of a run says about the
# run but another does not (promptfoo's results.json has the eval id and timestamp, its .jsonl
# not), are not part of it.
_WHAT_HAPPENED = ("caseId", "caseRef", "caseVersion", "system", "durationMs", "status", "error", "output",
                  "outputRef", "toolTrace")


# What a judgement said. How evalconv typed its evaluator is not part of it: typing is a reading of
# the judgement (`--evaluator` may change it) and is kept as first stored.
_WHAT_WAS_JUDGED = ("attemptId", "score", "passed", "reason", "role", "passAt", "reviewStatus", "recordedAt")
_JUDGE = ("name", "version", "model")


def _content_digest(kind: str, record: Mapping[str, Any]) -> bytes | None:
    if kind == "attempt":
        body = {k: record.get(k) for k in _WHAT_HAPPENED}
    elif kind == "result":
        judge = record.get("evaluator")
        judged = {k: judge.get(k) for k in _JUDGE} if isinstance(judge, dict) else None
        body = {**{k: record.get(k) for k in _WHAT_WAS_JUDGED}, "evaluator": judged}
    else:
        return None
    return hashlib.blake2b(json.dumps(body, sort_keys=True, ensure_ascii=False).encode(), digest_size=12).digest()


def _ledger_id(entry: Mapping[str, Any]) -> str:
    return runs.stable_id("led", entry)


def check_store_files(folder: str) -> None:
    """A store file that is a FIFO, a device or a socket would block or never end: refused."""
    for name in FILES.values():
        check_regular(os.path.join(folder, name))


def read_records(folder: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every record of a store: attempts, then results, then ledger entries (a line that cannot be
    read, not UTF-8, not JSON or not an object, becomes a ledger entry naming the file and line)."""
    if not os.path.isdir(folder):
        raise ReadError("no such run store folder", source=folder)
    check_store_files(folder)
    for kind in runs.KINDS:
        path = os.path.join(folder, FILES[kind])
        if not os.path.exists(path):
            continue
        check_regular(path)
        with open(path, "rb") as stream:
            for number, text in enumerate(stream, 1):
                record, why = read_line(text)
                if why is not None:
                    yield "ledger", runs.ledger_entry("unreadable", why,
                                                      source={"file": path, "line": number, "entry": None})
                elif record is not None:
                    yield kind, record


@dataclass
class ImportSummary:
    store: str
    sources: list[str] = field(default_factory=list)
    added: dict[str, int] = field(default_factory=lambda: {kind.plural: 0 for kind in runs.KINDS.values()})
    known: dict[str, int] = field(default_factory=lambda: {kind.plural: 0 for kind in runs.KINDS.values()})
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    damaged: list[dict[str, Any]] = field(default_factory=list)  # store lines found damaged (the first 1,000)
    damaged_count: int = 0

    @property
    def exit_code(self) -> int:
        return 1 if self.conflicts else 0

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "sources": self.sources, "added": self.added, "alreadyThere": self.known,
                "conflicts": self.conflicts, "damagedLines": self.damaged_count, "damaged": self.damaged}


_SCHEMAS = {kind: what.schema for kind, what in runs.KINDS.items() if what.schema is not None}


def _key(kind: str, record: Mapping[str, Any]) -> Key:
    """What the index keeps of a stored record: its id (and an attempt's or result's content digest), and why
    the line is damaged when it breaks its schema."""
    if kind == "ledger":
        return Key(_ledger_id(record))
    broken = next(runs.problems(record, _SCHEMAS[kind]), None)
    damage = None if broken is None else f"the stored {kind} breaks its schema: {broken}"
    if not isinstance(record.get("id"), str):
        return Key(None, None, damage or f"the stored {kind} has no id")
    return Key(record["id"], _content_digest(kind, record), damage)


class _Appender:
    """Appends lines to one store file, first mending a last line an interrupted import cut short."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._stream = open(path, "a+b")
        self._stream.seek(0, os.SEEK_END)
        if self._stream.tell() > 0:
            self._stream.seek(-1, os.SEEK_END)
            if self._stream.read(1) != b"\n":
                self._stream.write(b"\n")

    def write(self, line: bytes) -> None:
        self._stream.write(line)

    def close(self) -> None:
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self._stream.close()


def import_runs(folder: str, sources: Iterable[tuple[str, Iterable[tuple[str, Mapping[str, Any]]]]], *,
                lock_timeout: float = 60.0) -> ImportSummary:
    """Append each source's records (label, records) to the store in `folder` (created if needed).
    Another import into the same store is waited for up to `lock_timeout` seconds."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError("the run store must be a folder", source=folder)
    os.makedirs(folder, exist_ok=True)
    check_store_files(folder)
    index = StoreIndex(folder, FILES, _key, lock_timeout)
    summary = ImportSummary(folder)
    try:
        out = {kind: _Appender(os.path.join(folder, name)) for kind, name in FILES.items()}
        try:
            for label, records in sources:
                summary.sources.append(label)
                for kind, record in records:
                    _add(kind, record, index, out, summary)
        finally:
            for appender in out.values():
                appender.close()
    except BaseException:
        index.abandon()
        raise
    index.commit()
    summary.damaged, summary.damaged_count = index.damage.lines, index.damage.count
    return summary


def _line(record: Mapping[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"


def _add(kind: str, record: Mapping[str, Any], index: StoreIndex, out: dict[str, _Appender], summary: ImportSummary) -> None:
    if kind in _SCHEMAS:
        broken = list(runs.problems(record, _SCHEMAS[kind]))
        if broken:  # never stored: the store holds only records its schemas accept
            kind, record = "ledger", runs.ledger_entry("invalid-record", f"{kind} breaks its schema: {broken[0]}",
                                                       id=record.get("id"), source=record.get("source"))
    if kind == "ledger":
        record = {"id": _ledger_id(record), **record}  # a ledger entry's "id" names the record it is about
        record_id = _ledger_id(record)
    else:
        record_id = record["id"]
    line = _line(record)
    digest = _content_digest(kind, record)
    stored = index.add(kind, record_id, line, digest)
    plural = runs.KINDS[kind].plural
    if stored is None:
        out[kind].write(line)
        summary.added[plural] += 1
    elif stored.digest == digest:
        summary.known[plural] += 1
    else:
        summary.conflicts.append({"id": record_id, "source": record.get("source"), "stored": {"file": out[kind].path, "line": stored.line},
                                  "reason": f"{'an' if kind == 'attempt' else 'a'} {kind} with this id is already stored with "
                                            f"different content; {plural} are immutable, so the stored one is kept"})

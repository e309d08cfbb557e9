"""The run store: a folder of append-only JSONL files beside the case set.

`attempts.jsonl`, `results.jsonl` and `ledger.jsonl`, one record a line. Importing only ever
appends: a record whose id is already there is skipped (ids are stable, so importing the same
run twice adds nothing), a rerun adds attempts, a rescoring adds results. An attempt is
immutable: one arriving with a known id but different content is refused and counted as a
conflict, and the store keeps what it had. An interrupted import is completed by importing again.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from .canonical import runs
from .canonical.errors import ReadError, UsageError
from .canonical.opening import not_regular, refusal
from .runindex import StoreIndex

ATTEMPTS, RESULTS, LEDGER = "attempts.jsonl", "results.jsonl", "ledger.jsonl"
FILES = {"attempt": ATTEMPTS, "result": RESULTS, "ledger": LEDGER}


def is_store(path: str) -> bool:
    return os.path.isdir(path) and any(os.path.exists(os.path.join(path, f)) for f in (ATTEMPTS, RESULTS))


# What an attempt did. Where it was read from, and what one output file of a run says about the
# run but another does not (promptfoo's results.json has the eval id and timestamp, its .jsonl
# not), are not part of it.
_WHAT_HAPPENED = ("caseId", "caseRef", "caseVersion", "system", "durationMs", "status", "error", "output",
                  "outputRef", "toolTrace")


def _content_digest(record: dict[str, Any]) -> bytes:
    body = {k: record.get(k) for k in _WHAT_HAPPENED}
    return hashlib.blake2b(json.dumps(body, sort_keys=True, ensure_ascii=False).encode(), digest_size=12).digest()


def _ledger_id(entry: dict[str, Any]) -> str:
    return runs.stable_id("led", entry)


def check_regular(folder: str) -> None:
    """A store file that is a FIFO, a device or a socket would block or never end: refused."""
    for name in FILES.values():
        kind = not_regular(os.path.join(folder, name))
        if kind is not None:
            raise ReadError(f"the run store file {name} {refusal(kind).removeprefix('it ')}",
                            source=os.path.join(folder, name))


def read_records(folder: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every record of a store: attempts, then results, then ledger entries (a line that cannot be
    read becomes a ledger entry naming the file and line)."""
    if not os.path.isdir(folder):
        raise ReadError("no such run store folder", source=folder)
    check_regular(folder)
    for kind in ("attempt", "result", "ledger"):
        path = os.path.join(folder, FILES[kind])
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as stream:
            for number, text in enumerate(stream, 1):
                if not text.strip():
                    continue
                try:
                    record = json.loads(text)
                except ValueError as err:
                    yield "ledger", runs.ledger_entry("unreadable", f"not JSON: {err}",
                                                      source={"file": path, "line": number, "entry": None})
                    continue
                if not isinstance(record, dict):
                    yield "ledger", runs.ledger_entry("unreadable", "not a JSON object",
                                                      source={"file": path, "line": number, "entry": None})
                    continue
                yield kind, record


@dataclass
class ImportSummary:
    store: str
    sources: list[str] = field(default_factory=list)
    added: dict[str, int] = field(default_factory=lambda: {"attempts": 0, "results": 0, "ledger": 0})
    known: dict[str, int] = field(default_factory=lambda: {"attempts": 0, "results": 0, "ledger": 0})
    conflicts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.conflicts else 0

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "sources": self.sources, "added": self.added, "alreadyThere": self.known,
                "conflicts": self.conflicts}


def _key(kind: str, record: dict[str, Any]) -> tuple[str, bytes | None] | None:
    """What the index keeps of a stored record: its id (and an attempt's content digest)."""
    if kind == "ledger":
        return _ledger_id(record), None
    if not isinstance(record.get("id"), str):
        return None
    return record["id"], _content_digest(record) if kind == "attempt" else None


class _Appender:
    """Appends lines to one store file, first mending a last line an interrupted import cut short."""

    def __init__(self, path: str) -> None:
        self._stream = open(path, "a+b")
        self._stream.seek(0, os.SEEK_END)
        if self._stream.tell() > 0:
            self._stream.seek(-1, os.SEEK_END)
            if self._stream.read(1) != b"\n":
                self._stream.write(b"\n")

    def write(self, record: dict[str, Any]) -> None:
        self._stream.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")

    def close(self) -> None:
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self._stream.close()


def import_runs(folder: str, sources: Iterable[tuple[str, Iterable[tuple[str, dict[str, Any]]]]], *,
                lock_timeout: float = 60.0) -> ImportSummary:
    """Append each source's records (label, records) to the store in `folder` (created if needed).
    Another import into the same store is waited for up to `lock_timeout` seconds."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError("the run store must be a folder", source=folder)
    os.makedirs(folder, exist_ok=True)
    check_regular(folder)
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
    return summary


_SCHEMAS = {"attempt": runs.ATTEMPT_SCHEMA, "result": runs.RESULT_SCHEMA}


def _add(kind: str, record: dict[str, Any], index: StoreIndex, out: dict[str, _Appender], summary: ImportSummary) -> None:
    if kind in _SCHEMAS:
        broken = list(runs.problems(record, _SCHEMAS[kind]))
        if broken:  # never stored: the store holds only records its schemas accept
            kind, record = "ledger", runs.ledger_entry("invalid-record", f"{kind} breaks its schema: {broken[0]}",
                                                       id=record.get("id"), source=record.get("source"))
    if kind == "attempt":
        digest = _content_digest(record)
        new, had = index.add(kind, record["id"], digest)
        if new:
            out[kind].write(record)
            summary.added["attempts"] += 1
        elif had == digest:
            summary.known["attempts"] += 1
        else:
            summary.conflicts.append({"id": record["id"], "source": record.get("source"),
                                      "reason": "an attempt with this id is already stored with different "
                                                "content; attempts are immutable, so the stored one is kept"})
    elif kind == "result":
        if index.add(kind, record["id"])[0]:
            out[kind].write(record)
            summary.added["results"] += 1
        else:
            summary.known["results"] += 1
    else:
        entry = {"id": _ledger_id(record), **record}  # a ledger entry's "id" names the record it is about
        if index.add(kind, _ledger_id(entry))[0]:
            out[kind].write(entry)
            summary.added["ledger"] += 1
        else:
            summary.known["ledger"] += 1

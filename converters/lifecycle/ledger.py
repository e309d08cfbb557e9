"""The retirement ledger beside a set: `<set>.retired.jsonl`, append-only canonical JSONL.

Each line is one `LedgerRecord` (`canonical/retirement.py`, schema `retirement.schema.json`):
`retired` (the case as it was when it left the set, the date, the reason, who) or `restored`
(it came back; the history is kept). The last record of an id says whether it is retired now.

The ledger is published before the set it speaks for. Each record carries `setBefore`, the hash
of the set file's bytes before the change, so a run killed between the two renames leaves a set
that still hashes to its ledger's last `setBefore`: `interrupted()` finds that change and
`evalconv retire` finishes it before doing anything else.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..canonical import jsonvalue
from ..canonical.errors import ReadError
from ..canonical.retirement import (ACTIONS as ACTIONS, LEDGER_SUFFIXES as LEDGER_SUFFIXES,
                                    MIGRATIONS_SUFFIX as MIGRATIONS_SUFFIX, RETIRED_SUFFIX as RETIRED_SUFFIX,
                                    LedgerRecord, is_ledger as is_ledger, record_problem)
from .digest import content_digest


def retired_path(set_path: str) -> str:
    return set_path.rstrip("/" + os.sep) + RETIRED_SUFFIX


def json_lines(path: str, kind: str, problem_of: Callable[[Any], str | None]) -> Iterator[dict[str, Any]]:
    """The records of a JSONL ledger in order (none when the file does not exist); a line that is
    not a `kind` (`problem_of` says why, or None when it is one) is a ReadError naming the ledger,
    the line and the field."""
    try:
        stream = open(path, "rb")
    except FileNotFoundError:
        return
    with stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                value = jsonvalue.loads(line)
            except ValueError as err:
                raise ReadError(f"not a {kind}: {err}", source=path, line=number) from None
            problem = problem_of(value) if isinstance(value, dict) else f"$: a {kind} is a JSON object"
            if problem is not None:
                raise ReadError(f"not a {kind}: {problem}", source=path, line=number)
            yield value


def migrations(path: str) -> Iterator[dict[str, Any]]:
    """The records of a migrations ledger, in order (none when there is no ledger)."""
    return json_lines(path, "migration record", _migration_problem)


def _migration_problem(record: dict[str, Any]) -> str | None:
    return None if record.get("action") == "migrated" else '$.action: a migration record has "action": "migrated"'


def records(path: str) -> Iterator[LedgerRecord]:
    """The retirement ledger's records in order (none when there is no ledger)."""
    for value in json_lines(path, "ledger record", record_problem):
        yield LedgerRecord.from_json(value)


@dataclass(frozen=True, slots=True)
class Retirement:
    date: Any
    reason: Any
    by: Any
    digest: int | None  # the retired case's content hash
    case: dict[str, Any] | None = None
    row: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"date": self.date, "reason": self.reason, "by": self.by}


def retired_now(path: str | None) -> dict[str, Retirement]:
    """Ids whose last record says retired, with that record (held: a ledger is small)."""
    out: dict[str, Retirement] = {}
    if path is None:
        return out
    for record in records(path):
        if record.action == "retired":
            out[record.id] = Retirement(record.date, record.reason, record.by,
                                        content_digest(record.case) if record.case is not None else None,
                                        record.case, record.row)
        else:
            out.pop(record.id, None)
    return out


def file_hash(path: str) -> str:
    """`sha256:<hex>` of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def interrupted(set_path: str, ledger: list[LedgerRecord] | None = None) -> list[LedgerRecord]:
    """The records of a change the ledger holds and the set does not (a run stopped between
    publishing the ledger and the set): the last records that share a `setBefore` the set file
    still hashes to. Empty when the set is in step with its ledger."""
    held = list(records(retired_path(set_path))) if ledger is None else ledger
    if not held or not os.path.isfile(set_path):
        return []
    before = held[-1].set_before
    if file_hash(set_path) != before:
        return []
    out = []
    for record in reversed(held):
        if record.set_before != before:
            break
        out.append(record)
    return out[::-1]


def ledger_bytes(path: str) -> bytes:
    """The ledger as it is (b"" when there is none), ending with a newline when not empty."""
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except FileNotFoundError:
        return b""
    return data if not data or data.endswith(b"\n") else data + b"\n"


def record_line(record: LedgerRecord) -> str:
    return jsonvalue.dumps(record.to_json()) + "\n"

"""The retirement ledger beside a set: `<set>.retired.jsonl`, append-only canonical JSONL.

Each line is one record: `{"action": "retired", "id", "date", "reason", "by", "case"}` (the case
as it was when it left the set) or `{"action": "restored", "id", "date", "reason", "by"}` (it
came back; the history is kept). The last record of an id says whether it is retired now.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator

from ..canonical import jsonvalue
from ..canonical.errors import ReadError
from .digest import content_digest

RETIRED_SUFFIX = ".retired.jsonl"
MIGRATIONS_SUFFIX = ".migrations.jsonl"
LEDGER_SUFFIXES = (RETIRED_SUFFIX, MIGRATIONS_SUFFIX)
ACTIONS = ("retired", "restored")


def retired_path(set_path: str) -> str:
    return set_path.rstrip("/" + os.sep) + RETIRED_SUFFIX


def is_ledger(path: str) -> bool:
    """A retirement or migration ledger: history beside a set, never a set itself."""
    return path.lower().endswith(LEDGER_SUFFIXES)


def records(path: str) -> Iterator[dict[str, Any]]:
    """The ledger's records in order; a line that is not a record is a ReadError naming it."""
    try:
        stream = open(path, "rb")
    except FileNotFoundError:
        return
    with stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                record = jsonvalue.loads(line)
            except ValueError as err:
                raise ReadError(f"line {number}: not a ledger record: {err}", source=path) from None
            if not (isinstance(record, dict) and record.get("action") in ACTIONS
                    and isinstance(record.get("id"), str)):
                raise ReadError(f"line {number}: a ledger record needs an id and an action "
                                f"({' or '.join(ACTIONS)})", source=path)
            yield record


@dataclass(frozen=True, slots=True)
class Retirement:
    date: Any
    reason: Any
    by: Any
    digest: int | None  # the retired case's content hash

    def to_json(self) -> dict[str, Any]:
        return {"date": self.date, "reason": self.reason, "by": self.by}


def retired_now(path: str | None) -> dict[str, Retirement]:
    """Ids whose last record says retired, with that record (held: a ledger is small)."""
    out: dict[str, Retirement] = {}
    if path is None:
        return out
    for record in records(path):
        if record["action"] == "retired":
            case = record.get("case")
            out[record["id"]] = Retirement(record.get("date"), record.get("reason"), record.get("by"),
                                           content_digest(case) if case is not None else None)
        else:
            out.pop(record["id"], None)
    return out

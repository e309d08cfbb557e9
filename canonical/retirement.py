"""Retirement: the ledger record a retired (or restored) case leaves beside its set, and the
validator's rule for a case whose `retirementCondition` names a date that has passed.

The ledger is `<set>.retired.jsonl`: append-only canonical JSONL, one `LedgerRecord` a line, its
shape published as `schema/retirement.schema.json` (version 1).
"""
from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import jsonschema_rs

from .findings import Finding

SCHEMA_FILE = "retirement.schema.json"
RETIRED_SUFFIX = ".retired.jsonl"
MIGRATIONS_SUFFIX = ".migrations.jsonl"
LEDGER_SUFFIXES = (RETIRED_SUFFIX, MIGRATIONS_SUFFIX)
Action = Literal["retired", "restored"]
ACTIONS: tuple[Action, ...] = ("retired", "restored")


def is_ledger(path: str) -> bool:
    """A retirement or migration ledger: history beside a set, never a set itself."""
    return path.lower().endswith(LEDGER_SUFFIXES)


@lru_cache(maxsize=None)
def record_schema() -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("schema", SCHEMA_FILE).read_text("utf-8"))


@lru_cache(maxsize=None)
def _checker() -> Any:
    return jsonschema_rs.Draft7Validator(record_schema())


def record_problem(value: Any) -> str | None:
    """Why `value` is not a ledger record ('$.path: message'), or None."""
    try:
        valid = _checker().is_valid(value)
    except (ValueError, OverflowError):  # a value the compiled checker cannot take (a huge integer)
        import jsonschema

        valid = jsonschema.Draft7Validator(record_schema()).is_valid(value)
    if valid:
        if value.get("case") is not None and value["case"].get("id") != value["id"]:
            return f"$.case.id: the retired case's id is not the record's id '{value['id']}'"
        return None
    import jsonschema  # only a bad record needs explaining

    err = min(jsonschema.Draft7Validator(record_schema()).iter_errors(value), key=lambda e: len(e.absolute_path))
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
    return f"{where}: {err.message}"


@dataclass(frozen=True, slots=True)
class LedgerRecord:
    action: Action
    id: str
    date: str
    set_before: str            # "sha256:<hex>" of the set file just before the change
    reason: str | None = None
    by: str | None = None
    row: int | None = None     # 1-based position of the case in the set
    case: dict[str, Any] | None = None  # the canonical row as it was (retired records)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> "LedgerRecord":
        """From a value `record_problem` passed."""
        return cls(value["action"], value["id"], value["date"], value["setBefore"], value.get("reason"),
                   value.get("by"), value.get("row"), value.get("case"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "id": self.id, "date": self.date}
        for key, value in (("reason", self.reason), ("by", self.by), ("row", self.row), ("case", self.case)):
            if value is not None:
                out[key] = value
        out["setBefore"] = self.set_before
        return out


def utc_now() -> str:
    """Now, as a ledger record's date: `2026-12-02T16:05:09Z`."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_DATE = re.compile(r"(?<![0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])")


def named_dates(text: str) -> list[_dt.date]:
    """The calendar dates (YYYY-MM-DD) a text names; strings that look like one but are not
    (2026-13-40) are left out."""
    out = []
    for match in _DATE.finditer(text):
        try:
            out.append(_dt.date(*map(int, match.groups())))
        except ValueError:
            continue
    return out


def retirement_due(case: dict[str, Any], today: _dt.date | None = None) -> list[Finding]:
    """`retirement-due` when `retirementCondition` names a date (YYYY-MM-DD) that has passed
    (today, in UTC, is not past it)."""
    condition = case.get("retirementCondition")
    if not isinstance(condition, str) or "-" not in condition:
        return []
    today = today or _dt.datetime.now(_dt.timezone.utc).date()
    passed = [d for d in named_dates(condition) if d < today]
    if not passed:
        return []
    days = ", ".join(d.isoformat() for d in passed)
    return [Finding("retirement-due", f"the retirement condition names {days}, which has passed: retire the "
                    f"case (`evalconv retire SET --id ID --why TEXT`) or update the condition",
                    "$.metadata.case.retirementCondition")]

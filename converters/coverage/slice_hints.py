"""`--by FIELD` misspelt: "did you mean" from the fields a set's rows hold and the fields the case
profile and the reason conventions define, for `stats` and `report`.

A slice field that is neither known (a case-profile field, a documented reason field) nor held by
any row is a typo, not a slice of `(none)`: a usage error (exit 2) naming the closest field. The
fields present are gathered only on that path, from the first rows of each file.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..canonical.errors import EvalconvError, UsageError
from ..canonical.schema import CASE_FIELD_KINDS
from ..canonical.suggest import closest
from ..canonical.vocabulary import NONE_LABEL

REASON_FIELDS = ("metadata.reason", "metadata.origin", "metadata.severity", "metadata.gate")
ROWS_LOOKED_AT = 5000  # per file, when a slice matched no row: enough to see the fields a set uses


def known_fields() -> list[str]:
    """The fields every set may slice by: the case profile's, then the reason fields."""
    return [*(f"case.{name}" for name in CASE_FIELD_KINDS), *REASON_FIELDS]


def nearest_field(name: str, candidates: Iterable[str]) -> str | None:
    """The field `name` most likely meant: by its whole path, else by its last part (`severity`
    -> `metadata.severity`, `case.severity` -> `metadata.severity`)."""
    names = [c for c in dict.fromkeys(candidates) if c != name]
    tails: dict[str, str] = {}
    for candidate in names:
        tails.setdefault(candidate.rsplit(".", 1)[-1], candidate)
    own_tail = name.strip().rsplit(".", 1)[-1]
    if own_tail in tails:  # the right key under the wrong prefix
        return tails[own_tail]
    whole = closest(name, names)
    if whole is not None:
        return whole
    tail = closest(own_tail, list(tails))
    return tails[tail] if tail is not None else None


def did_you_mean(name: str, present: Iterable[str] = ()) -> str:
    """`: did you mean 'metadata.severity'?`, or "" when nothing is close."""
    match = nearest_field(name, [*present, *known_fields()])
    return f"; did you mean '{match}'?" if match else ""


def row_fields(value: Any, into: dict[str, None]) -> None:
    """The slice names a row's metadata holds: `case.<field>`, `metadata.<key>`, and one level
    into an object (`metadata.team.name`)."""
    metadata = value.get("metadata") if isinstance(value, dict) else None
    if not isinstance(metadata, dict):
        return
    for key, item in metadata.items():
        if key == "case" and isinstance(item, dict):
            for field_name in item:
                into.setdefault(f"case.{field_name}", None)
            continue
        into.setdefault(f"metadata.{key}", None)
        if isinstance(item, dict):
            for inner in item:
                into.setdefault(f"metadata.{key}.{inner}", None)


def fields_present(paths: Iterable[str], *, from_: str | None = None, encoding: str | None = None,
                   limit: int = ROWS_LOOKED_AT) -> list[str]:
    """The fields the first `limit` rows of each file hold (an unreadable file adds none)."""
    from ..sources import reading

    found: dict[str, None] = {}
    for path in paths:
        try:
            with reading(path, from_=from_, encoding=encoding) as (_fmt, rows, _report):
                for n, src in enumerate(rows):
                    if n == limit:
                        break
                    row_fields(src.value, found)
        except (EvalconvError, OSError):
            continue
    return list(found)


def unmatched(by: Iterable[str], slices: dict[str, dict[str, Any]]) -> list[str]:
    """The --by fields no row holds (every row counted under `(none)`) that no convention defines."""
    known = set(known_fields())
    return [name for name in dict.fromkeys(by)
            if name not in known and name in slices and set(slices[name]) <= {NONE_LABEL}]


def refuse_unmatched(by: Iterable[str], slices: dict[str, dict[str, Any]], files: Iterable[str], *,
                     from_: str | None = None, encoding: str | None = None, flag: str = "--by") -> None:
    """A usage error for the first --by field that is a typo, with the closest field."""
    missing = unmatched(by, slices)
    if not missing:
        return
    present = fields_present(files, from_=from_, encoding=encoding)
    missing = [name for name in missing if name not in present]  # held, but blank in every row: a slice
    if not missing:
        return
    name = missing[0]
    raise UsageError(f"{flag} {name}: no row has this field, and it is not a case-profile or reason field"
                     f"{did_you_mean(name, present)} (a slice is case.<field> or metadata.<key>)")

"""Rows of one import that ask the same thing: the same `input` (after trimming a text's
surrounding spaces) on more than one row is often a sheet's copy-paste slip, sometimes a case
asked twice on purpose with different expectations. The import's summary names the rows."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..canonical import jsonvalue

SHOWN = 10  # groups named in the summary; --report has them all


def _key(value: Any) -> bytes:
    text = value.strip() if isinstance(value, str) else jsonvalue.dumps(value)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass
class RepeatedInputs:
    _first: dict[bytes, int] = field(default_factory=dict)  # input digest -> its first group index or row
    _groups: dict[bytes, list[tuple[int, str]]] = field(default_factory=dict)
    _rows: dict[bytes, tuple[int, str]] = field(default_factory=dict)

    def add(self, number: int, row_id: str, value: Any) -> None:
        key = _key(value)
        first = self._rows.get(key)
        if first is None:
            self._rows[key] = (number, row_id)
            return
        self._groups.setdefault(key, [first]).append((number, row_id))

    @property
    def groups(self) -> list[list[tuple[int, str]]]:
        """Each input that more than one row has: its rows (number, id), in sheet order."""
        return sorted(self._groups.values())

    def lines(self, where: str = "row") -> list[str]:
        groups = self.groups
        if not groups:
            return []
        out = [f"  repeated input: {len(groups)} input{'s are' if len(groups) != 1 else ' is'} on more than "
               f"one row (the same question asked twice; keep both only if they expect different things):"]
        for group in groups[:SHOWN]:
            out.append("    " + ", ".join(f"{where} {n} ({row_id})" for n, row_id in group))
        if len(groups) > SHOWN:
            out.append(f"    ... and {len(groups) - SHOWN} more (--report FILE lists them all)")
        return out

    def to_json(self) -> list[list[dict[str, Any]]]:
        return [[{"row": n, "id": row_id} for n, row_id in group] for group in self.groups]

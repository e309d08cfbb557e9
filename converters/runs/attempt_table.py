"""Attempt id -> attempt number (0, 1, 2, ... in the order added), for millions of attempts in
about 20 bytes each.

evalconv's attempt ids are `att-` and 20 hex digits (80 bits of a digest, `canonical/runs.py`), so
each is kept exactly, as a 64-bit and a 16-bit word per attempt, found through an open-addressing
table of attempt numbers: no Python object per attempt. Any other id (a store edited by hand)
goes in a dict.
"""
from __future__ import annotations

from array import array

_PREFIX, _DIGITS = "att-", 20
_HEX = frozenset("0123456789abcdef")


def _split(attempt_id: str) -> tuple[int, int] | None:
    digits = attempt_id[len(_PREFIX):]
    if not attempt_id.startswith(_PREFIX) or len(digits) != _DIGITS or not _HEX.issuperset(digits):
        return None
    return int(digits[:16], 16), int(digits[16:], 16)


class AttemptTable:
    def __init__(self) -> None:
        self._high = array("Q")  # per attempt number: the id's first 64 bits
        self._low = array("H")  # and its last 16
        self._other: dict[str, int] = {}
        self._used = 0
        self._allocate(1 << 10)

    def _allocate(self, capacity: int) -> None:
        self._mask = capacity - 1
        self._limit = capacity * 2 // 3
        self._slots = array("i", [-1]) * capacity  # attempt numbers; -1 marks an empty slot

    def get(self, attempt_id: str) -> int | None:
        key = _split(attempt_id)
        if key is None:
            return self._other.get(attempt_id)
        high, low = key
        slots, mask = self._slots, self._mask
        slot = high & mask
        while (number := slots[slot]) >= 0:
            if self._high[number] == high and self._low[number] == low:
                return number
            slot = (slot + 1) & mask
        return None

    def add(self, attempt_id: str) -> int:
        """Number `attempt_id` (not in the table yet): the next number."""
        number = len(self._high)
        key = _split(attempt_id)
        self._high.append(key[0] if key else 0)
        self._low.append(key[1] if key else 0)
        if key is None:
            self._other[attempt_id] = number
            return number
        self._put(number)
        self._used += 1
        if self._used > self._limit:
            old = self._slots
            self._allocate((self._mask + 1) * 2)
            for kept in old:
                if kept >= 0:
                    self._put(kept)
        return number

    def _put(self, number: int) -> None:
        slot = self._high[number] & self._mask
        while self._slots[slot] >= 0:
            slot = (slot + 1) & self._mask
        self._slots[slot] = number

    def __contains__(self, attempt_id: str) -> bool:
        return self.get(attempt_id) is not None

    def __len__(self) -> int:
        return len(self._high)

"""Which ids a set has used, in flat memory: a million ids in about 32 MB instead of 140.

Each id is kept as 96 bits (Python's 64-bit string hash and a CRC-32 of its text) in an
open-addressing table of machine words, with the row that first used it. Two different ids
share those 96 bits with odds of about 1 in 10^17 for a million rows.

The table is 64 tables, picked by six bits of the hash. A table that fills up is copied into
one twice its size, and while it is copied both are held: one table of 64 is 1/64th of the
memory, where a single table would hold half as much again for a moment (16 MB at a million
ids, which set the process's peak).
"""
from __future__ import annotations

from array import array
from typing import Sequence
from zlib import crc32

SHARD_BITS = 6
_SHARD_MASK = (1 << SHARD_BITS) - 1
_SHARD_SHIFT = 32  # the slot in a table is the hash's low bits; the table, bits 32-37

# One table: [hashes, checks, rows, slot mask, the count that makes it grow, ids held].
_Table = list


def _table(capacity: int) -> _Table:
    # array * n, not array(bytes(...)): no zeroed bytes object as large as the array beside it
    return [array("q", [0]) * capacity,  # 0 marks an empty slot
            array("I", [0]) * capacity, array("I", [0]) * capacity, capacity - 1, capacity * 2 // 3, 0]


class IdTable:
    def __init__(self, capacity: int = 1 << 10) -> None:
        self._size = 0
        per_table = 1 << max((capacity - 1).bit_length() - SHARD_BITS, 2)
        self._tables = [_table(per_table) for _ in range(1 << SHARD_BITS)]

    def first_use(self, row_id: str, row: int) -> int:
        """Record that `row` uses `row_id`; return the first row that used it (maybe `row`)."""
        repeated = self.first_uses((row_id,), row)
        return repeated[0][1] if repeated else row

    def first_uses(self, ids: Sequence[str | None], first_row: int) -> list[tuple[int, int]]:
        """Record that rows `first_row`, `first_row + 1`, ... use `ids` (None: no id); return
        (index in `ids`, first row that used it) for each id used before."""
        repeated = []
        tables = self._tables
        for i, row_id in enumerate(ids):
            if row_id is None:
                continue
            key = hash(row_id) or 1
            check = crc32(row_id.encode("utf-8", "surrogatepass"))
            table = tables[(key >> _SHARD_SHIFT) & _SHARD_MASK]
            hashes, checks, rows, mask, limit, held = table
            slot = key & mask
            while (stored := hashes[slot]) != 0:
                if stored == key and checks[slot] == check:
                    repeated.append((i, rows[slot]))
                    break
                slot = (slot + 1) & mask
            else:
                hashes[slot], checks[slot], rows[slot] = key, check, first_row + i
                self._size += 1
                table[5] = held = held + 1
                if held > limit:
                    tables[(key >> _SHARD_SHIFT) & _SHARD_MASK] = _grown(table)
        return repeated

    def __len__(self) -> int:
        return self._size


def _grown(old: _Table) -> _Table:
    new = _table((old[3] + 1) * 2)
    hashes, checks, rows, mask = new[0], new[1], new[2], new[3]
    for key, check, row in zip(old[0], old[1], old[2]):
        if key:
            slot = key & mask
            while hashes[slot]:
                slot = (slot + 1) & mask
            hashes[slot], checks[slot], rows[slot] = key, check, row
    new[5] = old[5]
    return new

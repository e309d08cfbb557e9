"""Which ids one side of a diff holds, with each row's content hash and position, in flat
memory: 21 bytes a row in machine-word arrays (a million rows in about 32 MB at the table's
fill), not a Python object a row."""
from __future__ import annotations

from array import array
from io import BufferedIOBase
from typing import BinaryIO, Iterator

SEEN = 1  # the other side has this id
CHANGED = 2  # ... with other content


def _zeros(typecode: str, count: int) -> array:
    # array * n, not array(bytes(...)): no zeroed bytes object as large as the array beside it
    return array(typecode, [0]) * count


class _OpenTable:
    """Open addressing over `_keys` (0: an empty slot), linear probing."""

    _size: int
    _keys: array
    _mask: int
    FIRST_CAPACITY = 1 << 10  # slots, a power of two

    def __init__(self, capacity: int | None = None) -> None:
        self._size = 0
        self._allocate(capacity or self.FIRST_CAPACITY)

    def _allocate(self, capacity: int) -> None:
        """Empty arrays of `capacity` slots, grown once two thirds are used."""
        self._mask = capacity - 1
        self._limit = capacity * 2 // 3
        self._arrays(capacity)

    def _arrays(self, capacity: int) -> None:
        raise NotImplementedError

    def __len__(self) -> int:
        return self._size

    def _slot(self, key: int) -> int:
        keys, mask = self._keys, self._mask
        slot = key & mask
        while (stored := keys[slot]) != 0 and stored != key:
            slot = (slot + 1) & mask
        return slot


class DigestTable(_OpenTable):
    def _arrays(self, capacity: int) -> None:
        self._keys = _zeros("q", capacity)  # 0: an empty slot
        self._digests = _zeros("q", capacity)
        self._rows = _zeros("I", capacity)
        self._flags = _zeros("B", capacity)

    def add(self, key: int, digest: int, row: int) -> int:
        """Record the row that holds id `key`; returns the first row that held it (maybe `row`)."""
        slot = self._slot(key)
        if self._keys[slot] == key:
            return self._rows[slot]
        self._keys[slot], self._digests[slot], self._rows[slot] = key, digest, row
        self._size += 1
        if self._size > self._limit:
            self._grow()
        return row

    def find(self, key: int) -> int:
        """The slot of `key`, or -1."""
        slot = self._slot(key)
        return slot if self._keys[slot] == key else -1

    def digest(self, slot: int) -> int:
        return self._digests[slot]

    def row(self, slot: int) -> int:
        return self._rows[slot]

    def mark(self, slot: int, flag: int) -> None:
        self._flags[slot] |= flag

    def flags(self, key: int) -> int | None:
        """The marks of `key`, or None when the table does not hold it."""
        slot = self.find(key)
        return None if slot < 0 else self._flags[slot]

    def revisited(self) -> Iterator[int]:
        """The rows (by number) whose ids the other side does not have, or has with other content."""
        for key, flag, row in zip(self._keys, self._flags, self._rows):
            if key and (not flag & SEEN or flag & CHANGED):
                yield row

    def unseen(self) -> int:
        """How many ids the other side does not have."""
        return sum(1 for key, flag in zip(self._keys, self._flags) if key and not flag & SEEN)

    def changed(self) -> int:
        return sum(1 for flag in self._flags if flag & CHANGED)

    def match(self, keys: "array[int]", digests: "array[int]", versions: bytearray,
              base_versions: bytearray) -> tuple["array[int]", int, int]:
        """The other side's rows, in order, by id key (0: none), content hash and schema version
        byte, against this table: marks SEEN and CHANGED; returns the rows (by number) whose ids
        are new or whose content changed, and how many rows are unchanged, and of those migrated
        (another schema version). One loop with the table's arrays at hand: no call a row."""
        table_keys, table_digests, rows, flags, mask = self._keys, self._digests, self._rows, self._flags, self._mask
        wanted = array("I")
        unchanged = migrated = 0
        for number, (key, digest, version) in enumerate(zip(keys, digests, versions), 1):
            if not key:
                continue
            slot = key & mask
            while (stored := table_keys[slot]) != 0 and stored != key:
                slot = (slot + 1) & mask
            if stored == 0:
                wanted.append(number)
                continue
            if digest != table_digests[slot]:
                flags[slot] |= SEEN | CHANGED
                wanted.append(number)
                continue
            flags[slot] |= SEEN
            unchanged += 1
            if base_versions[rows[slot] - 1] != version:
                migrated += 1
        return wanted, unchanged, migrated

    def save(self, out: BinaryIO) -> tuple[int, int]:
        """Write the table's arrays to `out`; returns (capacity, size) for `load`."""
        for column in (self._keys, self._digests, self._rows, self._flags):
            column.tofile(out)
        return self._mask + 1, self._size

    @classmethod
    def load(cls, src: BufferedIOBase, capacity: int, size: int) -> "DigestTable":
        """The table `save` wrote (read into its arrays: no second copy of them)."""
        table = cls(capacity)
        table._size = size
        for column in (table._keys, table._digests, table._rows, table._flags):
            read_into(src, column)
        return table

    def _grow(self) -> None:
        old = (self._keys, self._digests, self._rows, self._flags)
        self._allocate((self._mask + 1) * 2)
        for key, digest, row, flag in zip(*old):
            if key:
                slot = self._slot(key)
                self._keys[slot], self._digests[slot], self._rows[slot], self._flags[slot] = key, digest, row, flag


def read_into(src: BufferedIOBase, column: "array[int] | bytearray") -> None:
    """Fill `column` from `src` (it is as long as what was written)."""
    view = memoryview(column).cast("B")
    while view:
        got = src.readinto(view)
        if not got:
            raise EOFError("a saved table ends early")
        view = view[got:]


class OffsetTable(_OpenTable):
    """Id key -> a non-negative offset, in machine-word arrays (16 bytes a slot): where a spool
    file holds what diff keeps of an id. `put` replaces, `pop` takes an offset once (-1: none)."""

    FIRST_CAPACITY = 1 << 6

    def _arrays(self, capacity: int) -> None:
        self._used = 0  # slots holding a key, a popped one included
        self._keys = _zeros("q", capacity)  # 0: an empty slot
        self._offsets = _zeros("q", capacity)

    def put(self, key: int, offset: int) -> None:
        slot = self._slot(key)
        if self._keys[slot] != key:
            self._keys[slot] = key
            self._used += 1
            self._size += 1
        elif self._offsets[slot] < 0:
            self._size += 1
        self._offsets[slot] = offset
        if self._used > self._limit:
            self._grow()

    def get(self, key: int) -> int:
        slot = self._slot(key)
        return self._offsets[slot] if self._keys[slot] == key else -1

    def pop(self, key: int) -> int:
        slot = self._slot(key)
        if self._keys[slot] != key or self._offsets[slot] < 0:
            return -1
        offset, self._offsets[slot] = self._offsets[slot], -1
        self._size -= 1
        return offset

    def _grow(self) -> None:
        old = (self._keys, self._offsets)
        self._allocate((self._mask + 1) * 2)
        for key, offset in zip(*old):
            if key and offset >= 0:
                slot = self._slot(key)
                self._keys[slot], self._offsets[slot] = key, offset
                self._used += 1

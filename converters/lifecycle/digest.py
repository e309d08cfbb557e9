"""A row's content hash: the same for the same value whatever the format it was read from.

Key order is not significant and types are (`1` is not `1.0`), so the hash is taken over the
row's JSON with sorted keys. A row's `metadata.case.schemaVersion` is left out: a migration
changes a row's version and nothing else (every v1 row has exactly one v2 form), so a migrated
row hashes as it did before and a migration commit is one finding, not a changed row each.
"""
from __future__ import annotations

import json
from hashlib import blake2b
from typing import Any

import orjson

DIGEST_BYTES = 8  # 64 bits: two different rows of one id share a digest with odds of 1 in 10^19


def _text(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # integers beyond 64 bits, deep nesting: the standard library takes them
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                          default=repr).encode("utf-8", "surrogatepass")


def without_version(value: Any) -> Any:
    """The row with `metadata.case.schemaVersion` left out (a shallow copy; the row is not changed)."""
    if not isinstance(value, dict):
        return value
    metadata = value.get("metadata")
    if not isinstance(metadata, dict):
        return value
    case = metadata.get("case")
    if not isinstance(case, dict) or "schemaVersion" not in case:
        return value
    case = {k: v for k, v in case.items() if k != "schemaVersion"}
    return {**value, "metadata": {**metadata, "case": case}}


def schema_version(value: Any) -> Any:
    """The row's `metadata.case.schemaVersion` as written (absent: 1)."""
    metadata = value.get("metadata") if isinstance(value, dict) else None
    case = metadata.get("case") if isinstance(metadata, dict) else None
    return case.get("schemaVersion", 1) if isinstance(case, dict) else 1


def content_digest(value: Any) -> int:
    """A 64-bit hash of the row's content, schemaVersion left out (a signed int: it fits an array('q'))."""
    data = blake2b(_text(without_version(value)), digest_size=DIGEST_BYTES).digest()
    return int.from_bytes(data, "little", signed=True)


def id_key(row_id: str) -> int:
    """A 64-bit key for an id, never 0 (0 marks an empty slot in a table)."""
    data = blake2b(row_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(data, "little", signed=True) or 1


def row_id(value: Any) -> str | None:
    """The row's id, when it is a non-empty string."""
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, str) and found else None


def version_byte(version: Any) -> int:
    """A schema version in one byte (0: not a version evalconv knows how to write)."""
    return version if type(version) is int and 0 < version < 256 else 0

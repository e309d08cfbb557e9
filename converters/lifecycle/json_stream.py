"""A report printed as `jsonvalue.dumps(report, indent=True)` prints it, a piece at a time: a
`Streamed` sequence in it (a spool's journal) is written an entry at a time, never held whole.

The text is the same byte for byte: orjson's two-space indent is the standard library's, so a
part dumped alone and indented by its depth is the part as the whole dump writes it. Where
orjson refuses some part (an integer beyond 64 bits), `jsonvalue.dumps` writes the whole report
with the standard library; `stdlib=True` does the same for every part.
"""
from __future__ import annotations

import json
from typing import Any, Iterator

import orjson

from ..canonical import jsonvalue
from .spool import Streamed

INDENT = "  "


def chunks(value: Any, *, stdlib: bool) -> Iterator[str]:
    """The text of `value`, indented as `jsonvalue.dumps(value, indent=True)` writes it."""
    return _value(value, 0, stdlib)


def needs_stdlib(value: Any) -> bool:
    """Does orjson refuse some part of `value` outside its journals (whose own `stdlib` says)?"""
    try:
        orjson.dumps(_skeleton(value))
    except TypeError:
        return True
    return False


def _skeleton(value: Any) -> Any:
    if isinstance(value, Streamed):
        return []
    if isinstance(value, dict):
        return {k: _skeleton(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_skeleton(v) for v in value]
    return value


def _lazy(value: Any) -> bool:
    if isinstance(value, Streamed):
        return True
    if isinstance(value, dict):
        return any(_lazy(v) for v in value.values())
    if isinstance(value, list):
        return any(_lazy(v) for v in value)
    return False


def _dump(value: Any, depth: int, stdlib: bool) -> str:
    if stdlib:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
    else:
        text = jsonvalue.dumps(value, indent=True)
    return text.replace("\n", "\n" + INDENT * depth) if depth else text


def _value(value: Any, depth: int, stdlib: bool) -> Iterator[str]:
    if not _lazy(value):
        yield _dump(value, depth, stdlib)
        return
    inner = "\n" + INDENT * (depth + 1)
    if isinstance(value, dict):
        yield "{"
        for n, (key, item) in enumerate(value.items()):
            yield ("," if n else "") + inner + _dump(key, 0, stdlib) + ": "
            yield from _value(item, depth + 1, stdlib)
        yield "\n" + INDENT * depth + "}"
        return
    if not len(value):
        yield "[]"
        return
    yield "["
    for n, item in enumerate(value):
        yield ("," if n else "") + inner
        yield from _value(item, depth + 1, stdlib)
    yield "\n" + INDENT * depth + "]"

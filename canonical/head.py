"""What content detection reads in the first bytes of a file: the keys of the first JSON record
and the cells of the first CSV line. The head is cut off anywhere and may be any text, so
nothing here raises; every format's `detect` scores its own evidence from these.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass

_WHITESPACE = " \t\r\n"
_SKIPPED = "\ufeff" + _WHITESPACE


@dataclass(frozen=True)
class RecordKeys:
    """The keys of a JSON record, as far as the head shows it: the top level, and one level down."""

    top: frozenset[str]
    nested: frozenset[tuple[str, str]]   # (key, subkey): `metadata.case` is ("metadata", "case")

    def has(self, key: str, subkey: str) -> bool:
        return (key, subkey) in self.nested


def record_keys(head: str) -> RecordKeys | None:
    """The keys of the first JSON record in `head`: an object (JSONL, concatenated objects) or
    the first item of an array, possibly cut short. None when the head does not open one."""
    text = head.lstrip(_SKIPPED)
    if text.startswith("["):
        text = text[1:].lstrip(_WHITESPACE)
    if not text.startswith("{"):
        return None
    top: set[str] = set()
    nested: set[tuple[str, str]] = set()
    stack: list[list[str | None]] = []  # [bracket, its current key] per open container
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            end = _string_end(text, i)
            if end < 0:
                break  # cut off inside a string
            after = _skip_whitespace(text, end)
            if after < n and text[after] == ":" and stack and stack[-1][0] == "{":
                stack[-1][1] = key = _decoded(text[i:end])
                # only a chain of object keys names something; a key below a cut or broken one does not
                chain = [entry[1] for entry in stack if entry[0] == "{" and entry[1] is not None]
                if len(chain) == len(stack) == 1:
                    top.add(key)
                elif len(chain) == len(stack) == 2:
                    nested.add((chain[0], key))
            i = end
            continue
        if ch in "{[":
            stack.append([ch, None])
        elif ch in "}]":
            if stack:
                stack.pop()
            if not stack:
                break  # the first record is complete
        i += 1
    return RecordKeys(frozenset(top), frozenset(nested))


def header_cells(head: str) -> list[str] | None:
    """The cells of the first line read as a CSV header, or None when it cannot be one (a stray
    carriage return or a quote left open, say)."""
    first = head.lstrip("\ufeff").split("\n", 1)[0]
    try:
        return next(csv.reader([first]), [])
    except csv.Error:
        return None


def _string_end(text: str, start: int) -> int:
    """The index just past the JSON string opening at `start`, or -1 when the text ends first."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return -1


def _skip_whitespace(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def _decoded(literal: str) -> str:
    try:
        value = json.loads(literal)
    except ValueError:  # a bad escape: the raw text still says which key it is
        return literal[1:-1]
    return value if isinstance(value, str) else literal[1:-1]

"""Which slices a case falls in for one field: the rule `stats` and `report` share.

A case counts once under each distinct value it holds: its value for a single-valued field, each
distinct member of a list, and `(none)` when the field holds no value (absent, null, blank text,
an empty list; a blank list member too). Text is its own label; any other JSON value its
compact JSON text.
"""
from __future__ import annotations

from typing import Any

from . import jsonvalue
from .vocabulary import NONE_LABEL, is_blank


def label(value: Any) -> str:
    """A list member's label (an empty list inside a list is a value: `[]`)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return NONE_LABEL
    return value if isinstance(value, str) else jsonvalue.dumps(value)


def slice_labels(value: Any) -> list[str]:
    """The slice labels of one field value, each once, in the order they appear."""
    if is_blank(value):
        return [NONE_LABEL]
    if isinstance(value, list):
        return list(dict.fromkeys(map(label, value)))
    return [label(value)]


def lookup(value: Any, parts: list[str | int] | tuple[str | int, ...]) -> Any:
    """The value at a parsed field path, or None where the path leads nowhere."""
    for part in parts:
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                return None
        elif not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value

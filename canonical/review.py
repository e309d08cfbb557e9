"""Rows `evalconv import` gave a placeholder expected behaviour: like starter examples, they are
not validated answers, and every written format marks them (`validator.review_mark`). The mark is
derived from the case, so reading a file back drops it."""
from __future__ import annotations

from typing import Any

# What `evalconv import` writes for a row with no expected behaviour; `{sheet}` is the sheet's name.
PLACEHOLDER = ("Imported from {sheet} without an expected behaviour: a reviewer must write what the system "
               "should do here and why before this row is used for grading.")
_PLACEHOLDER_HEAD, _PLACEHOLDER_TAIL = PLACEHOLDER.split("{sheet}", 1)
PLACEHOLDER_MARK = "placeholder expected behaviour, not a reviewed answer: a reviewer must write it before grading"


def is_placeholder(case: Any) -> bool:
    behavior = case.get("expectedBehavior") if isinstance(case, dict) else None
    return (isinstance(behavior, str) and behavior.startswith(_PLACEHOLDER_HEAD)
            and behavior.endswith(_PLACEHOLDER_TAIL))

"""The one exception type evalconv lets escape, always with a message fit for a person."""
from __future__ import annotations

from typing import Any

_LINE_BREAKERS = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", 0x85: "\\x85",
                  0x2028: "\\u2028", 0x2029: "\\u2029",
                  **{c: f"\\x{c:02x}" for c in range(0x20) if c not in (9, 10, 13)}, 0x7F: "\\x7f"}


def one_line(text: str) -> str:
    """Escape what would break a message over several lines (ids and keys can hold anything)."""
    return text.translate(_LINE_BREAKERS)


class EvalconvError(Exception):
    """Base of every error evalconv raises on purpose."""

    exit_code = 2

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.field = field
        super().__init__(self.render())

    def render(self) -> str:
        """One line: `file:line: field: message`, leaving out what is unknown."""
        where = self.source or ""
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        parts = [p for p in (where, self.field) if p]
        return one_line(": ".join(parts + [self.message]))


class ReadError(EvalconvError):
    """The input cannot be read at all (exit 2)."""


class UsageError(EvalconvError):
    """The call's words are off: unknown format, output equal to input, ... (exit 2)."""


class WriteError(EvalconvError):
    """A value the target format cannot hold and must not silently change."""


class RowRefused(WriteError):
    """One row the target cannot hold (Inspect: an empty input). A writer raises it before it
    writes, notes or keeps anything of the row, so a conversion can reject that row alone (the
    `refused-by-target` finding, the rejected file with --keep-going) and write the rest."""

    def __init__(self, row_id: str, reason: str, *, field: str | None = None) -> None:
        self.row_id = row_id
        self.reason = reason
        super().__init__(f"row '{row_id}': {reason}", field=field)


class RowError(ValueError):
    """A record that cannot become a row: why, the `$.path` of the field at fault, and as much
    of the row as names it (`{"id": ...}`) when that is known. Every reader raises this one type
    while building a row and turns it into the record's `parse` finding (`SourceRow.failed`); it
    never leaves the reader, so one bad record never stops the file."""

    def __init__(self, message: str, path: str = "$", partial: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.partial = partial

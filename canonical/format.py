"""What every format module provides. A format is one module and one registry entry.

A reader turns decoded lines into `SourceRow`s and notes what it inferred in the read
report; a writer takes valid `Row`s one at a time and notes every loss in the loss report.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Protocol, TextIO

from .row import Row
from .source import Lines, SourceRow

if TYPE_CHECKING:  # the reports live in evalconv.reports; formats only call their methods
    from evalconv.reports import LossReport, ReadReport


@dataclass(frozen=True, slots=True)
class FieldLoss:
    """One line of a writer's declared field map: where a canonical field goes, and why."""

    path: str            # canonical path, e.g. `$.metadata.case.rubric`
    fate: str            # "native", "carried" or "dropped"
    where: str           # where it lands in the target (or "-")
    reason: str


class RowWriter(Protocol):
    """`write` each row, then `close`. A writer may also define `committed()`, called once the
    output is in place (never when the conversion writes nothing), for files that point at it."""

    def write(self, row: Row) -> None: ...
    def close(self) -> None: ...


class Format:
    """Base class; a format overrides `read` and/or `open_writer`."""

    name: str = ""
    title: str = ""
    extensions: tuple[str, ...] = ()
    streaming_read: bool = False
    streaming_write: bool = False
    lossless: bool = False
    field_map: tuple[FieldLoss, ...] = ()
    # A binary format reads `lines.binary()` (a seekable byte stream) and writes bytes to
    # `out.buffer`; a folder format reads and writes a folder (`lines.path`, `out.folder`).
    binary: bool = False
    folder: bool = False
    # The suffix of the files (or folders) this format writes; by default its first extension.
    output_extension: str | None = None

    @property
    def can_read(self) -> bool:
        return type(self).read is not Format.read

    @property
    def can_write(self) -> bool:
        return type(self).open_writer is not Format.open_writer

    def detect(self, head: str) -> bool:
        """Does this text (the start of a file) look like this format? Only asked when neither
        `--from` nor the extension decides."""
        return False

    def matches_path(self, path: str) -> bool:
        """Does this path's name say this format? Vendors whose extension is shared with a
        canonical format claim files by a longer suffix (`.promptfoo.yaml`)."""
        return path.lower().endswith(self.extensions) if self.extensions else False

    def read(self, lines: Lines, report: "ReadReport") -> Iterator[SourceRow]:
        raise NotImplementedError

    def open_writer(self, out: TextIO, report: "LossReport", options: dict[str, Any]) -> RowWriter:
        raise NotImplementedError

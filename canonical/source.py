"""What readers hand the validator, and the line source every text reader is built on."""
from __future__ import annotations

import codecs
import io
from dataclasses import dataclass
from typing import IO, Any, Iterable, Iterator, TypeVar

from .errors import ReadError, RowError, WriteError
from .findings import Finding
from .options import ReadOptions

Told = TypeVar("Told", bound=ReadOptions)

# Ten times the longest text seen in real golden sets, and a bound on a hostile file: a line of
# a text file, a CSV or Parquet cell. Readers refuse more, writers never write more.
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_CELL_BYTES = MAX_LINE_BYTES
# A file read in one piece (a YAML config, a file a set names): parsed whole, so bounded whole.
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024


def too_long_to_read_back(text: str, limit: int = MAX_LINE_BYTES) -> int | None:
    """The UTF-8 size of `text` when it is over `limit` bytes, else None (one len() in the
    common case: a character is at most four bytes)."""
    if len(text) <= limit // 4:
        return None
    size = len(text.encode("utf-8"))
    return size if size > limit else None


def unreadable_write(row_id: str, what: str, size: int, limit: int = MAX_LINE_BYTES) -> WriteError:
    """A writer's refusal of a row whose text evalconv could not read back."""
    return WriteError(f"row '{row_id}' cannot be written: its {what} would be {size / (1 << 20):,.0f} MiB, more "
                      f"than the {limit >> 20} MiB evalconv reads back")


@dataclass(slots=True)
class SourceRow:
    """One row as read, before validation.

    `problems` holds parse findings that kept the reader from building the value; such a row
    is invalid whatever `value` holds. `plain_json` says the value came from strict JSON text
    or CSV text, so the validator need not look for what JSON cannot hold (dates, bytes, NaN).
    """

    value: Any
    line: int | None = None
    record: int | None = None
    problems: list[Finding] | None = None
    plain_json: bool = False

    @classmethod
    def failed(cls, err: RowError, line: int | None, record: int | None = None, *,
               partial: Any = None, prefix: str = "") -> "SourceRow":
        """What a record that raised `err` reads as: the part of it that names it (`partial`,
        else the error's), and one parse finding at the error's path."""
        value = partial if partial is not None else err.partial
        return cls(value, line, record, parse_problem(prefix + err.message, err.path))


def parse_problem(message: str, path: str = "$") -> list[Finding]:
    return [Finding("parse", message, path)]


_ASCII_COMPATIBLE = {"utf-8", "utf_8", "utf8", "utf-8-sig", "ascii", "latin-1", "latin_1",
                     "iso8859-1", "iso-8859-1", "cp1252", "windows-1252", "iso-8859-15"}


class Lines:
    """Decoded lines of a byte stream, with their 1-based numbers, line ends kept.

    Decoding line by line lets a bad byte or a NUL be reported with its line number.
    """

    def __init__(self, stream: IO[bytes], *, source: str, encoding: str | None = None,
                 path: str | None = None, at_start: bool = True) -> None:
        self.source = source
        self._at_start = at_start  # False for a slice from the middle of a file: no BOM there
        self.path = path  # the file's path on disk, for formats that refer to sibling files
        self.encoding = (encoding or "utf-8").lower()
        try:
            codecs.lookup(self.encoding)
        except LookupError:
            raise ReadError(f"unknown encoding '{encoding}'", source=source) from None
        self._stream = stream
        self.number = 0
        self.options = ReadOptions()  # what the user told the reader: its format's `read_options`

    def told(self, kind: type[Told]) -> Told:
        """The reader's options as its format declares them (`kind`); the defaults when the lines
        come from elsewhere (a file a set names, a slice of a file)."""
        return self.options if isinstance(self.options, kind) else kind()

    def __iter__(self) -> Iterator[str]:
        for raw, text in self._checked():
            yield text if text is not None else self.decode(raw)

    def utf8(self) -> Iterator[bytes]:
        """The same lines as UTF-8 bytes, for byte-level parsers. In UTF-8 files they are the raw
        bytes, not yet checked: a parser that fails on one calls `decode` to learn why."""
        for raw, text in self._checked():
            yield raw if text is None else text.encode("utf-8")

    def decode(self, raw: bytes) -> str:
        """A raw line of a UTF-8 file as text, or the ReadError that names the bad byte."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ReadError(f"invalid {self.encoding} at byte {err.start + 1} of the line "
                            f"(try --encoding, e.g. --encoding cp1252)",
                            source=self.source, line=self.number) from None

    def _checked(self) -> Iterator[tuple[bytes, str | None]]:
        """(raw line, decoded text or None when the raw bytes are valid UTF-8 already)."""
        if self.encoding.replace("_", "-") not in _ASCII_COMPATIBLE:
            for line in self._wide():
                yield b"", line
            return
        utf8 = self.encoding.replace("_", "-") in ("utf-8", "utf8", "utf-8-sig")
        first = self._at_start
        while raw := self._stream.readline(MAX_LINE_BYTES + 1):
            self.number += 1
            if len(raw) > MAX_LINE_BYTES:
                raise ReadError(f"line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB",
                                source=self.source, line=self.number)
            if first:
                first = False
                if raw.startswith(codecs.BOM_UTF8) and self.encoding.startswith("utf"):
                    raw = raw[3:]
                    if not raw:  # a file that holds only a BOM holds nothing
                        break
            if b"\x00" in raw:
                raise ReadError("NUL byte in the file (is it a binary file or UTF-16 text? try --encoding)",
                                source=self.source, line=self.number)
            if utf8:  # decoded (and so checked) by whoever takes the line
                yield raw, None
                continue
            try:
                text = raw.decode(self.encoding)
            except UnicodeDecodeError as err:
                raise ReadError(f"invalid {self.encoding} at byte {err.start + 1} of the line "
                                f"(try --encoding, e.g. --encoding cp1252)",
                                source=self.source, line=self.number) from None
            yield b"", text

    def binary(self) -> IO[bytes]:
        """The undecoded byte stream, seekable, for binary formats (Parquet). Standard input
        is spooled to a temporary file first: such formats read their footer before their rows."""
        stream = self._stream
        if not (getattr(stream, "seekable", None) and stream.seekable()):
            import tempfile
            spool = tempfile.TemporaryFile()
            while chunk := stream.read(1 << 20):
                spool.write(chunk)
            spool.seek(0)
            self._stream = stream = spool
        return stream

    def text(self, lines: Iterable[str] | None = None) -> str:
        """The whole document (or the rest of it, `lines` taken from this source), for formats
        that must be read in one piece: refused past MAX_DOCUMENT_BYTES, before it is all held."""
        parts: list[str] = []
        size = 0  # characters: at least a byte each
        for line in self if lines is None else lines:
            size += len(line)
            if size > MAX_DOCUMENT_BYTES:
                raise ReadError(f"the file is larger than {MAX_DOCUMENT_BYTES >> 20} MiB, the limit of a file "
                                f"read in one piece (a YAML config, a JSON document)", source=self.source,
                                line=self.number)
            parts.append(line)
        return "".join(parts)

    def _wide(self) -> Iterator[str]:
        text = io.TextIOWrapper(self._stream, encoding=self.encoding, newline="")
        try:
            for line in text:
                self.number += 1
                if line.startswith("\ufeff") and self.number == 1:
                    line = line[1:]
                if "\x00" in line:
                    raise ReadError("NUL character in the file", source=self.source, line=self.number)
                yield line
        except UnicodeDecodeError as err:
            raise ReadError(f"invalid {self.encoding}: {err.reason}", source=self.source,
                            line=self.number + 1) from None
        finally:
            text.detach()

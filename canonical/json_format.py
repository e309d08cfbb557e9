"""Canonical JSON (an array of rows, read whole) and JSONL (a row a line, streamed)."""
from __future__ import annotations

from typing import Any, Iterable, Iterator, TextIO

from . import jsonvalue
from .errors import ReadError
from .format import Format, LineWriter, WriteOptions
from .head import record_keys
from .reporting import LossReporter, ReadReporter
from .row import Row
from .source import Lines, SourceRow, parse_problem, too_long_to_read_back, unreadable_write

_WHITESPACE = " \t\r\n"
ROW_KEYS = frozenset({"id", "input", "expected", "metadata"})
# JSON whose first record has keys a row has not: still read as rows (the fallback, whose
# findings name what is wrong), but any format that knows those keys is more sure.
OTHER_SHAPE = 0.25


def _kind(value: Any) -> str:
    kinds: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}
    return kinds.get(type(value), "a scalar")


def _confidence(head: str, opener: str) -> float:
    if not head.lstrip("\ufeff" + _WHITESPACE).startswith(opener):
        return 0.0
    keys = record_keys(head)
    return 1.0 if keys is None or keys.top <= ROW_KEYS else OTHER_SHAPE


class CanonicalJSONL(Format):
    name = "jsonl"
    write_shape = "line-per-row"
    title = "Canonical JSONL (a row a line)"
    extensions = (".jsonl", ".ndjson")
    streaming_read = True
    streaming_write = True
    lossless = True
    fallback = True

    def detect(self, head: str) -> float:
        return _confidence(head, "{")

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        for text in lines.utf8():
            if text.isspace():
                continue
            try:
                value = jsonvalue.loads(text)
            except (jsonvalue.JSONValueError, UnicodeDecodeError) as err:
                lines.decode(text)  # invalid UTF-8 makes the file unreadable, naming the line
                message = str(err).replace(" line 1 column", " column")
                yield SourceRow(None, lines.number, problems=parse_problem(f"line is not valid JSON: {message}"))
                continue
            if not isinstance(value, dict):  # kept, so the error ledger shows what was there
                yield SourceRow(value, lines.number,
                                problems=parse_problem(f"each line must be a JSON object (a row), got {_kind(value)}"))
                continue
            yield SourceRow(value, lines.number, plain_json=True)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> "JSONLWriter":
        return JSONLWriter(out)


class JSONLWriter(LineWriter):
    """One row a line, as JSON."""

    per_row = False  # nothing to note, nothing kept

    def encode(self, row: Row) -> tuple[str, None]:
        line = jsonvalue.dumps(row.to_json()) + "\n"
        size = too_long_to_read_back(line)
        if size is not None:
            raise unreadable_write(row.id, "JSONL line", size)
        return line, None


class CanonicalJSON(Format):
    name = "json"
    title = "Canonical JSON (an array of rows)"
    extensions = (".json",)
    streaming_read = True  # a sliding window over the text, a row at a time
    streaming_write = True
    lossless = True
    fallback = True

    def detect(self, head: str) -> float:
        return _confidence(head, "[")

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return iter_array(lines, lines.source)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> "JSONWriter":
        return JSONWriter(out)


_REFILL_CHARS = 1 << 20        # read about this much more text when the window runs dry
_MAX_ROW_CHARS = 64 << 20      # a row (or the junk after one) may not grow the window past this


class _Window:
    """A sliding window over the file's text: parsed text is dropped, so a JSON array of any
    size is read in bounded memory, a row at a time."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = iter(lines)
        self.text = ""
        self.eof = False

    def refill(self) -> bool:
        if self.eof:
            return False
        parts, size = [], 0
        for line in self._lines:
            parts.append(line)
            size += len(line)
            if size >= _REFILL_CHARS:
                break
        else:
            self.eof = True
        self.text += "".join(parts)
        return bool(parts)

    def skip(self, pos: int) -> int:
        """The first position at or after `pos` that is not whitespace (refilling as needed)."""
        while True:
            n = len(self.text)
            while pos < n and self.text[pos] in _WHITESPACE:
                pos += 1
            if pos < n or not self.refill():
                return pos

    def drop(self, pos: int) -> None:
        """Forget the text before `pos`."""
        self.text = self.text[pos:]

    def decode(self, pos: int) -> tuple[Any, int]:
        while True:
            try:
                return jsonvalue.raw_decode(self.text, pos)
            except jsonvalue.JSONValueError:
                if len(self.text) - pos > _MAX_ROW_CHARS or not self.refill():
                    raise


def iter_array(lines: Iterable[str], source: str) -> Iterator[SourceRow]:
    """Yield each element of a top-level JSON array with the line it starts on."""
    window = _Window(lines)
    pos, line = window.skip(0), 1
    if pos >= len(window.text):
        raise ReadError("the file is empty; a JSON set is an array of rows: []", source=source)
    if window.text[pos] != "[":
        first = window.text[pos]
        found = "an object" if first == "{" else "something else"
        hint = " (a row per line is JSONL: name it .jsonl or use --from jsonl)" if first == "{" else ""
        raise ReadError(f"expected a JSON array of rows, found {found}{hint}", source=source,
                        line=1 + window.text.count("\n", 0, pos))
    pos = window.skip(pos + 1)
    if window.text.startswith("]", pos):
        yield from _after_array(window, pos + 1, line + window.text.count("\n", 0, pos), source)
        return
    last = 0
    while True:
        if last > _REFILL_CHARS:  # keep the window small: drop what has been read
            window.drop(last)    # `line` is the line at `last`, so it stays right
            pos, last = pos - last, 0
        line += window.text.count("\n", last, pos)
        last = pos
        try:
            value, end = window.decode(pos)
        except jsonvalue.JSONValueError as err:
            raise ReadError(_where(window, err, pos, line), source=source, line=line) from None
        if isinstance(value, dict):
            yield SourceRow(value, line, plain_json=True)
        else:
            yield SourceRow(value, line, problems=parse_problem(f"each element must be a JSON object (a row), got {_kind(value)}"))
        pos = window.skip(end)
        if window.text.startswith(",", pos):
            pos = window.skip(pos + 1)
            continue
        if window.text.startswith("]", pos):
            yield from _after_array(window, pos + 1, line + window.text.count("\n", last, pos), source)
            return
        line += window.text.count("\n", last, pos)
        what = "the file ends" if pos >= len(window.text) else f"found {window.text[pos]!r}"
        raise ReadError(f"the array is not closed: expected ',' or ']' but {what} (truncated file?)",
                        source=source, line=line)


def _where(window: _Window, err: jsonvalue.JSONValueError, pos: int, line: int) -> str:
    """The message for a row that does not parse, with the file's own line and column."""
    if err.pos is None:
        return f"invalid JSON in the array: {err}"
    text = window.text
    at_line = line + text.count("\n", pos, err.pos)
    column = err.pos - text.rfind("\n", 0, err.pos)
    ends = window.skip(err.pos) >= len(window.text)
    hint = " (the file ends inside this row: truncated?)" if ends else ""
    joint = " line" if err.detail.endswith(" at") else " at line"  # "Unterminated string starting at"
    return f"invalid JSON in the array: {err.detail}{joint} {at_line} column {column}{hint}"


def _after_array(window: _Window, pos: int, line: int, source: str) -> Iterator[SourceRow]:
    end = window.skip(pos)
    if end < len(window.text):
        raise ReadError("unexpected text after the closing ']'", source=source,
                        line=line + window.text.count("\n", pos, end))
    return iter(())


class JSONWriter:
    """Streams `[`, one indented row after another, `]`."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._count = 0

    def write(self, row: Row) -> None:
        body = jsonvalue.dumps(row.to_json(), indent=True).replace("\n", "\n  ")
        if len(body) > _MAX_ROW_CHARS:  # the reader's window holds a row of at most this many characters
            raise unreadable_write(row.id, "JSON text", len(body), _MAX_ROW_CHARS)
        self._out.write(("[\n  " if self._count == 0 else ",\n  ") + body)
        self._count += 1

    def close(self) -> None:
        self._out.write("\n]\n" if self._count else "[]\n")


JSONL_FORMAT = CanonicalJSONL()
JSON_FORMAT = CanonicalJSON()

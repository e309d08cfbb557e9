"""Canonical JSON (an array of rows, read whole) and JSONL (a row a line, streamed)."""
from __future__ import annotations

from typing import Any, Iterator, TextIO

from . import jsonvalue
from .errors import ReadError
from .format import Format
from .row import Row
from .source import Lines, SourceRow, parse_problem

_WHITESPACE = " \t\r\n"


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string"}.get(type(value), "a scalar")


class CanonicalJSONL(Format):
    name = "jsonl"
    title = "Canonical JSONL (a row a line)"
    extensions = (".jsonl", ".ndjson")
    streaming_read = True
    streaming_write = True
    lossless = True

    def detect(self, head: str) -> bool:
        return head.lstrip("\ufeff" + _WHITESPACE).startswith("{")

    def read(self, lines: Lines, report: Any) -> Iterator[SourceRow]:
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

    def open_writer(self, out: TextIO, report: Any, options: dict[str, Any]) -> "JSONLWriter":
        return JSONLWriter(out)


class JSONLWriter:
    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, row: Row) -> None:
        self._out.write(jsonvalue.dumps(row.to_json()) + "\n")

    def close(self) -> None:
        pass


class CanonicalJSON(Format):
    name = "json"
    title = "Canonical JSON (an array of rows)"
    extensions = (".json",)
    streaming_write = True
    lossless = True

    def detect(self, head: str) -> bool:
        return head.lstrip("\ufeff" + _WHITESPACE).startswith("[")

    def read(self, lines: Lines, report: Any) -> Iterator[SourceRow]:
        return iter_array(lines.text(), lines.source)

    def open_writer(self, out: TextIO, report: Any, options: dict[str, Any]) -> "JSONWriter":
        return JSONWriter(out)


def iter_array(text: str, source: str) -> Iterator[SourceRow]:
    """Yield each element of a top-level JSON array with the line it starts on."""
    pos, line = _skip(text, 0), 1
    if pos == len(text):
        raise ReadError("the file is empty; a JSON set is an array of rows: []", source=source)
    if text[pos] != "[":
        found = "an object" if text[pos] == "{" else "something else"
        hint = " (a row per line is JSONL: name it .jsonl or use --from jsonl)" if text[pos] == "{" else ""
        raise ReadError(f"expected a JSON array of rows, found {found}{hint}", source=source,
                        line=1 + text.count("\n", 0, pos))
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        return _after_array(text, pos + 1, source)
    last = 0
    while True:
        line += text.count("\n", last, pos)
        last = pos
        try:
            value, end = jsonvalue.raw_decode(text, pos)
        except jsonvalue.JSONValueError as err:
            ends = err.pos is not None and _skip(text, err.pos) >= len(text)
            hint = " (the file ends inside this row: truncated?)" if ends else ""
            raise ReadError(f"invalid JSON in the array: {err}{hint}", source=source, line=line) from None
        if isinstance(value, dict):
            yield SourceRow(value, line, plain_json=True)
        else:
            yield SourceRow(value, line, problems=parse_problem(f"each element must be a JSON object (a row), got {_kind(value)}"))
        pos = _skip(text, end)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
            continue
        if text.startswith("]", pos):
            yield from _after_array(text, pos + 1, source)
            return
        line += text.count("\n", last, pos)
        what = "the file ends" if pos >= len(text) else f"found {text[pos]!r}"
        raise ReadError(f"the array is not closed: expected ',' or ']' but {what} (truncated file?)",
                        source=source, line=line)


def _after_array(text: str, pos: int, source: str) -> Iterator[SourceRow]:
    pos = _skip(text, pos)
    if pos != len(text):
        raise ReadError("unexpected text after the closing ']'", source=source, line=1 + text.count("\n", 0, pos))
    return iter(())


def _skip(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos] in _WHITESPACE:
        pos += 1
    return pos


class JSONWriter:
    """Streams `[`, one indented row after another, `]`."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._count = 0

    def write(self, row: Row) -> None:
        body = jsonvalue.dumps(row.to_json(), indent=True).replace("\n", "\n  ")
        self._out.write(("[\n  " if self._count == 0 else ",\n  ") + body)
        self._count += 1

    def close(self) -> None:
        self._out.write("\n]\n" if self._count else "[]\n")


JSONL_FORMAT = CanonicalJSONL()
JSON_FORMAT = CanonicalJSON()

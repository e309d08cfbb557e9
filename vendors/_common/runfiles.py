"""What the run-output readers share: streaming a harness's JSON and JSONL files, and the
error-ledger entry for a record that cannot be read."""
from __future__ import annotations

import json
from typing import Any, Iterator

import ijson
from evalconv.canonical.errors import ReadError
from evalconv.canonical.runs import Record as Record, ledger_entry  # Record: what a reader yields


def where(path: str, *, line: int | None = None, entry: int | None = None) -> dict[str, Any]:
    return {"file": path, "line": line, "entry": entry}


def jsonl(path: str) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, value, problem) for each non-blank line; a line that is not JSON comes with
    its problem and no value, so the caller can put it in the ledger and go on."""
    try:
        stream = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise ReadError("no such file", source=path) from None
    with stream:
        try:
            for number, text in enumerate(stream, 1):
                if not text.strip():
                    continue
                try:
                    yield number, json.loads(text), None
                except ValueError as err:
                    yield number, None, f"not JSON: {err}"
        except UnicodeDecodeError as err:
            raise ReadError(f"not UTF-8 text ({err.reason} at byte {err.start})", source=path) from None


def items(path: str, prefix: str) -> Iterator[Any]:
    """Each item under `prefix` (ijson syntax: `results.results.item`) of one JSON document, streamed."""
    try:
        with open(path, "rb") as stream:
            yield from ijson.items(stream, prefix, use_float=True)
    except FileNotFoundError:
        raise ReadError("no such file", source=path) from None
    except ijson.JSONError as err:  # yajl's message draws an arrow over several lines: keep the first
        detail = str(err).strip().splitlines()[0] if str(err).strip() else "cut short"
        raise ReadError(f"not valid JSON ({detail}); the file may be cut short", source=path) from None
    except UnicodeDecodeError as err:
        raise ReadError(f"not UTF-8 text ({err.reason} at byte {err.start})", source=path) from None


def first_value(path: str, prefix: str) -> Any:
    """The first value at `prefix`, or None (streams, stops at the first match)."""
    return next(items(path, prefix), None)


def unreadable(path: str, reason: str, *, line: int | None = None, entry: int | None = None) -> Record:
    return "ledger", ledger_entry("unreadable", reason, source=where(path, line=line, entry=entry))


def number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_head_text(path: str, size: int = 4096) -> str:
    with open(path, "rb") as stream:
        return stream.read(size).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")

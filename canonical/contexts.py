"""A contexts manifest (`validate --contexts MANIFEST`): the sources and snapshots a run can use.

JSONL, one source version a line (`{"source": "kb/refunds", "snapshot": "2024-05-01"}`), or CSV
with a header naming `source` and `snapshot` (`version` is taken for `snapshot` in either).
Other keys or columns are allowed and ignored (a title, a URL). A source listed at several
versions takes a line each. The manifest is small and held in memory.
"""
from __future__ import annotations

import csv
import io
from typing import Any, Iterator

from . import jsonvalue
from .errors import ReadError
from .evidence import ContextIndex

SNAPSHOT_KEYS = ("snapshot", "version")
MAX_MANIFEST_BYTES = 256 << 20


def load_contexts(path: str) -> ContextIndex:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_MANIFEST_BYTES + 1)
    except OSError as err:
        raise ReadError(f"cannot read the contexts manifest: {err.strerror}", source=path) from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise ReadError(f"the contexts manifest is larger than {MAX_MANIFEST_BYTES >> 20} MiB", source=path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ReadError(f"the contexts manifest is not UTF-8 (byte {err.start})", source=path) from None
    first = text.lstrip()[:1]
    entries = list(_jsonl(text, path) if first == "{" else _csv(text, path))
    return ContextIndex(entries, label=f"the contexts manifest {path}")


def _entry(record: dict[str, Any], path: str, line: int) -> tuple[str, str]:
    source = record.get("source")
    snapshot = next((record[k] for k in SNAPSHOT_KEYS if k in record and record[k] not in (None, "")), None)
    if not isinstance(source, str) or not source:
        raise ReadError("a manifest entry needs a non-empty source", source=path, line=line, field="source")
    if not isinstance(snapshot, str):
        raise ReadError(f"the entry for '{source}' needs its snapshot (a string: the version of the source)",
                        source=path, line=line, field="snapshot")
    return source, snapshot


def _jsonl(text: str, path: str) -> Iterator[tuple[str, str]]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = jsonvalue.loads(line)
        except ValueError as err:
            raise ReadError(f"not a JSON line: {err}", source=path, line=number) from None
        if not isinstance(record, dict):
            raise ReadError("each line must be an object {\"source\": ..., \"snapshot\": ...}", source=path, line=number)
        yield _entry(record, path, number)


def _csv(text: str, path: str) -> Iterator[tuple[str, str]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        return
    names = [h.strip() for h in header]
    if "source" not in names or not any(k in names for k in SNAPSHOT_KEYS):
        raise ReadError("a CSV contexts manifest needs the columns source and snapshot (or version)",
                        source=path, line=1)
    for cells in reader:
        if not any(c.strip() for c in cells):
            continue
        yield _entry(dict(zip(names, cells)), path, reader.line_num)

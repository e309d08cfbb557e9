"""LangSmith's UI CSV download: `input_<key>` / `output_<key>` columns, one example a record.

The shape is inferred from public evidence, not documented by LangSmith. Cells are read as
text (a cell that looks like JSON stays a string: declared, never guessed); an empty cell
means the key is absent. The file has no ids, metadata or splits.
"""
from __future__ import annotations

import csv
import itertools
from typing import Any, Iterator

from evalconv.canonical.errors import ReadError
from evalconv.canonical.head import header_cells
from evalconv.canonical.source import MAX_LINE_BYTES, Lines, SourceRow, parse_problem
from evalconv.canonical.reporting import ReadReporter

from .._common import records as rec

csv.field_size_limit(MAX_LINE_BYTES)

INPUT_PREFIX, OUTPUT_PREFIX = "input_", "output_"


def is_langsmith_csv(head: str) -> bool:
    header = header_cells(head)
    if header is None:  # a stray CR, say: not a header this reader can take
        return False
    return (any(c.startswith(INPUT_PREFIX) for c in header)
            and all(c.startswith((INPUT_PREFIX, OUTPUT_PREFIX)) for c in header))


def read_csv(first: str, rest: Iterator[str], lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
    reader = csv.reader(itertools.chain([first.lstrip("\ufeff")], rest), strict=True)
    start = lines.number
    try:
        header = next(reader)
        columns = _columns(header, lines.source, start)
        start = lines.number + 1
        for index, cells in enumerate((c for c in reader if c), 1):
            yield _row(cells, columns, index, start, report)
            start = lines.number + 1
    except csv.Error as err:
        raise ReadError(f"malformed CSV ({err})", source=lines.source, line=start) from None


def _columns(header: list[str], source: str, line: int) -> list[tuple[str, str]]:
    """(input|expected|other, key) per column."""
    if not any(c.startswith(INPUT_PREFIX) for c in header):
        raise ReadError("not a LangSmith CSV download: no input_<key> column", source=source, line=line)
    if len(set(header)) != len(header):
        raise ReadError("a column appears twice in the header", source=source, line=line)
    out = []
    for name in header:
        if name.startswith(INPUT_PREFIX):
            out.append(("input", name[len(INPUT_PREFIX):]))
        elif name.startswith(OUTPUT_PREFIX):
            out.append(("expected", name[len(OUTPUT_PREFIX):]))
        else:
            out.append(("other", name))
    return out


def _row(cells: list[str], columns: list[tuple[str, str]], index: int, line: int, report: ReadReporter) -> SourceRow:
    row_id = rec.generated_id("langsmith", index)
    if len(cells) != len(columns):
        return SourceRow({"id": row_id}, line, index,
                         parse_problem(f"record has {len(cells)} cells but the header has {len(columns)}"))
    parts: dict[str, dict[str, str]] = {"input": {}, "expected": {}}
    for (kind, key), cell in zip(columns, cells):
        if cell == "":
            continue
        if kind == "other":
            report.ignore(f"$.{key}", row_id, "only input_* and output_* columns are example fields")
        else:
            parts[kind][key] = cell
    report.infer("$.id", row_id, "the CSV has no ids; numbered by record")
    report.infer("$.input", row_id, "from the input_<key> columns, read as text; empty cells are absent keys")
    has_expected = bool(parts["expected"])
    value: dict[str, Any] = {"id": row_id, "input": parts["input"]}
    if has_expected:
        value["expected"] = parts["expected"]
        report.infer("$.expected", row_id, "from the output_<key> columns, read as text")
    case = rec.imported_case(row_id, parts["expected"], has_expected, report, "LangSmith")
    value["metadata"] = {"case": case}
    return SourceRow(value, line, index)

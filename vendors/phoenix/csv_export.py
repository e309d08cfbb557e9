"""Canonical rows -> Phoenix's CSV export layout: `example_id`, then one column per key of the
example's input, output and metadata (`input_<key>`, `output_<key>`, `metadata_<key>`), as the
server's `_get_content_csv` writes them and `read._from_cells` reads them back.

A cell is text. A text value is written as it is, a list or an object as its Python literal (what
pandas writes, and what the reader parses back). A value a cell cannot give back (a number, true,
false or null, which read back as text; an empty text, which reads as absent; a text that parses
as a literal) is written as JSON text, and the value itself is carried in the envelope
(metadata_evalconv, `cells`), which the reader puts back while the cell still holds that text.

The columns are known only at the end, so the lines wait in a `Spool` (memory, then a temporary
file) and go out under the header at `close`; the header is `example_id` and the other columns
in name order within input, output, metadata, so that it does not depend on which process saw a
column first. On two cores the parent is handed each line a worker encoded (`put`).
"""
from __future__ import annotations

import ast
from typing import Any, TextIO

from evalconv.canonical import jsonvalue
from evalconv.canonical.cells import formula_looking, unguarded_formulas
from evalconv.canonical.csv_format import Spool, csv_line
from evalconv.canonical.errors import RowRefused
from evalconv.canonical.format import LineWriter as BaseLineWriter
from evalconv.canonical.paths import join
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.row import Row

from .._common import records as rec
from .fields import CSV_ID, CSV_PARTS, REASONS
from .write import NO_GRADER, build_example, check_row, note_carried, program_checks

CELLS = "cells"  # envelope key: part -> key -> the exact value of a cell that holds its JSON text
CSV_FORMULAS = unguarded_formulas("Phoenix", "the server's CSV upload")
_ORDER = {part: i for i, part in enumerate(CSV_PARTS)}
_SURELY_SHALLOW = 64  # brackets; Python's parser refuses nesting beyond 200


def cell_value(cell: str) -> Any:
    """What Phoenix's CSV cell reads as (the reader's rule): a list or an object from its Python
    literal, otherwise the text as it is."""
    text = cell.strip()
    if text[:1] in "[{":
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            return cell
        if isinstance(value, (dict, list)):
            return value
    return cell


def cell_text(value: Any) -> str:
    """The cell evalconv writes for `value`."""
    return _cell(value)[0]


def _cell(value: Any) -> tuple[str, bool]:
    """(the cell, does it read back as `value`?): a cell that would not is the value's JSON text."""
    if isinstance(value, str):
        if value and "\x00" not in value and (value.lstrip()[:1] not in ("[", "{") or cell_value(value) == value):
            return value, True
    elif isinstance(value, (dict, list)):
        text = repr(value)
        # The literal of JSON values parses back to them (floats' repr is exact, NaN is refused)
        # unless it nests deeper than Python's parser takes: with fewer brackets than that it
        # cannot, and parsing every cell to prove it would treble the writer's time.
        if text.count("[") + text.count("{") < _SURELY_SHALLOW or jsonvalue.same(cell_value(text), value):
            return text, True
    return jsonvalue.dumps(value), False


def refuse_nul(example: dict[str, Any], row_id: str) -> None:
    """A text file cannot hold a NUL character (a value's JSON text escapes it; a column name or
    the example id cannot)."""
    if "\x00" in example["id"] or any("\x00" in key for part in CSV_PARTS for key in example[part]):
        raise RowRefused(row_id, "Phoenix's CSV cannot hold a NUL character in the id or in a key (a column "
                                 "name); write JSONL (.phoenix.jsonl) instead", field="$")


def column_key(column: str) -> tuple[int, str]:
    if column == CSV_ID:
        return (-1, "")
    part = column.split("_", 1)[0]
    return (_ORDER[part], column)


def example_cells(example: dict[str, Any], report: LossReporter, row_id: str) -> dict[str, str]:
    """The example's cells by column; values a cell cannot give back carried in its envelope."""
    exact: dict[str, dict[str, Any]] = {}
    carried: list[tuple[str, str]] = []
    cells: dict[str, str] = {CSV_ID: example["id"]}
    for part, path in (("input", "$.input"), ("output", "$.expected"), ("metadata", "$.metadata")):
        for key, value in example[part].items():
            if part == "metadata" and key == rec.ENVELOPE:
                continue  # written last, once it holds the exact values
            text, exact_text = _cell(value)
            cells[f"{part}_{key}"] = text
            if not exact_text:
                exact.setdefault(part, {})[key] = value
                carried.append((_carried_path(part, path, key), REASONS["csv.text"]))
    envelope = dict(example["metadata"].get(rec.ENVELOPE) or {})
    if exact:
        envelope[CELLS] = exact
    if envelope:
        cells[f"metadata_{rec.ENVELOPE}"] = repr(envelope)
    if carried:
        report.carry_all(carried, row_id)
    return cells


def _carried_path(part: str, path: str, key: str) -> str:
    if part == "metadata":
        return join(path, key)
    return path  # input and output: the row's whole value (a wrapped text is the key "input" / "expected")


class ExampleCSVWriter(BaseLineWriter):
    """Writes Phoenix's CSV export layout; rows wait in a spool for the header (module doc)."""

    holding = True   # every line, from this process or a worker, goes through `put`
    started = False

    def __init__(self, out: TextIO, report: LossReporter) -> None:
        super().__init__(out)
        self._out, self._report = out, report
        self._columns: tuple[str, ...] = (CSV_ID,)
        self._known = {CSV_ID}
        self._spool = Spool()
        self._spool.new_run(self._columns)
        self._spooled: tuple[str, ...] = self._columns
        self._checked = self._unchecked = 0

    def encode(self, row: Row) -> tuple[str, tuple[bool, tuple[str, ...]]]:
        check_row(row)
        example = build_example(row, None)
        refuse_nul(example, row.id)  # before anything is noted
        note_carried(row, self._report)
        cells = example_cells(example, self._report, row.id)
        if not cells.keys() <= self._known:
            self._learn(cells)
        line = csv_line([cells.get(c, "") for c in self._columns])
        if formula_looking(list(cells.values())):
            self._report.notice_row(CSV_FORMULAS, row.id)
        return line, (program_checks(row), self._columns)

    def _learn(self, columns: Any) -> None:
        new = [c for c in columns if c not in self._known]
        if new:
            self._known.update(new)
            self._columns = tuple(sorted(self._known, key=column_key))

    def write(self, row: Row) -> None:
        text, kept = self.encode(row)
        self.put(text, kept)

    def put(self, text: str, kept: tuple[bool, tuple[str, ...]]) -> bool:
        """A line encoded under the columns in `kept`, into the spool (it is written at `close`)."""
        _, layout = kept
        self._learn(layout)
        if layout != self._spooled:
            self._spool.new_run(layout)
            self._spooled = layout
        self._spool.add(text)
        self.keep(kept)
        return True

    def keep(self, kept: tuple[bool, tuple[str, ...]]) -> None:
        if kept[0]:
            self._checked += 1
        else:
            self._unchecked += 1

    def close(self) -> None:
        self._out.write(csv_line(self._columns))
        self._spool.replay(self._out, self._columns)
        if self._checked or self._unchecked:
            self._report.notice(NO_GRADER.format(checked=self._checked, unchecked=self._unchecked))

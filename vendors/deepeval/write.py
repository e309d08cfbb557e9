"""The three DeepEval file variants save_as writes: a JSON array, JSONL and CSV.

CSV is read by DeepEval through pandas with its defaults, which changes text: NA-like cells
become None and a column whose cells all look like numbers becomes numbers. The CSV writer
predicts both and reports each affected value (the carrier in additional_metadata keeps it).
"""
from __future__ import annotations

import re
import tempfile
from typing import Any, TextIO

from evalconv.canonical import jsonvalue, paths
from evalconv.canonical.cells import formula_looking, unguarded_formulas
from evalconv.canonical.format import JSON_ARRAY_JOINS, LineWriter, first_row
from evalconv.canonical.row import Row
from evalconv.canonical.reporting import LossReporter

from .._common.records import CSVLines

from .fields import CSV_LIST_COLUMNS, CSV_TEXT_COLUMNS, GOLDEN_KEYS, field
from .golden import build_conversational, build_golden, is_conversation

# pandas' default NA strings (pandas._libs.parsers.STR_NA_VALUES, pandas 2.x and 3.x).
PANDAS_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                       "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)\Z", re.ASCII | re.IGNORECASE)
_INFINITY = re.compile(r"[+-]?inf(?:inity)?\Z", re.IGNORECASE)
_PANDAS_SPACE = " \t\n\r\v\f"
_JSON_COLUMNS = ("tools_called", "expected_tools", "additional_metadata", "expectations")


def pandas_kind(cell: str) -> str:
    """How pandas' C parser types one cell on its own: 'na', 'number', 'bool' or 'text'."""
    if cell in PANDAS_NA:
        return "na"
    if _NUMBER.match(cell.strip(_PANDAS_SPACE)) or _INFINITY.match(cell):
        return "number"
    if cell.lower() in ("true", "false"):
        return "bool"
    return "text"


class GoldenWriter(LineWriter):
    """Streams goldens in one of the variants (json, jsonl, csv). It writes a row as it decides
    (chat rows wait), so it has its own `write` and is a `HoldingWriter`."""

    def __init__(self, out: TextIO, report: LossReporter, variant: str) -> None:
        super().__init__(out)
        self._report, self._variant = report, variant
        self._count = 0
        self._csv = _CSVGoldens(out, report) if variant == "csv" else None
        self.joins = JSON_ARRAY_JOINS if variant == "json" else None
        # A DeepEval dataset is all single-turn or all conversational: chat rows wait in a spool
        # (flat memory) until a row that is not a conversation decides, or the set ends all chat.
        self._spool: Any = None if variant == "csv" else tempfile.SpooledTemporaryFile(1 << 20, "w+", encoding="utf-8")
        self._spooled = 0

    def write(self, row: Row) -> None:
        if self._spool is not None:
            if is_conversation(row):
                self._spool.write(jsonvalue.dumps(row.to_json()) + "\n")
                self._spooled += 1
                return
            self._replay(conversational=False)
        self._write_single(row)

    # Two cores: a worker writes every row as a single-turn golden, and keeps a chat row for the
    # parent's writer, which holds it while the set may be all chats (JSON and JSONL; a CSV holds
    # single-turn goldens only, and keeps how pandas will type each cell).
    def encode(self, row: Row) -> tuple[str, Any]:
        if self._csv is not None:  # CSV goldens are single-turn; the column types are kept
            text, kinds = self._csv.encode(row.id, build_golden(row, self._report))
            return text, (row.id, kinds)
        return self._single_text(row), row.to_json() if is_conversation(row) else None

    def put(self, text: str, kept: Any) -> bool:
        if kept is not None and self._spool is not None:
            self.write(Row.from_json(kept))  # held, as one core holds it
            return False
        if self._spool is not None:
            self._replay(conversational=False)
        self._put_text(text)
        return True

    def keep(self, kept: Any) -> None:
        """A single-turn golden the parent wrote as a worker wrote it."""
        if self._csv is not None:
            self._csv.keep(*kept)
        self._count += 1

    @property
    def holding(self) -> bool:
        return self._spool is not None

    @property
    def started(self) -> bool:
        return self._count > 0

    def _replay(self, conversational: bool) -> None:
        spool, self._spool = self._spool, None
        spool.seek(0)
        for line in spool:
            row = Row.from_json(jsonvalue.loads(line))
            if conversational:
                self._emit(build_conversational(row, self._report))
            else:
                self._write_single(row)
        spool.close()

    def _emit(self, golden: dict[str, Any]) -> None:
        self._put_text(self._text(golden))

    def _text(self, golden: dict[str, Any]) -> str:
        if self._variant == "jsonl":
            return jsonvalue.dumps(golden) + "\n"
        return JSON_ARRAY_JOINS[1] + jsonvalue.dumps(golden, indent=True).replace("\n", "\n  ")

    def _put_text(self, text: str) -> None:
        self._out.write(first_row(text, self.joins) if self._count == 0 else text)
        self._count += 1

    def _single_text(self, row: Row) -> str:
        golden = build_golden(row, self._report)
        if self._variant == "jsonl" and golden["expected_tools"] == []:
            self._report.carry("$.expected", row.id, field("expected.tools.none").reason)
        return self._text(golden)

    def _write_single(self, row: Row) -> None:
        if self._csv is not None:
            golden = build_golden(row, self._report)
            self._csv.write(row.id, golden)
            self._count += 1
        else:
            self._put_text(self._single_text(row))

    def close(self) -> None:
        if self._spool is not None:
            self._replay(conversational=self._spooled > 0)
        if self._csv is not None:
            self._csv.close()
        elif self._variant == "json":
            self._out.write("\n]\n" if self._count else "[]\n")


_COLUMN_PATHS = {c: CSV_TEXT_COLUMNS.get(c) or CSV_LIST_COLUMNS[c] for c in (*CSV_TEXT_COLUMNS, *CSV_LIST_COLUMNS)}


def _has_nul(value: Any) -> bool:
    return any("\x00" in item for item in value) if isinstance(value, list) else "\x00" in value


def csv_cell(key: str, value: Any) -> str:
    """The CSV cell save_as writes for a golden field (a NUL-holding text becomes JSON text)."""
    if value is None:
        return ""
    if key in _JSON_COLUMNS or key == "custom_column_key_values":
        return jsonvalue.dumps(value) if value else ""
    if key in ("token_cost", "input_token_count", "output_token_count") or _has_nul(value):
        return jsonvalue.dumps(value)
    return "|".join(value) if key in CSV_LIST_COLUMNS else value


CSV_FORMULAS = unguarded_formulas("DeepEval", "pandas.read_csv, in EvaluationDataset.add_goldens_from_csv_file")


class _CSVGoldens:
    """save_as's CSV: all 16 columns, None as an empty cell, lists joined with '|', JSON cells."""

    def __init__(self, out: TextIO, report: LossReporter) -> None:
        self._out = out
        self._lines = CSVLines(lineterminator="\r\n")
        out.write(self._lines.line(GOLDEN_KEYS))
        self._report = report
        self._seen: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
        # column -> ids and paths of its number-like (or bool-like) cells, while every other
        # non-NA cell of the column is one too; None once a text cell rules the column out.
        self._typed: dict[str, dict[str, list[tuple[str, str]]] | None] = {
            c: {"number": [], "bool": []} for c in (*CSV_TEXT_COLUMNS, *CSV_LIST_COLUMNS)}

    def write(self, row_id: str, golden: dict[str, Any]) -> None:
        text, kinds = self.encode(row_id, golden)
        self._out.write(text)
        self.keep(row_id, kinds)

    def encode(self, row_id: str, golden: dict[str, Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
        """The golden's CSV line, and how pandas would type each of its cells that a column's
        type depends on: (column, kind), for `keep`."""
        kinds: list[tuple[str, str]] = []
        cells = [self._cell(row_id, key, golden[key], kinds) for key in GOLDEN_KEYS]
        text = self._lines.line(cells)
        if formula_looking(cells):
            self._report.notice_row(CSV_FORMULAS, row_id)
        found = tuple(kinds)
        if len(self._seen) >= 1000:
            self._seen.clear()
        return text, self._seen.setdefault(found, found)  # one object for the rows alike

    def keep(self, row_id: str, kinds: tuple[tuple[str, str], ...]) -> None:
        """Follow each column's type as pandas will read it, a row at a time."""
        for column, kind in kinds:
            typed = self._typed[column]
            if typed is None:
                continue
            if kind == "text":
                self._typed[column] = None
            else:
                typed[kind].append((row_id, _COLUMN_PATHS[column]))

    def _cell(self, row_id: str, key: str, value: Any, kinds: list[tuple[str, str]]) -> str:
        cell = csv_cell(key, value)
        path = CSV_TEXT_COLUMNS.get(key) or CSV_LIST_COLUMNS.get(key)
        if value is None or path is None:
            return cell
        if key in CSV_LIST_COLUMNS:
            for i, item in enumerate(value):
                if "|" in item:
                    self._carry(f"csv.pipe.{key}", row_id, paths.join(path, i))
        if _has_nul(value):
            self._carry(f"csv.nul.{key}", row_id, path)
        kind = self._check(key, row_id, path, cell)
        if kind is not None:
            kinds.append((key, kind))
        return cell

    def _check(self, column: str, row_id: str, path: str, cell: str) -> str | None:
        """Note a cell pandas reads as no value; else its kind, for the column's type."""
        kind = pandas_kind(cell)
        if kind == "na":
            self._carry(f"csv.na.{column}", row_id, path)
            if column == "input":
                text = (f"DeepEval's CSV loader will fail on this file: the input of row '{row_id}' is "
                        f"{cell!r}, which pandas reads as no value")
                self._report.notes.append(text)
                self._report.notice(text)
            return None
        return kind

    def close(self) -> None:
        for column, typed in self._typed.items():
            if typed is None or (typed["number"] and typed["bool"]):
                continue  # pandas keeps a column of mixed numbers and booleans as text
            cells = typed["number"] or typed["bool"]
            for row_id, path in cells:
                self._carry(f"csv.number.{column}", row_id, path)
            if cells:
                text = (f"DeepEval's CSV loader will fail on this file: every {column} cell looks like a "
                        f"{'number' if typed['number'] else 'boolean'}, so pandas reads the column as one")
                self._report.notes.append(text)
                self._report.notice(text)

    def _carry(self, key: str, row_id: str, path: str) -> None:
        self._report.carry(path, row_id, field(key).reason)

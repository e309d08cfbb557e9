"""Canonical CSV: a row a record, lossless, and still a sheet a person can write by hand.

The rules are in docs/csv-spec.md. In short: a plain-text column per field (an empty cell
is absent), list fields joined with `|` (escaped with `\\`), the user's metadata keys in
`metadata.<key>` columns; typed `:json` columns and the `case:json` / `metadata:json`
catch-alls only for values that are not plain non-empty text. Only the columns the rows use
are written.
"""
from __future__ import annotations

import codecs
import csv
import io
import itertools
import os
from dataclasses import dataclass
import re
import shlex
import tempfile
from typing import Any, Iterator, TextIO

from . import jsonvalue, paths
from .cells import FORMULA_CELLS, FORMULA_START, formula_looking, json_cell, merge_metadata_json, split_metadata
from .cells import shown as _shown
from .errors import ReadError, RowError, UsageError
from .format import Format, LineWriter, SpreadsheetOptions, WriteOptions
from .options import ReadOptions, option
from .reporting import LossReporter, ReadReporter
from .row import ABSENT, Row
from .schema import CASE_FIELD_KINDS, CASE_FIELDS, REQUIRED_CASE_FIELDS, row_schema
from .source import MAX_LINE_BYTES, Lines, SourceRow, parse_problem, too_long_to_read_back, unreadable_write
from .suggest import did_you_mean

csv.field_size_limit(MAX_LINE_BYTES)

CASE_JSON = "case:json"
METADATA_JSON = "metadata:json"
PLAIN_CASE_FIELDS = tuple(f for f in CASE_FIELDS if CASE_FIELD_KINDS[f] != "object")
# Fields whose cell holds JSON text (extensions, and version 2's contextRefs and permission) and
# fields whose cell holds a decimal integer (version 2's schemaVersion and targetTurn).
JSON_CASE_FIELDS = tuple(f for f in CASE_FIELDS if CASE_FIELD_KINDS[f] == "object")
INTEGER_CASE_FIELDS = frozenset(f for f in CASE_FIELDS if CASE_FIELD_KINDS[f] == "integer")
_INTEGER_CELL = re.compile(r"-?(?:0|[1-9][0-9]*)")
# Every fixed column, in the order the writer puts them; the user's `metadata.<key>` columns go
# between `case:json` and `metadata:json`, in the order their keys first appear.
HEADER: tuple[str, ...] = (
    "id", "id:json", "input", "input:json", "expected", "expected:json",
    *(f"case.{f}" for f in CASE_FIELDS), CASE_JSON, METADATA_JSON,
)
_FIXED_POSITION = {name: i for i, name in enumerate(HEADER)}
_META_POSITION = _FIXED_POSITION[CASE_JSON]  # sorts after case:json (ties: by first-seen order)
_FIXED_POSITION[METADATA_JSON] = len(HEADER) + 1
REQUIRED_COLUMNS = ("id", "input", *(f"case.{f}" for f in REQUIRED_CASE_FIELDS))
HELD_BYTES = 1024 * 1024  # the spool writes to its file this much at a time
SPOOL_MEMORY = 8 * 1024 * 1024  # rows held in memory before the writer spools them to a temp file
_ENUM_FIELDS = frozenset(
    name for name, spec in row_schema()["definitions"]["caseProfile"]["properties"].items()
    if "enum" in spec or spec.get("$ref", "").split("/")[-1] in ("oracleType", "evaluator", "provenance")
)
_FORMULA_START = FORMULA_START
UNGUARDED = f"{FORMULA_CELLS}: write with --excel-safe to guard them (a leading ', which evalconv reads back)"
_QUOTED_START = "=+-@\t\r'"
_GUARDED_FIRST = frozenset(_QUOTED_START)
# In a line csv_line wrote, a cell that may start with one of these follows a comma (the first
# cell is looked at on its own); a false alarm inside a quoted cell only costs a closer look.
# An unquoted cell cannot start with CR (csv_line quotes it): `,\r` is the line's end after an
# empty last cell, no formula.
_EXCEL_LOOK = re.compile(",(?:\"[=+\\-@\t\r']|[=+\\-@\t'])")
_QUOTE_LOOK = re.compile(",\"?'")
_LINE_END = re.compile(r"\r\n?|\n")


def join_list(items: list[str]) -> str:
    joined = "|".join(items)
    if "\\" not in joined and joined.count("|") == len(items) - 1:
        return joined  # nothing to escape: the common case
    return "|".join(item.replace("\\", "\\\\").replace("|", "\\|") for item in items)


def split_list(cell: str) -> list[str]:
    """`a|b` -> ["a", "b"]; `\\|` is a pipe and `\\\\` a backslash; items are stripped."""
    if "\\" not in cell:
        return [item.strip() for item in cell.split("|")]
    items, buf, i = [], [], 0
    while i < len(cell):
        ch = cell[i]
        if ch == "\\" and i + 1 < len(cell) and cell[i + 1] in "\\|":
            buf.append(cell[i + 1])
            i += 2
            continue
        if ch == "|":
            items.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
        i += 1
    items.append("".join(buf).strip())
    return items


@dataclass(frozen=True)
class CSVOptions(SpreadsheetOptions):
    """`--excel-safe` (SpreadsheetOptions): a leading ' that this reader takes off again."""


_DELIMITER_WORDS = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}


@dataclass(frozen=True)
class CSVReadOptions(ReadOptions):
    """`--delimiter`: the cell separator, one character or a word (`tab`, `semicolon`, ...)."""

    delimiter: str | None = option(None, flag="--delimiter", metavar="CHAR",
                                   goes_with="separates canonical CSV cells; it goes with a CSV input",
                                   help="CSV input: the cell separator, e.g. ';' or tab (default: told by the header).")

    def __post_init__(self) -> None:
        if self.delimiter is None:
            return
        value = _DELIMITER_WORDS.get(self.delimiter.lower(), self.delimiter)
        if len(value) != 1 or value in "\r\n\"" or value.isalnum():
            raise UsageError(f"--delimiter takes one character such as ';' or the word 'tab', not {value!r}")
        object.__setattr__(self, "delimiter", value)  # frozen: the word becomes its character once


class CanonicalCSV(Format):
    name = "csv"
    write_shape = "line-per-row"
    title = "Canonical CSV"
    extensions = (".csv",)
    options = CSVOptions
    read_options = CSVReadOptions
    fallback = True
    streaming_read = True
    streaming_write = True
    lossless = True

    def detect(self, head: str) -> float:
        first = _LINE_END.split(head.lstrip("\ufeff"), maxsplit=1)[0]
        try:
            return 1.0 if "id" in next(csv.reader([first], delimiter=sniff_delimiter(first)), []) else 0.0
        except csv.Error:  # not CSV, whatever else it is
            return 0.0

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> "CSVWriter":
        return CSVWriter(out, excel_safe=isinstance(options, CSVOptions) and options.excel_safe, report=report)

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        physical = iter(lines)
        before = []  # blank lines before the header, then the header's first line
        for line in physical:
            before.append(line)
            if line.strip():
                break
        forced = lines.told(CSVReadOptions).delimiter
        delimiter = forced or sniff_delimiter(before[-1] if before else "")
        if delimiter != ",":
            report.notes.append(f"cells are separated by {_DELIMITER_NAMES.get(delimiter, repr(delimiter))}"
                        + ("" if forced else " (told by the header)"))
        reader = csv.reader(itertools.chain(before, physical), delimiter=delimiter, strict=True)
        record, start = 0, 1
        try:
            header = next(reader, None)
            while header == []:  # blank lines before the header
                header = next(reader, None)
            if header is None:
                raise ReadError("the file is empty: a canonical CSV starts with its header row "
                                "(id, input, case.caseId, ...)", source=lines.source, line=1)
            layout = _Layout(header, lines.source, delimiter, told=bool(forced))
            start = lines.number + 1
            for cells in reader:
                if cells:
                    record += 1
                    yield layout.build(cells, start, record)
                start = lines.number + 1
        except csv.Error as err:
            raise ReadError(_csv_error(str(err)), source=lines.source, line=start) from None


DELIMITERS = (",", ";", "\t")
_DELIMITER_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs"}


def _known_column(name: str) -> bool:
    return name in _FIXED_POSITION or (name.startswith("metadata.") and name not in ("metadata.", "metadata.case"))


def sniff_delimiter(header_line: str) -> str:
    """The delimiter that splits the header into the most known columns (Excel in a European
    locale saves `;`, some exports use tab); a comma unless another does better."""
    best, best_known = ",", 0
    for delimiter in DELIMITERS:
        try:
            cells = next(csv.reader([header_line.rstrip("\r\n")], delimiter=delimiter), [])
        except csv.Error:
            continue
        known = sum(1 for c in cells if _known_column(c.strip()))
        if known > best_known:
            best, best_known = delimiter, known
    return best


def _names_known_columns(cell: str) -> bool:
    """A header cell that holds canonical column names joined by some other character."""
    return sum(1 for name in re.split(r"[^\w.:]+", cell) if _known_column(name)) > 1


def own_sheet(source: str) -> str:
    """What to say about a sheet whose header names no canonical column."""
    return (f"no canonical column (id, input, case.*) in the header: this looks like a team's own sheet; "
            f"make it a set with: evalconv import {shlex.quote(source)} -o set.csv")


def looks_like_sheet(head: str) -> bool:
    """The first line splits into two or more named cells with a comma, semicolon or tab."""
    first = _LINE_END.split(head.lstrip("\ufeff"), maxsplit=1)[0]
    for delimiter in DELIMITERS:
        try:
            cells = next(csv.reader([first], delimiter=delimiter), [])
        except csv.Error:
            continue
        if len(cells) > 1 and all(c.strip() for c in cells):
            return True
    return False


def _csv_error(message: str) -> str:
    """The csv module's message, in the words of someone editing a sheet."""
    if "new-line character seen in unquoted field" in message:
        return "a line ends with a bare CR (save the file with LF or CRLF line ends)"
    what = (f"a cell is larger than {MAX_LINE_BYTES // (1024 * 1024)} MiB" if "field limit" in message
            else f"malformed CSV ({message})")
    return f"{what}; is a quoted cell missing its closing quote?"


def _unknown_columns(names: list[str]) -> str:
    """Every unknown column at once, each with the known name it most likely meant."""
    hint = f"other metadata goes in a 'metadata.<key>' column or in '{METADATA_JSON}'"
    parts = [_shown(name) + did_you_mean(name, HEADER) for name in names]
    if len(names) == 1:
        return f"unknown column {parts[0]}" + ("" if "did you mean" in parts[0] else f" ({hint})")
    return f"{len(names)} unknown columns: {', '.join(parts)} ({hint})"


class _Layout:
    """Where each field lives in this file's header."""

    def __init__(self, header: list[str], source: str, delimiter: str = ",", told: bool = False) -> None:
        seen: set[str] = set()
        unknown = []
        for name in header:
            if name in seen:
                raise ReadError(f"column {_shown(name)} appears twice in the header", source=source, line=1)
            seen.add(name)
            if name in ("metadata.", "metadata.case"):
                raise ReadError(f"column {_shown(name)} names no metadata key of the user's (the case "
                                f"profile goes in case.* columns)", source=source, line=1, field=name)
            if name not in HEADER and not name.startswith("metadata."):
                unknown.append(name)
        if unknown and len(unknown) == len(header):
            if len(header) == 1 and (told or _names_known_columns(header[0])):
                shown = _DELIMITER_NAMES.get(delimiter, repr(delimiter))
                how = ("is --delimiter right?" if told else
                       "evalconv tries commas, semicolons and tabs; name it with --delimiter")
                raise ReadError(f"the header does not split into known columns with {shown} as the delimiter: "
                                f"the delimiter looks wrong ({how})", source=source, line=1)
            raise ReadError(own_sheet(source), source=source, line=1)
        if unknown:
            raise ReadError(_unknown_columns(unknown), source=source, line=1, field=_shown(unknown[0])[1:-1])
        missing = [c for c in (f"case.{f}" for f in REQUIRED_CASE_FIELDS) if c not in seen]
        missing[:0] = [c for c in ("id", "input") if c not in seen and f"{c}:json" not in seen]
        if missing:
            raise ReadError(f"the header has no column for the required {'field' if len(missing) == 1 else 'fields'}"
                            f" {', '.join(missing)}",
                            source=source, line=1)
        self.width = len(header)
        self.index = {name: i for i, name in enumerate(header)}
        self.case_columns = [(f, self.index[f"case.{f}"]) for f in PLAIN_CASE_FIELDS if f"case.{f}" in self.index]
        self.json_columns = [(f, self.index[f"case.{f}"]) for f in JSON_CASE_FIELDS if f"case.{f}" in self.index]
        self.meta_columns = [(n[len("metadata."):], i) for n, i in self.index.items() if n.startswith("metadata.")]

    def build(self, cells: list[str], line: int, record: int) -> SourceRow:
        if len(cells) != self.width:
            return SourceRow(_partial_id(cells, self.index), line, record, parse_problem(
                f"record has {len(cells)} cells but the header has {self.width}"))
        # A file holds no NUL (Lines refuses one), so one search finds any cell starting with '.
        if "\x00'" in "\x00" + "\x00".join(cells):
            cells = [_unguard(c) for c in cells]
        try:
            return SourceRow(self._value(cells), line, record, plain_json=True)
        except RowError as err:
            return SourceRow.failed(err, line, record, partial=_partial_id(cells, self.index))

    def _cell(self, cells: list[str], name: str) -> str:
        i = self.index.get(name)
        return cells[i] if i is not None else ""

    def _value(self, cells: list[str]) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for key in ("id", "input", "expected"):
            value = self._typed(cells, key)
            if value is not ABSENT:
                row[key] = value
        case: dict[str, Any] = {}
        for name, i in self.case_columns:
            cell = cells[i]
            if not cell:
                continue
            kind = CASE_FIELD_KINDS[name]
            case[name] = split_list(cell) if kind == "list" else cell.strip() if name in _ENUM_FIELDS else \
                _integer_cell(cell, name) if kind == "integer" else cell
        overflow = self._json_cell(cells, CASE_JSON, "$.metadata.case", dict)
        for name, i in self.json_columns:
            if not cells[i]:
                continue
            if name in overflow:
                raise RowError(f"'{name}' is set in both 'case.{name}' and '{CASE_JSON}'", f"$.metadata.case.{name}")
            column, at = f"case.{name}", f"$.metadata.case.{name}"
            overflow[name] = self._json_cell(cells, column, at, dict) if name == "extensions" else \
                json_cell(cells[i], column, at)
        for name, value in overflow.items():
            if name in case:
                raise RowError(f"'{name}' is set in both 'case.{name}' and '{CASE_JSON}'",
                                 paths.join("$.metadata.case", name))
            case[name] = value
        if "caseId" not in case and "case.caseId" in self.index and isinstance(row.get("id"), str):
            case["caseId"] = row["id"]  # a blank case.caseId cell means the row's id (a row added by hand)
        metadata: dict[str, Any] = {"case": {f: case[f] for f in CASE_FIELDS if f in case}}
        for extra in case.keys() - metadata["case"].keys():  # unknown names: the schema reports them
            metadata["case"][extra] = case[extra]
        for key, i in self.meta_columns:
            cell = cells[i]
            if cell:
                metadata[key] = cell
        merge_metadata_json(metadata, self._json_cell(cells, METADATA_JSON, "$.metadata", dict), METADATA_JSON)
        row["metadata"] = metadata
        return row

    def _typed(self, cells: list[str], key: str) -> Any:
        plain, typed = self._cell(cells, key), self._cell(cells, f"{key}:json")
        if plain and typed:
            raise RowError(f"both '{key}' and '{key}:json' are filled; use one", f"$.{key}")
        if typed:
            return json_cell(typed, f"{key}:json", f"$.{key}")
        return plain if plain else ABSENT

    def _json_cell(self, cells: list[str], column: str, path: str, kind: type[dict[str, Any]]) -> dict[str, Any]:
        text = self._cell(cells, column)
        if not text:
            return {}
        value = json_cell(text, column, path)
        if not isinstance(value, kind):
            raise RowError(f"'{column}' must hold a JSON object", path)
        return value


def _integer_cell(cell: str, name: str) -> int:
    """A `case.schemaVersion` or `case.targetTurn` cell: a decimal integer, spaces around it allowed."""
    text = cell.strip()
    if not _INTEGER_CELL.fullmatch(text):
        raise RowError(f"'case.{name}' holds {_shown(cell)}, which is not an integer (write it as 2, not "
                       f"2.0 or \"2\")", f"$.metadata.case.{name}")
    return int(text)


def _partial_id(cells: list[str], index: dict[str, int]) -> dict[str, Any] | None:
    """Enough of a broken record to name it in findings."""
    i = index.get("id")
    return {"id": _unguard(cells[i])} if i is not None and i < len(cells) and cells[i] else None


def _unguard(cell: str) -> str:
    """A cell `'X` where X starts like a formula (or with another `'`) stands for X."""
    if len(cell) > 1 and cell[0] == "'" and cell[1] in _QUOTED_START:
        return cell[1:]
    return cell


def _quote_if_needed(cell: str) -> str:
    """Keep a cell that starts with `'` from losing it on read (see `_unguard`)."""
    return "'" + cell if len(cell) > 1 and cell[0] == "'" and cell[1] in _QUOTED_START else cell


def _guard(cell: str) -> str:
    """--excel-safe: a leading `'` stops Excel and Sheets from running a cell as a formula;
    evalconv's reader takes exactly that `'` off again."""
    return "'" + cell if cell.startswith(_FORMULA_START) else _quote_if_needed(cell)


def _check_readable(row_id: str, line: str, cells: list[str]) -> None:
    """A record evalconv could not read back (a line or a cell over the limit) is refused."""
    for what, parts in (("CSV line", line.split("\n")), ("CSV cell", cells)):
        size = max(map(too_long_to_read_back, parts), key=lambda n: n or 0)
        if size is not None:
            raise unreadable_write(row_id, what, size)


class CSVWriter(LineWriter):
    """Writes only the columns the rows use (docs/csv-spec.md). The header comes first but is
    known only at the end, so rows wait: in memory while they are few, then in a temporary file
    (`SPOOL_MEMORY`), each run of rows as a line under the columns known when it was written.
    At `close` the header goes out, then the rows: a run written under the final columns is
    copied as it is, an earlier run is read back and widened (only runs from before the last new
    column; in a set whose rows look alike, the first few rows).

    A row's line is `encode`d under the columns known so far, and kept is those columns (the same
    tuple until a row brings a new one): lines encoded elsewhere join the spool with `write_lines`."""

    per_row = False  # kept: the columns, which change only when a row brings a new one

    def __init__(self, out: TextIO, *, excel_safe: bool = False, report: LossReporter | None = None) -> None:
        super().__init__(out)
        self._excel_safe = excel_safe
        # Without --excel-safe, a notice names the rows with formula-looking cells (UNGUARDED).
        self._unguarded = None if excel_safe else report
        self._columns: list[str] = []
        self._known: set[str] = set()
        self._meta_order: dict[str, int] = {}  # metadata.<key> -> first-seen position
        self._spool = Spool()
        for name in REQUIRED_COLUMNS:  # always there, even when a row's value needs case:json
            self._add_column(name)
        self._spooled = self._layout  # the columns of the spool's last run
        self._spool.new_run(self._layout)

    def write(self, row: Row) -> None:
        line, layout = self.encode(row)
        if layout is not self._spooled:
            self._spool.new_run(layout)
            self._spooled = layout
        self._spool.add(line)

    def encode(self, row: Row) -> tuple[str, tuple[str, ...]]:
        cells = row_cells(row)
        if not cells.keys() <= self._known:
            self._widen(cells)
        row_cells_ = list(map(cells.get, self._columns, self._blanks))
        line = csv_line(row_cells_)
        # One C-speed search says whether any cell may need a leading apostrophe, or look like a
        # formula, at all (its matches are a superset of _QUOTE_LOOK's; guarding keeps them).
        look = _EXCEL_LOOK.search(line) is not None or row_cells_[0][:1] in _GUARDED_FIRST
        if look and (self._excel_safe or _QUOTE_LOOK.search(line) or row_cells_[0][:1] in _GUARDED_FIRST):
            line = self._guarded(row_cells_)
        if len(line) > MAX_LINE_BYTES // 4:
            _check_readable(row.id, line, row_cells_)
        if look and self._unguarded is not None and formula_looking(row_cells_):
            self._unguarded.notice_row(UNGUARDED, row.id)
        return line, self._layout

    def _guarded(self, cells: list[str]) -> str:
        if self._excel_safe:
            return csv_line([c if c[:1] not in _GUARDED_FIRST else _guard(c) for c in cells])
        return csv_line([c if c[:1] != "'" else _quote_if_needed(c) for c in cells])

    def _widen(self, cells: dict[str, str]) -> None:
        for name in cells:  # in the row's order: metadata keys keep their first-seen order
            if name not in self._known:
                self._add_column(name)

    def _add_column(self, name: str) -> None:
        if name.startswith("metadata."):
            self._meta_order.setdefault(name, len(self._meta_order))
        self._known.add(name)
        self._columns = sorted(self._known, key=self._position)
        self._layout = tuple(self._columns)
        self._blanks = ("",) * len(self._columns)

    def _position(self, name: str) -> tuple[int, int]:
        fixed = _FIXED_POSITION.get(name)
        return (fixed, -1) if fixed is not None else (_META_POSITION, self._meta_order[name])

    def write_lines(self, data: bytes, runs: list[tuple[int, Any]]) -> None:
        """Lines `encode`d elsewhere, `runs` giving the columns each stretch was encoded under
        (what `encode` noted of their rows, the engine notes: `per_row`)."""
        for i, (start, layout) in enumerate(runs):
            end = runs[i + 1][0] if i + 1 < len(runs) else len(data)
            if start == end:
                continue
            for name in layout:
                if name not in self._known:
                    self._add_column(name)
            self._spool.new_run(layout)
            self._spooled = layout
            self._spool.add_bytes(data[start:end])

    def close(self) -> None:
        # Excel reads UTF-8 without a BOM in the legacy code page (mojibake); evalconv strips it
        self._out.write(("\ufeff" if self._excel_safe else "") + csv_line(self._columns))
        self._spool.replay(self._out, tuple(self._columns))


class Spool:
    """Rows waiting for the header: in memory up to SPOOL_MEMORY bytes, then in a temp file."""

    def __init__(self) -> None:
        self._file: tempfile.SpooledTemporaryFile[bytes] | None = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY, mode="w+b")
        self._lines: list[str] = []
        self._pending = 0
        self._runs: list[tuple[int, tuple[str, ...]]] = []  # (byte offset, columns)
        self._size = 0
        self._surrogates = False  # a line held a lone surrogate: replayed as text, which refuses it
        self._held: list[bytes] = []  # encoded, not yet in the file
        self._held_size = 0

    def add(self, line: str) -> None:
        self._lines.append(line)
        self._pending += 1
        if self._pending >= 512:
            self._flush()

    def add_bytes(self, data: bytes) -> None:
        if self._lines:
            self._flush()
        self._hold(data)

    def new_run(self, layout: tuple[str, ...]) -> None:
        if self._lines:
            self._flush()
        if self._runs and self._runs[-1][1] == layout:
            return
        if self._runs and self._runs[-1][0] == self._size:
            self._runs.pop()  # an empty run
        self._runs.append((self._size, layout))

    def _flush(self) -> None:
        """The lines `add`ed, encoded, onto the bytes held."""
        if self._lines:
            text = "".join(self._lines)
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                data, self._surrogates = text.encode("utf-8", "surrogatepass"), True
            self._lines, self._pending = [], 0
            self._hold(data)

    def _hold(self, data: bytes) -> None:
        # The engine hands over a few rows at a time (a row with a finding ends a stretch): one
        # write a MiB, not one a stretch.
        self._held.append(data)
        self._held_size += len(data)
        self._size += len(data)
        if self._held_size >= HELD_BYTES:
            self._write()

    def _write(self) -> None:
        if self._held:
            assert self._file is not None, "written after replay"
            self._file.write(b"".join(self._held) if len(self._held) > 1 else self._held[0])
            self._held, self._held_size = [], 0

    def replay(self, out: TextIO, columns: tuple[str, ...]) -> None:
        self._flush()
        self._write()
        spool, self._file = self._file, None
        assert spool is not None, "replayed twice"
        try:
            spool.seek(0)
            for i, (start, layout) in enumerate(self._runs):
                end = self._runs[i + 1][0] if i + 1 < len(self._runs) else self._size
                spool.seek(start)
                if layout == columns:
                    if self._surrogates or not _copy_bytes(spool, start, end - start, out):
                        _copy(spool, end - start, out)
                else:
                    _widen_run(spool, end, layout, columns, out)
        finally:
            spool.close()


def _copy_bytes(spool: Any, start: int, size: int, out: TextIO) -> bool:
    """The spool's bytes start..start+size onto `out`'s UTF-8 byte stream as they are (in the
    kernel where it can: `copy_file_range`), not decoded and encoded again; False, with nothing
    written, when `out` has no such stream (a StringIO, another encoding)."""
    target = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None)
    if target is None or encoding is None or codecs.lookup(encoding).name != "utf-8":
        return False
    out.flush()
    if getattr(spool, "_rolled", False) and hasattr(os, "copy_file_range"):
        target.flush()
        copied = False
        try:
            source, sink = spool.fileno(), target.fileno()
            while size > 0:
                done = os.copy_file_range(source, sink, size, start)
                if done <= 0:
                    break
                start, size, copied = start + done, size - done, True
        except (OSError, ValueError, io.UnsupportedOperation):
            pass  # another file system, a pipe, no descriptor: the bytes through memory, from where it stopped
        if copied:  # the descriptor moved under the buffered stream: tell it where it is
            target.seek(0, os.SEEK_END)
        spool.seek(start)
    while size > 0:
        data = spool.read(min(size, 1 << 20))
        if not data:
            break
        size -= len(data)
        target.write(data)
    return True


def _copy(spool: Any, size: int, out: TextIO) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    while size > 0:
        data = spool.read(min(size, 1 << 20))
        size -= len(data)
        out.write(decoder.decode(data, final=size <= 0))


def _widen_run(spool: Any, end: int, layout: tuple[str, ...], columns: tuple[str, ...], out: TextIO) -> None:
    """Lines written under `layout` (a subset of `columns`), written again under `columns`."""
    where = [columns.index(name) for name in layout]

    def lines() -> Iterator[str]:
        while spool.tell() < end:
            yield spool.readline().decode("utf-8", "surrogatepass")

    for cells in csv.reader(lines(), strict=True):
        wide = [""] * len(columns)
        for i, cell in zip(where, cells):
            wide[i] = cell
        out.write(csv_line(wide))


def csv_line(cells: list[str] | tuple[str, ...]) -> str:
    """One record exactly as `csv.writer` writes it (QUOTE_MINIMAL, `\r\n` line ends), built
    with str methods: 3.0 instead of 7.1 us for a typical row (a property test holds the two
    to the same bytes)."""
    if len(cells) == 1 and not cells[0]:
        return '""\r\n'
    out = []
    for cell in cells:
        if cell and ('"' in cell or "," in cell or "\n" in cell or "\r" in cell):
            cell = '"' + cell.replace('"', '""') + '"'
        out.append(cell)
    return ",".join(out) + "\r\n"


_LIST_FIELDS = frozenset(f for f in PLAIN_CASE_FIELDS if CASE_FIELD_KINDS[f] == "list")
_CASE_COLUMNS = {f: f"case.{f}" for f in CASE_FIELDS}
_JSON_COLUMN_FIELDS = frozenset(JSON_CASE_FIELDS)
_TYPED_CASE_FIELDS = _JSON_COLUMN_FIELDS | INTEGER_CASE_FIELDS  # a string there is not the field's plain cell
_PLAIN_TEXT_FIELDS = frozenset(_CASE_COLUMNS) - _TYPED_CASE_FIELDS - _LIST_FIELDS  # a non-empty string is its cell
_META_COLUMN = "metadata."


def _list_cell(items: Any) -> str | None:
    """The plain `a|b` cell for a list, or None when only `case:json` can hold it exactly: no
    items, an empty item or one with surrounding whitespace (items are stripped on read), a NUL."""
    if not isinstance(items, list) or not items \
            or not all(isinstance(item, str) and item and item == item.strip() for item in items):
        return None
    joined = "|".join(items)
    if "\x00" in joined:
        return None
    if "\\" in joined or joined.count("|") != len(items) - 1:  # items hold | or \: escape
        return join_list(items)
    return joined


def row_cells(row: Row) -> dict[str, str]:
    """The non-empty cells of one row by column name (before any leading-apostrophe protection).
    A plain cell holds a non-empty string without a NUL; any other value takes a typed column."""
    cells: dict[str, str] = {}
    for key, value in (("id", row.id), ("input", row.input), ("expected", row.expected)):
        if type(value) is str and value and "\x00" not in value:  # split_typed's plain cell, inline
            cells[key] = value
        elif value is not ABSENT:
            cells[key + ":json"] = jsonvalue.dumps(value)
    overflow: dict[str, Any] = {}
    for name, value in row.case.items():  # only the fields the row has, usually a handful
        if type(value) is str and value and name in _PLAIN_TEXT_FIELDS and "\x00" not in value:
            cells[_CASE_COLUMNS[name]] = value  # the common case first
            continue
        if name in _LIST_FIELDS:
            cell = _list_cell(value)
            if cell is None:
                overflow[name] = value
            else:
                cells[_CASE_COLUMNS[name]] = cell
        elif type(value) is str and value and "\x00" not in value and name in _CASE_COLUMNS \
                and name not in _TYPED_CASE_FIELDS:
            cells[_CASE_COLUMNS[name]] = value
        elif name in _JSON_COLUMN_FIELDS and (name != "extensions" or isinstance(value, dict)):
            cells[_CASE_COLUMNS[name]] = jsonvalue.dumps(value)
        elif type(value) is int and name in INTEGER_CASE_FIELDS:
            cells[_CASE_COLUMNS[name]] = str(value)
        else:
            overflow[name] = value  # "", a NUL, or a name outside the profile (a valid row has none)
    if overflow:  # in the schema's order, as the reader gives them back: a sheet rewritten stays byte for byte
        cells[CASE_JSON] = jsonvalue.dumps({**{n: overflow[n] for n in CASE_FIELDS if n in overflow}, **overflow})
    if len(row.metadata) > 1:
        rest = split_metadata(row.metadata, cells, _META_COLUMN, True)  # text_cells
        if rest is not None:
            cells[METADATA_JSON] = rest
    return cells


FORMAT = CanonicalCSV()

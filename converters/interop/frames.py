"""pandas DataFrames in and out, with the canonical CSV's column names (docs/pandas.md).

`to_dataframe(rows)` gives one column per field the set uses: `id`, `input`, `expected` and every
`case.<field>` and `metadata.<key>` as pandas' nullable string dtype (a missing value is <NA>,
never NaN, and "" stays ""); the case's lists as lists of strings; values that are not strings
as JSON text in `input:json`, `expected:json`, `case.extensions` and `metadata:json`.

`from_dataframe(df)` reads that back identically, and reads a DataFrame built by hand the way a
person means it: NaN, None and <NA> are blank cells (absent), numbers and booleans are JSON values,
`a|b` in a list column is a list. Every row is validated like any other input.
"""
from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from ..canonical import cells as shared
from ..canonical import jsonvalue
from ..canonical.csv_format import split_list
from ..canonical.errors import ReadError, RowError, UsageError
from ..canonical.row import Row
from ..canonical.schema import CASE_FIELD_KINDS, CASE_FIELDS, REQUIRED_CASE_FIELDS
from ..canonical.source import SourceRow
from ..canonical.validator import Validator
from ..reports import FindingLog, ReadReport

if TYPE_CHECKING:
    import pandas

    from ..api import ReadResult

SOURCE = "<DataFrame>"
_LIST_FIELDS = frozenset(f for f in CASE_FIELDS if CASE_FIELD_KINDS[f] == "list")
# Held as JSON text in a string column: extensions, and schema version 2's contextRefs, permission
# (JSON values) and schemaVersion, targetTurn (integers of any size, exactly).
_JSON_CASE_FIELDS = frozenset(f for f in CASE_FIELDS if CASE_FIELD_KINDS[f] in ("object", "integer"))
_ENUM_FIELDS = frozenset(("oracleType", "provenance", "evaluator", "reversibility", "blastRadius"))
_JSON_COLUMNS = {"input:json": "input", "expected:json": "expected"}


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise UsageError("DataFrames need pandas, which is not installed (pip install 'evalconv[pandas]')") from None
    return pandas


def to_dataframe(rows: Iterable[Row]) -> "pandas.DataFrame":
    """The rows as a DataFrame; `from_dataframe` gives them back identical."""
    pd = _pandas()
    records = [_cells(row) for row in rows]
    used: dict[str, None] = {}
    for record in records:
        used.update(dict.fromkeys(record))
    columns = _ordered(used)
    data = {name: [record.get(name) for record in records] for name in columns}
    return pd.DataFrame({name: pd.Series(values, dtype=object if _is_list(name) else "string")
                         for name, values in data.items()}, columns=columns)


def _is_list(column: str) -> bool:
    return column.startswith("case.") and column[5:] in _LIST_FIELDS


def _ordered(used: dict[str, None]) -> list[str]:
    """id, input, expected, the case profile in schema order, metadata keys as first seen."""
    head = ["id", "input", "input:json", "expected", "expected:json"]
    required = {"id", "input", *(f"case.{f}" for f in REQUIRED_CASE_FIELDS)}
    out = [c for c in head if c in used or c in required]
    out += [f"case.{f}" for f in CASE_FIELDS if f"case.{f}" in used or f"case.{f}" in required]
    out += [c for c in used if c.startswith("metadata.")]
    out += ["metadata:json"] if "metadata:json" in used else []
    return out


def _cells(row: Row) -> dict[str, Any]:
    cells: dict[str, Any] = {"id": row.id}
    for key, value in (("input", row.input), ("expected", row.expected)):
        plain, typed = shared.split_typed(value, text_cells=False)
        if plain is not None:
            cells[key] = plain
        elif typed is not None:
            cells[f"{key}:json"] = typed
    for name, value in row.metadata["case"].items():
        cells[f"case.{name}"] = jsonvalue.dumps(value) if name in _JSON_CASE_FIELDS else value
    rest = shared.split_metadata(row.metadata, cells, "metadata.", text_cells=False)
    if rest is not None:
        cells["metadata:json"] = rest
    return cells


class _Columns:
    """The DataFrame's columns, checked once: what each holds, or a one-line error naming it."""

    def __init__(self, names: list[Any]) -> None:
        seen: set[str] = set()
        for name in names:
            if not isinstance(name, str):
                raise ReadError(f"column {name!r} is not named with text; name the columns as in the "
                                f"canonical CSV (id, input, expected, case.caseId, ...)", source=SOURCE)
            if name in seen:
                raise ReadError(f"column '{name}' appears twice", source=SOURCE, field=name)
            seen.add(name)
            known = (name in ("id", "input", "expected", "metadata:json", *_JSON_COLUMNS)
                     or (name.startswith("case.") and name[5:] in CASE_FIELDS)
                     or (name.startswith("metadata.") and name not in ("metadata.", "metadata.case")))
            if not known:
                raise ReadError(f"unknown column '{name}' (columns are named as in the canonical CSV: id, "
                                f"input, expected, case.<field>, metadata.<key>; see docs/pandas.md)",
                                source=SOURCE, field=name)
        missing = [c for c in ("id", "input") if c not in seen and f"{c}:json" not in seen]
        missing += [f"case.{f}" for f in REQUIRED_CASE_FIELDS if f"case.{f}" not in seen]
        if missing:
            raise ReadError(f"no column for required field(s): {', '.join(missing)}", source=SOURCE)
        self.names = names


def from_dataframe(df: "pandas.DataFrame") -> "ReadResult":
    """Read a DataFrame into valid rows (`.rows`); invalid ones are left out and listed in
    `.log.errors`, as `evalconv.read` does for a file."""
    from ..api import ReadResult

    _pandas()
    columns = _Columns(list(df.columns))
    report = ReadReport("dataframe", SOURCE)
    log, valid = FindingLog(), []
    for checked in Validator(source=SOURCE).check_all(_source_rows(df, columns, report)):
        log.add(checked.findings)
        if checked.row is not None:
            valid.append(checked.row)
    return ReadResult("dataframe", valid, log, report)


def _source_rows(df: Any, columns: _Columns, report: ReadReport) -> Iterator[SourceRow]:
    names = columns.names
    for number, values in enumerate(df.itertuples(index=False, name=None), start=1):
        report.rows += 1
        try:
            yield SourceRow(_row(dict(zip(names, values))), None, number)
        except RowError as err:
            ident = values[names.index("id")] if "id" in names else None
            yield SourceRow.failed(err, None, number, partial={"id": ident} if isinstance(ident, str) else None)


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    try:
        import pandas
        return value is pandas.NA or value is pandas.NaT
    except ImportError:  # pragma: no cover
        return False


def _value(value: Any) -> Any:
    """A cell as a JSON value: numpy scalars and arrays become Python ones."""
    if isinstance(value, (str, bool)) or value is None:
        return value
    if type(value).__module__ == "numpy":
        if hasattr(value, "tolist"):
            return _value(value.tolist())
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _value(v) for k, v in value.items()}
    return value  # a date or other object: the validator names it


def _json(text: Any, column: str, path: str) -> Any:
    if not isinstance(text, str):
        raise RowError(f"'{column}' must hold JSON text, not {type(text).__name__}", path)
    return shared.json_cell(text, column, path)


def _row(cells: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for key in ("id", "input", "expected"):
        plain, typed = cells.get(key), cells.get(f"{key}:json")
        plain_set, typed_set = not _blank(plain), not _blank(typed)
        if plain_set and typed_set:
            raise RowError(f"both '{key}' and '{key}:json' are set; use one", f"$.{key}")
        if typed_set:
            row[key] = _json(typed, f"{key}:json", f"$.{key}")
        elif plain_set:
            row[key] = _value(plain)
    case: dict[str, Any] = {}
    metadata: dict[str, Any] = {"case": case}
    for column, cell in cells.items():
        if _blank(cell):
            continue
        if column.startswith("case."):
            name = column[5:]
            if name == "extensions":
                case[name] = _json(cell, column, "$.metadata.case.extensions")
            elif name in _JSON_CASE_FIELDS:  # JSON text as to_dataframe writes it; a number a frame built by hand holds
                case[name] = _json(cell, column, f"$.metadata.case.{name}") if isinstance(cell, str) else _value(cell)
            elif name in _LIST_FIELDS and isinstance(cell, str):
                case[name] = split_list(cell)
            elif name in _ENUM_FIELDS and isinstance(cell, str):
                case[name] = cell.strip()
            else:
                case[name] = _value(cell)
        elif column.startswith("metadata."):
            metadata[column[len("metadata."):]] = _value(cell)
    rest = cells.get("metadata:json")
    if not _blank(rest):
        shared.merge_metadata_json(metadata, _json(rest, "metadata:json", "$.metadata"))
    row["metadata"] = metadata
    return row

"""The cell rules the canonical tables share: CSV (docs/csv-spec.md), Parquet
(docs/parquet-spec.md) and pandas DataFrames (docs/pandas.md).

Each table has a plain column for a value that is text (`input`, `metadata.<key>`) and a JSON text
column for one that is not (`input:json`, `metadata:json`); which text a plain column can hold is
each table's own rule (CSV: not "" and no NUL; Parquet and DataFrames: any text).
"""
from __future__ import annotations

from typing import Any

from . import jsonvalue, paths
from .errors import RowError
from .row import ABSENT


# A cell a spreadsheet (Excel, Google Sheets, LibreOffice) runs as a formula starts with one of these.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
FORMULA_CELLS = ("CSV cells that start with =, +, -, @, tab or CR, which a spreadsheet opening the file "
                 "would run as formulas")


def formula_looking(cells: "list[str] | tuple[str, ...]") -> bool:
    """Does any of a CSV line's cells start like a formula?"""
    return any(cell.startswith(FORMULA_START) for cell in cells)


def unguarded_formulas(tool: str, loader: str) -> str:
    """The notice for a vendor CSV whose loader cannot read a guard back (`notice_row`)."""
    return (f"{FORMULA_CELLS}, unguarded: {tool}'s CSV loader ({loader}) keeps a leading ' as part of the "
            f"value, so evalconv cannot guard them, with --excel-safe or without; import the file into a "
            f"spreadsheet with every column as text, never open it directly")


def split_typed(value: Any, text_cells: bool = True) -> tuple[str | None, str | None]:
    """(the plain cell, the `:json` cell) of `input` or `expected`: text the plain column can hold
    stays text; any other value (absent aside) is JSON text. `text_cells`: the plain column is
    CSV text, which cannot hold "" (an empty cell is absent) nor a NUL."""
    if type(value) is str and (not text_cells or value and "\x00" not in value):
        return value, None
    if value is ABSENT:
        return None, None
    return None, jsonvalue.dumps(value)


def split_metadata(metadata: dict[str, Any], into: dict[str, Any] | None = None, prefix: str = "metadata.",
                   text_cells: bool = True) -> str | None:
    """A row's metadata other than `case` as cells: each text value under `prefix + key` in `into`
    (key not ""), the rest as the returned `metadata:json` text. `into` None: all is JSON text.
    `text_cells` as for `split_typed`, for the key too."""
    if into is None:  # all in metadata:json (a copy is faster than a loop)
        everything = metadata.copy()
        everything.pop("case", None)
        return jsonvalue.dumps(everything) if everything else None
    rest: dict[str, Any] = {}
    for key, value in metadata.items():
        if key == "case":
            continue
        if type(value) is str and key and (not text_cells or value and "\x00" not in value and "\x00" not in key):
            into[prefix + key] = value
        else:
            rest[key] = value
    return jsonvalue.dumps(rest) if rest else None


def json_cell(text: str | bytes, column: str, path: str) -> Any:
    """A JSON text cell's value (UTF-8 bytes are parsed as they are); a row error naming the
    column when it is not JSON."""
    try:
        return jsonvalue.loads(text)
    except jsonvalue.JSONValueError as err:
        raise RowError(f"'{column}' is not valid JSON: {err}", path) from None
    except UnicodeDecodeError as err:
        raise RowError(f"'{column}' is not valid UTF-8 text (byte {err.start + 1})", path) from None


def merge_metadata_json(metadata: dict[str, Any], extra: Any, column: str = "metadata:json") -> None:
    """The keys of a `metadata:json` cell into the row's metadata: an object, never `case`, and
    no key that a `metadata.<key>` column already set."""
    if not isinstance(extra, dict):
        raise RowError(f"'{column}' must hold a JSON object", "$.metadata")
    for key, value in extra.items():
        if key == "case":
            raise RowError(f"'{column}' must not hold 'case': the case profile goes in case.* columns",
                           "$.metadata.case")
        if key in metadata:
            raise RowError(f"metadata key {shown(key)} is set in both {shown('metadata.' + key)} and '{column}'",
                           paths.join("$.metadata", key))
        metadata[key] = value


def shown(name: str) -> str:
    """A column name in quotes for a one-line message; line breaks and other control
    characters (a header cell can hold them when quoted) are escaped."""
    return f"'{name}'" if name.isprintable() else repr(name)

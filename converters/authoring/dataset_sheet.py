"""A dataset that is not canonical, read as a sheet for `evalconv import`: a Parquet file (a Hub
download), or a Hugging Face dataset folder, either as the Hub lays it out (Parquet or JSONL data
files, found through the README.md card's configs or under data/) or as `datasets`'
`save_to_disk` writes it (Arrow files listed in state.json; a DatasetDict's splits in turn).

Columns keep their names and their values their types (a number stays a number), as for a JSONL
sheet; the column matching, `--map` and the ids are the sheet importer's.
"""
from __future__ import annotations

import datetime
import decimal
import os
from typing import Any

from ..canonical import jsonvalue
from ..canonical.errors import ReadError
from ..canonical.source import MAX_LINE_BYTES
from ..vendors.hf.format import data_files
from .sheet import Columns, Sheet


ARROW_SUFFIX = ".arrow"


def is_dataset(path: str) -> bool:
    """A folder, or a file that is Parquet (by its magic bytes) or a `save_to_disk` Arrow file."""
    if os.path.isdir(path):
        return True
    if path.lower().endswith(ARROW_SUFFIX):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:
        return False


def read_dataset(path: str) -> Sheet:
    sheet, columns = Sheet([], [], text_cells=False), Columns()
    files = data_files(path) if os.path.isdir(path) else [("", path)]  # (split, file)
    splits = len({split for split, _ in files}) > 1
    for split, file in files:
        for record in _records(file, file):
            if splits and "split" not in record:  # which split a row came from is kept
                record["split"] = split
            columns.add(record)
            if all(value is None for value in record.values()):
                sheet.blank += 1
            else:
                sheet.records.append((None, record))
    sheet.columns = columns.names
    if not sheet.columns:
        raise ReadError("the dataset has no columns", source=path)
    return sheet


def _records(file: str, label: str) -> list[dict[str, Any]]:
    if file.lower().endswith(".jsonl"):
        return _jsonl_records(file, label)
    table = _arrow_table(file, label)
    columns = table.column_names
    if len(set(columns)) != len(columns):
        twice = next(c for i, c in enumerate(columns) if c in columns[:i])
        raise ReadError(f"two columns are named '{twice}'", source=label, field=twice)
    _check_cells(table, label)
    out = []
    for number, record in enumerate(table.to_pylist(), 1):
        out.append({key: _json_ready(value, label, number, key) for key, value in record.items()})
    return out


def _check_cells(table: Any, label: str) -> None:
    """Refuse a text or binary cell larger than the CSV and JSON readers take (MAX_LINE_BYTES),
    measured in Arrow's memory before any cell becomes a Python value (a 2 GiB cell once peaked
    at 15 GB on its way to the rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for name, column in zip(table.column_names, table.columns):
        kind = column.type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
                or pa.types.is_large_binary(kind)) or len(column) == 0:
            continue
        sizes = pc.binary_length(column)
        largest = pc.max(sizes).as_py()
        if largest is not None and largest > MAX_LINE_BYTES:
            row = pc.index(sizes, largest).as_py() + 1
            raise ReadError(f"a cell of {largest:,} bytes (row {row}) is larger than the "
                            f"{MAX_LINE_BYTES // (1024 * 1024)} MiB a cell may be", source=label, field=name)


def _arrow_table(file: str, label: str) -> Any:
    from ..canonical import parquet_format

    pa = parquet_format._pyarrow()
    try:
        with open(file, "rb") as stream:
            if stream.read(4) == parquet_format.MAGIC:
                stream.seek(0)
                return parquet_format.open_file(stream, label).read(use_threads=False)
            stream.seek(0)
            try:
                return pa.ipc.open_stream(stream).read_all()  # what save_to_disk writes
            except pa.ArrowInvalid:
                stream.seek(0)
                return pa.ipc.open_file(stream).read_all()
    except OSError as err:
        raise ReadError(f"cannot read the data file: {err.strerror or err}", source=label) from None
    except (pa.ArrowException, ValueError) as err:
        raise ReadError(f"not a readable Parquet or Arrow file, truncated or damaged? ({err})", source=label) from None


def _jsonl_records(file: str, label: str) -> list[dict[str, Any]]:
    out = []
    with open(file, "rb") as f:
        for number, line in enumerate(iter(lambda: f.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(line) > MAX_LINE_BYTES:
                raise ReadError(f"line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB", source=label, line=number)
            if not line.strip():
                continue
            try:
                record = jsonvalue.loads(line.removeprefix(b"\xef\xbb\xbf") if number == 1 else line)
            except (jsonvalue.JSONValueError, UnicodeDecodeError) as err:
                raise ReadError(f"line is not valid JSON: {err}", source=label, line=number) from None
            if not isinstance(record, dict):
                raise ReadError("each record must be a JSON object (one dataset row)", source=label, line=number)
            out.append(record)
    return out


def _json_ready(value: Any, label: str, row: int, column: str) -> Any:
    """A dataset value as a JSON value: dates as ISO 8601 text, decimals as their exact text."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): _json_ready(v, label, row, column) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v, label, row, column) for v in value]
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        raise ReadError(f"column '{column}' holds binary data (row {row}), which a golden set cannot carry; "
                        f"remove the column first (datasets: ds.remove_columns(['{column}']))",
                        source=label, field=column)
    raise ReadError(f"column '{column}' holds a {type(value).__name__} (row {row}), which is not a JSON value",
                    source=label, field=column)

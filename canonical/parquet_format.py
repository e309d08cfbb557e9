"""Canonical Parquet: lossless, typed, streamed by row groups. The rules are in docs/parquet-spec.md.

Columns keep the canonical CSV's names, one schema for every file: plain `string` columns for
`id`, `input`, `expected` and the case profile (enums as strings), `list<string>` for the case's
lists, and JSON text only where a value is not a string (`input:json`, `expected:json`), for
`case.extensions` and for the rest of `metadata` (`metadata:json`). Parquet keeps null apart from
"" and [] apart from [""] itself, so no cell needs an escape.
"""
from __future__ import annotations

from typing import IO, Any, Iterator, Sequence, TextIO

from . import jsonvalue, paths
from .errors import ReadError
from .format import Format, WriteOptions
from .reporting import LossReporter, ReadReporter
from .row import ABSENT, Row
from .schema import CASE_FIELD_KINDS, CASE_FIELDS, REQUIRED_CASE_FIELDS
from .source import Lines, SourceRow, parse_problem

MAGIC = b"PAR1"
ROW_GROUP_ROWS = 5_000  # rows a row group holds: the unit of memory on write (5k: 124 MB peak at 100k rows, 10k: 148 MB)
READ_BATCH_ROWS = 4_096
METADATA_KEY = b"evalconv"
METADATA_VALUE = b'{"format":"evalconv-parquet","version":1}'
# Pinned so that the same rows give the same bytes (the golden files are compared byte for byte).
WRITER_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 3, "version": "2.6",
                                  "data_page_version": "1.0", "use_dictionary": True,
                                  "write_statistics": True, "store_schema": True}

TEXT_FIELDS = tuple(f for f in CASE_FIELDS if CASE_FIELD_KINDS[f] == "string")
LIST_FIELDS = tuple(f for f in CASE_FIELDS if CASE_FIELD_KINDS[f] == "list")
# (column, kind): kind is "text", "json" or "list"; in this order in every file evalconv writes.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "text"), ("input", "text"), ("input:json", "json"), ("expected", "text"),
    ("expected:json", "json"),
    *((f"case.{f}", "list" if CASE_FIELD_KINDS[f] == "list" else "json" if CASE_FIELD_KINDS[f] == "object"
       else "text") for f in CASE_FIELDS),
    ("metadata:json", "json"),
)
_KINDS = dict(COLUMNS)
REQUIRED = ("id", "input", *(f"case.{f}" for f in REQUIRED_CASE_FIELDS))
_NOT_NULL = frozenset(("id", *(f"case.{f}" for f in REQUIRED_CASE_FIELDS)))


def missing_dependency(what: str, extra: str = "parquet") -> ReadError:
    return ReadError(f"{what} needs pyarrow, which is not installed (pip install 'evalconv[{extra}]')")


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise missing_dependency("Parquet") from None
    return pyarrow


def arrow_schema() -> Any:
    pa = _pyarrow()
    types = {"text": pa.string(), "json": pa.string(), "list": pa.list_(pa.string())}
    return pa.schema([pa.field(name, types[kind], nullable=name not in _NOT_NULL) for name, kind in COLUMNS],
                     metadata={METADATA_KEY: METADATA_VALUE})


class CanonicalParquet(Format):
    name = "parquet"
    title = "Canonical Parquet (typed columns, row groups)"
    extensions = (".parquet",)
    streaming_read = True
    streaming_write = True
    lossless = True
    binary = True

    def detect(self, head: str) -> float:
        return 1.0 if head.startswith("PAR1") else 0.0

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_parquet(lines.binary(), lines.source)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> "ParquetWriter":
        out.flush()  # nothing was written as text; the bytes go under the text layer
        return ParquetWriter(out.buffer)


class ParquetWriter:
    """Rows gather in per-column lists; every ROW_GROUP_ROWS rows they become one row group."""

    def __init__(self, sink: IO[bytes]) -> None:
        self._schema = arrow_schema()
        self._sink = sink
        self._writer: Any = None  # opened with the first row group: a failed read writes nothing
        self._columns: list[list[Any]] = [[] for _ in COLUMNS]
        self._case_slots = [(f, self._columns[5 + i]) for i, f in enumerate(CASE_FIELDS)
                            if CASE_FIELD_KINDS[f] != "object"]
        self._extensions = self._columns[5 + CASE_FIELDS.index("extensions")]

    def write(self, row: Row) -> None:
        c = self._columns
        c[0].append(row.id)
        _typed(row.input, c[1], c[2])
        _typed(row.expected, c[3], c[4])
        case = row.metadata["case"]
        for name, column in self._case_slots:
            column.append(case.get(name))
        extensions = case.get("extensions")
        self._extensions.append(None if extensions is None else jsonvalue.dumps(extensions))
        metadata = row.metadata
        rest = {k: v for k, v in metadata.items() if k != "case"} if len(metadata) > 1 else None
        c[-1].append(jsonvalue.dumps(rest) if rest else None)
        if len(c[0]) >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        pa = _pyarrow()
        if self._writer is None:
            self._writer = pa.parquet.ParquetWriter(self._sink, self._schema, **WRITER_OPTIONS)
        arrays = [_list_array(pa, values) if kind == "list" else _string_array(pa, values)
                  for values, (_, kind) in zip(self._columns, COLUMNS)]
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=self._schema), row_group_size=ROW_GROUP_ROWS)
        for values in self._columns:
            values.clear()

    def close(self) -> None:
        if self._columns[0] or self._writer is None:
            self._flush()  # no rows at all: one empty row group, so the file has its schema
        self._writer.close()
        self._writer = None

    def __del__(self) -> None:
        # A conversion that failed drops its output file unfinished: pyarrow must not try to
        # finish it (writing to a closed file) when it is collected.
        writer = getattr(self, "_writer", None)  # None too when __init__ failed (no pyarrow)
        if writer is not None:
            writer.is_open = False


# Arrays are built from their buffers: `pa.array` would import pandas on its first call (pyarrow
# checks for pandas objects), a second of start-up and 45 MB that a conversion never uses.
_MAX_OFFSET = 2**31 - 1


def _validity(pa: Any, present: list[bool]) -> tuple[Any, int]:
    import numpy
    mask = numpy.fromiter(present, dtype=bool, count=len(present))
    nulls = len(present) - int(mask.sum())
    return (pa.py_buffer(numpy.packbits(mask, bitorder="little")) if nulls else None), nulls


def _offsets(pa: Any, lengths: list[int]) -> Any:
    import numpy
    offsets = numpy.zeros(len(lengths) + 1, dtype=numpy.int32)
    numpy.cumsum(lengths, out=offsets[1:])
    return pa.py_buffer(offsets)


def _string_array(pa: Any, values: Sequence[str | None]) -> Any:
    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    lengths = [len(e) for e in encoded]
    if sum(lengths) > _MAX_OFFSET:  # past 2 GiB in one row group: let pyarrow split it
        return pa.array(values, type=pa.string())
    bitmap, nulls = _validity(pa, [v is not None for v in values])
    return pa.StringArray.from_buffers(len(values), _offsets(pa, lengths), pa.py_buffer(b"".join(encoded)),
                                       bitmap, nulls)


def _list_array(pa: Any, values: list[list[str] | None]) -> Any:
    items = [item for v in values if v is not None for item in v]
    children = _string_array(pa, items)
    bitmap, nulls = _validity(pa, [v is not None for v in values])
    return pa.Array.from_buffers(pa.list_(pa.string()), len(values),
                                 [bitmap, _offsets(pa, [0 if v is None else len(v) for v in values])],
                                 null_count=nulls, children=[children])


def _typed(value: Any, plain: list[Any], typed: list[Any]) -> None:
    if type(value) is str:
        plain.append(value)
        typed.append(None)
    elif value is ABSENT:
        plain.append(None)
        typed.append(None)
    else:
        plain.append(None)
        typed.append(jsonvalue.dumps(value))


# Reading -----------------------------------------------------------------------------------

def open_file(stream: IO[bytes], source: str) -> Any:
    """A pyarrow ParquetFile, or the ReadError that says in a line why the file is not one."""
    pa = _pyarrow()
    head = stream.read(4)
    stream.seek(0)
    if head != MAGIC:
        raise ReadError("not a Parquet file (it does not start with PAR1)", source=source)
    try:
        # pre_buffer (the default) keeps read-ahead buffers alive: memory grew ~0.5 KB a row.
        return pa.parquet.ParquetFile(stream, pre_buffer=False, buffer_size=1 << 20)
    except (pa.ArrowException, OSError, ValueError) as err:
        raise ReadError(f"not a readable Parquet file, truncated or damaged? ({_first_line(err)})",
                        source=source) from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _type_name(arrow_type: Any) -> str:
    return str(arrow_type).replace("large_", "")


class Layout:
    """Which column holds what, checked against the file's schema before any row is read."""

    def __init__(self, schema: Any, source: str) -> None:
        pa = _pyarrow()
        self.names: list[str] = []
        self.meta_columns: list[tuple[str, str]] = []
        for field in schema:
            name = field.name
            if name.startswith("__index_level_"):  # a pandas index written beside the data
                continue
            kind = _KINDS.get(name)
            if kind is None and name.startswith("metadata.") and name not in ("metadata.", "metadata.case"):
                kind = "text"
                self.meta_columns.append((name, name[len("metadata."):]))
            if kind is None:
                raise ReadError(f"unknown column '{name}' (a canonical Parquet file has the columns in "
                                f"docs/parquet-spec.md; other metadata goes in 'metadata:json')",
                                source=source, field=name)
            if not _type_fits(pa, field.type, kind):
                want = "list<string>" if kind == "list" else "string"
                raise ReadError(f"column '{name}' is {_type_name(field.type)}, but it must be {want}",
                                source=source, field=name)
            self.names.append(name)
        missing = [c for c in REQUIRED if c not in self.names and f"{c}:json" not in self.names]
        if missing:
            found = ", ".join(self.names[:8]) + (", ..." if len(self.names) > 8 else "")
            raise ReadError(f"not a canonical set: no column for required field(s) {', '.join(missing)} "
                            f"(found: {found or 'no columns'})", source=source)


def _type_fits(pa: Any, arrow_type: Any, kind: str) -> bool:
    t = pa.types
    if t.is_null(arrow_type):  # a column with no values at all (pandas writes these)
        return True
    if kind == "list":
        if t.is_list(arrow_type) or t.is_large_list(arrow_type):
            return _type_fits(pa, arrow_type.value_type, "text")
        return False
    return t.is_string(arrow_type) or t.is_large_string(arrow_type) or t.is_string_view(arrow_type)


def read_parquet(stream: IO[bytes], source: str, *, first_record: int = 0) -> Iterator[SourceRow]:
    """Rows a batch at a time; `record` is the row's 1-based number in the file."""
    handle = open_file(stream, source)
    layout = Layout(handle.schema_arrow, source)
    pa = _pyarrow()
    record = first_record
    try:
        batches = handle.iter_batches(batch_size=READ_BATCH_ROWS, columns=layout.names, use_threads=False)
        for batch in batches:
            columns = {name: batch.column(name).to_pylist() for name in layout.names}
            for i in range(batch.num_rows):
                record += 1
                yield _build(columns, i, record, layout)
    except (pa.ArrowException, OSError, ValueError) as err:
        raise ReadError(f"the Parquet data cannot be read after row {record}, damaged? ({_first_line(err)})",
                        source=source) from None


_NOTHING: list[Any] = []


def _build(columns: dict[str, list[Any]], i: int, record: int, layout: Layout) -> SourceRow:
    row: dict[str, Any] = {}
    try:
        ident = columns["id"][i] if "id" in columns else None
        if ident is not None:
            row["id"] = ident
        for key in ("input", "expected"):
            plain = columns.get(key, _NOTHING)
            typed = columns.get(f"{key}:json", _NOTHING)
            text = plain[i] if plain else None
            json_text = typed[i] if typed else None
            if text is not None and json_text is not None:
                raise _CellError(f"both '{key}' and '{key}:json' are set; use one", f"$.{key}")
            if json_text is not None:
                row[key] = _parse(json_text, f"{key}:json", f"$.{key}")
            elif text is not None:
                row[key] = text
        case: dict[str, Any] = {}
        for name in CASE_FIELDS:
            values = columns.get(f"case.{name}")
            if values is None or values[i] is None:
                continue
            value = values[i]
            if name == "extensions":
                value = _parse(value, "case.extensions", "$.metadata.case.extensions")
            case[name] = value
        metadata: dict[str, Any] = {"case": case}
        for column, key in layout.meta_columns:
            value = columns[column][i]
            if value is not None:
                metadata[key] = value
        rest_values = columns.get("metadata:json")
        rest = rest_values[i] if rest_values else None
        if rest is not None:
            extra = _parse(rest, "metadata:json", "$.metadata")
            if not isinstance(extra, dict):
                raise _CellError("'metadata:json' must hold a JSON object", "$.metadata")
            for key, value in extra.items():
                if key == "case" or key in metadata:
                    raise _CellError(f"metadata key '{key}' is set twice", paths.join("$.metadata", key))
                metadata[key] = value
        row["metadata"] = metadata
    except _CellError as err:
        return SourceRow({"id": row["id"]} if "id" in row else None, None, record,
                         parse_problem(err.message, err.path))
    return SourceRow(row, None, record, plain_json=True)


class _CellError(Exception):
    def __init__(self, message: str, path: str) -> None:
        self.message, self.path = message, path


def _parse(text: str, column: str, path: str) -> Any:
    try:
        return jsonvalue.loads(text)
    except jsonvalue.JSONValueError as err:
        raise _CellError(f"'{column}' is not valid JSON: {err}", path) from None


def schema_summary() -> list[dict[str, str]]:
    """The columns as documentation and dataset cards show them."""
    names = {"text": "string", "json": "string (JSON text)", "list": "list<string>"}
    return [{"name": name, "type": names[kind]} for name, kind in COLUMNS]


FORMAT = CanonicalParquet()

"""Canonical Parquet: lossless, typed, streamed by row groups. The rules are in docs/parquet-spec.md.

Columns keep the canonical CSV's names, one schema for every file: plain `string` columns for
`id`, `input`, `expected` and the case profile (enums as strings), `list<string>` for the case's
lists, and JSON text only where a value is not a string (`input:json`, `expected:json`), for
`case.extensions` and for the rest of `metadata` (`metadata:json`). Parquet keeps null apart from
"" and [] apart from [""] itself, so no cell needs an escape.
"""
from __future__ import annotations

import itertools
import operator
import shlex
from typing import IO, Any, Callable, Iterator, Sequence, TextIO, cast

from . import cells, jsonvalue
from .errors import ReadError, RowError
from .format import Format, WriteOptions
from .reporting import LossReporter, ReadReporter
from .row import Row
from .schema import CASE_FIELD_KINDS, CASE_FIELDS, REQUIRED_CASE_FIELDS
from .parquet_pages import BadHeader, page_sizes
from .source import MAX_CELL_BYTES, Lines, SourceRow, unreadable_write

MAGIC = b"PAR1"
ROW_GROUP_ROWS = 5_000  # rows a row group holds: the unit of memory on write (5k: 124 MB peak at 100k rows, 10k: 148 MB)
READ_BATCH_ROWS = 4_096
READ_BATCH_BYTES = 64 << 20  # fewer rows a batch where rows are large: a batch is held as Python values
MAX_PAGE_BYTES = 4 * MAX_CELL_BYTES  # a page is decompressed whole: one larger is refused from its header
METADATA_KEY = b"evalconv"
METADATA_VALUE = b'{"format":"evalconv-parquet","version":1}'
# Pinned so that the same rows give the same bytes (the golden files are compared byte for byte).
WRITER_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 3, "version": "2.6",
                                  "data_page_version": "1.0", "use_dictionary": True,
                                  "write_statistics": True, "store_schema": True}

# Case fields held as JSON text: objects and arrays of objects (extensions, contextRefs,
# permission) and integers (schemaVersion, targetTurn: any size, exactly).
_JSON_KINDS = ("object", "integer")
_JSON_CASE_FIELDS = tuple(f for f in CASE_FIELDS if CASE_FIELD_KINDS[f] in _JSON_KINDS)
# (column, kind): kind is "text", "json" or "list"; in this order in every file evalconv writes.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "text"), ("input", "text"), ("input:json", "json"), ("expected", "text"),
    ("expected:json", "json"),
    *((f"case.{f}", "list" if CASE_FIELD_KINDS[f] == "list" else "json" if CASE_FIELD_KINDS[f] in _JSON_KINDS
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
        import numpy  # noqa: F401  # pyarrow's, and the writer's
        import pyarrow
        import pyarrow.parquet
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in ("pyarrow", "numpy"):
            raise
        raise missing_dependency("Parquet") from None
    except ImportError as err:  # installed, but it did not load: a shared library that could not be mapped
        if "memory" in str(err).lower() or "map segment" in str(err):
            raise MemoryError(f"pyarrow could not be loaded: {_first_line(err)}") from None
        raise ReadError(f"Parquet needs pyarrow, which is installed but cannot be loaded ({_first_line(err)})") from None
    return pyarrow


def arrow_schema() -> Any:
    pa = _pyarrow()
    types = {"text": pa.string(), "json": pa.string(), "list": pa.list_(pa.string())}
    return pa.schema([pa.field(name, types[kind], nullable=name not in _NOT_NULL) for name, kind in COLUMNS],
                     metadata={METADATA_KEY: METADATA_VALUE})


class CanonicalParquet(Format):
    name = "parquet"
    write_shape = "columnar"
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

    def load_writer(self) -> None:
        _pyarrow()

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> "ParquetWriter":
        out.flush()  # nothing was written as text; the bytes go under the text layer
        return ParquetWriter(out.buffer)


class ParquetWriter:
    """Rows become record batches of the canonical columns; every ROW_GROUP_ROWS rows make one
    row group. Rows come one at a time (`write`) or already in columns (`write_slice`: record
    batches `Columns` built); either way the row groups, and so the bytes, are the same."""

    def __init__(self, sink: IO[bytes], on_row_group: Callable[[Any], None] | None = None) -> None:
        self._schema = arrow_schema()
        self._sink = sink
        self._writer: Any = None  # opened with the first row group: a failed read writes nothing
        self._rows = Columns()
        self._pending: list[list[Any]] = []  # [batch, start, stop]: rows not yet in a row group
        self._pending_rows = 0
        self._on_row_group = on_row_group  # sees each row group's table before it is written

    def write(self, row: Row) -> None:
        self._rows.write(row)
        if len(self._rows) >= ROW_GROUP_ROWS:
            self._take(self._rows.batch(), 0, ROW_GROUP_ROWS)

    def write_slice(self, batch: Any, start: int, stop: int) -> None:
        """Rows start..stop of a record batch in the canonical schema, after those written so far."""
        if len(self._rows):
            rows = self._rows.batch()
            self._take(rows, 0, rows.num_rows)
        self._take(batch, start, stop)

    def _take(self, batch: Any, start: int, stop: int) -> None:
        last = self._pending[-1] if self._pending else None
        if last is not None and last[0] is batch and last[2] == start:
            last[2] = stop  # the rows right after the last ones (most slices from a worker are)
        elif stop > start:
            self._pending.append([batch, start, stop])
        self._pending_rows += stop - start
        while self._pending_rows >= ROW_GROUP_ROWS:
            self._row_group(ROW_GROUP_ROWS)

    def _row_group(self, size: int) -> None:
        pa = _pyarrow()
        if self._writer is None:
            self._writer = pa.parquet.ParquetWriter(self._sink, self._schema, **WRITER_OPTIONS)
        table = pa.Table.from_batches([b.slice(start, stop - start) for b, start, stop in self._pending],
                                      schema=self._schema)
        group, rest = table.slice(0, size).combine_chunks(), table.slice(size)
        if self._on_row_group is not None:
            self._on_row_group(group)
        self._writer.write_table(group, row_group_size=ROW_GROUP_ROWS)
        self._pending = [[b, 0, b.num_rows] for b in rest.to_batches() if b.num_rows]
        self._pending_rows = rest.num_rows

    def close(self) -> None:
        if len(self._rows):
            rows = self._rows.batch()
            self._take(rows, 0, rows.num_rows)
        if self._pending_rows or self._writer is None:
            self._row_group(self._pending_rows)  # no rows at all: one empty row group, so the file has its schema
        self._writer.close()
        self._writer = None

    def __del__(self) -> None:
        # A conversion that failed drops its output file unfinished: pyarrow must not try to
        # finish it (writing to a closed file) when it is collected.
        writer = getattr(self, "_writer", None)  # None too when __init__ failed (no pyarrow)
        if writer is not None:
            writer.is_open = False


class Columns:
    """Rows gathered in per-column lists, for one record batch of the canonical schema. A row at
    a time, its dicts still in cache, is faster than a column at a time over all the rows."""

    def __init__(self) -> None:
        self._columns: list[list[Any]] = [[] for _ in COLUMNS]
        self._case_slots = [(f, self._columns[5 + i]) for i, f in enumerate(CASE_FIELDS)
                            if CASE_FIELD_KINDS[f] not in _JSON_KINDS]
        self._json_slots = [(f, self._columns[5 + CASE_FIELDS.index(f)]) for f in _JSON_CASE_FIELDS]

    def write(self, row: Row) -> None:
        c = self._columns
        c[0].append(row.id)
        _typed(row.input, c[1], c[2])
        _typed(row.expected, c[3], c[4])
        case = row.metadata["case"]
        for name, column in self._case_slots:
            column.append(case.get(name))
        for name, column in self._json_slots:
            value = case.get(name)
            column.append(None if value is None else jsonvalue.dumps(value))
        metadata = row.metadata
        c[-1].append(cells.split_metadata(metadata) if len(metadata) > 1 else None)

    def __len__(self) -> int:
        return len(self._columns[0])

    def batch(self) -> Any:
        """The rows written so far as one record batch; the lists start again empty. A cell
        over MAX_CELL_BYTES is refused: the reader would refuse the file."""
        pa = _pyarrow()
        try:
            arrays = [_list_array(pa, values) if kind == "list" else _string_array(pa, values)
                      for values, (_, kind) in zip(self._columns, COLUMNS)]
        except _CellTooLarge as err:
            column = next(name for (name, _), values in zip(COLUMNS, self._columns) if values is err.values)
            raise unreadable_write(self._columns[0][err.index], f"Parquet cell {column}", err.size,
                                   MAX_CELL_BYTES) from None
        for values in self._columns:
            values.clear()
        return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema())


def _typed(value: Any, plain: list[Any], typed: list[Any]) -> None:
    """`input` or `expected` into its plain text column and its JSON text column."""
    text, json_text = cells.split_typed(value, False)  # any text is a plain cell
    plain.append(text)
    typed.append(json_text)


# Arrays are built from their buffers: `pa.array` would import pandas on its first call (pyarrow
# checks for pandas objects), a second of start-up and 45 MB that a conversion never uses.
_MAX_OFFSET = 2**31 - 1


def _validity(pa: Any, values: Sequence[Any], nulls: int) -> Any:
    if not nulls:
        return None
    import numpy
    mask = numpy.fromiter(map(operator.is_not, values, itertools.repeat(None)), dtype=bool, count=len(values))
    return pa.py_buffer(numpy.packbits(mask, bitorder="little"))


def _offsets(pa: Any, lengths: list[int]) -> Any:
    import numpy
    offsets = numpy.zeros(len(lengths) + 1, dtype=numpy.int32)
    numpy.cumsum(lengths, out=offsets[1:])
    return pa.py_buffer(offsets)


def _string_array(pa: Any, values: Sequence[str | None]) -> Any:
    nulls = values.count(None)
    if nulls == len(values):
        return pa.nulls(len(values), pa.string())
    texts: Sequence[str] = [v or "" for v in values] if nulls else cast(Sequence[str], values)
    data = "".join(texts).encode("utf-8")  # one encode for the whole column
    if len(data) == sum(map(len, texts)):  # all ASCII: a string's length is its bytes'
        lengths = list(map(len, texts))
    else:
        lengths = [len(text.encode("utf-8")) for text in texts]
    if len(data) > MAX_CELL_BYTES and max(lengths) > MAX_CELL_BYTES:
        raise _CellTooLarge(values, lengths.index(max(lengths)), max(lengths))
    if len(data) > _MAX_OFFSET:  # past 2 GiB in one row group: let pyarrow split it
        return pa.array(values, type=pa.string())
    return pa.StringArray.from_buffers(len(values), _offsets(pa, lengths), pa.py_buffer(data),
                                       _validity(pa, values, nulls), nulls)


class _CellTooLarge(ValueError):
    def __init__(self, values: Sequence[Any], index: int, size: int) -> None:
        super().__init__(size)
        self.values, self.index, self.size = values, index, size


def _list_array(pa: Any, values: list[list[str] | None]) -> Any:
    items = [item for v in values if v is not None for item in v]
    try:
        children = _string_array(pa, items)
    except _CellTooLarge as err:  # named by the row that holds the item
        counts = itertools.accumulate(0 if v is None else len(v) for v in values)
        raise _CellTooLarge(values, next(i for i, n in enumerate(counts) if n > err.index), err.size) from None
    nulls = values.count(None)
    return pa.Array.from_buffers(pa.list_(pa.string()), len(values),
                                 [_validity(pa, values, nulls), _offsets(pa, [0 if v is None else len(v) for v in values])],
                                 null_count=nulls, children=[children])


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
    except MemoryError:  # pyarrow's ArrowMemoryError too: short of memory, not a damaged file
        raise
    except (pa.ArrowException, OSError, ValueError) as err:
        raise ReadError(f"not a readable Parquet file, truncated or damaged? ({_first_line(err)})",
                        source=source) from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _type_name(arrow_type: Any) -> str:
    return str(arrow_type).replace("large_", "")


class Layout:
    """Which column holds what, checked against the file's schema before any row is read.
    `dataset`: what to name in the `evalconv import` command a set that is not canonical is
    pointed to (the file, or the dataset folder it is in)."""

    def __init__(self, schema: Any, source: str, dataset: str | None = None) -> None:
        pa = _pyarrow()
        self.names: list[str] = []
        self.meta_columns: list[tuple[str, str]] = []
        unknown: list[str] = []
        wrong: ReadError | None = None
        for field in schema:
            name = field.name
            if name.startswith("__index_level_"):  # a pandas index written beside the data
                continue
            kind = _KINDS.get(name)
            if kind is None and name.startswith("metadata.") and name not in ("metadata.", "metadata.case"):
                kind = "text"
                self.meta_columns.append((name, name[len("metadata."):]))
            if kind is None:
                unknown.append(name)
            elif not _type_fits(pa, field.type, kind):
                want = "list<string>" if kind == "list" else "string"
                wrong = wrong or ReadError(f"column '{name}' is {_type_name(field.type)}, but it must be {want}",
                                           source=source, field=name)
            self.names.append(name)
        missing = [c for c in REQUIRED if c not in self.names and f"{c}:json" not in self.names]
        if missing:
            raise not_canonical(missing, self.names, dataset or source, source)
        if unknown:
            raise ReadError(f"unknown column '{unknown[0]}' (a canonical Parquet file has the columns in "
                            f"docs/parquet-spec.md; other metadata goes in 'metadata:json')",
                            source=source, field=unknown[0])
        if wrong is not None:
            raise wrong


def not_canonical(missing: list[str], found: list[str], dataset: str, source: str) -> ReadError:
    """A dataset that is not an evalconv set: the command that imports it by its column names."""
    shown = ", ".join(found[:8]) + (", ..." if len(found) > 8 else "")
    return ReadError(f"not a canonical set: no column for required field(s) {', '.join(missing)} "
                     f"(its columns: {shown or 'none'}); to import it by matching its columns by name, run: "
                     f"evalconv import {shlex.quote(dataset)} -o set.jsonl (add --suggest-map to see the "
                     f"matching first)", source=source)


def _type_fits(pa: Any, arrow_type: Any, kind: str) -> bool:
    t = pa.types
    if t.is_null(arrow_type):  # a column with no values at all (pandas writes these)
        return True
    if kind == "list":
        if t.is_list(arrow_type) or t.is_large_list(arrow_type):
            return _type_fits(pa, arrow_type.value_type, "text")
        return False
    return t.is_string(arrow_type) or t.is_large_string(arrow_type) or t.is_string_view(arrow_type)


def read_parquet(stream: IO[bytes], source: str, *, first_record: int = 0,
                 dataset: str | None = None) -> Iterator[SourceRow]:
    """Checks the schema at once (an error here is raised by the call), then the rows."""
    handle = open_file(stream, source)
    layout = Layout(handle.schema_arrow, source, dataset)
    _check_pages(stream, handle, layout, source)
    return _rows(_batches(handle, layout), layout, source, first_record, "Parquet")


def _batches(handle: Any, layout: Layout) -> Iterator[Any]:
    """The file's record batches: READ_BATCH_ROWS rows, fewer in a row group of large rows."""
    meta = handle.metadata
    sizes = [max(1, min(READ_BATCH_ROWS, READ_BATCH_BYTES * group.num_rows // max(group.total_byte_size, 1)))
             for group in map(meta.row_group, range(meta.num_row_groups))]
    if all(size == READ_BATCH_ROWS for size in sizes):
        yield from handle.iter_batches(batch_size=READ_BATCH_ROWS, columns=layout.names, use_threads=False)
        return
    for number, size in enumerate(sizes):
        yield from handle.iter_batches(batch_size=size, row_groups=[number], columns=layout.names, use_threads=False)


def _check_pages(stream: IO[bytes], handle: Any, layout: Layout, source: str) -> None:
    """Refuse, from the page headers, a page larger than MAX_PAGE_BYTES uncompressed in a column
    to be read. Canonical columns are one leaf each; a file laid out otherwise is left to pyarrow."""
    meta, schema = handle.metadata, handle.schema_arrow
    if meta.num_columns != len(schema):
        return
    for number in range(meta.num_row_groups):
        group = meta.row_group(number)
        for name in layout.names:
            chunk = group.column(schema.get_field_index(name))
            if chunk.total_uncompressed_size <= MAX_PAGE_BYTES:
                continue
            start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
            try:
                largest = max(page_sizes(stream, start, chunk.total_compressed_size), default=0)
            except (BadHeader, OSError):
                continue  # damaged: pyarrow says so when it reads the page
            finally:
                stream.seek(0)
            if largest > MAX_PAGE_BYTES:
                raise ReadError(f"row group {number + 1} holds a page of {largest / (1 << 20):,.0f} MiB uncompressed "
                                f"in this column, more than the {MAX_PAGE_BYTES >> 20} MiB evalconv decompresses "
                                f"at once (a cell may hold {MAX_CELL_BYTES >> 20} MiB)", source=source, field=name)


def read_arrow(stream: IO[bytes], source: str, *, first_record: int = 0,
               dataset: str | None = None) -> Iterator[SourceRow]:
    """The same columns in an Arrow IPC stream: the data files `datasets`' save_to_disk writes."""
    pa = _pyarrow()
    try:
        reader = pa.ipc.open_stream(stream)
    except MemoryError:  # pyarrow's ArrowMemoryError too: short of memory, not a damaged file
        raise
    except (pa.ArrowException, OSError, ValueError) as err:
        raise ReadError(f"not a readable Arrow stream, truncated or damaged? ({_first_line(err)})",
                        source=source) from None
    return _rows(reader, Layout(reader.schema, source, dataset), source, first_record, "Arrow")


def _rows(batches: Iterator[Any], layout: Layout, source: str, record: int, kind: str) -> Iterator[SourceRow]:
    """Rows a batch at a time; `record` is the row's 1-based number in the file."""
    pa = _pyarrow()
    try:
        for batch in batches:
            _check_cells(pa, batch, layout, source, record)
            columns = _Cells(pa, batch, layout)
            for i in range(batch.num_rows):
                record += 1
                yield _build(columns, i, record)
    except MemoryError:  # pyarrow's ArrowMemoryError too: short of memory, not a damaged file
        raise
    except (pa.ArrowException, OSError, ValueError) as err:
        raise ReadError(f"the {kind} data cannot be read after row {record}, damaged? ({_first_line(err)})",
                        source=source) from None


def _check_cells(pa: Any, batch: Any, layout: Layout, source: str, record: int) -> None:
    """A cell over MAX_CELL_BYTES is refused as CSV and JSON refuse one (naming its row)."""
    import pyarrow.compute as pc

    for name in layout.names:
        column = batch.column(name)
        if pa.types.is_null(column.type):
            continue
        if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
            sizes = pc.list_flatten(column).cast(pa.large_binary())
            rows = pc.list_parent_indices(column)
        else:
            sizes, rows = column.cast(pa.large_binary()), None
        lengths = pc.binary_length(sizes)
        largest = pc.max(lengths).as_py()
        if largest is not None and largest > MAX_CELL_BYTES:
            at = pc.index(lengths, largest).as_py()
            row = at if rows is None else rows[at].as_py()
            raise ReadError(f"row {record + row + 1}: a cell of {largest / (1 << 20):,.0f} MiB, more than the "
                            f"{MAX_CELL_BYTES >> 20} MiB limit of a cell", source=source, field=name)


class _Cells:
    """One batch's columns as Python lists, each looked up once a batch. JSON text columns come
    as UTF-8 bytes, which are parsed without being decoded to str first."""

    def __init__(self, pa: Any, batch: Any, layout: Layout) -> None:
        none = [None] * batch.num_rows
        columns = {name: _values(pa, batch.column(name), _KINDS.get(name) == "json", none)
                   for name in layout.names}
        self.ids = columns.get("id", none)
        self.typed = [(key, columns.get(key, none), columns.get(f"{key}:json", none)) for key in ("input", "expected")]
        # the JSON fields come after the text and list fields: the case's keys keep the schema's order
        self.case = [(name, columns[f"case.{name}"]) for name in CASE_FIELDS
                     if f"case.{name}" in columns and name not in _JSON_CASE_FIELDS]
        self.json_case = [(name, columns[f"case.{name}"]) for name in _JSON_CASE_FIELDS if f"case.{name}" in columns]
        self.meta = [(key, columns[column]) for column, key in layout.meta_columns]
        self.rest = columns.get("metadata:json", none)


def _values(pa: Any, column: Any, json_text: bool, none: list[None]) -> list[Any]:
    if pa.types.is_null(column.type):
        return none
    if json_text and pa.types.is_string(column.type):
        column = column.cast(pa.binary())  # the same buffers, read as bytes
    elif json_text and pa.types.is_large_string(column.type):
        column = column.cast(pa.large_binary())
    return column.to_pylist()


def _build(columns: _Cells, i: int, record: int) -> SourceRow:
    row: dict[str, Any] = {}
    try:
        ident = columns.ids[i]
        if ident is not None:
            row["id"] = ident
        for key, plain, typed in columns.typed:
            text, json_text = plain[i], typed[i]
            if text is not None and json_text is not None:
                raise RowError(f"both '{key}' and '{key}:json' are set; use one", f"$.{key}")
            if json_text is not None:
                row[key] = cells.json_cell(json_text, f"{key}:json", f"$.{key}")
            elif text is not None:
                row[key] = text
        case = {name: value for name, values in columns.case if (value := values[i]) is not None}
        for name, values in columns.json_case:
            text = values[i]
            if text is not None:
                case[name] = cells.json_cell(text, f"case.{name}", f"$.metadata.case.{name}")
        metadata: dict[str, Any] = {"case": case}
        for key, values in columns.meta:
            value = values[i]
            if value is not None:
                metadata[key] = value
        rest = columns.rest[i]
        if rest is not None:
            cells.merge_metadata_json(metadata, cells.json_cell(rest, "metadata:json", "$.metadata"))
        row["metadata"] = metadata
    except RowError as err:
        return SourceRow.failed(err, None, record, partial={"id": row["id"]} if "id" in row else None)
    return SourceRow(row, None, record, plain_json=True)


FORMAT = CanonicalParquet()

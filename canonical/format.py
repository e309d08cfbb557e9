"""The Format contract: everything a format does, declared on one class.

A format is one module (a package for a vendor) exposing `FORMAT`, an instance of a `Format`
subclass. It declares its name and extensions, its file variants and their suffixes, the suffix
a folder conversion gives its outputs, its writer and read options (typed `WriteOptions` and
`ReadOptions` subclasses), how sure it is that a file's first bytes are its own (`detect`), how
to read, how to write, and what to do once an output is in place (`committed`).

A reader turns decoded lines into `SourceRow`s and notes what it inferred in the read report; a
writer takes valid `Row`s one at a time and notes every loss in the loss report. Both reports are
seen through the protocols in `reporting`.
"""
from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Protocol, TextIO, runtime_checkable

from .errors import UsageError
from .options import ReadOptions, option, typed
from .reporting import LossReporter, ReadReporter
from .row import Row
from .source import Lines, SourceRow

# Output names that promise some other text format: a single-variant writer refuses them.
TEXT_SUFFIXES = (".json", ".csv", ".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class FieldLoss:
    """One line of a writer's declared field map: where a canonical field goes, and why."""

    path: str            # canonical path, e.g. `$.metadata.case.rubric`
    fate: str            # "native", "carried" or "dropped"
    where: str           # where it lands in the target (or "-")
    reason: str


@dataclass(frozen=True)
class Variant:
    """One kind of file a format writes, and the output names that choose it."""

    name: str                   # e.g. "jsonl"
    label: str                  # e.g. "JSONL", for messages
    suffixes: tuple[str, ...]   # e.g. (".jsonl", ".ndjson")


@dataclass(frozen=True)
class WriteOptions:
    """What every writer is told: where the output goes (None: standard output) and which of the
    format's variants it is. A format with options of its own subclasses this with `option` fields."""

    path: str | None = None
    variant: str = ""

    @classmethod
    def declared(cls) -> dict[str, dataclasses.Field[Any]]:
        """The format's own options (not `path` and `variant`), by field name."""
        return {f.name: f for f in dataclasses.fields(cls) if f.name not in ("path", "variant")}


@dataclass(frozen=True)
class SpreadsheetOptions(WriteOptions):
    """The options of a format that writes CSV a person may open in a spreadsheet: `--excel-safe`
    guards formula-looking cells where the reader takes the guard off again (canonical CSV);
    a vendor CSV whose tool would keep the guard says which rows it could not guard instead."""

    excel_safe: bool = option(False, flag="--excel-safe", goes_with="guards CSV cells; it goes with a CSV output",
                              help="CSV: put a ' before cells that a spreadsheet would run as formulas "
                                   "(read back exactly); a vendor CSV whose tool would keep the ' names "
                                   "those rows instead.")

    def __post_init__(self) -> None:
        # With no path (standard output, or the command line checked before it knows the output)
        # the variant is only the default one: nothing to refuse yet.
        if self.excel_safe and self.path is not None and self.variant not in ("", "csv"):
            raise UsageError("--excel-safe guards CSV cells; it goes with a CSV output", source=self.path)


class RowWriter(Protocol):
    """`write` each row, then `close`."""

    def write(self, row: Row) -> None: ...
    def close(self) -> None: ...


# How a format's writer writes (`Format.write_shape`):
# - "document": a row's text depends on the rows around it (a YAML document, a JSON array of
#   canonical rows, a Ragas object): rows are written one after another by one writer.
# - "line-per-row": the writer is a `LineWriter`: a row's text depends on that row alone (and on
#   what the writer `keep`s of the rows before), so the rows' texts, written one after another
#   after the header the writer writes when it opens, make the file.
# - "columnar": the writer takes rows, or already built record batches of the canonical Parquet
#   columns (`ColumnarWriter.write_slice`).
WRITE_SHAPES = ("document", "line-per-row", "columnar")


class LineWriter:
    """Base class of a "line-per-row" writer. A subclass writes its header (if any) when it opens,
    and implements `encode`; it may `keep` something of each row (counts, names for a config), and
    write a closing at `close`. `write` is supplied: `text, kept = encode(row)`, the text written
    (the file's first row given `joins[0]` in place of `joins[1]`), then `keep(kept)`.

    `encode` must note the row's losses in the report and keep nothing of the row itself but
    through `keep`: anything that writes rows (one process or several) may call `encode` on one
    writer and `keep` on another, and write the text itself."""

    # None, or (what the file's first row starts with, what `encode` starts every row with):
    # a JSON array's rows follow a comma, but for the first (JSON_ARRAY_JOINS).
    joins: tuple[str, str] | None = None
    # True: `encode` may note losses and `kept` says something of each row. False: `encode` notes
    # something of few rows (notices, such as the CSV's formula-looking cells: whoever encodes
    # elsewhere records them and notes them for the rows written), and `kept` changes only now
    # and then (the canonical CSV: the columns the line was written under).
    per_row: ClassVar[bool] = True

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._wrote_row = False

    def encode(self, row: Row) -> tuple[str, Any]:
        """The row's text, and what the writer must remember of the row (None: nothing): keep it
        small and picklable."""
        raise NotImplementedError

    def keep(self, kept: Any) -> None:
        """Remember what `encode` kept of a row (which this writer may not have encoded)."""

    def write(self, row: Row) -> None:
        text, kept = self.encode(row)
        if not self._wrote_row:
            text, self._wrote_row = first_row(text, self.joins), True
        self._out.write(text)
        self.keep(kept)

    def write_lines(self, data: bytes, runs: list[tuple[int, Any]]) -> None:
        """Rows `encode`d elsewhere (a writer with `per_row` False), as UTF-8: `runs` gives, for
        each stretch of `data` from its byte offset on, what `encode` kept for its rows."""
        self._out.flush()
        self._out.buffer.write(data)

    def close(self) -> None:
        pass


@runtime_checkable
class ColumnarWriter(RowWriter, Protocol):
    """A "columnar" writer: rows one at a time, or rows start..stop of a record batch in the
    canonical Parquet columns (`parquet_format.Columns` builds one), after the rows so far."""

    def write_slice(self, batch: Any, start: int, stop: int) -> None: ...


@runtime_checkable
class HoldingWriter(Protocol):
    """A line writer that may hold rows until the set decides how to write them (DeepEval: a set
    of chats only is conversational). Its `encode` writes every row as if the set had decided the
    usual way and keeps what it needs to write a row otherwise. While the writer is `holding`,
    rows written elsewhere are handed to it with `put`; after, they go as for any line writer."""

    holding: bool  # may it hold rows yet?
    started: bool  # has it written a row?

    def put(self, text: str, kept: Any) -> bool:
        """Write a row encoded elsewhere (`text`) and say True, or hold it (from `kept`, noting
        its losses when it writes it) and say False."""
        ...


class SideFiles(Protocol):
    """Files a format writes beside its output (a promptfoo config), handed to `committed` by
    whatever writes the output: each is published together with the output, or not at all."""

    def write_text(self, path: str, text: str) -> None: ...


JSON_ARRAY_JOINS = ("[\n  ", ",\n  ")  # a JSON array written a row at a time, two spaces in


def first_row(text: str, joins: tuple[str, str] | None) -> str:
    """A row's text from `SplitWriter.encode` as the file's first row."""
    return text if joins is None else joins[0] + text.removeprefix(joins[1])


class Format:
    """Base class; a format overrides `read` and/or `open_writer`, and declares the rest."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    extensions: ClassVar[tuple[str, ...]] = ()
    output_suffix: ClassVar[str] = ""               # a folder conversion's output names; default extensions[0]
    variants: ClassVar[tuple[Variant, ...]] = ()     # the first one is written to standard output
    options: ClassVar[type[WriteOptions]] = WriteOptions
    read_options: ClassVar[type[ReadOptions]] = ReadOptions  # what its reader may be told (`lines.told`)
    fallback: ClassVar[bool] = False                 # canonical formats: tried last, chosen when nothing else is
    streaming_read: ClassVar[bool] = False
    streaming_write: ClassVar[bool] = False
    lossless: ClassVar[bool] = False
    field_map: ClassVar[tuple[FieldLoss, ...]] = ()
    # A binary format reads `lines.binary()` (a seekable byte stream) and writes bytes to
    # `out.buffer`; a folder format reads and writes a folder (`lines.path`, `out.folder`).
    binary: ClassVar[bool] = False
    folder: ClassVar[bool] = False
    layout: ClassVar[str] = ""  # a folder format: what its path is, shown where a file format shows extensions
    write_shape: ClassVar[str] = "document"  # one of WRITE_SHAPES: how the writer writes

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A mistyped declaration is an error when the format is imported, not when it is used."""
        super().__init_subclass__(**kwargs)
        if cls.extensions and not cls.output_suffix:
            cls.output_suffix = cls.extensions[0]
        if "splits" in cls.__dict__ and "write_shape" not in cls.__dict__:
            cls.write_shape = "line-per-row"  # the contract before write_shape: `splits` said True
        if "committed" in cls.__dict__ and len(inspect.signature(cls.__dict__["committed"]).parameters) == 3:
            cls.committed = _with_files(cls.__dict__["committed"])  # type: ignore[method-assign]  # the contract before `files`
        if cls.write_shape not in WRITE_SHAPES:
            raise TypeError(f"{cls.__name__}.write_shape must be one of {', '.join(WRITE_SHAPES)}")
        if cls.folder and not cls.layout:
            raise TypeError(f"{cls.__name__} is a folder format: declare its layout (e.g. 'DIR/')")
        if not all(isinstance(v, Variant) for v in cls.variants):
            raise TypeError(f"{cls.__name__}.variants must hold Variant objects")
        if not (isinstance(cls.options, type) and issubclass(cls.options, WriteOptions)):
            raise TypeError(f"{cls.__name__}.options must be a WriteOptions subclass")
        if not (isinstance(cls.read_options, type) and issubclass(cls.read_options, ReadOptions)):
            raise TypeError(f"{cls.__name__}.read_options must be a ReadOptions subclass")
        for kind in (cls.options, cls.read_options):
            for name, declared in kind.declared().items():
                if not declared.metadata.get("flag"):
                    raise TypeError(f"{kind.__name__}.{name} is not declared with option(...)")

    @property
    def can_read(self) -> bool:
        return type(self).read is not Format.read

    @property
    def can_write(self) -> bool:
        return type(self).open_writer is not Format.open_writer

    def detect(self, head: str) -> float:
        """How sure, from 0 (not this format) to 1, that this text (the start of a file) is this
        format. Only asked when neither `--from` nor the extension decides; the registry compares
        the answers and treats a detect that raises as 0."""
        return 0.0

    def matches_path(self, path: str) -> bool:
        """Does this path's name say this format? Vendors whose extension is shared with a
        canonical format claim files by a longer suffix (`.promptfoo.yaml`)."""
        return path.lower().endswith(self.extensions) if self.extensions else False

    def names_itself(self, path: str) -> bool:
        """Does the name carry this format's name before its suffix (`set.langsmith.json`)?"""
        lowered = path.lower()
        suffixes = {*self.extensions, *(s for v in self.variants for s in v.suffixes)}
        return any(lowered.endswith(f".{self.name}{s}") for s in suffixes)

    def variant_named(self, path: str | None) -> str | None:
        """The variant whose suffix ends `path` (the longest that fits), or None."""
        lowered = (path or "").lower()
        fits = [(len(s), v.name) for v in self.variants for s in v.suffixes if lowered.endswith(s)]
        return max(fits)[1] if fits else None

    def write_variant(self, path: str | None) -> str:
        """The variant to write to `path`. Standard output gets the first. A format of several
        variants refuses a name that does not say which; a format of one refuses a name that
        promises another text format."""
        if not self.variants:
            return ""
        if path is None:
            return self.variants[0].name
        found = self.variant_named(path)
        if found is not None:
            return found
        if len(self.variants) > 1:
            listed = [s for v in self.variants for s in v.suffixes]
            raise UsageError(f"cannot tell which {self.name} file to write from the name; name it "
                             f"{', '.join(listed[:-1])} or {listed[-1]}", source=path)
        if path.lower().endswith(TEXT_SUFFIXES):
            only = self.variants[0]
            names = [e for e in self.extensions if e.endswith(only.suffixes)]
            raise UsageError(f"the {self.name} writer writes {only.label}; name the output "
                             f"{' or '.join(names)}", source=path)
        return self.variants[0].name

    def make_options(self, path: str | None = None, **given: Any) -> WriteOptions:
        """This format's typed options for writing to `path`: the one place options are checked.
        `given` may only name options the format declares (the registry words the refusal of
        another format's option)."""
        return typed(self.options, self.options.declared(), self.name, given,
                     path=path, variant=self.write_variant(path))

    def make_read_options(self, **given: Any) -> ReadOptions:
        """What this format's reader is told: the one place read options are checked. `given` may
        only name options the format declares (the registry words the refusal of another
        format's option)."""
        return typed(self.read_options, self.read_options.declared(), self.name, given)

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        raise NotImplementedError

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> RowWriter:
        raise NotImplementedError

    def load_writer(self) -> None:
        """Import the libraries the writer needs, before any output is opened: a library that
        cannot load (short of memory, OpenBLAS exits the process) then leaves no temp file."""

    def committed(self, writer: RowWriter, options: WriteOptions, files: SideFiles) -> None:
        """Called once the output is complete (never when a conversion writes nothing): the
        place for files that point at it, written with `files.write_text`."""


def _with_files(committed: Any) -> Any:
    """`committed(writer, options)` of the contract before side files came through the contract."""
    def with_files(self: Format, writer: RowWriter, options: WriteOptions, files: SideFiles) -> None:
        committed(self, writer, options)
    return with_files


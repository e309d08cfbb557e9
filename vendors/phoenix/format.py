"""Arize Phoenix datasets: examples as `create_dataset(examples=[...])` takes them, in and out.

The writer writes JSONL, one example a line, or Phoenix's CSV export layout (`.csv`); the reader
also takes a JSON array, the server's examples, that CSV export and its openai_evals / openai_ft
JSONL exports. Details:
docs/vendors/phoenix.md.
"""
from __future__ import annotations

from typing import Iterator, TextIO

from evalconv.canonical.format import Format, Variant, WriteOptions
from evalconv.canonical.head import header_cells, record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .csv_export import ExampleCSVWriter
from .fields import CSV_ID, CSV_PREFIXES, EXAMPLE_KEYS, FIELD_MAP, VENDOR
from .read import SERVER_FIELDS, read_examples
from .write import ExampleWriter

_KNOWN = frozenset(EXAMPLE_KEYS) | frozenset(SERVER_FIELDS)


class PhoenixFormat(Format):
    write_shape = "line-per-row"  # a row's text is its own
    name = VENDOR
    title = "Arize Phoenix dataset examples (JSONL for create_dataset, or its CSV export layout; reads its exports)"
    extensions = (".phoenix.jsonl", ".phoenix.json", ".phoenix.csv", ".jsonl", ".json", ".csv")
    variants = (Variant("jsonl", "JSONL examples", (".jsonl",)),
                Variant("csv", "Phoenix's CSV export layout (example_id, input_*, output_*, metadata_*)", (".csv",)))
    streaming_read = True
    streaming_write = True
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        record = record_keys(head)
        if record and record.top:
            keys = record.top
            if {"input", "output"} <= keys:
                return 1.0 if keys <= _KNOWN else 0.5
            if keys in ({"messages", "ideal"}, {"messages", "tools"}):
                return 0.5  # Phoenix's OpenAI exports; other tools write these shapes too
            return 0.0
        cells = header_cells(head) or []
        if cells and cells[0] == CSV_ID and all(c.startswith(CSV_PREFIXES) for c in cells[1:]):
            return 1.0
        return 0.0

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_examples(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter,
                    options: WriteOptions) -> ExampleWriter | ExampleCSVWriter:
        if (options.variant or self.write_variant(options.path)) == "csv":
            return ExampleCSVWriter(out, report)
        return ExampleWriter(out, report)


FORMAT = PhoenixFormat()

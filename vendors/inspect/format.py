"""Inspect AI datasets: samples as `json_dataset` and `csv_dataset` read them, in and out.

The writer picks the variant from the output's extension (`.csv`, `.json`, else JSONL); the
reader takes all three. Details: docs/vendors/inspect.md.
"""
from __future__ import annotations

from typing import Iterator, TextIO

from evalconv.canonical.format import Format, SpreadsheetOptions, Variant, WriteOptions
from evalconv.canonical.head import header_cells, record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .fields import FIELD_MAP, SAMPLE_FIELDS, VENDOR
from .read import read_samples
from .write import SampleWriter

_SAMPLE_KEYS = frozenset(SAMPLE_FIELDS)


class InspectFormat(Format):
    name = VENDOR
    title = "Inspect AI dataset samples (JSONL, JSON array or CSV, as json_dataset / csv_dataset read them)"
    extensions = (".inspect.jsonl", ".inspect.json", ".inspect.csv", ".jsonl", ".json", ".csv")
    variants = (Variant("jsonl", "JSONL", (".jsonl", ".ndjson")), Variant("json", "a JSON array", (".json",)),
                Variant("csv", "CSV", (".csv",)))
    options = SpreadsheetOptions  # --excel-safe: accepted for the CSV, which names the rows it cannot guard
    streaming_read = True
    streaming_write = True
    write_shape = "line-per-row"
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        keys = record_keys(head)
        if keys and keys.top:
            return 1.0 if "target" in keys.top and "input" in keys.top and keys.top <= _SAMPLE_KEYS else 0.0
        first = header_cells(head) or []
        return 0.9 if "input" in first and "target" in first and set(first) <= _SAMPLE_KEYS else 0.0

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_samples(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> SampleWriter:
        return SampleWriter(out, report, options.variant or self.write_variant(options.path))


FORMAT = InspectFormat()

"""Ragas evaluation datasets: samples as EvaluationDataset loads and saves them.

The writer picks the variant from the output's extension (`.csv` as to_csv writes it, `.json`
an array for from_list, else JSONL for from_jsonl); the reader takes all three. Details:
docs/vendors/ragas.md.
"""
from __future__ import annotations

from typing import Iterator, TextIO

from evalconv.canonical.format import Format, SpreadsheetOptions, Variant, WriteOptions
from evalconv.canonical.head import header_cells, record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .fields import FIELD_MAP, VENDOR
from .read import KNOWN, read_samples
from .write import SampleWriter


class RagasFormat(Format):
    name = VENDOR
    title = "Ragas evaluation samples (JSONL for from_jsonl, JSON array, or to_csv's CSV)"
    extensions = (".ragas.jsonl", ".ragas.json", ".ragas.csv", ".jsonl", ".json", ".csv")
    variants = (Variant("jsonl", "JSONL", (".jsonl",)), Variant("json", "a JSON array", (".json",)),
                Variant("csv", "CSV as to_csv writes it", (".csv",)))
    options = SpreadsheetOptions  # --excel-safe: accepted for the CSV, which names the rows it cannot guard
    streaming_read = True
    streaming_write = True  # rows wait in a spool on disk: one chat input makes the set multi-turn
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        record = record_keys(head)
        keys = record.top if record else frozenset(header_cells(head) or ())
        return 1.0 if "user_input" in keys and keys <= KNOWN else 0.0

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_samples(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> SampleWriter:
        return SampleWriter(out, report, options.variant or self.write_variant(options.path))


FORMAT = RagasFormat()

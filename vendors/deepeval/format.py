"""DeepEval goldens: `EvaluationDataset.save_as` files (JSON array, JSONL, CSV) in and out.

The writer picks the variant from the output's extension (`.json`, `.jsonl`/`.ndjson`, `.csv`;
a JSON array on standard output); the reader picks it from the content. Details: docs/vendors/deepeval.md.
"""
from __future__ import annotations

from typing import Iterator, TextIO

from evalconv.canonical.format import Format, SpreadsheetOptions, Variant, WriteOptions
from evalconv.canonical.head import header_cells, record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .fields import CONVERSATIONAL_KEYS, FIELD_MAP, GOLDEN_KEYS
from .read import read_goldens
from .write import GoldenWriter

# One of these, with an input or a scenario, marks a golden; a record of golden keys only is surely one.
_MARKS = frozenset({"expected_output", "actual_output", "additional_metadata", "retrieval_context",
                    "expected_tools", "tools_called", "custom_column_key_values", "expected_outcome",
                    "source_file", "turns"})
_KNOWN = frozenset(GOLDEN_KEYS) | frozenset(CONVERSATIONAL_KEYS)
_MIXED = 0.5  # golden marks beside keys no golden has: likely goldens, but a format that knows them all wins


class DeepEvalFormat(Format):
    name = "deepeval"
    title = "DeepEval goldens (JSON array, JSONL or CSV, as EvaluationDataset.save_as writes them)"
    # The double suffixes come first: a folder conversion names its outputs `<name>.deepeval.json`.
    extensions = (".deepeval.json", ".deepeval.jsonl", ".deepeval.csv", ".json", ".jsonl", ".csv")
    variants = (Variant("json", "a JSON array", (".json",)), Variant("jsonl", "JSONL", (".jsonl", ".ndjson")),
                Variant("csv", "CSV", (".csv",)))
    options = SpreadsheetOptions  # --excel-safe: accepted for the CSV, which names the rows it cannot guard
    streaming_read = True    # all three variants: a JSON array through a sliding window, JSONL, CSV
    streaming_write = True
    write_shape = "line-per-row"
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        return _confidence(head)

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_goldens(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> GoldenWriter:
        return GoldenWriter(out, report, options.variant or self.write_variant(options.path))


def _confidence(head: str) -> float:
    text = head.lstrip("\ufeff \t\r\n")
    if text.startswith(("[", "{")):
        record = record_keys(text)
        keys = record.top if record else frozenset()
    else:
        keys = frozenset(header_cells(text) or ())
    if not keys & _MARKS or not keys & {"input", "scenario"}:
        return 0.0
    return 1.0 if keys <= _KNOWN else _MIXED


FORMAT = DeepEvalFormat()

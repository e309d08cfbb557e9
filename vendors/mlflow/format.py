"""MLflow GenAI evaluation datasets: records as `merge_records` takes them, and `to_df()` dumps.

Writes one `{inputs, expectations, tags}` record a line. Reads those back exactly, plus JSON
arrays of records and `to_df()` saved as JSON records (MLflow's columns reported, not kept). The
rules are in docs/vendors/mlflow.md; its field table is `FIELD_MAP` rendered.
"""
from __future__ import annotations

from typing import Iterator, TextIO

from evalconv.canonical.format import Format, Variant, WriteOptions
from evalconv.canonical.head import record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .fields import FIELD_MAP, RECORD_FIELDS, SYSTEM_FIELDS, VENDOR
from .read import read_records
from .write import DatasetRecordWriter

_KNOWN = frozenset(RECORD_FIELDS | SYSTEM_FIELDS.keys())
_MARKS = frozenset({"expectations", "tags", "dataset_record_id", "source_type"})


class MLflowFormat(Format):
    write_shape = "line-per-row"  # one JSON record a line, each the row's own
    name = VENDOR
    title = "MLflow GenAI evaluation dataset records (JSONL for merge_records; reads to_df() JSON dumps)"
    extensions = (".mlflow.jsonl", ".mlflow.json", ".jsonl", ".json")
    variants = (Variant("jsonl", "JSONL", (".jsonl", ".ndjson")),)
    streaming_read = True
    streaming_write = True
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        keys = record_keys(head)
        if not keys or not keys.top or "inputs" not in keys.top:
            return 0.0
        if keys.top & _MARKS:
            return 1.0 if keys.top <= _KNOWN else 0.5
        return 0.0

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_records(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> DatasetRecordWriter:
        self.write_variant(options.path)  # refuses a name that promises another format
        return DatasetRecordWriter(out, report)


FORMAT = MLflowFormat()

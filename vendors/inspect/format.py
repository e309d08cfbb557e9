"""Inspect AI datasets: samples as `json_dataset` and `csv_dataset` read them, in and out.

The writer picks the variant from the output's extension (`.csv`, `.json`, else JSONL); the
reader takes all three. Details: docs/vendors/inspect.md.
"""
from __future__ import annotations

from typing import Any, Iterator, TextIO

from evalconv.canonical.format import Format
from evalconv.canonical.source import Lines, SourceRow

from .._common import records as rec
from .fields import FIELD_MAP, SAMPLE_FIELDS, VENDOR
from .read import read_samples
from .write import SampleWriter, variant_for

_SAMPLE_KEYS = frozenset(SAMPLE_FIELDS)


class InspectFormat(Format):
    name = VENDOR
    title = "Inspect AI dataset samples (JSONL, JSON array or CSV, as json_dataset / csv_dataset read them)"
    extensions = (".inspect.jsonl", ".inspect.json", ".inspect.csv", ".jsonl", ".json", ".csv")
    streaming_read = True
    streaming_write = True
    field_map = FIELD_MAP

    def detect(self, head: str) -> bool:
        keys = rec.first_record_keys(head)
        if keys:
            top = {k for k in keys if "." not in k}
            return "target" in top and "input" in top and top <= _SAMPLE_KEYS
        first = head.lstrip("\ufeff").split("\n", 1)[0].strip().split(",")
        return "input" in first and "target" in first and set(first) <= _SAMPLE_KEYS

    def read(self, lines: Lines, report: Any) -> Iterator[SourceRow]:
        return read_samples(lines, report)

    def open_writer(self, out: TextIO, report: Any, options: dict[str, Any]) -> SampleWriter:
        return SampleWriter(out, report, variant_for(options.get("path")))


FORMAT = InspectFormat()

"""Ragas evaluation datasets: samples as EvaluationDataset loads and saves them.

The writer picks the variant from the output's extension (`.csv` as to_csv writes it, `.json`
an array for from_list, else JSONL for from_jsonl); the reader takes all three. Details:
docs/vendors/ragas.md.
"""
from __future__ import annotations

import csv
from typing import Any, Iterator, TextIO

from evalconv.canonical.format import Format
from evalconv.canonical.source import Lines, SourceRow

from .._common import records as rec
from .fields import FIELD_MAP, VENDOR
from .read import KNOWN, read_samples
from .write import SampleWriter, variant_for


class RagasFormat(Format):
    name = VENDOR
    title = "Ragas evaluation samples (JSONL for from_jsonl, JSON array, or to_csv's CSV)"
    extensions = (".ragas.jsonl", ".ragas.json", ".ragas.csv", ".jsonl", ".json", ".csv")
    streaming_read = True
    streaming_write = False  # one dataset is all single-turn or all multi-turn: decided at the end
    field_map = FIELD_MAP

    def detect(self, head: str) -> bool:
        keys = rec.first_record_keys(head)
        if keys is None:
            first = head.lstrip("\ufeff").split("\n", 1)[0]
            try:
                keys = set(next(csv.reader([first]), []))
            except csv.Error:
                return False
        top = {k for k in keys if "." not in k}
        return "user_input" in top and top <= KNOWN

    def read(self, lines: Lines, report: Any) -> Iterator[SourceRow]:
        return read_samples(lines, report)

    def open_writer(self, out: TextIO, report: Any, options: dict[str, Any]) -> SampleWriter:
        return SampleWriter(out, report, variant_for(options.get("path")))


FORMAT = RagasFormat()

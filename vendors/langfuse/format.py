"""Langfuse dataset items: JSONL of `CreateDatasetItemRequest` bodies (what `create_dataset_item`
sends), a JSON array of them, or CSV for the UI's uploader; reads those, the SDK's keyword
arguments, the API's items and the UI's JSON and CSV exports. Details: docs/vendors/langfuse.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Iterator, TextIO

from evalconv.canonical.errors import UsageError
from evalconv.canonical.format import Format, SpreadsheetOptions, Variant, WriteOptions, option
from evalconv.canonical.head import header_cells, record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .fields import CSV_COLUMNS, FIELD_MAP, ITEM_FIELDS, SNAKE, SYSTEM_FIELDS, VENDOR
from .read import read_items
from .write import ItemWriter

_CAMEL_MARKS = frozenset({"expectedOutput", "datasetName", "datasetId", "sourceTraceId", "sourceObservationId"})
_SNAKE_MARKS = frozenset({"dataset_name", "source_trace_id", "source_observation_id"})
_KNOWN = frozenset(ITEM_FIELDS) | SYSTEM_FIELDS.keys() | SNAKE.keys()
_CSV_KNOWN = frozenset(CSV_COLUMNS) | SYSTEM_FIELDS.keys()
DEFAULT_DATASET = "evalconv"


@dataclass(frozen=True)
class LangfuseOptions(SpreadsheetOptions):
    dataset: str | None = option(None, flag="--langfuse-dataset", metavar="NAME",
                                 goes_with="names a Langfuse dataset; it goes with --to langfuse",
                                 help="Langfuse: the dataset the items go to (their datasetName, and the namespace "
                                      "of their ids); default: the output's name before its suffix.")


def dataset_name(options: WriteOptions) -> str:
    given = options.dataset if isinstance(options, LangfuseOptions) else None
    if given is not None:
        if not given.strip():
            raise UsageError("--langfuse-dataset: a Langfuse dataset needs a name")
        return given
    if options.path is None:
        return DEFAULT_DATASET
    name = PurePath(options.path).name
    name = re.sub(r"(\.langfuse)?\.(jsonl|ndjson|json|csv)$", "", name, flags=re.I)
    return name or DEFAULT_DATASET


class LangfuseFormat(Format):
    write_shape = "line-per-row"  # a row's text is its own
    name = VENDOR
    title = "Langfuse dataset items (create_dataset_item bodies as JSONL, JSON or CSV; reads the UI's exports)"
    extensions = (".langfuse.jsonl", ".langfuse.json", ".langfuse.csv", ".jsonl", ".json", ".csv")
    variants = (Variant("jsonl", "JSONL", (".jsonl", ".ndjson")), Variant("json", "a JSON array", (".json",)),
                Variant("csv", "CSV", (".csv",)))
    options = LangfuseOptions
    streaming_read = True
    streaming_write = True
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        keys = record_keys(head)
        if keys is not None:
            if not keys.top or not keys.top & (_CAMEL_MARKS | _SNAKE_MARKS):
                return 0.0
            return 1.0 if keys.top <= _KNOWN else 0.5
        cells = header_cells(head) or []
        if "input" in cells and "expectedOutput" in cells:
            return 1.0 if set(cells) <= _CSV_KNOWN else 0.5
        return 0.0

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_items(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> ItemWriter:
        return ItemWriter(out, report, options.variant or self.write_variant(options.path), dataset_name(options))


FORMAT = LangfuseFormat()

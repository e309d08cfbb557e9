"""Comet Opik datasets and test suites: dataset items as `Dataset.insert` and
`read_jsonl_from_file` take them (JSONL), or test-suite items (`.suite.jsonl`) as
`TestSuite.insert_from_jsonl_file` takes them; reads those, the JSON arrays `to_json()` gives and
the CLI's `opik export dataset` JSON. Details: docs/vendors/opik.md.
"""
from __future__ import annotations

import re
from typing import Iterator, TextIO

from evalconv.canonical.format import Format, Variant, WriteOptions
from evalconv.canonical.head import record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .fields import CONTENT_KEYS, EXPORT_KEYS, FIELD_MAP, MODEL_FIELDS, SUITE_KEYS, VENDOR
from .read import read_items
from .write import ItemWriter

_UUID_ID = re.compile(r'"id"\s*:\s*"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"')
_MARKS = frozenset({"trace_id", "span_id", "evaluators", "execution_policy"})  # DatasetItem's own fields
_KNOWN = frozenset(MODEL_FIELDS) | frozenset(CONTENT_KEYS)


class OpikFormat(Format):
    write_shape = "line-per-row"  # a row's text is its own
    name = VENDOR
    title = "Comet Opik dataset items and test-suite items (JSONL for insert; reads to_json and the CLI's export)"
    extensions = (".opik.suite.jsonl", ".opik.jsonl", ".opik.json", ".suite.jsonl", ".jsonl", ".json")
    variants = (Variant("jsonl", "dataset items (JSONL)", (".jsonl",)),
                Variant("suite", "test-suite items (JSONL)", (".suite.jsonl",)))
    streaming_read = True
    streaming_write = True
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        keys = record_keys(head)
        if keys is None or not keys.top:
            return 0.0
        top = keys.top
        if "data" in top and top <= set(SUITE_KEYS):
            return 1.0 if top & {"assertions", "execution_policy"} or _UUID_ID.search(head) else 0.5
        if "items" in top and "downloaded_at" in top:  # `opik export dataset`; an experiment's export is run output
            return 0.0 if "experiment" in top else 1.0 if top <= set(EXPORT_KEYS) else 0.5
        if not top & {"input", "expected_output"}:
            return 0.0
        if top & _MARKS or ("expected_output" in top and _UUID_ID.search(head)):
            return 1.0 if top <= _KNOWN else 0.5
        return 0.0

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_items(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> ItemWriter:
        return ItemWriter(out, report, options.variant or self.write_variant(options.path))


FORMAT = OpikFormat()

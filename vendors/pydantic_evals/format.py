"""pydantic-evals Dataset files: YAML or JSON, as `Dataset.from_file` reads and `to_file` writes them.

The writer picks the variant from the output's name (`.json`, else YAML); the reader takes both,
by content. Details: docs/vendors/pydantic-evals.md.
"""
from __future__ import annotations

import re
from typing import Iterator, TextIO

from evalconv.canonical.format import Format, Variant, WriteOptions
from evalconv.canonical.head import record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .fields import DATASET_KEYS, FIELD_MAP, VENDOR
from .read import read_dataset
from .write import DatasetWriter

_TOP_CASES = re.compile(r"^cases:[ \t]*(#.*)?\r?$", re.M)
_CASE_KEY = re.compile(r"^[ \t-]+(name|inputs|expected_output|evaluators):", re.M)
_OTHER_TOP = re.compile(r"^([A-Za-z_$][\w$-]*):", re.M)


class PydanticEvals(Format):
    write_shape = "line-per-row"  # a case's text is its own; the `cases:` key comes with the first
    name = VENDOR
    title = "pydantic-evals Dataset files (YAML or JSON, as Dataset.from_file reads them)"
    extensions = (".pydantic-evals.yaml", ".pydantic-evals.yml", ".pydantic-evals.json", ".yaml", ".yml", ".json")
    variants = (Variant("yaml", "YAML", (".yaml", ".yml")), Variant("json", "JSON", (".json",)))
    streaming_write = True
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        keys = record_keys(head)
        if keys is not None:
            if "cases" not in keys.top or head.lstrip("\ufeff \t\r\n").startswith("["):
                return 0.0
            return 1.0 if keys.top <= set(DATASET_KEYS) else 0.5
        if not _TOP_CASES.search(head):
            return 0.0
        top = {m.group(1) for m in _OTHER_TOP.finditer(head)}
        if not top <= set(DATASET_KEYS):
            return 0.5 if _CASE_KEY.search(head) else 0.0
        return 1.0 if _CASE_KEY.search(head) or re.search(r"^cases:\s*\[\s*\]", head, re.M) else 0.6

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_dataset(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> DatasetWriter:
        return DatasetWriter(out, report, options.variant or self.write_variant(options.path))


FORMAT = PydanticEvals()

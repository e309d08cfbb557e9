"""DeepEval goldens: `EvaluationDataset.save_as` files (JSON array, JSONL, CSV) in and out.

The writer picks the variant from the output's extension (`.json`, `.jsonl`/`.ndjson`, `.csv`;
a JSON array on standard output); the reader picks it from the content. Details: docs/vendors/deepeval.md.
"""
from __future__ import annotations

import csv
from typing import Iterator, TextIO

from evalconv.canonical.format import Format, Variant, WriteOptions
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .fields import FIELD_MAP
from .read import read_goldens
from .write import GoldenWriter

_WHITESPACE = "\ufeff \t\r\n"
# Keys only a DeepEval golden has; a file needs one of them (and an input or a scenario).
DEEPEVAL_KEYS = frozenset({"expected_output", "actual_output", "additional_metadata", "retrieval_context",
                           "expected_tools", "tools_called", "custom_column_key_values", "expected_outcome",
                           "source_file", "turns"})
# Keys of canonical rows, LangSmith, Braintrust and promptfoo records: never a DeepEval golden's.
OTHER_KEYS = frozenset({"metadata", "inputs", "outputs", "expected", "_xact_id", "tags", "vars", "assert"})
_TOKEN_COLUMNS = frozenset({"input_token_count", "output_token_count"})


class DeepEvalFormat(Format):
    name = "deepeval"
    title = "DeepEval goldens (JSON array, JSONL or CSV, as EvaluationDataset.save_as writes them)"
    # The double suffixes come first: a folder conversion names its outputs `<name>.deepeval.json`.
    extensions = (".deepeval.json", ".deepeval.jsonl", ".deepeval.csv", ".json", ".jsonl", ".csv")
    variants = (Variant("json", "a JSON array", (".json",)), Variant("jsonl", "JSONL", (".jsonl", ".ndjson")),
                Variant("csv", "CSV", (".csv",)))
    streaming_read = True    # all three variants: a JSON array through a sliding window, JSONL, CSV
    streaming_write = True
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        return 1.0 if _looks_like_goldens(head) else 0.0

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_goldens(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> GoldenWriter:
        return GoldenWriter(out, report, options.variant or self.write_variant(options.path))


def _looks_like_goldens(head: str) -> bool:
    text = head.lstrip(_WHITESPACE)
    if text.startswith(("[", "{")):
        keys = set(first_object_keys(text))
    else:
        first = text.split("\n", 1)[0]
        try:
            keys = set(next(csv.reader([first]), []))
        except csv.Error:
            return False
        if "id" in keys or any(k.startswith(("case.", "metadata", "__")) for k in keys) or \
                any(k.startswith(("input_", "output_")) for k in keys - _TOKEN_COLUMNS):
            return False  # canonical, promptfoo or LangSmith CSV
    return bool(keys & DEEPEVAL_KEYS) and bool(keys & {"input", "scenario"}) and not keys & OTHER_KEYS


def first_object_keys(text: str) -> list[str]:
    """The top-level keys of the first JSON object in `text`, which may be cut short."""
    keys: list[str] = []
    depth, target, i, n = 0, None, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= n:
                break
            after = end + 1
            while after < n and text[after] in _WHITESPACE:
                after += 1
            if depth == target and after < n and text[after] == ":":
                keys.append(text[i + 1:end])
            i = end + 1
            continue
        if ch in "{[":
            depth += 1
            if ch == "{" and target is None:
                target = depth
        elif ch in "}]":
            if depth == target:
                break
            depth -= 1
        i += 1
    return keys


FORMAT = DeepEvalFormat()

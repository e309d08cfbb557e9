"""OpenAI Evals: the Evals API's JSONL data source items, and the legacy `evals` registry JSONL.

The writer picks the variant from the output's name (`.registry.jsonl`: registry samples, else
API items); the reader tells them apart by their keys. `--eval-definition PATH` also writes the
eval (testing criteria chosen by oracle type) and a run over the items. Details:
docs/vendors/openai-evals.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, TextIO

from evalconv.canonical.format import Format, RowWriter, SideFiles, Variant, WriteOptions, option
from evalconv.canonical.head import record_keys
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.source import Lines, SourceRow

from .definition import check_definition_option, write_definition
from .fields import FIELD_MAP, VENDOR
from .read import read_lines
from .write import LineWriter

_REGISTRY_MARKS = frozenset({"input", "ideal"})
_REGISTRY_KNOWN = frozenset({"input", "ideal", "id", "metadata"})


@dataclass(frozen=True)
class OpenAIEvalsOptions(WriteOptions):
    eval_definition: str | None = option(
        None, flag="--eval-definition", metavar="PATH", writes_file=True,
        goes_with="writes an OpenAI eval definition; it goes with --to openai-evals",
        help="openai-evals: also write the eval (testing criteria chosen by oracle type) and a run "
             "over the items here, as JSON for client.evals.create / runs.create.")


class OpenAIEvalsFormat(Format):
    write_shape = "line-per-row"  # a row's text is its own
    name = VENDOR
    title = "OpenAI Evals (Evals API JSONL items, or the legacy evals registry JSONL: input + ideal)"
    extensions = (".openai-evals.jsonl", ".registry.jsonl", ".jsonl")
    variants = (Variant("items", "Evals API JSONL items", (".jsonl",)),
                Variant("registry", "legacy evals registry JSONL", (".registry.jsonl",)))
    options = OpenAIEvalsOptions
    streaming_read = True
    streaming_write = True
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        keys = record_keys(head)
        if not keys or not keys.top:
            return 0.0
        if "item" in keys.top:
            return 1.0 if keys.top <= {"item", "sample"} else 0.0
        if _REGISTRY_MARKS <= keys.top:
            return 1.0 if keys.top <= _REGISTRY_KNOWN else 0.5
        return 0.0

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return read_lines(lines, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> LineWriter:
        variant = options.variant or self.write_variant(options.path)
        definition = options.eval_definition if isinstance(options, OpenAIEvalsOptions) else None
        check_definition_option(definition, options.path, variant)
        return LineWriter(out, report, variant)

    def committed(self, writer: RowWriter, options: WriteOptions, files: SideFiles) -> None:
        """The items file is in place: only now write the definition whose run reads it."""
        definition = options.eval_definition if isinstance(options, OpenAIEvalsOptions) else None
        if definition and options.path and isinstance(writer, LineWriter):
            notes = write_definition(definition, options.path, writer.families, files)
            writer.note_definition(definition, notes)


FORMAT = OpenAIEvalsFormat()

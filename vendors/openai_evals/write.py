"""Canonical rows -> OpenAI Evals lines: Evals API items (`{"item": {...}}`) or registry samples.

`build_line` is also what the reader re-runs to tell an edit made in the file from the copy
evalconv carried: a native value that differs from what this module writes was changed there.
"""
from __future__ import annotations

from typing import Any, TextIO

from evalconv.canonical.format import LineWriter as BaseLineWriter
from evalconv.canonical import jsonvalue, paths
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.row import Row
from evalconv.canonical.validator import review_mark

from .._common import records as rec
from .fields import CARRIED, ITEM_KEYS, MESSAGE_KEYS, MESSAGE_ROLES, REASONS, REGISTRY_CARRIED, REGISTRY_KEYS, VENDOR
from .graders import Families, family, testing_criteria

STARTER_KEY = "starter_example"  # tells a reader of the item (a grader, the dashboard) the row is a starter


def chat_messages(value: Any) -> list[dict[str, Any]] | None:
    """The messages of a `{"messages": [...]}` input that the Evals API sends exactly, else None."""
    if not (isinstance(value, dict) and value.keys() == {"messages"}):
        return None
    messages = value["messages"]
    if not (isinstance(messages, list) and messages):
        return None
    for m in messages:
        if not (isinstance(m, dict) and m.keys() == MESSAGE_KEYS and m.get("role") in MESSAGE_ROLES
                and isinstance(m.get("content"), str)):
            return None
    return messages


def extension(row: Row) -> dict[str, Any]:
    ext = row.case.get("extensions", {}).get(VENDOR)
    return ext if isinstance(ext, dict) else {}


def extra_fields(ext: dict[str, Any], own: tuple[str, ...]) -> dict[str, Any]:
    """The item fields evalconv does not know, kept in extensions.openai-evals.fields (never one of ours)."""
    fields = ext.get("fields")
    return {k: v for k, v in fields.items() if k not in own} if isinstance(fields, dict) else {}


def messages_for(row: Row, envelope: dict[str, Any], report: LossReporter | None) -> list[dict[str, Any]]:
    value = row.input
    if isinstance(value, str):
        envelope["text"] = True
        return [{"role": "user", "content": value}]
    messages = chat_messages(value)
    if messages is not None:
        return messages
    envelope["input"] = value
    if report is not None:
        report.carry("$.input", row.id, REASONS["input.messages"])
    return [{"role": "user", "content": jsonvalue.dumps(value)}]


def ideal_for(row: Row, envelope: dict[str, Any], report: LossReporter | None) -> Any:
    """The registry's ideal: a non-empty text, or a list of non-empty texts for an acceptable set;
    else [] (no answer matches it; "" would: every answer starts with it), the value carried."""
    expected, oracle = row.expected, row.case["oracleType"]
    if oracle == "reference-answer" and isinstance(expected, str) and expected:
        return expected
    if (oracle == "acceptable-set" and isinstance(expected, list) and expected
            and all(isinstance(m, str) and m for m in expected)):
        return list(expected)
    if row.has_expected:
        envelope["expected"] = expected
        if report is not None:
            report.carry("$.expected", row.id, REASONS["expected.ideal"])
    return []


def build_line(row: Row, report: LossReporter | None, variant: str) -> dict[str, Any]:
    """The line of one row: `{"item": {...}}` (variant "items") or a registry sample ("registry")."""
    envelope: dict[str, Any] = {}
    ext = extension(row)
    messages = messages_for(row, envelope, report)
    metadata = row.metadata
    mark = review_mark(row.case)
    if mark and STARTER_KEY not in metadata:  # a mark for people, dropped on read
        metadata = {**metadata, STARTER_KEY: mark}
        envelope["starter"] = True
    if variant == "registry":
        record: dict[str, Any] = {"input": messages, "ideal": ideal_for(row, envelope, report), "id": row.id}
    else:
        record = {"id": row.id, "messages": messages}
        if row.has_expected:
            record["expected"] = row.expected
    record["metadata"] = rec.add_envelope(metadata, envelope)
    record.update(extra_fields(ext, REGISTRY_KEYS if variant == "registry" else ITEM_KEYS))
    if report is not None:
        _note(row, report, variant)
    if variant == "registry":
        return record
    line: dict[str, Any] = {"item": record}
    if isinstance(ext.get("sample"), dict):
        line["sample"] = ext["sample"]
    return line


def _note(row: Row, report: LossReporter, variant: str) -> None:
    carried = REGISTRY_CARRIED if variant == "registry" else CARRIED
    generic = carried["$.metadata.case.caseId"]  # a field of a later profile version: the same reason
    report.carry_all(((f"$.metadata.case.{name}", carried.get(f"$.metadata.case.{name}", generic))
                      for name in row.case), row.id)
    if rec.ENVELOPE in row.metadata:
        report.carry("$.metadata.evalconv", row.id, carried["$.metadata.evalconv"])
    if variant == "registry":
        report.carry_all(((paths.join("$.metadata", key), REASONS["metadata.registry"]) for key in row.metadata
                          if key not in ("case", rec.ENVELOPE)), row.id)


class LineWriter(BaseLineWriter):
    """Streams JSONL lines; remembers each row's grader family for the eval definition."""

    joins = None

    def __init__(self, out: TextIO, report: LossReporter, variant: str) -> None:
        super().__init__(out)  # LineWriter.write: encode, the first row's joins, keep
        self._out, self._report, self._variant = out, report, variant
        self.families = Families()
        self._unmatched = 0

    def encode(self, row: Row) -> tuple[str, tuple[Any, ...]]:
        rec.check_value(row.input, row.id, "$.input", "OpenAI Evals")
        if row.has_expected:
            rec.check_value(row.expected, row.id, "$.expected", "OpenAI Evals")
        rec.check_value(row.metadata, row.id, "$.metadata", "OpenAI Evals")
        line = build_line(row, self._report, self._variant)
        unmatched = self._variant == "registry" and line["ideal"] == []
        return jsonvalue.dumps(line) + "\n", (family(row), unmatched)

    def keep(self, kept: tuple[Any, ...]) -> None:
        kind, unmatched = kept
        self.families.add(kind)
        self._unmatched += unmatched

    def close(self) -> None:
        if self._variant == "registry":
            if self._unmatched:
                self._say(REGISTRY_UNCHECKED.format(n=self._unmatched))
            return
        if self.families.counts:
            for note in testing_criteria(self.families)[1]:
                self._say(note)

    def note_definition(self, path: str, notes: list[str]) -> None:
        self._report.notes.append(f"OpenAI eval definition written to {path}: upload the items "
                                  "(purpose \"evals\"), put the file id and the model under test in its run")

    def _say(self, text: str) -> None:
        self._report.notice(text)  # on stderr, and in the report's notices


REGISTRY_UNCHECKED = ("{n} cases have no ideal the registry's Match templates can check (no reference text or "
                      "set of texts): their ideal is [], which no answer matches, and the value is carried in "
                      "metadata.evalconv.expected; grade them another way")

"""Canonical rows -> Opik items: dataset items as `Dataset.insert` / `read_jsonl_from_file` take
them (JSONL, the default), or test-suite items (`TestSuiteItem`: data, assertions,
execution_policy) as `TestSuite.insert_from_jsonl_file` takes them (`.suite.jsonl`).

`build_item` is also what the reader re-runs to tell an edit made in Opik from what evalconv wrote.
"""
from __future__ import annotations

import hashlib
import uuid
from typing import Any, TextIO

from evalconv.canonical import jsonvalue
from evalconv.canonical.format import LineWriter as BaseLineWriter
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.row import Row
from evalconv.canonical.suggest import count
from evalconv.canonical.validator import review_mark

from .._common import records as rec
from .fields import CARRIED, CONTENT_KEYS, MODEL_FIELDS, NATIVE_EXTRAS, NEVER_PASSES, STARTER_KEY, VENDOR
from .grading import JUDGE, METRIC, UNCHECKED, plan

SUITE = "suite"
# The UUIDv7 time of every derived item id: 2025-01-01T00:00:00Z, so that the id depends on the case id alone.
STAMP_MS = 1_735_689_600_000

METRIC_NOTICE = ("Opik's per-item checks are LLM judges only: {n} (reference, acceptable set, tool "
                 "calls) carry no assertion; grade them with evaluate(scoring_metrics=[evalconv.vendors.opik.metrics."
                 "case_metric()]), which uses Opik's Equals and never passes a case it cannot check")
UNCHECKED_NOTICE = ("Opik cannot check {n} (a person grades them, or no check fits): case_metric scores them "
                    "0 with scoring_failed, never a pass")
SUITE_NEVER = ("an Opik test suite reads an item with no assertion as passed: {n} that no assertion checks get "
               "execution_policy {{runs_per_item: 1, pass_threshold: 2}}, which no run meets, so they fail the "
               "suite (not checked) rather than pass it")
DATASET_JUDGED = ("{n} graded by a model judge: their criteria are in metadata.case; write the test-suite "
                  "variant (.suite.jsonl) to have Opik assert them")


def item_id(case_id: str) -> str:
    """The Opik item id of a case: the case id when it is a UUID, else a UUIDv7 whose time is
    STAMP_MS and whose 74 other bits are a SHA-256 digest of the case id (the same every time)."""
    if len(case_id) >= 32:  # shorter text is never a UUID (32 hex digits, hyphens and braces aside)
        try:
            return str(uuid.UUID(case_id))
        except ValueError:
            pass
    digest = bytearray(_STAMP + hashlib.sha256(case_id.encode("utf-8")).digest()[:10])
    digest[6] = 0x70 | (digest[6] & 0x0F)
    digest[8] = 0x80 | (digest[8] & 0x3F)
    h = digest.hex()  # str(uuid.UUID(bytes=digest)), without building the object
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_STAMP = STAMP_MS.to_bytes(6, "big")


def extension(row: Row) -> dict[str, Any]:
    ext = row.case.get("extensions", {}).get(VENDOR)
    return ext if isinstance(ext, dict) else {}


def content(row: Row) -> dict[str, Any]:
    """The item's content: input, expected_output (when the case has one) and metadata."""
    envelope: dict[str, Any] = {}
    value: dict[str, Any] = {"input": row.input}
    if row.has_expected:
        value["expected_output"] = row.expected
    extra = extension(row).get("content")  # content keys an item held beside these, read from Opik
    if isinstance(extra, dict):
        value.update((k, v) for k, v in extra.items() if k not in CONTENT_KEYS and k not in MODEL_FIELDS)
    metadata = row.metadata
    mark = review_mark(row.case)
    if mark and STARTER_KEY not in metadata:  # a mark for people, dropped on read
        metadata = {**metadata, STARTER_KEY: mark}
        envelope["starter"] = True
    # input and expected_output have no other copy: their fingerprints tell an edit made in Opik
    envelope[rec.SUMS] = {"input": rec.fingerprint(row.input),
                          **({"expected_output": rec.fingerprint(row.expected)} if row.has_expected else {}),
                          "metadata": rec.metadata_sums(row.metadata)}
    value["metadata"] = rec.add_envelope(metadata, envelope)
    return value


def build_item(row: Row, variant: str) -> dict[str, Any]:
    """The dataset item (or test-suite item) of one row."""
    ext = extension(row)
    item: dict[str, Any] = {"id": item_id(row.id)}
    if variant == SUITE:
        chosen = plan(row)
        item["data"] = content(row)
        asserted = ext.get("assertions")
        if isinstance(asserted, list):
            item["assertions"] = asserted
        elif chosen.assertions:
            item["assertions"] = list(chosen.assertions)
        if isinstance(ext.get("description"), str):
            item["description"] = ext["description"]
        if not item.get("assertions"):
            item["execution_policy"] = dict(NEVER_PASSES)
        elif isinstance(ext.get("execution_policy"), dict):
            item["execution_policy"] = ext["execution_policy"]
        return item
    item.update(content(row))
    for key in NATIVE_EXTRAS[:-1]:
        if ext.get(key) is not None:
            item[key] = ext[key]
    return item


class ItemWriter(BaseLineWriter):
    """Streams items as JSONL: dataset items, or test-suite items for a `.suite.jsonl` output."""

    joins = None

    def __init__(self, out: TextIO, report: LossReporter, variant: str) -> None:
        super().__init__(out)  # LineWriter.write: encode, the first row's joins, keep
        self._report, self._variant = report, variant
        self._counts = {JUDGE: 0, METRIC: 0, UNCHECKED: 0, "never": 0}

    def encode(self, row: Row) -> tuple[str, tuple[str, bool]]:
        rec.check_value(row.to_json(), row.id, "$", "Opik")  # refused before anything is noted
        item = build_item(row, self._variant)
        carried = [("$.id", CARRIED["$.id"])]
        carried += [(f"$.metadata.case.{name}", CARRIED[f"$.metadata.case.{name}"]) for name in row.case]
        if rec.ENVELOPE in row.metadata:
            carried.append(("$.metadata.evalconv", CARRIED["$.metadata.evalconv"]))
        self._report.carry_all(carried, row.id)
        chosen = plan(row)
        if chosen.kind == UNCHECKED:
            self._report.notice_row(f"not checked by Opik: {chosen.reason}", row.id)
        never = jsonvalue.same(item.get("execution_policy"), NEVER_PASSES)
        return jsonvalue.dumps(item) + "\n", (chosen.kind, never)

    def keep(self, kept: tuple[str, bool]) -> None:
        self._counts[kept[0]] += 1
        self._counts["never"] += kept[1]

    def close(self) -> None:
        counts = self._counts
        if counts[METRIC]:
            self._report.notice(METRIC_NOTICE.format(n=count(counts[METRIC], "exact case")))
        if counts[UNCHECKED]:
            self._report.notice(UNCHECKED_NOTICE.format(n=count(counts[UNCHECKED], "case")))
        if self._variant == SUITE and counts["never"]:
            self._report.notice(SUITE_NEVER.format(n=count(counts["never"], "case")))
        if self._variant != SUITE and counts[JUDGE]:
            self._report.notice(DATASET_JUDGED.format(n=count(counts[JUDGE], "case")))

"""Formats that lose a field and report it honestly, dishonestly or too much (the round-trip gate tests)."""
from __future__ import annotations

from typing import Any

import pytest

from conftest import ROOT
from evalconv.canonical.json_format import CanonicalJSONL, JSONLWriter
from evalconv.canonical.row import Row
from evalconv.registry import REGISTRY

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
SCENARIO = "$.metadata.case.scenario"


class _DropsScenario(JSONLWriter):
    """A writer that loses metadata.case.scenario, and reports it only if told to."""

    def __init__(self, out, report, honest: bool, over_report: bool = False) -> None:
        super().__init__(out)
        self.report, self.honest, self.over_report = report, honest, over_report

    def write(self, row: Row) -> None:
        case = {k: v for k, v in row.case.items() if k != "scenario"}
        if "scenario" in row.case and self.honest:
            self.report.drop(SCENARIO, row.id, "the test format has no scenario field")
        if self.over_report:
            self.report.drop("$.metadata.case.actor", row.id, "claims a loss that does not happen")
        super().write(Row(row.id, row.input, {**row.metadata, "case": case}, row.expected))


def _format(name: str, **flags: Any):
    class Broken(CanonicalJSONL):
        lossless = False

        def open_writer(self, out, report, options):
            return _DropsScenario(out, report, **flags)

    fmt = Broken()
    fmt.name, fmt.extensions = name, (f".{name}.jsonl",)
    return fmt


@pytest.fixture
def broken_formats():
    formats = {"dishonest": _format("dishonest", honest=False), "honest": _format("honest", honest=True),
               "boastful": _format("boastful", honest=True, over_report=True)}
    for name, fmt in formats.items():
        REGISTRY.register(name, fmt)
    yield formats
    for name in formats:
        REGISTRY.unregister(name)

"""Who checks a canonical row in Opik: the oracle type and the evaluator decide.

Opik runs two kinds of check. Per-item `assertions` (test suites; `evaluators` of type `llm_judge`
on a dataset item) are sentences an LLM judge scores: only a case a model judge may grade gets
them. Metrics passed to `evaluate(scoring_metrics=...)` run over every item: `metrics.case_metric`
checks the exact oracle types with Opik's own `Equals`. A case neither can check is not checked,
never passed: in a test suite it gets a policy no run meets.
"""
from __future__ import annotations

from dataclasses import dataclass

from evalconv.canonical.row import Row

from .._common.grading import PEOPLE, effective_evaluator

JUDGE, METRIC, UNCHECKED = "judge", "metric", "unchecked"
PROGRAMS = ("exact-or-programmatic", "trajectory-or-state-check")
METRIC_ORACLES = ("reference-answer", "acceptable-set", "expected-tool-calls")


@dataclass(frozen=True)
class Plan:
    kind: str                   # JUDGE, METRIC or UNCHECKED
    assertions: tuple[str, ...]  # a judged case's assertions (empty otherwise)
    reason: str = ""            # why nothing in Opik checks an UNCHECKED case


def assertions(row: Row) -> tuple[str, ...]:
    """A judged case's assertions: its criteria (else what it should do), and one per behaviour
    it must not show."""
    fields = row.case_fields
    criteria = [c for c in fields.get("evaluationCriteria") or [] if c.strip()]
    said = [str(fields.get("expectedBehavior") or "").strip()]
    wanted = criteria or [s for s in said if s]
    banned = [f"The output does not do this: {b}" for b in fields.get("unacceptableBehavior") or [] if b.strip()]
    return tuple(dict.fromkeys([*wanted, *banned]))


def plan(row: Row) -> Plan:
    evaluator, _ = effective_evaluator(row)
    oracle = row.case["oracleType"]
    if evaluator == "llm-judge":
        found = assertions(row)
        if found:
            return Plan(JUDGE, found)
        return Plan(UNCHECKED, (), "a model judge grades it but it states no criteria or behaviour to assert")
    if evaluator in PEOPLE:
        return Plan(UNCHECKED, (), f"a person grades it ({evaluator})")
    if evaluator in PROGRAMS and oracle in METRIC_ORACLES and row.has_expected:
        return Plan(METRIC, ())
    return Plan(UNCHECKED, (), f"no Opik check fits this {oracle} case ({evaluator})")

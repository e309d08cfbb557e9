"""Who grades a row: its own evaluator, or the one evalconv chooses when it names none.

Every vendor writer asks this before attaching a check, so that no export hands a case to a
grader the case does not admit (an LLM judge on an exact-match case, a metric on a human one).
`sample_pairings` gives the rows a vendor's docs table of checks by oracle type is rendered from.
"""
from __future__ import annotations

from typing import Any, Iterator

from evalconv.canonical.admissibility import ADMISSIBILITY, AUTOMATED_NO_MODEL, admitted
from evalconv.canonical.row import Row

PEOPLE = ("rubric-human", "human-expert", "pairwise-preference")


def effective_evaluator(row: Row) -> tuple[str, bool]:
    """(evaluator, chosen): the row's evaluator; when it names none, the admissible automated
    one that needs no model, else the model judge, else a person."""
    named = row.case.get("evaluator")
    if isinstance(named, str):
        return named, False
    allowed = admitted(row.case["oracleType"])
    for evaluator in (*AUTOMATED_NO_MODEL, "llm-judge"):
        if evaluator in allowed:
            return evaluator, True
    return allowed[0], True


def llm_judge_may_grade(row: Row) -> bool:
    """Is an LLM judge the grader of this row (named, or chosen because nothing else may)?"""
    return effective_evaluator(row)[0] == "llm-judge"


_SAMPLE_EXPECTED: dict[str, Any] = {
    "reference-answer": "Paris", "acceptable-set": ["Paris", "paris"],
    "expected-tool-calls": [{"name": "lookup_order", "arguments": {"id": 7}}],
    "expected-final-state": {"order": "refunded"},
}


def sample_row(oracle: str, evaluator: str | None) -> Row:
    """A row of `oracle` graded by `evaluator` (None: it names none): reference `Paris`, set
    `[Paris, paris]`, criteria `[Names Paris]`, unacceptable `[Names Lyon]`."""
    case = {"caseId": "x", "oracleType": oracle, "expectedBehavior": "Answers well.", "provenance": "expert-authored",
            "evaluationCriteria": ["Names Paris"], "unacceptableBehavior": ["Names Lyon"]}
    if evaluator:
        case["evaluator"] = evaluator
    value: dict[str, Any] = {"id": "x", "input": "q", "metadata": {"case": case}}
    if oracle in _SAMPLE_EXPECTED:
        value["expected"] = _SAMPLE_EXPECTED[oracle]
    return Row.from_json(value)


def sample_pairings() -> Iterator[tuple[str, str, Row]]:
    """(oracle type, evaluator label, sample row) for every oracle type naming no evaluator (the
    label says which one grades it), then with each evaluator it does not bar."""
    for oracle, verdicts in ADMISSIBILITY.items():
        for evaluator in (None, *(e for e, (v, _) in verdicts.items() if v != "barred")):
            row = sample_row(oracle, evaluator)
            yield oracle, evaluator or f"(none: {effective_evaluator(row)[0]})", row

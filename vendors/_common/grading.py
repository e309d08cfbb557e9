"""Who grades a row: its own evaluator, or the one evalconv chooses when it names none.

Every vendor writer asks this before attaching a check, so that no export hands a case to a
grader the case does not admit (an LLM judge on an exact-match case, a metric on a human one).
"""
from __future__ import annotations

from evalconv.canonical.admissibility import AUTOMATED_NO_MODEL, admitted
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

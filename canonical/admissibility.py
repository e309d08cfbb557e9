"""Which evaluators each oracle type admits, and why the others are barred (from the seed)."""
from __future__ import annotations

from typing import Literal

Verdict = Literal["ok", "cond", "barred"]

_COND = ("the {payload} goes in the judge prompt, and the judge is validated against human labels "
         "on a sample of the task's own cases: have people grade a sample of these cases, compare the "
         "judge's verdicts with theirs (`evalconv report` gives the agreement per case family), and trust "
         "its scores only where they agree")

# oracle type -> evaluator -> (verdict, reason). A missing evaluator is barred with the
# oracle type's catch-all reason below.
ADMISSIBILITY: dict[str, dict[str, tuple[Verdict, str]]] = {
    "reference-answer": {
        "exact-or-programmatic": ("ok", ""),
        "rubric-human": ("ok", ""),
        "human-expert": ("ok", ""),
        "llm-judge": ("cond", _COND.format(payload="reference")),
        "pairwise-preference": ("barred", "a preference between two outputs answers a different question"),
        "trajectory-or-state-check": ("barred", "the oracle is a written answer, not a trace"),
    },
    "acceptable-set": {
        "exact-or-programmatic": ("ok", ""),
        "rubric-human": ("ok", ""),
        "human-expert": ("ok", ""),
        "llm-judge": ("cond", _COND.format(payload="acceptable set")),
        "pairwise-preference": ("barred", "the check is membership, never which of two outputs a reader prefers"),
        "trajectory-or-state-check": ("barred", "there is no trace to inspect"),
    },
    "rubric": {
        "rubric-human": ("ok", ""),
        "human-expert": ("ok", ""),
        "llm-judge": ("cond", _COND.format(payload="rubric")),
        "exact-or-programmatic": ("barred", "a string comparison cannot read a criterion"),
        "pairwise-preference": ("barred", "a preference is not a rubric score"),
        "trajectory-or-state-check": ("barred", "the evaluator inspects the path, not the quality of the output"),
    },
    "expected-tool-calls": {
        "trajectory-or-state-check": ("ok", ""),
        "exact-or-programmatic": ("ok", ""),
        "human-expert": ("ok", ""),
        **{name: ("barred", "the calls are recorded, so the check is a comparison against a record")
           for name in ("llm-judge", "pairwise-preference", "rubric-human")},
    },
    "expected-final-state": {
        "trajectory-or-state-check": ("ok", ""),
        "exact-or-programmatic": ("ok", ""),
        "human-expert": ("ok", ""),
        **{name: ("barred", "the world after the run is checkable by execution")
           for name in ("llm-judge", "pairwise-preference", "rubric-human")},
    },
    "expected-behavior-only": {
        "human-expert": ("ok", ""),
        **{name: ("barred", "nothing has been turned into a checkable oracle yet; only a human expert "
                            "who can read the case may grade it")
           for name in ("exact-or-programmatic", "rubric-human", "llm-judge", "pairwise-preference",
                        "trajectory-or-state-check")},
    },
}

# Evaluators that need no person and no model: the default pick when a row names none.
AUTOMATED_NO_MODEL = ("exact-or-programmatic", "trajectory-or-state-check")

# Fields the schema deliberately omits, and why (the seed's words).
OMITTED_FIELDS: dict[str, str] = {
    "difficulty": "a difficulty column is a weight by another name, and a weight column is a "
                  "composite waiting for an arithmetic",
    "weight": "if some cases matter more than others, that is a property of the eval harness's "
              "scoring function, not of the case",
    "priority": "priority is a triage concept, not a property of a test case",
    "score": "the score is the grader's output, not the case's input",
}


def verdict(oracle_type: str, evaluator: str) -> tuple[Verdict, str]:
    return ADMISSIBILITY[oracle_type][evaluator]


def admitted(oracle_type: str) -> list[str]:
    """Evaluators an oracle type admits (with or without conditions), in the table's order."""
    return [e for e, (v, _) in ADMISSIBILITY[oracle_type].items() if v != "barred"]


def implied_evaluator(oracle_type: str) -> str:
    """The evaluator a row that names none gets: the admissible automated one that needs no
    model, else the model judge, else a person (the rule the promptfoo writer follows)."""
    allowed = admitted(oracle_type)
    for evaluator in (*AUTOMATED_NO_MODEL, "llm-judge"):
        if evaluator in allowed:
            return evaluator
    return allowed[0]

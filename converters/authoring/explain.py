"""`evalconv explain`: the admissibility map for an oracle type, with the reasoning (the seed's)."""
from __future__ import annotations

import difflib
from typing import Any

from ..canonical.admissibility import ADMISSIBILITY
from ..canonical.errors import UsageError

ORACLE_TYPES: dict[str, str] = {
    "reference-answer": "One correct output is written down and the answer is compared against it. This is "
                        "the strongest oracle: it removes the need for judgment.",
    "acceptable-set": "Several outputs are acceptable, enumerated or graded, and the check is membership, not "
                      "equality. An exact match against one member of the set fails the other members.",
    "rubric": "A written description of what a good answer must do and must not do, adjudicated by a reader "
              "or a model judge. Quality here is multi-dimensional, and a string comparison cannot read a "
              "criterion.",
    "expected-tool-calls": "The actions, not the words: which calls with which arguments, in what order, and "
                           "which must not happen. The evaluator reads the recorded trajectory, never the "
                           "prose the agent wrote about its actions.",
    "expected-final-state": "The world after the run, checked by execution: a record, a file, a test that "
                            "flips from failing to passing. A judge reading the transcript cannot see the row "
                            "that was or was not written.",
    "expected-behavior-only": "A description of correct behavior that nobody has turned into a checkable "
                              "oracle yet. It is a legitimate thing to write down, not yet a legitimate thing "
                              "to grade against.",
}

EVALUATORS: dict[str, str] = {
    "exact-or-programmatic": "code decides",
    "rubric-human": "a person scores against a rubric",
    "llm-judge": "a model scores against a rubric, with validity evidence",
    "pairwise-preference": "a reader or judge picks between two outputs",
    "trajectory-or-state-check": "the path or the world after",
    "human-expert": "a named domain expert",
}

# Why each admitted pairing is admitted (the barred and conditional ones carry their reason in
# ADMISSIBILITY).
ADMITTED_BECAUSE: dict[tuple[str, str], str] = {
    ("reference-answer", "exact-or-programmatic"): "the answer is written down, so code can compare against it",
    ("reference-answer", "rubric-human"): "a person can score the output against the written reference",
    ("reference-answer", "human-expert"): "a domain expert can judge the output against the reference",
    ("acceptable-set", "exact-or-programmatic"): "code can check that the output is a member of the set",
    ("acceptable-set", "rubric-human"): "a person can check the output against each acceptable member",
    ("acceptable-set", "human-expert"): "a domain expert can judge membership where the set is graded",
    ("rubric", "rubric-human"): "a person reads each criterion and scores the output against it",
    ("rubric", "human-expert"): "a named domain expert can score criteria that need expertise",
    ("expected-tool-calls", "trajectory-or-state-check"): "the calls are recorded, so the check is a "
                                                          "comparison against a record",
    ("expected-tool-calls", "exact-or-programmatic"): "code compares the recorded calls and arguments with "
                                                      "the expected ones",
    ("expected-tool-calls", "human-expert"): "an expert can read a recorded trace",
    ("expected-final-state", "trajectory-or-state-check"): "the world after the run is checkable by execution",
    ("expected-final-state", "exact-or-programmatic"): "a test or a query decides the state by code",
    ("expected-final-state", "human-expert"): "an expert can inspect the resulting state",
    ("expected-behavior-only", "human-expert"): "only a human expert who can read the case can say whether "
                                                "the behavior is right; no automated grader can",
}


def _known(value: str, choices: list[str], what: str) -> str:
    if value in choices:
        return value
    close = difflib.get_close_matches(value, choices, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise UsageError(f"unknown {what} '{value}'; {hint}one of: {', '.join(choices)}")


def explain(oracle_type: str, evaluator: str | None = None) -> dict[str, Any]:
    """What `evalconv explain --format json` prints."""
    oracle_type = _known(oracle_type, list(ADMISSIBILITY), "oracle type")
    names = list(EVALUATORS)
    if evaluator is not None:
        names = [_known(evaluator, names, "evaluator")]
    pairings = []
    for name in names:
        status, reason = ADMISSIBILITY[oracle_type][name]
        entry: dict[str, Any] = {"evaluator": name, "means": EVALUATORS[name], "verdict": status}
        if status == "ok":
            entry["reason"] = ADMITTED_BECAUSE[(oracle_type, name)]
        elif status == "cond":
            entry["reason"] = "a model judge may grade it only when these conditions hold"
            entry["conditions"] = [c.strip() for c in reason.split(", and ")]
        else:
            entry["reason"] = reason
        pairings.append(entry)
    return {"oracleType": oracle_type, "description": ORACLE_TYPES[oracle_type], "pairings": pairings}


"""Phoenix experiment evaluators that check what an evalconv case means, reading the case the
example carries in its metadata.

    from phoenix.client.experiments import run_experiment
    from evalconv.vendors.phoenix.evaluators import case_check
    run_experiment(dataset=dataset, task=task, evaluators=[case_check])

Phoenix binds an evaluator's arguments by name: `output` (what the task returned), `expected`
(the example's output) and `metadata` (the example's metadata). `case_check` checks each example
as its oracle type says: reference-answer, the task's output is the reference (the value, not
its wrapper dict); acceptable-set, it is one of the members, whole; expected-tool-calls, the
output's `tool_calls` (or the output itself, a list) are the expected calls in order. A case no
program can check (a rubric or judged case, a final state, a person's case) gets no score and
the label `not checked` with the reason: never a pass, never a fail. Needs nothing from Phoenix.
"""
from __future__ import annotations

from typing import Any

from .write import WRAPPED, output_key

PEOPLE = ("rubric-human", "human-expert", "pairwise-preference")
NOT_CHECKED = "not checked"
NEEDS = {
    "judge": "a model judge grades this case (its criteria are in metadata.case); validate the judge against people",
    "expected-final-state": "the final state is checked against the system the task ran on, not the task's output",
    "person": "a person grades this case",
}


def _same(a: Any, b: Any) -> bool:
    """JSON equality with types kept apart (1 is not 1.0 nor true)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def expected_value(expected: Any, metadata: Any) -> Any:
    """The case's expected value: the example's output, unwrapped where evalconv wrapped it."""
    envelope = metadata.get("evalconv") if isinstance(metadata, dict) else None
    key = output_key(metadata.get("case")) if isinstance(metadata, dict) else ""
    if (isinstance(envelope, dict) and envelope.get("output") == WRAPPED and isinstance(expected, dict)
            and expected.keys() == {key}):
        return expected[key]
    return expected


def _calls(output: Any) -> Any:
    return output.get("tool_calls") if isinstance(output, dict) else output


def _tool_calls(made: Any, want: list[Any]) -> bool:
    if not isinstance(made, list) or len(made) != len(want):
        return False
    for call, expected in zip(made, want):
        if not (isinstance(call, dict) and isinstance(expected, dict) and call.get("name") == expected.get("name")):
            return False
        if "arguments" in expected and not _same(call.get("arguments"), expected["arguments"]):
            return False
    return True


def _unchecked(why: str) -> dict[str, Any]:
    return {"score": None, "label": NOT_CHECKED, "explanation": why}


def case_check(output: Any, expected: Any, metadata: Any) -> dict[str, Any]:
    """An evaluation result: score 1.0 / 0.0 where a program checks the case, else no score."""
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if not isinstance(case, dict):
        return _unchecked("no evalconv case profile in the example's metadata")
    oracle, evaluator = case.get("oracleType"), case.get("evaluator")
    if evaluator in PEOPLE or oracle == "expected-behavior-only":
        return _unchecked(NEEDS["person"])
    if evaluator == "llm-judge" or (evaluator is None and oracle == "rubric"):
        return _unchecked(NEEDS["judge"])
    if oracle == "expected-final-state":
        return _unchecked(NEEDS["expected-final-state"])
    envelope = metadata.get("evalconv")
    if isinstance(envelope, dict) and envelope.get("output") == "absent":
        return _unchecked("the case has no expected value to check against")
    want = expected_value(expected, metadata)
    if oracle == "reference-answer":
        passed = _same(output, want)
    elif oracle == "acceptable-set" and isinstance(want, list):
        passed = any(_same(output, member) for member in want)
    elif oracle == "expected-tool-calls" and isinstance(want, list):
        passed = _tool_calls(_calls(output), want)
    else:
        return _unchecked(f"no check for oracle type {oracle!r} with this expected value")
    return {"score": 1.0 if passed else 0.0, "label": "pass" if passed else "fail"}

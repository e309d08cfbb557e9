"""Inspect scorers that check what an evalconv case means, reading the case carried in the sample.

    from evalconv.vendors.inspect.scorers import case_scorer
    Task(dataset=json_dataset("set.inspect.jsonl"), solver=generate(), scorer=case_scorer())

`case_scorer()` checks each sample by its oracle type (metadata.case.oracleType):
reference-answer: the answer is the reference (`exact`); acceptable-set: the answer is one of
the members (`membership`, not a substring test as `includes` is); expected-tool-calls: the
calls the model made (not those in the input's history) are the expected ones in order
(`tool_calls`). Rubric, final-state and
behaviour-only cases need a judge, a state check or a person: they score NOANSWER with the
reason, never CORRECT. Needs inspect_ai (imported here, not by the format).
"""
from __future__ import annotations

from typing import Any

from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from evalconv.canonical import jsonvalue

from .._common import records as rec

NEEDS = {
    "rubric": "a rubric case needs a judge with the criteria (model_graded_qa) or a person",
    "expected-final-state": "a final-state case needs a check of the state the task left (write a scorer)",
    "expected-behavior-only": "an expected-behavior-only case needs a person",
}


def case_expected(state: TaskState, target: Target) -> tuple[bool, Any]:
    """(present, value): the case's expected value, the carried copy when the target is not it."""
    envelope = (state.metadata or {}).get(rec.ENVELOPE)
    if isinstance(envelope, dict) and "expected" in envelope:
        return True, envelope["expected"]
    members = list(target)
    if not members:  # the target no answer matches: the case has no expected text
        return False, None
    oracle = _oracle(state)
    return True, members if oracle == "acceptable-set" else target.text


def _oracle(state: TaskState) -> str:
    case = (state.metadata or {}).get("case")
    return case.get("oracleType", "") if isinstance(case, dict) else ""


def _answer(state: TaskState) -> str:
    return (state.output.completion or "").strip()


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else jsonvalue.dumps(value)


def _no_expected(state: TaskState) -> Score:
    return Score(value=NOANSWER, answer=_answer(state), explanation="the case has no expected value to compare with")


@scorer(metrics=[accuracy(), stderr()])
def exact(ignore_case: bool = False) -> Scorer:
    """The answer (surrounding whitespace aside) is the reference text."""

    async def score(state: TaskState, target: Target) -> Score:
        present, expected = case_expected(state, target)
        if not present:
            return _no_expected(state)
        answer, want = _answer(state), _as_text(expected).strip()
        same = answer.casefold() == want.casefold() if ignore_case else answer == want
        return Score(value=CORRECT if same else INCORRECT, answer=answer)

    return score


@scorer(metrics=[accuracy(), stderr()])
def membership(ignore_case: bool = False) -> Scorer:
    """The answer (surrounding whitespace aside) is one of the acceptable outputs, whole."""

    async def score(state: TaskState, target: Target) -> Score:
        present, expected = case_expected(state, target)
        if not present:
            return _no_expected(state)
        members = expected if isinstance(expected, list) else [expected]
        answer = _answer(state)
        fold = (lambda s: s.casefold()) if ignore_case else (lambda s: s)
        found = any(fold(answer) == fold(_as_text(m).strip()) for m in members)
        return Score(value=CORRECT if found else INCORRECT, answer=answer)

    return score


@scorer(metrics=[accuracy(), stderr()])
def tool_calls() -> Scorer:
    """The tool calls the model made are the expected ones, in order, and no others: each call
    has the expected name, and the expected arguments when the case gives them. An expected
    empty list means "call no tool"."""

    async def score(state: TaskState, target: Target) -> Score:
        present, expected = case_expected(state, target)
        if not (present and isinstance(expected, list)):
            return _no_expected(state)
        history = {m.id for m in state.input if m.id} if isinstance(state.input, list) else set()
        made = [{"name": call.function, "arguments": call.arguments}  # calls in the input are history
                for message in state.messages if message.id not in history
                for call in (getattr(message, "tool_calls", None) or [])]
        answer = jsonvalue.dumps(made)
        if len(made) != len(expected):
            return Score(value=INCORRECT, answer=answer,
                         explanation=f"{len(made)} tool calls made, {len(expected)} expected")
        for index, (call, want) in enumerate(zip(made, expected)):
            if not isinstance(want, dict) or call["name"] != want.get("name"):
                return Score(value=INCORRECT, answer=answer, explanation=f"call {index + 1} is {call['name']}")
            if "arguments" in want and not jsonvalue.same(call["arguments"], want["arguments"]):
                return Score(value=INCORRECT, answer=answer,
                             explanation=f"call {index + 1} ({call['name']}) has other arguments")
        return Score(value=CORRECT, answer=answer)

    return score


@scorer(metrics=[accuracy(), stderr()])
def case_scorer(ignore_case: bool = False) -> Scorer:
    """Each sample checked as its oracle type says; a case no program can check is NOANSWER."""
    by_oracle = {"reference-answer": exact(ignore_case), "acceptable-set": membership(ignore_case),
                 "expected-tool-calls": tool_calls()}

    async def score(state: TaskState, target: Target) -> Score:
        oracle = _oracle(state)
        check = by_oracle.get(oracle)
        if check is None:
            why = NEEDS.get(oracle, f"no evalconv case profile in the sample's metadata (oracle type {oracle!r})")
            return Score(value=NOANSWER, answer=_answer(state), explanation=why)
        result = await check(state, target)
        return result if result is not None else _no_expected(state)

    return score

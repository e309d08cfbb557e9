"""MLflow scorers that check what an evalconv case means, reading what the writer put in the
record's expectations (the system under test never sees them):

    import mlflow
    from evalconv.vendors.mlflow.scorers import case_scorer
    mlflow.genai.evaluate(data=records_or_dataset, predict_fn=my_app, scorers=[case_scorer()])

`case_scorer()` runs the check `expectations.evalconv_check` names: `exact` (the output is
`expected_response`, surrounding whitespace aside), `membership` (the output is one of
`acceptable_responses`, whole), `tool_calls` (the TOOL spans of the trace are
`expected_tool_calls` in order, names and, where given, arguments: what MLflow's
`ToolCallCorrectness(should_exact_match=True, should_consider_ordering=True)` checks). A case that
needs a judge, a person or a state check gets no value and a rationale saying who must grade
it: never a pass. Needs mlflow (imported here, not by the format).
"""
from __future__ import annotations

from typing import Any

from mlflow.entities import Feedback
from mlflow.genai.scorers import scorer
from mlflow.genai.utils.trace_utils import extract_tools_called_from_trace

from evalconv.canonical import jsonvalue

from .fields import CASE_SCORER, CHECK_KEY, NOT_IN_CODE

NAME = CASE_SCORER


def _text(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _same(output: Any, want: Any) -> bool:
    return jsonvalue.same(_text(output), _text(want))


def check(outputs: Any, expectations: dict[str, Any] | None, trace: Any = None) -> Feedback:
    """The feedback on one record: True or False where a program can tell, else no value."""
    expectations = expectations or {}
    kind = expectations.get(CHECK_KEY)
    if kind == "exact" and "expected_response" in expectations:
        same = _same(outputs, expectations["expected_response"])
        return Feedback(name=NAME, value=same, rationale=None if same else "the output is not the reference")
    if kind == "membership" and isinstance(expectations.get("acceptable_responses"), list):
        found = any(_same(outputs, m) for m in expectations["acceptable_responses"])
        return Feedback(name=NAME, value=found, rationale=None if found else "the output is none of the acceptable ones")
    if kind == "tool_calls" and isinstance(expectations.get("expected_tool_calls"), list):
        return _tool_calls(trace, expectations["expected_tool_calls"])
    why = NOT_IN_CODE.get(kind) if isinstance(kind, str) else None
    return Feedback(name=NAME, value=None, rationale=why or f"no evalconv check in the expectations "
                    f"({CHECK_KEY}={kind!r}), or its expected value is missing")


def _tool_calls(trace: Any, expected: list[Any]) -> Feedback:
    if trace is None:
        return Feedback(name=NAME, value=None, rationale="no trace to read the tool calls from")
    made = [{"name": call.name, "arguments": call.arguments} for call in extract_tools_called_from_trace(trace)]
    if len(made) != len(expected):
        return Feedback(name=NAME, value=False, rationale=f"{len(made)} tool calls made, {len(expected)} expected")
    for index, (call, want) in enumerate(zip(made, expected), 1):
        if call["name"] != want.get("name"):
            return Feedback(name=NAME, value=False, rationale=f"call {index} is {call['name']}, not {want.get('name')}")
        if "arguments" in want and not jsonvalue.same(call["arguments"] or {}, want["arguments"]):
            return Feedback(name=NAME, value=False, rationale=f"call {index} ({call['name']}) has other arguments")
    return Feedback(name=NAME, value=True)


def case_scorer() -> Any:
    """The MLflow scorer: each record checked as its case's oracle type says."""

    @scorer(name=NAME)
    def evalconv_case(outputs: Any, expectations: dict[str, Any], trace: Any) -> Feedback:
        return check(outputs, expectations, trace)

    return evalconv_case

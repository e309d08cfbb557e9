"""A canonical row as a single-turn DeepEval golden, with every loss noted in the report.

The whole row rides in `additional_metadata["evalconv"]`, so nothing is dropped; the report
lists as `carried` every field DeepEval holds without acting on it.
"""
from __future__ import annotations

import copy
from typing import Any, Callable

from evalconv.canonical import jsonvalue, paths
from evalconv.canonical.row import ABSENT, CaseProfile, Row
from evalconv.canonical.schema import CASE_FIELDS
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.validator import review_mark

from .._common.grading import llm_judge_may_grade
from .fields import (CARRIER, CONVERSATIONAL_KEYS, GOLDEN_KEYS, REFERENCE_CONTEXTS, RESTORED, TOOL_KEYS, VENDOR_KEY,
                     field)

Carry = Callable[..., None]


def is_conversation(row: Row) -> bool:
    """A chat input DeepEval can hold as a conversational golden's turns: user and assistant
    messages with text content and nothing else, in a row with no DeepEval run data."""
    messages = row.input.get("messages") if _is_chat(row.input) else []
    return bool(messages) and all(
        isinstance(m, dict) and set(m) == {"role", "content"} and m["role"] in ("user", "assistant")
        and isinstance(m["content"], str) for m in messages) and not row.metadata.keys() & set(RESTORED)


def build_conversational(row: Row, report: LossReporter) -> dict[str, Any]:
    """The conversational golden for a row `is_conversation` accepts, keys in save_as order: the
    messages are its turns, the scenario (DeepEval requires one; the id when the row has none)
    says what the conversation is about, a text reference is the expected outcome."""
    golden = build_golden(row, report, conversational=True)
    out: dict[str, Any] = dict.fromkeys(CONVERSATIONAL_KEYS)
    scenario = row.case.get("scenario")
    out["scenario"] = scenario if isinstance(scenario, str) and scenario.strip() else row.id
    out["turns"] = [dict(m) for m in row.input["messages"]]
    out["expected_outcome"] = golden["expected_output"]
    for key in ("context", "name", "comments", "additional_metadata", "custom_column_key_values", "expectations"):
        out[key] = golden[key]
    return out


def build_golden(row: Row, report: LossReporter, conversational: bool = False) -> dict[str, Any]:
    """The golden for `row`, keys in save_as order; notes in `report` what is only carried."""

    carried: list[tuple[str, str]] = []  # (path, reason), noted in one call at the end

    def carry(key: str, path: str | None = None) -> None:
        entry = field(key)
        carried.append((path or entry.path, entry.reason))

    golden: dict[str, Any] = dict.fromkeys(GOLDEN_KEYS)
    golden["name"] = row.id
    if isinstance(row.input, str):
        golden["input"] = row.input
    else:
        golden["input"] = jsonvalue.dumps(row.input)
        if not conversational:
            carry("input.chat" if _is_chat(row.input) else "input.json")
    _place_expected(row, golden, carry)
    if llm_judge_may_grade(row):
        _place_expectations(row.case, golden, carry)
    else:
        for name in _JUDGED:
            if name in row.case:
                carry(f"{name}.not_judged")
    for name in CASE_FIELDS:
        if name in row.case and name not in _JUDGED and not (conversational and name == "scenario"):
            carry(name)
    own_metadata = _place_metadata(row.metadata, golden, carry)
    mark = review_mark(row.case)
    if golden["comments"] is None and mark:  # shown beside the golden; never read back
        golden["comments"] = mark
    golden["additional_metadata"] = {**own_metadata, CARRIER: row.to_json()}
    report.carry_all(carried, row.id)
    return golden


def _place_expected(row: Row, golden: dict[str, Any], carry: Carry) -> None:
    expected = row.expected
    if expected is ABSENT:
        return
    if expected is None:
        carry("expected.null")
    elif row.case.get("oracleType") in _NOT_TEXT:
        carry(_NOT_TEXT[row.case["oracleType"]])
    elif isinstance(expected, str):
        golden["expected_output"] = expected
    elif row.case.get("oracleType") == "expected-tool-calls" and is_tool_calls(expected):
        golden["expected_tools"] = [_tool(call, i, carry) for i, call in enumerate(expected)]
    else:
        golden["expected_output"] = jsonvalue.dumps(expected)
        carry("expected.json")


def _is_chat(value: Any) -> bool:
    return isinstance(value, dict) and list(value) == ["messages"] and isinstance(value["messages"], list)


# Oracle types whose expected value is never a text DeepEval's metrics may compare the output with.
_NOT_TEXT = {"acceptable-set": "expected.set", "expected-final-state": "expected.state"}


def is_tool_calls(value: Any) -> bool:
    """Canonical expected tool calls: `[{name: str, arguments?: object}, ...]`."""
    return isinstance(value, list) and all(
        isinstance(call, dict) and isinstance(call.get("name"), str)
        and isinstance(call.get("arguments", {}), dict) for call in value)


def _tool(call: dict[str, Any], index: int, carry: Carry) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": call["name"], "type": "FUNCTION"}
    if "arguments" in call:
        tool["inputParameters"] = call["arguments"]
    for key in call.keys() - {"name", "arguments"}:
        carry("expected.tool_keys", paths.join("$.expected", index, key))
    return tool


# The case fields DeepEval's expectations judge reads (4.3+), written only where an LLM judge grades.
_JUDGED = ("expectedBehavior", "evaluationCriteria", "unacceptableBehavior")


def judged_criteria(case: CaseProfile) -> list[str]:
    """The criteria written after the expected behaviour in expectations.must: stripped, blank
    ones left out, and none when a rubric's one criterion is its expected behaviour (written once)."""
    criteria = [item.strip() for item in case.get("evaluationCriteria", ()) if item.strip()]
    behavior = case["expectedBehavior"].strip()
    if case["oracleType"] == "rubric" and behavior and criteria == [behavior]:
        return []
    return criteria


def _place_expectations(case: CaseProfile, golden: dict[str, Any], carry: Carry) -> None:
    """expectedBehavior, then evaluationCriteria -> expectations.must, unacceptableBehavior ->
    must_not (4.3+): the judge reads them all. Stripped as DeepEval strips them; blank text,
    which DeepEval rejects, is only carried."""
    must = []
    behavior = case["expectedBehavior"].strip()
    if behavior:
        must.append(behavior)
    else:
        carry("expectedBehavior.blank")
    for i, item in enumerate(case.get("evaluationCriteria", ())):
        if not item.strip():
            carry("evaluationCriteria.blank", paths.join("$.metadata.case.evaluationCriteria", i))
    must += judged_criteria(case)
    must_not = []
    for i, item in enumerate(case.get("unacceptableBehavior", ())):
        if item.strip():
            must_not.append(item.strip())
        else:
            carry("unacceptableBehavior.blank", paths.join("$.metadata.case.unacceptableBehavior", i))
    if must or must_not:
        golden["expectations"] = {"model": None, "eval_mode": None, "must": must, "must_not": must_not}


def _place_metadata(metadata: dict[str, Any], golden: dict[str, Any], carry: Carry) -> dict[str, Any]:
    """Put DeepEval fields read from a DeepEval file back in place; returns that file's own
    additional_metadata (to sit beside the carrier), if it had one."""
    own: dict[str, Any] = {}
    if REFERENCE_CONTEXTS in metadata:
        if _strings(metadata[REFERENCE_CONTEXTS]):
            golden["context"] = list(metadata[REFERENCE_CONTEXTS])
        else:
            carry("referenceContexts.other")
    for key, value in metadata.items():
        if key in ("case", REFERENCE_CONTEXTS):
            continue
        if key not in RESTORED or not isinstance(value, dict):
            carry("metadata", paths.join("$.metadata", key))
            continue
        for name, item in value.items():
            path = paths.join("$.metadata", key, name)
            if name in RESTORED[key] and golden[name] is None and fits(name, item):
                golden[name] = copy.deepcopy(item)
            elif key == VENDOR_KEY and name == "additional_metadata" and isinstance(item, dict) \
                    and CARRIER not in item:
                own = item
                carry("deepeval.additional_metadata")
            else:
                carry("metadata", path)
    return own


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _tool_call(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return False
    if value.keys() - set(TOOL_KEYS) - {"input_parameters"}:
        return False
    params = [value[k] for k in ("inputParameters", "input_parameters") if k in value]
    return all(isinstance(p, dict) for p in params) and value.get("type", "FUNCTION") in ("FUNCTION", "MCP") \
        and all(isinstance(value.get(k, ""), str) for k in ("description", "reasoning"))


_FITS: dict[str, Callable[[Any], bool]] = {
    "context": _strings, "retrieval_context": _strings,
    "comments": lambda v: isinstance(v, str), "source_file": lambda v: isinstance(v, str),
    "actual_output": lambda v: isinstance(v, str), "expected_output": lambda v: isinstance(v, str),
    "custom_column_key_values": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
    "tools_called": lambda v: isinstance(v, list) and all(_tool_call(t) for t in v),
    "token_cost": _is_number,
    "input_token_count": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "output_token_count": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


def fits(name: str, value: Any) -> bool:
    """Does DeepEval's golden field `name` accept `value` as it is?"""
    return _FITS[name](value)

"""Which pydantic-evals evaluators grade a canonical row: the oracle type and the evaluator decide.

Only admissible pairings produce a check, in pydantic-evals' own evaluators (no custom class, so
`Dataset.from_file` loads the file as it is). A case no evaluator of pydantic-evals can check (a
person grades it, or pydantic-evals has nothing that checks its oracle) gets one assertion that
always fails, `not_checked`, because a case with no failing assertion reads as passed: an
`IsInstance` whose type name no class has, its reason in its evaluation name.
The docs' oracle-to-evaluator table is rendered from `plan` by `oracle_table`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row

from .._common.grading import PEOPLE, effective_evaluator, sample_pairings
from .fields import VENDOR

NOT_CHECKED_PREFIX = "not checked by pydantic-evals: "
# The spans the tool evaluators read: without them every one of them fails (never passes).
TRACED = frozenset({"ToolCorrectness", "TrajectoryMatch", "ArgumentCorrectness", "MaxToolCalls", "MaxModelRequests",
                    "HasMatchingSpan"})
JUDGES = frozenset({"LLMJudge", "GEval"})


@dataclass
class Plan:
    """The evaluators of one row, and how they were chosen."""

    specs: list[Any]
    evaluator: str
    chosen: bool            # evalconv picked the evaluator (the row names none)
    blocked: str | None = None  # why no evaluator of pydantic-evals checks the case
    kept: bool = False      # the evaluators are the ones kept in extensions.pydantic-evals.evaluators

    @property
    def traced(self) -> bool:
        return any(spec_name(s) in TRACED for s in self.specs)


_NO_DEFAULT = object()
# The built-in evaluators' fields in order, each with its default (_NO_DEFAULT: required), as
# `Evaluator.as_spec` reads them to write a spec in its short form (pydantic-evals 2.62).
FIELDS: dict[str, tuple[tuple[str, Any], ...]] = {
    "Equals": (("value", _NO_DEFAULT), ("evaluation_name", None)),
    "EqualsExpected": (("evaluation_name", None),),
    "Contains": (("value", _NO_DEFAULT), ("case_sensitive", True), ("as_strings", False), ("evaluation_name", None)),
    "IsInstance": (("type_name", _NO_DEFAULT), ("evaluation_name", None)),
    "MaxDuration": (("seconds", _NO_DEFAULT),),
    "LLMJudge": (("rubric", _NO_DEFAULT), ("model", None), ("include_input", False), ("include_expected_output", False),
                 ("model_settings", None), ("score", False), ("assertion", {"include_reason": True})),
    "ToolCorrectness": (("expected_tools", _NO_DEFAULT), ("allow_extra", False), ("include_failed", False),
                        ("evaluation_name", None)),
    "TrajectoryMatch": (("expected_trajectory", _NO_DEFAULT), ("order", "in_order"), ("include_failed", False),
                        ("evaluation_name", None)),
    "ArgumentCorrectness": (("tool_name", _NO_DEFAULT), ("expected_arguments", _NO_DEFAULT), ("match_mode", "subset"),
                            ("occurrence", "first"), ("include_failed", False), ("evaluation_name", None)),
    "MaxToolCalls": (("max_calls", _NO_DEFAULT), ("include_failed", True), ("evaluation_name", None)),
}


def short_form(name: str, **kwargs: Any) -> Any:
    """The spec `Evaluator.as_spec` gives (what `to_file` writes): defaults left out; a single
    argument that is the first field, positional, unless it is a mapping with text keys."""
    declared = FIELDS.get(name)
    if declared is not None:
        defaults = dict(declared)
        kwargs = {k: v for k, v in kwargs.items() if not (k in defaults and defaults[k] is not _NO_DEFAULT
                                                          and jsonvalue.same(v, defaults[k]))}
    if not kwargs:
        return name
    if len(kwargs) == 1 and declared is not None and next(iter(kwargs)) == declared[0][0]:
        value = next(iter(kwargs.values()))
        if not (isinstance(value, dict) and all(isinstance(k, str) for k in value)):
            return {name: value}
    return {name: kwargs}


def normal_form(spec: Any) -> Any:
    """Any spec of a built-in evaluator in the form `short_form` writes (others as they are), so a
    file pydantic-evals saved again compares equal to what evalconv wrote."""
    name = spec_name(spec)
    if name not in FIELDS:
        return spec
    args, kwargs = spec_args(spec)
    if args:
        kwargs = {FIELDS[name][0][0]: args[0], **kwargs}
    return short_form(name, **kwargs)


@functools.lru_cache(maxsize=256)
def not_checked(reason: str) -> Any:
    """An assertion that always fails, saying why in its name (no class is named like it). One
    spec per reason, shared by the rows it is written for (no writer changes a spec)."""
    return short_form("IsInstance", type_name="evalconv: no class has this name",
                      evaluation_name=NOT_CHECKED_PREFIX + reason)


EQUALS_EXPECTED = short_form("EqualsExpected")


def not_checked_reason(spec: Any) -> str | None:
    args = spec.get("IsInstance") if isinstance(spec, dict) and len(spec) == 1 else None
    name = args.get("evaluation_name") if isinstance(args, dict) else None
    return name.removeprefix(NOT_CHECKED_PREFIX) if isinstance(name, str) and name.startswith(NOT_CHECKED_PREFIX) else None


def spec_name(spec: Any) -> str | None:
    """The evaluator class a spec names: `'Name'`, `{'Name': args}` or `{'name': ..., 'arguments': ...}`."""
    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict) and len(spec) == 1:
        key = next(iter(spec))
        return key if isinstance(key, str) else None
    if isinstance(spec, dict) and isinstance(spec.get("name"), str) and set(spec) == {"name", "arguments"}:
        return spec["name"]
    return None


def spec_args(spec: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """(positional, keyword) arguments of a spec, as pydantic-evals' NamedSpec reads them."""
    if isinstance(spec, str):
        return (), {}
    if isinstance(spec, dict) and len(spec) == 1:
        value = next(iter(spec.values()))
        if isinstance(value, dict):
            return (), value
        return (value,), {}
    arguments = spec.get("arguments") if isinstance(spec, dict) else None
    if isinstance(arguments, dict):
        return (), arguments
    if isinstance(arguments, list) and len(arguments) == 1:
        return (arguments[0],), {}
    return (), {}


def extension_evaluators(row: Row) -> list[Any] | None:
    ext = row.case.get("extensions", {}).get(VENDOR)
    kept = ext.get("evaluators") if isinstance(ext, dict) else None
    return kept if isinstance(kept, list) else None


def plan(row: Row) -> Plan:
    evaluator, chosen = effective_evaluator(row)
    kept = extension_evaluators(row)
    if kept is not None:
        return Plan(list(kept), evaluator, chosen, kept=True)
    if evaluator in PEOPLE:
        return _blocked(f"a person grades this case ({evaluator}), not a program", evaluator, chosen)
    oracle = row.case["oracleType"]
    if evaluator == "llm-judge":
        return Plan([judge(row, oracle)], evaluator, chosen)
    specs, reason = _programmatic(row, oracle)
    if specs:
        return Plan(specs, evaluator, chosen)
    return _blocked(reason, evaluator, chosen)


def _blocked(reason: str, evaluator: str, chosen: bool) -> Plan:
    return Plan([not_checked(reason)], evaluator, chosen, blocked=reason)


def _programmatic(row: Row, oracle: str) -> tuple[list[Any], str]:
    expected = row.expected if row.has_expected else None
    if oracle == "reference-answer":
        if not row.has_expected:
            return [], "the case has no expected output to compare with"
        # EqualsExpected records nothing when expected_output is null: Equals says what it checks
        return ([EQUALS_EXPECTED] if expected is not None else [short_form("Equals", value=None)]), ""
    if oracle == "acceptable-set":
        if not (isinstance(expected, list) and expected):
            return [], "its expected is not a non-empty list of acceptable outputs"
        if len(expected) == 1:
            return [short_form("Equals", value=expected[0])], ""
        return [], ("no pydantic-evals evaluator passes when the output is any one of several values; "
                    "Contains checks the reverse, that the output contains a value")
    if oracle == "expected-tool-calls":
        if not (isinstance(expected, list) and all(isinstance(c, dict) and isinstance(c.get("name"), str)
                                                   for c in expected)):
            return [], "its expected is not a list of tool calls"
        return tool_checks(expected), ""
    if oracle == "expected-final-state":
        return [], "no pydantic-evals evaluator inspects a final state"
    return [], f"no pydantic-evals evaluator checks a {oracle} case"


def tool_checks(calls: list[dict[str, Any]]) -> list[Any]:
    """The calls as a multiset (ToolCorrectness, an assertion), their order (TrajectoryMatch exact,
    a 1.0/0.0 score) and each call's arguments (ArgumentCorrectness on that call's occurrence)."""
    names = [c["name"] for c in calls]
    specs: list[Any] = [short_form("ToolCorrectness", expected_tools=names),
                        short_form("TrajectoryMatch", expected_trajectory=names, order="exact")]
    seen: dict[str, int] = {}
    for call in calls:
        occurrence = seen.get(call["name"], 0)
        seen[call["name"]] = occurrence + 1
        if isinstance(call.get("arguments"), dict):
            specs.append(short_form("ArgumentCorrectness", tool_name=call["name"], expected_arguments=call["arguments"],
                                    match_mode="exact", occurrence=occurrence or "first"))
    return specs


def judge(row: Row, oracle: str) -> Any:
    """One LLMJudge whose rubric is the case's expected behaviour, criteria and what it must not do;
    a reference or a set goes to the judge as the expected output."""
    parts: list[str] = []
    behaviour = row.case.get("expectedBehavior")
    if isinstance(behaviour, str) and behaviour.strip():
        parts.append(behaviour)
    if oracle == "reference-answer":
        parts.append("The output gives the same answer as the expected output.")
    elif oracle == "acceptable-set":
        parts.append("The output is equivalent to one of the acceptable outputs listed in the expected output.")
    criteria = row.case_fields.get("evaluationCriteria") or []
    if criteria:
        parts.append("All of these hold:\n" + "\n".join(f"- {c}" for c in criteria))
    unacceptable = row.case_fields.get("unacceptableBehavior") or []
    if unacceptable:
        parts.append("The output does none of these:\n" + "\n".join(f"- {u}" for u in unacceptable))
    args: dict[str, Any] = {"rubric": "\n\n".join(parts) or "The output is an acceptable answer to the input.",
                            "include_input": True}
    if row.has_expected and oracle in ("reference-answer", "acceptable-set"):
        args["include_expected_output"] = True
    return short_form("LLMJudge", **args)


# --- the docs table -----------------------------------------------------------------------------

def oracle_table() -> str:
    """Every admissible (oracle type, evaluator) pairing, and no evaluator, with the evaluators
    `plan` writes for its sample row (`grading.sample_row`)."""
    lines = ["| oracle type | evaluator | pydantic-evals evaluators written |", "|---|---|---|"]
    for oracle, label, sample in sample_pairings():
        checks = "; ".join(_describe(s) for s in plan(sample).specs)
        lines.append(f"| {oracle} | {label} | {checks} |")
    return "\n".join(lines)


def _describe(spec: Any) -> str:
    reason = not_checked_reason(spec)
    if reason is not None:
        return f"`IsInstance` that always fails, named \"{NOT_CHECKED_PREFIX}{reason}\""
    text = spec if isinstance(spec, str) else jsonvalue.dumps(spec)
    return f"`{text}`".replace("\n", "\\n").replace("|", "\\|")

"""Which promptfoo assertions grade a canonical row: the oracle type and the evaluator decide.

Only admissible pairings produce a check. A row that no automated evaluator may grade (a person
grades it, or promptfoo has no assertion that checks its oracle) gets one assertion that always
fails, `CANNOT_PASS`, because promptfoo counts a test without assertions as passed.
The docs' oracle-to-assertion table is rendered from `plan` by `oracle_table`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row

from .._common.grading import PEOPLE, effective_evaluator, sample_pairings
from .read import MEMBERSHIP_SUFFIX, cannot_pass, cannot_pass_reason
from .text import escape, loads_at_load_time, needs_escape, unescape

# Assertions that read promptfoo's trace of the run: without tracing they fail, never pass.
TRACED = ("trajectory:", "not-trajectory:")
_GLOB = re.compile(r"[*?]")


@dataclass
class Plan:
    """The assertions for one row, and how they were chosen."""

    asserts: list[dict[str, Any]]
    evaluator: str
    chosen: bool  # evalconv picked the evaluator (the row names none)
    native_case: list[str] = field(default_factory=list)  # case fields the assertions express exactly
    blocked: str | None = None  # why the test cannot pass

    @property
    def traced(self) -> bool:
        """Does a check need promptfoo tracing (trajectory assertions)?"""
        return any(str(a.get("type", "")).startswith(TRACED) for a in self.asserts)


def plan(row: Row) -> Plan:
    evaluator, chosen = effective_evaluator(row)
    oracle = row.case["oracleType"]
    if evaluator in PEOPLE:
        reason = f"this case needs {evaluator} grading: promptfoo cannot grade it"
        return Plan([cannot_pass(reason)], evaluator, chosen, blocked=reason)
    if _no_reference(row, oracle):  # a null reference, or a set that is not a list: nothing to compare with
        reason = unchecked_reason(row, oracle, evaluator)
        return Plan([cannot_pass(reason)], evaluator, chosen, blocked=reason)
    native: list[str] = []
    if evaluator == "llm-judge":
        asserts, native = _judged(row, oracle)
    else:
        asserts = _programmatic(row, oracle)
    if asserts:
        return Plan(asserts, evaluator, chosen, native)
    reason = unchecked_reason(row, oracle, evaluator)
    return Plan([cannot_pass(reason)], evaluator, chosen, blocked=reason)


def _no_reference(row: Row, oracle: str) -> bool:
    if oracle == "reference-answer":
        return row.has_expected and row.expected is None
    if oracle == "acceptable-set":
        return not (row.has_expected and isinstance(row.expected, list) and row.expected)
    return False


def unchecked_reason(row: Row, oracle: str, evaluator: str) -> str:
    """Why no promptfoo assertion checks this row, in plain words (no quotes or braces: the
    reason sits in a JavaScript string)."""
    expected = row.expected if row.has_expected else None
    if row.has_expected and expected is None and oracle in ("reference-answer", "acceptable-set"):
        return f"its expected is null, and no promptfoo assertion compares an output with null ({oracle})"
    if oracle == "acceptable-set" and not isinstance(expected, list):
        return ("its expected is one " + ("text" if isinstance(expected, str) else "value") +
                ", not a list of acceptable answers, so there is no set to test membership in "
                "(write the set as a JSON array, in a sheet in the expected:json column)")
    if oracle == "acceptable-set" and isinstance(expected, list) and not all(isinstance(x, str) for x in expected):
        return "its acceptable set holds values that are not text, which promptfoo cannot compare with the output"
    if oracle == "expected-final-state":
        return f"promptfoo cannot inspect the final state an {oracle} case describes"
    if oracle == "expected-tool-calls":
        return ("its tool names hold template text or glob characters, which promptfoo would render or match "
                "as patterns" if isinstance(expected, list) and expected else "its expected is not a list of calls")
    if loads_at_load_time(expected):
        return "its reference holds a file reference or a ref key that promptfoo would load instead of compare"
    return f"promptfoo has no assertion that checks this {oracle} case as {evaluator}"


def _programmatic(row: Row, oracle: str) -> list[dict[str, Any]]:
    expected = row.expected if row.has_expected else None
    if oracle == "reference-answer" and expected is not None:
        value = escape(expected) if isinstance(expected, str) else \
            [escape(x) if isinstance(x, str) else x for x in expected] if isinstance(expected, list) else expected
        return [] if loads_at_load_time(value) else [{"type": "equals", "value": value}]
    if oracle == "acceptable-set" and isinstance(expected, list) and expected \
            and all(isinstance(x, str) for x in expected):
        return [{"type": "javascript", "value": escape(jsonvalue.dumps(expected) + MEMBERSHIP_SUFFIX)}]
    if oracle == "expected-tool-calls" and expected == []:  # no tool may be called (needs tracing)
        return [{"type": "not-trajectory:tool-used", "value": {"pattern": "*"}}]
    if oracle == "expected-tool-calls" and isinstance(expected, list) and expected \
            and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in expected):
        names = [c["name"] for c in expected]
        if any(needs_escape(n) or _GLOB.search(n) for n in names):  # rendered as templates, matched as globs
            return []
        checks: list[dict[str, Any]] = [{"type": "tool-call-f1", "value": names},
                                        {"type": "trajectory:tool-sequence",  # the order and the count
                                         "value": {"mode": "exact", "steps": [{"name": n} for n in names]}}]
        for call in expected:
            if "arguments" in call:  # needs promptfoo tracing; without a trace it fails, never passes
                checks.append({"type": "trajectory:tool-args-match",
                               "value": {"name": call["name"], "args": call["arguments"], "mode": "exact"}})
        return [] if loads_at_load_time(checks) else checks
    return []


def _judged(row: Row, oracle: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The reference (or set) in the judge prompt, one llm-rubric per criterion, one
    not-llm-rubric per unacceptable behaviour."""
    out: list[dict[str, Any]] = []
    expected = row.expected if row.has_expected else None
    if oracle == "reference-answer" and row.has_expected:
        out.append({"type": "factuality",
                    "value": escape(expected if isinstance(expected, str) else jsonvalue.dumps(expected))})
    elif oracle == "acceptable-set" and isinstance(expected, list):
        members = "\n".join("- " + (x if isinstance(x, str) else jsonvalue.dumps(x)) for x in expected)
        out.append({"type": "llm-rubric",
                    "value": escape("The output is equivalent to one of these acceptable answers:\n" + members)})
    native = []
    for name, kind in (("evaluationCriteria", "llm-rubric"), ("unacceptableBehavior", "not-llm-rubric")):
        texts = row.case_fields.get(name) or []
        made = [{"type": kind, "value": escape(t)} for t in texts]
        out.extend(made)
        if texts and all(unescape(a["value"]) == t for a, t in zip(made, texts)):
            native.append(name)
    if oracle == "rubric" and not any(a["type"] == "llm-rubric" for a in out):
        out.insert(0, {"type": "llm-rubric", "value": escape(row.case["expectedBehavior"])})
    return out, native


# --- the docs table -----------------------------------------------------------------------------

def oracle_table(csv_cell: Callable[[Row], str]) -> str:
    """Every admissible (oracle type, evaluator) pairing, and no evaluator, with what `plan`
    writes for its sample row (`grading.sample_row`), and the one `__expected1` cell `csv_cell`
    writes for it."""
    lines = ["| oracle type | evaluator | promptfoo assertions (YAML, JSON, JSONL) | CSV `__expected1` |",
             "|---|---|---|---|"]
    for oracle, label, sample in sample_pairings():
        checks = "; ".join(_describe(a) for a in plan(sample).asserts)
        cell = csv_cell(sample).replace("\n", "\\n").replace("|", "\\|")
        lines.append(f"| {oracle} | {label} | {checks} | `{cell}` |")
    return "\n".join(lines)


def _describe(assertion: dict[str, Any]) -> str:
    reason = cannot_pass_reason(assertion)
    if reason is not None:
        return f"`javascript` that always fails (\"{reason}\")"
    value = assertion["value"]
    text = value if isinstance(value, str) else jsonvalue.dumps(value)
    return f"`{assertion['type']}` {text}".replace("\n", " ").replace("|", "\\|")

"""Which OpenAI grader checks each case, and the eval's testing criteria for a set.

An eval's `testing_criteria` run on every item of a run, so the criteria are chosen for the set:
- every case a reference-answer text checked by a program: one `string_check` (`eq`, exact);
- every case judged by a model (evaluator llm-judge): one `label_model` whose prompt holds the
  item's criteria, expected behaviour and reference (pass / fail);
- otherwise one `python` grader (`PYTHON_SOURCE`) that reads item.metadata.case and checks each
  case as its oracle type says: the reference exactly, membership of the acceptable set, the tool
  calls in order. A case it cannot check (a person's, a final state, a model judge's in a mixed
  set) raises, so the run records a grader error for it: never a pass, never a fail.
No model grader ever sees a case a program can check, and no criterion passes a case unchecked.
`text_similarity` and `score_model` are not written: a fuzzy match or a score threshold would
pass answers the case's exact oracle does not admit, and the case profile states no threshold.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evalconv.canonical.row import Row

from .._common.grading import effective_evaluator

PEOPLE = ("rubric-human", "human-expert", "pairwise-preference")
JUDGE_MODEL = "o4-mini"  # a placeholder the user replaces; label_model needs a model with structured outputs

Kept = tuple[Any, ...]  # (kind, oracle type, has expected, has criteria)


def family(row: Row) -> Kept:
    """(kind, oracle, has expected, has criteria): kind is "string", "program", "judge", "state" or "person"."""
    evaluator, _ = effective_evaluator(row)
    oracle = row.case["oracleType"]
    criteria = bool(row.case.get("evaluationCriteria"))
    if evaluator in PEOPLE or oracle == "expected-behavior-only":
        kind = "person"
    elif evaluator == "llm-judge":
        kind = "judge"
    elif oracle == "expected-final-state":
        kind = "state"
    elif oracle == "reference-answer" and isinstance(row.expected, str):
        kind = "string"
    else:
        kind = "program"
    return (kind, oracle, row.has_expected, criteria)


@dataclass
class Families:
    """How many cases of each kind the set holds, and what the judge prompt can refer to."""

    counts: dict[str, int] = field(default_factory=dict)
    judged_all_expected: bool = True
    judged_all_criteria: bool = True

    def add(self, kept: Kept) -> None:
        kind, _oracle, has_expected, has_criteria = kept
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind == "judge":
            self.judged_all_expected &= bool(has_expected)
            self.judged_all_criteria &= bool(has_criteria)


def testing_criteria(families: Families) -> tuple[list[dict[str, Any]], list[str]]:
    """The eval's criteria for the set, and what the user must be told (stderr and the report)."""
    kinds = set(families.counts)
    if kinds == {"string"}:
        return [STRING_CHECK], []
    if kinds == {"judge"}:
        return [label_model(families)], [JUDGE_NOTE.format(n=families.counts["judge"])]
    notes = [NOT_CHECKED[kind].format(n=families.counts[kind]) for kind in ("judge", "state", "person")
             if kind in kinds]
    return [PYTHON_GRADER], notes


STRING_CHECK: dict[str, Any] = {"type": "string_check", "name": "reference answer (exact)",
                                "input": "{{sample.output_text}}", "reference": "{{item.expected}}",
                                "operation": "eq"}

JUDGE_NOTE = ("{n} cases are judged by a model (label_model): the judge must be validated against people's "
              "grades on a sample of these cases before its verdicts count; replace the model "
              f"{JUDGE_MODEL!r} with the judge you validated")
NOT_CHECKED = {
    "judge": "{n} cases need a model judge, and one OpenAI eval runs every grader on every item: the python "
             "grader raises on them (a grader error, not a verdict); write them to a file of their own to "
             "get a label_model grader",
    "state": "{n} expected-final-state cases: an OpenAI eval sees only the model's output, not the state the "
             "task left, so the python grader raises on them; check the state outside OpenAI",
    "person": "{n} cases are graded by a person (their evaluator, or expected-behavior-only): no OpenAI grader "
              "checks them, and the python grader raises on them",
}


def label_model(families: Families) -> dict[str, Any]:
    lines = ["Expected behaviour: {{item.metadata.case.expectedBehavior}}"]
    if families.judged_all_criteria:
        lines.append("Criteria (all must hold): {{item.metadata.case.evaluationCriteria}}")
    if families.judged_all_expected:
        lines.append("Reference: {{item.expected}}")
    lines.append("Answer to grade:\n{{sample.output_text}}")
    return {"type": "label_model", "name": "case judge", "model": JUDGE_MODEL,
            "input": [{"role": "developer", "content": "You grade an answer against a test case. Reply "
                       "'pass' if the answer does what the case expects and meets every criterion, else 'fail'."},
                      {"role": "user", "content": "\n".join(lines)}],
            "labels": ["pass", "fail"], "passing_labels": ["pass"]}


PYTHON_SOURCE = '''\
"""evalconv's case check: each item is checked as its case profile (item.metadata.case) says."""
import json

PEOPLE = ("rubric-human", "human-expert", "pairwise-preference")
PROGRAMS = ("exact-or-programmatic", "trajectory-or-state-check")


def _same(a, b):
    """JSON equality with types kept apart (1 is not 1.0 nor true)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _answer(sample, expected):
    """The output as a text, or as JSON when the expected value is not a text."""
    text = sample.get("output_text") or ""
    if isinstance(expected, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _calls(sample):
    made = []
    for call in sample.get("output_tools") or []:
        function = call.get("function", call)
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        made.append({"name": function.get("name"), "arguments": arguments})
    return made


def _tool_calls(sample, expected):
    made = _calls(sample)
    if len(made) != len(expected):
        return 0.0
    for call, want in zip(made, expected):
        if not isinstance(want, dict) or call["name"] != want.get("name"):
            return 0.0
        if "arguments" in want and not _same(call["arguments"], want["arguments"]):
            return 0.0
    return 1.0


def grade(sample, item):
    case = (item.get("metadata") or {}).get("case") or {}
    oracle, evaluator = case.get("oracleType"), case.get("evaluator")
    if evaluator in PEOPLE or oracle == "expected-behavior-only":
        raise ValueError("evalconv: a person grades this case; no OpenAI grader checks it")
    if evaluator == "llm-judge" or (evaluator is None and oracle == "rubric"):
        raise ValueError("evalconv: a model judge grades this case; run it in an eval of judged cases")
    if oracle == "expected-final-state":
        raise ValueError("evalconv: the final state is checked outside OpenAI (the eval sees only the output)")
    if "expected" not in item:
        raise ValueError("evalconv: the item has no expected value to check against")
    expected = item["expected"]
    if oracle == "reference-answer":
        return 1.0 if _same(_answer(sample, expected), expected) else 0.0
    if oracle == "acceptable-set" and isinstance(expected, list):
        return 1.0 if any(_same(_answer(sample, member), member) for member in expected) else 0.0
    if oracle == "expected-tool-calls" and isinstance(expected, list):
        return _tool_calls(sample, expected)
    raise ValueError("evalconv: no check for oracle type %r with this expected value" % (oracle,))
'''

PYTHON_GRADER: dict[str, Any] = {"type": "python", "name": "evalconv case check", "source": PYTHON_SOURCE,
                                 "pass_threshold": 1.0}

"""An item-level evaluator for Langfuse's `run_experiment` that checks what a case means, reading
the case profile evalconv carries in the item's metadata (it needs the `langfuse` package).

Langfuse itself checks nothing per dataset item, so this is the check a set written by evalconv
brings along: the exact oracle types are checked, and a case no program may check scores 0 with
the reason in its comment, never a pass.

    from evalconv.vendors.langfuse.evaluators import case_evaluator
    langfuse.run_experiment(name="nightly", data=items, task=my_task, evaluators=[case_evaluator])
"""
from __future__ import annotations

from typing import Any

from evalconv.canonical import jsonvalue
from evalconv.canonical.admissibility import admitted

from .._common.grading import PEOPLE

NAME = "evalconv_case"


def verdict(output: Any, expected: Any, metadata: Any) -> tuple[bool, str]:
    """(passed, why) for one item, from its carried case profile; a case no program may check
    fails, saying why."""
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if not isinstance(case, dict) or not isinstance(case.get("oracleType"), str):
        return False, "not checked: the item carries no evalconv case profile (metadata.case)"
    oracle = case["oracleType"]
    evaluator = case.get("evaluator")
    if not isinstance(evaluator, str):
        allowed = admitted(oracle) if oracle in ("reference-answer", "acceptable-set", "rubric", "expected-tool-calls",
                                                 "expected-final-state", "expected-behavior-only") else []
        evaluator = next((e for e in ("exact-or-programmatic", "trajectory-or-state-check", "llm-judge")
                          if e in allowed), allowed[0] if allowed else "")
    if evaluator in PEOPLE:
        return False, f"not checked: a person grades this case ({evaluator})"
    if evaluator == "llm-judge":
        return False, "not checked: a model judge grades this case; add a Langfuse LLM-as-a-judge evaluator"
    if oracle == "reference-answer" and expected is not None:
        same = jsonvalue.same(output, expected)
        return same, "the output is the reference" if same else "the output is not the reference"
    if oracle == "acceptable-set" and isinstance(expected, list) and expected:
        member = any(jsonvalue.same(output, m) for m in expected)
        return member, "the output is one of the acceptable outputs" if member else "the output is none of them"
    if oracle == "expected-tool-calls" and isinstance(expected, list):
        if not (isinstance(output, list) and all(isinstance(c, dict) and "name" in c for c in output)):
            return False, "not checked: the task's output is not a list of calls ({name, arguments})"
        made = [{k: c[k] for k in ("name", "arguments") if k in c} for c in output]
        wanted = [{k: c[k] for k in ("name", "arguments") if k in c} for c in expected if isinstance(c, dict)]
        same = len(made) == len(wanted) and all(
            m["name"] == w["name"] and ("arguments" not in w or jsonvalue.same(m.get("arguments"), w["arguments"]))
            for m, w in zip(made, wanted))
        return same, "the calls are the expected ones, in order" if same else "the calls differ from the expected ones"
    return False, f"not checked: no program checks this {oracle} case here"


def case_evaluator(*, input: Any, output: Any, expected_output: Any = None, metadata: Any = None,
                   **kwargs: Any) -> Any:
    """A Langfuse `EvaluatorFunction`: one `Evaluation` named `evalconv_case`, 1.0 or 0.0."""
    from langfuse import Evaluation

    passed, why = verdict(output, expected_output, metadata)
    return Evaluation(name=NAME, value=1.0 if passed else 0.0, comment=why)

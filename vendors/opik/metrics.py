"""An Opik metric that checks what an evalconv case means, reading the case profile the item
carries in `metadata.case` (it needs the `opik` package).

    from evalconv.vendors.opik.metrics import case_metric
    opik.evaluate(dataset=dataset, task=task, scoring_metrics=[case_metric()])

Opik hands a metric the item's content as keyword arguments and the task's `output`. A reference
or acceptable-set case of text is checked with Opik's own `Equals(case_sensitive=True)`; other
values are compared whole, type and all; tool calls by name and arguments, in order. A case no
program may check scores 0 with `scoring_failed` and its reason, never a pass.
"""
from __future__ import annotations

from typing import Any

from evalconv.canonical import jsonvalue

NAME = "evalconv_case"
NOT_CHECKED = "not checked"


def _equals(output: Any, reference: Any) -> bool:
    if isinstance(output, str) and isinstance(reference, str):
        from opik.evaluation.metrics import Equals

        return bool(Equals(case_sensitive=True, track=False).score(output=output, reference=reference).value == 1.0)
    return jsonvalue.same(output, reference)


def _calls(value: Any) -> list[dict[str, Any]] | None:
    calls = value.get("tool_calls") if isinstance(value, dict) else value
    if isinstance(calls, list) and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls):
        return calls
    return None


def verdict(output: Any, expected: Any, metadata: Any) -> tuple[bool | None, str]:
    """(passed, why) for one item; passed is None when nothing here may check the case."""
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if not isinstance(case, dict) or not isinstance(case.get("oracleType"), str):
        return None, f"{NOT_CHECKED}: the item carries no evalconv case profile (metadata.case)"
    oracle, evaluator = case["oracleType"], case.get("evaluator")
    if evaluator not in (None, "exact-or-programmatic", "trajectory-or-state-check"):
        return None, f"{NOT_CHECKED}: {evaluator} grades this case, not a program"
    if oracle == "reference-answer" and expected is not None:
        same = _equals(output, expected)
        return same, "the output is the reference" if same else "the output is not the reference"
    if oracle == "acceptable-set" and isinstance(expected, list) and expected:
        member = any(_equals(output, m) for m in expected)
        return member, "the output is one of the acceptable outputs" if member else "the output is none of them"
    wanted = _calls(expected)
    if oracle == "expected-tool-calls" and wanted is not None:
        made = _calls(output)
        if made is None:
            return False, "the output is not a list of calls ({name, arguments})"
        same = len(made) == len(wanted) and all(
            m["name"] == w["name"] and ("arguments" not in w or jsonvalue.same(m.get("arguments"), w["arguments"]))
            for m, w in zip(made, wanted))
        return same, "the calls are the expected ones, in order" if same else "the calls differ from the expected ones"
    return None, f"{NOT_CHECKED}: no program checks this {oracle} case here"


def case_metric() -> Any:
    """An Opik `BaseMetric` named `evalconv_case`: 1.0 or 0.0; a case it may not check scores 0.0
    with `scoring_failed` set and the reason."""
    from opik.evaluation.metrics import base_metric, score_result

    class CaseMetric(base_metric.BaseMetric):
        def __init__(self) -> None:
            super().__init__(name=NAME, track=False)

        def score(self, output: Any = None, expected_output: Any = None, metadata: Any = None,
                  **ignored: Any) -> Any:
            passed, why = verdict(output, expected_output, metadata)
            return score_result.ScoreResult(name=NAME, value=1.0 if passed else 0.0, reason=why,
                                            scoring_failed=passed is None)

    return CaseMetric()

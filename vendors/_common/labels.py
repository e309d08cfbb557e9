"""What a tool's score says as a verdict, for tools whose scores carry no pass rule of their own
(Langfuse scores, Phoenix annotations): a boolean says it, a label says it only when it is a pass
or fail word, and a number says nothing: it is unscored (`passAt: null`) until `evalconv report
--threshold NAME=SCORE` gives the rule (the same reading as pydantic-evals' and MLflow's scores)."""
from __future__ import annotations

from typing import Any

from evalconv.canonical import runs

WORDS = {"pass": True, "passed": True, "true": True, "yes": True, "correct": True,
         "fail": False, "failed": False, "false": False, "no": False, "incorrect": False}


def label_verdict(label: Any) -> bool | None:
    """The verdict a label states (`pass`, `True`, `incorrect`...), None for any other label."""
    return WORDS.get(label.strip().lower()) if isinstance(label, str) else None


def no_rule(score: float, threshold_flag: str) -> str:
    """Why a number with no pass rule is unscored."""
    return f"score {score:g}: no pass rule stated; unscored until {threshold_flag}"


def unscored_until_threshold(record: runs.Result) -> runs.Result:
    """Mark a result's score as one the harness states no rule for (`passAt: null`)."""
    record["passAt"] = None
    return record


def words_text() -> str:
    return ", ".join(f"`{w}`" for w, v in WORDS.items() if v) + " pass; " + \
        ", ".join(f"`{w}`" for w, v in WORDS.items() if not v) + " fail (any case)"

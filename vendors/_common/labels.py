"""What a tool's score says as a verdict, for tools whose scores carry no pass rule of their own
(Langfuse scores, Phoenix annotations): a boolean says it, a label says it only when it is a pass
or fail word, and a number in [0, 1] passes at 1 and fails at 0; any other number, and one in
between, is unscored unless `evalconv report --threshold NAME=SCORE` gives the rule."""
from __future__ import annotations

from typing import Any

from .runfiles import number

PASS_AT = 1.0
WORDS = {"pass": True, "passed": True, "true": True, "yes": True, "correct": True,
         "fail": False, "failed": False, "false": False, "no": False, "incorrect": False}


def label_verdict(label: Any) -> bool | None:
    """The verdict a label states (`pass`, `True`, `incorrect`...), None for any other label."""
    return WORDS.get(label.strip().lower()) if isinstance(label, str) else None


def unit_verdict(score: Any, threshold_flag: str) -> tuple[bool | None, str]:
    """(passed, why) of a number with no pass rule: 1 passes, 0 fails, the rest unscored."""
    value = number(score)
    if value is None:
        return None, "no score"
    if value >= PASS_AT and value <= 1.0:
        return True, f"score {value:g}"
    if value == 0.0:
        return False, "score 0"
    where = "between 0 and 1" if 0.0 < value < 1.0 else "outside 0 to 1"
    return None, f"score {value:g} {where}: no pass rule; unscored unless {threshold_flag}"


def words_text() -> str:
    return ", ".join(f"`{w}`" for w, v in WORDS.items() if v) + " pass; " + \
        ", ".join(f"`{w}`" for w, v in WORDS.items() if not v) + " fail (any case)"

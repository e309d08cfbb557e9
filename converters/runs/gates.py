"""`report --fail-under`: whether a gate over a slice's release-gating cases holds.

A gate fails when its pass rate is below the threshold or nothing was scored; when one of its
cases is unscored (nobody graded it), unless the user accepts that (`allow_unscored`, or at least
`min_graded` of the cases graded); and a pass that rests only on a conditionally admitted
evaluator (an llm-judge on a reference, set or rubric case) counts only where the judge agrees
with people on the case family (`min_agreement`, the report's judge agreement) or the user
trusts it (`trust_judge`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..canonical.suggest import count as plural
from ..canonical.vocabulary import RELEASE

MIN_AGREEMENT = 0.8


@dataclass(frozen=True)
class GatePolicy:
    """What a gate accepts beyond its rate: unscored cases, passes on an unvalidated judge."""

    allow_unscored: bool = False
    min_graded: float | None = None  # the share of a slice's cases that must be graded
    min_agreement: float = MIN_AGREEMENT  # judge-human percent agreement that validates a judge
    trust_judge: bool = False


DEFAULT_POLICY = GatePolicy()


def gate_json(slice_: str, threshold: float, policy: GatePolicy, counts: dict[str, Any], *, gate_field: str,
              judges: dict[str, Any], unvalidated: int, unscored: list[str],
              judge_only: list[tuple[str, str]]) -> dict[str, Any]:
    """The gate's entry in the report: `counts` is its bucket, `unscored` and `judge_only` the first
    ids (with the case family) of its unscored cases and of the passes resting on an unvalidated judge."""
    untrusted = 0 if policy.trust_judge else unvalidated
    scored = counts["passed"] + counts["failed"]
    rate = (counts["passed"] - untrusted) / scored if scored else None
    total = scored + counts["unscored"]
    graded = scored / total if total else None
    problems = []
    if rate is None:
        problems.append("no scored release-gating case in this slice")
    elif rate < threshold:
        problems.append(f"{rate:.4g} < {threshold:g}")
    allowed = policy.allow_unscored or (policy.min_graded is not None and graded is not None
                                        and graded >= policy.min_graded)
    if counts["unscored"] and not allowed:
        need = f" (graded {graded:.0%} < --min-graded {policy.min_graded:g})" if policy.min_graded is not None else ""
        problems.append(f"{plural(counts['unscored'], 'case')} nobody graded{need}: {_ids(unscored, counts['unscored'])} "
                        f"(--allow-unscored or --min-graded SHARE to accept)")
    families = sorted({family for _id, family in judge_only})
    judge = [{"family": f, "evidence": _evidence(judges.get(f), policy.min_agreement)} for f in families]
    if untrusted:
        evidence = "; ".join(f"{u['family']}: {u['evidence']}" for u in judge)
        problems.append(f"the llm-judge is unvalidated ({evidence}), so {plural(untrusted, 'case')} it alone passed "
                        f"{'does' if untrusted == 1 else 'do'} not pass: {_ids([i for i, _f in judge_only], untrusted)} (--trust-judge accepts them)")
    return {"slice": slice_, "threshold": threshold, "counting": f"{gate_field}: {RELEASE} or true",
            **counts, "gatePassRate": rate, "gradedShare": graded,
            "unscoredCases": unscored, "judgeOnlyCases": [i for i, _f in judge_only], "unvalidatedJudge": judge,
            "ok": not problems, "why": "; ".join(problems) if problems else f"{rate:.4g} >= {threshold:g}"}


def _ids(ids: list[str], count: int) -> str:
    return ", ".join(ids) + (f" and {count - len(ids)} more" if count > len(ids) else "")


def _evidence(agreement: dict[str, Any] | None, minimum: float) -> str:
    if agreement is None:
        return "no judge-agreement evidence (no case graded by both the judge and a person)"
    return f"agreement {agreement['percentAgreement']:.0%} < --min-agreement {minimum:g} on {plural(agreement['pairs'], 'pair')}"

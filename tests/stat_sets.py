"""Case sets whose counts are known by construction."""
from __future__ import annotations

from conftest import ROOT, row

GOLDEN = ROOT / "golden_roundtrips"


def known_set() -> list[dict]:
    """12 rows whose counts are known by construction."""
    rows = []
    for i in range(5):  # reference answers, named evaluator, family refunds, severity harmful x2
        rows.append(row(f"ref-{i}", evaluator="exact-or-programmatic", caseFamily="refunds",
                        linkedConcerns=["invented-policy", "refund-accuracy"] if i < 3 else ["tone"]))
        rows[-1]["metadata"].update(reason=f"Regression {i}", severity="harmful" if i < 2 else "wrong-answer",
                                    gate="release")
    for i in range(3):  # rubrics with no evaluator (implied: llm-judge), one with criteria
        extra = {"evaluationCriteria": ["cites the policy"]} if i == 0 else {}
        rows.append(row(f"rub-{i}", oracle="rubric", expected=(), caseFamily="tone", **extra))
        rows[-1]["metadata"].update(severity="cosmetic", gate="release" if i == 0 else "trend")
    for i in range(2):  # starter examples
        rows.append(row(f"st-{i}", provenance="starter-example", caseFamily="greeting",
                        linkedConcerns=["tone", "tone"]))
    for i in range(2):  # tool calls, evaluator implied (exact-or-programmatic), no family
        rows.append(row(f"tool-{i}", oracle="expected-tool-calls", expected=[{"name": "refund"}], reversibility="R2"))
    return rows

"""A run store whose judge and human verdicts are known by construction."""
from __future__ import annotations

import json

from evalconv.canonical import runs


def judged_case(case_id: str, family: str, oracle: str) -> dict:
    case = {"caseId": case_id, "oracleType": oracle, "expectedBehavior": "x", "provenance": "expert-authored",
            "caseFamily": family, "evaluator": "llm-judge"}
    if oracle == "rubric":
        case["evaluationCriteria"] = ["Is polite"]
    row = {"id": case_id, "input": "q", "metadata": {"case": case}}
    if oracle == "reference-answer":
        row["expected"] = "a"
    return row


def verdict_result(attempt: dict, name: str, type_: str, passed: bool, when: str = "2026-12-01") -> dict:
    return runs.result(attempt_id=attempt["id"], name=name, type_=type_, type_source="declared", score=None,
                       passed=passed, review_status="reviewed" if "human" in type_ else "automated", recorded_at=when)


# (judge, human) per attempt. tone: 4 both pass, 3 both fail, 2 judge-only pass, 1 human-only pass.
TONE = [(True, True)] * 4 + [(False, False)] * 3 + [(True, False)] * 2 + [(False, True)]
POLICY = [(True, True)] * 4


def build_store(tmp_path):
    """A run store (and its cases) with the judge and human verdicts above."""
    cases, attempts, results = [], [], []
    for family, oracle, pairs in (("tone", "rubric", TONE), ("policy", "reference-answer", POLICY)):
        for i, (by_judge, by_human) in enumerate(pairs):
            row = judged_case(f"{family}-{i}", family, oracle)
            cases.append(row)
            attempt = runs.attempt(harness="evalconv", key=(family, i), case_id=row["id"], system="app")
            attempts.append(attempt)
            if family == "tone" and i == 0:  # an older judge verdict, superseded by the rescoring below
                results.append(verdict_result(attempt, "tone-judge", "llm-judge", not by_judge, "2026-11-01"))
            results.append(verdict_result(attempt, "tone-judge", "llm-judge", by_judge))
            results.append(verdict_result(attempt, "reviewer", "rubric-human", by_human))
    lonely = runs.attempt(harness="evalconv", key=("tone", "judge only"), case_id="tone-0", system="app")
    attempts.append(lonely)
    results.append(verdict_result(lonely, "tone-judge", "llm-judge", True))  # no human verdict: not a pair
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in cases))
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    return folder, tmp_path / "cases.jsonl"

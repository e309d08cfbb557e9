"""Judge validation: llm-judge against human verdicts on the same attempts, per case family,
against hand-computed percent agreement and Cohen's kappa."""
from __future__ import annotations

import json

import pytest
from evalconv.canonical import runs
from evalconv.runs.report import kappa, report


def _case(case_id: str, family: str, oracle: str) -> dict:
    case = {"caseId": case_id, "oracleType": oracle, "expectedBehavior": "x", "provenance": "expert-authored",
            "caseFamily": family, "evaluator": "llm-judge"}
    if oracle == "rubric":
        case["evaluationCriteria"] = ["Is polite"]
    row = {"id": case_id, "input": "q", "metadata": {"case": case}}
    if oracle == "reference-answer":
        row["expected"] = "a"
    return row


def _verdict(attempt: dict, name: str, type_: str, passed: bool, when: str = "2026-12-01") -> dict:
    return runs.result(attempt_id=attempt["id"], name=name, type_=type_, type_source="declared", score=None,
                       passed=passed, review_status="reviewed" if "human" in type_ else "automated", recorded_at=when)


# (judge, human) per attempt. tone: 4 both pass, 3 both fail, 2 judge-only pass, 1 human-only pass.
TONE = [(True, True)] * 4 + [(False, False)] * 3 + [(True, False)] * 2 + [(False, True)]
POLICY = [(True, True)] * 4


@pytest.fixture
def store(tmp_path):
    return build_store(tmp_path)


def build_store(tmp_path):
    """A run store (and its cases) with the judge and human verdicts above."""
    cases, attempts, results = [], [], []
    for family, oracle, pairs in (("tone", "rubric", TONE), ("policy", "reference-answer", POLICY)):
        for i, (by_judge, by_human) in enumerate(pairs):
            row = _case(f"{family}-{i}", family, oracle)
            cases.append(row)
            attempt = runs.attempt(harness="evalconv", key=(family, i), case_id=row["id"], system="app")
            attempts.append(attempt)
            if family == "tone" and i == 0:  # an older judge verdict, superseded by the rescoring below
                results.append(_verdict(attempt, "tone-judge", "llm-judge", not by_judge, "2026-11-01"))
            results.append(_verdict(attempt, "tone-judge", "llm-judge", by_judge))
            results.append(_verdict(attempt, "reviewer", "rubric-human", by_human))
    lonely = runs.attempt(harness="evalconv", key=("tone", "judge only"), case_id="tone-0", system="app")
    attempts.append(lonely)
    results.append(_verdict(lonely, "tone-judge", "llm-judge", True))  # no human verdict: not a pair
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in cases))
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    return folder, tmp_path / "cases.jsonl"


def test_agreement_per_family_matches_hand_computed_values(store):
    folder, cases = store
    agreement = report([str(folder)], [str(cases)])["judgeAgreement"]
    # tone: po = 7/10; judge passes 6/10, human 5/10; pe = .6*.5 + .4*.5 = .5; kappa = (.7-.5)/.5 = .4
    assert agreement["tone"] == {"pairs": 10, "agree": 7, "percentAgreement": 0.7, "kappa": pytest.approx(0.4),
                                 "bothPass": 4, "bothFail": 3, "judgePassHumanFail": 2, "judgeFailHumanPass": 1}
    # policy: all four pass on both sides: agreement 1.0, chance agreement 1, kappa undefined
    assert agreement["policy"]["percentAgreement"] == 1.0 and agreement["policy"]["kappa"] is None


@pytest.mark.parametrize("table, expected", [
    ((4, 3, 2, 1), 0.4),
    ((20, 15, 5, 10), 0.4),  # po .7; judge passes .5, human .6; pe .5*.6 + .5*.4 = .5
    ((0, 0, 5, 5), -1.0),  # always disagree, balanced: kappa -1
    ((5, 5, 0, 0), 1.0),
])
def test_kappa_by_hand(table, expected):
    assert kappa(*table) == pytest.approx(expected)


def test_kappa_of_nothing_is_undefined():
    assert kappa(0, 0, 0, 0) is None


def test_packed_verdicts_keep_the_newest_per_evaluator_past_twelve_names():
    from evalconv.runs.report import _Verdicts

    verdicts = _Verdicts()
    for _ in range(3):
        verdicts.grow()
    for name in range(15):
        verdicts.set(1, name, name % 21)
        verdicts.set(1, name, (name + 1) % 21)  # a rescoring supersedes
    verdicts.set(2, 0, 0)
    got = sorted(verdicts.items())
    assert got == [(1, n, (n + 1) % 21) for n in range(15)] + [(2, 0, 0)]


def test_the_peoples_verdict_decides_an_attempt_the_judge_also_graded(store):
    folder, cases = store
    family = report([str(folder)], [str(cases)])["slices"]["case.caseFamily"]
    # tone: the humans passed 5 of 10 attempts (4 both-pass + 1 human-only pass); the judge's
    # 2 passes that humans failed do not count, nor its 1 fail that a human passed
    assert (family["tone"]["passed"], family["tone"]["failed"]) == (5, 5)
    assert (family["policy"]["passed"], family["policy"]["failed"]) == (4, 0)

"""Judge validation: llm-judge against human verdicts on the same attempts, per case family,
against hand-computed percent agreement and Cohen's kappa."""
from __future__ import annotations


import pytest
from run_stores import build_store
from evalconv.runs.report import kappa, report


# (judge, human) per attempt. tone: 4 both pass, 3 both fail, 2 judge-only pass, 1 human-only pass.


@pytest.fixture
def store(tmp_path):
    return build_store(tmp_path)


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

"""Inspect eval logs read as run output: counts equal Inspect's own, sample by sample."""
from __future__ import annotations

import pytest
from conftest import ROOT, run_cli
from evalconv.runs.readers import RESULTS_REGISTRY

RUNS = ROOT / "tests" / "fixtures" / "runs"
LOGS = [RUNS / "inspect" / "log.eval", RUNS / "inspect" / "log.json"]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.suffix)
def test_inspect_log_results_equal_inspects_own_scores(log):
    from inspect_ai.log import read_eval_log
    own = read_eval_log(str(log))
    records = list(RESULTS_REGISTRY.read(str(log)))
    attempts = {r["id"]: r["caseId"] for k, r in records if k == "attempt"}
    mine: dict[tuple[str, str], bool | None] = {}
    for kind, r in records:
        if kind == "result":
            mine[(attempts[r["attemptId"]], r["evaluator"]["name"])] = r["passed"]
    expect = {"C": True, "I": False, "N": None}
    theirs = {(str(s.id), name): (expect[v.value] if isinstance(v.value, str) else v.value >= 1.0)
              for s in own.samples for name, v in s.scores.items()}
    assert mine == theirs and len(attempts) == len(own.samples)


def test_inspect_scorers_typed_by_evaluator_unknown_names_the_flag():
    records = [r for k, r in RESULTS_REGISTRY.read(str(LOGS[0])) if k == "result"]
    types = {r["evaluator"]["name"]: r["evaluator"]["type"] for r in records}
    assert types == {"match": "exact-or-programmatic", "includes": "exact-or-programmatic",
                     "case_scorer": "exact-or-programmatic", "short_answer": None}
    unknown = next(r for r in records if r["evaluator"]["name"] == "short_answer")
    assert "--evaluator 'short_answer=TYPE'" in unknown["reason"]


def test_inspect_noanswer_is_unscored_not_failed():
    records = list(RESULTS_REGISTRY.read(str(LOGS[1])))
    noanswer = [r for k, r in records if k == "result" and r["evaluator"]["name"] == "case_scorer" and r["passed"] is None]
    assert len(noanswer) == 3 and all(r["reason"].startswith("NOANSWER") for r in noanswer)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.suffix)
def test_inspect_log_report_and_import_through_cli(log, tmp_path, capsys):
    code, _ = run_cli(["report", str(log), "--cases", str(RUNS / "cases.jsonl"), "--format", "json"], capsys)
    assert code == 0
    code, _ = run_cli(["runs", "import", str(log), "--store", str(tmp_path / "store")], capsys)
    assert code == 0
    assert len((tmp_path / "store" / "attempts.jsonl").read_text().splitlines()) == 9


def test_inspect_log_not_a_zip_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    code, err = run_cli(["report", str(bad), "--cases", str(RUNS / "cases.jsonl"), "--harness", "inspect"], capsys)
    assert code == 2 and "broken.eval" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1

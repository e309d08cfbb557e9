"""Ragas evaluation results read as run output: each metric cell a result, linked by input text."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from conftest import ROOT, run_cli
from evalconv.runs.readers import RESULTS_REGISTRY

RUNS = ROOT / "tests" / "fixtures" / "runs"
FILES = [RUNS / "ragas" / "results.csv", RUNS / "ragas" / "results.jsonl"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.suffix)
def test_ragas_results_equal_ragas_own_scores_row_by_row(path):
    frame = pd.read_csv(path) if path.suffix == ".csv" else pd.read_json(path, lines=True)
    records = list(RESULTS_REGISTRY.read(str(path)))
    results = [r for k, r in records if k == "result"]
    theirs = [(m, None if math.isnan(v) else float(v)) for _, row in frame.iterrows()
              for m, v in row[["exact_match", "string_present"]].items()]
    assert [(r["evaluator"]["name"], r["score"]) for r in results] == theirs
    assert all(r["evaluator"]["type"] == "exact-or-programmatic" for r in results)
    assert all(r["passed"] is None and r["reviewStatus"] == "error" for r in results if r["score"] is None)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.suffix)
def test_ragas_results_link_to_cases_by_input_through_cli(path, tmp_path, capsys):
    from evalconv.runs.report import report
    code, _ = run_cli(["report", str(path), "--cases", str(RUNS / "cases.jsonl"), "--format", "json"], capsys)
    assert code == 0
    out = report([str(path)], [str(RUNS / "cases.jsonl")])
    assert out["attempts"] == 9 and sum(out["ledgerCounts"].values()) == 0
    code, _ = run_cli(["runs", "import", str(path), "--store", str(tmp_path / "s")], capsys)
    assert code == 0


def test_ragas_results_metric_cell_not_a_number_names_line_and_field(tmp_path):
    bad = tmp_path / "results.csv"
    bad.write_text("user_input,response,exact_match\nhi,hi,oops\n")
    [(kind, entry)] = list(RESULTS_REGISTRY.read(str(bad)))
    assert kind == "ledger" and "line 2: $.exact_match" in entry["reason"]

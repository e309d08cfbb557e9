"""Opik experiment items as run output: the CLI's `opik export experiment` file, linked to cases by
the carried case id or by the dataset item id evalconv derived from it; `case_metric`'s "not
checked" is no verdict; assertion results are the judge's pass or fail."""
from __future__ import annotations

import json

from conftest import ROOT
from evalconv.registry import REGISTRY
from evalconv.runs.readers import RESULTS_REGISTRY
from evalconv.runs.report import report
from evalconv.vendors.opik.write import item_id

RUNS = ROOT / "tests" / "fixtures" / "runs"
EXPORT = RUNS / "opik" / "experiment_export.json"
CASES = RUNS / "cases.jsonl"


def _read(path):
    return list(RESULTS_REGISTRY.read(str(path)))


def test_the_fixture_reads_as_attempts_and_results_linked_by_case_id():
    records = _read(EXPORT)
    attempts = [r for k, r in records if k == "attempt"]
    assert len(attempts) == 9 and all(a["harness"]["name"] == "opik" for a in attempts)
    assert all(a["caseId"] for a in attempts)
    unchecked = [r for k, r in records if k == "result" and r["reason"].startswith("not checked")]
    assert unchecked and all(r["passed"] is None for r in unchecked)  # never a pass


def _one(tmp_path, item):
    path = tmp_path / "experiment_export.json"
    path.write_text(json.dumps({"experiment": {"id": "e", "name": "x"}, "items": [item],
                                "downloaded_at": "2026-12-05T01:00:00"}))
    return path


def test_an_item_without_the_carried_profile_links_by_its_derived_dataset_item_id(tmp_path):
    path = _one(tmp_path, {"id": "i1", "dataset_item_id": item_id("r-refund-receipt"), "trace_id": "t",
                           "dataset_item_data": {"input": "x"}, "evaluation_task_output": {"output": "x"},
                           "feedback_scores": [{"name": "equals_metric", "value": 1.0, "reason": None}],
                           "assertion_results": []})
    (_, attempt), (_, result) = _read(path)
    assert attempt["caseId"] is None and attempt["caseRef"] == {"kind": "opik-dataset-item-id",
                                                               "value": item_id("r-refund-receipt")}
    assert result["passed"] is True and result["evaluator"]["type"] == "exact-or-programmatic"
    done = report([str(path)], [str(CASES)])
    assert done["attempts"] == 1 and done["overall"]["passed"] == 1


def test_assertion_results_are_the_judges_verdicts_and_an_unknown_metric_is_untyped(tmp_path):
    path = _one(tmp_path, {"id": "i1", "dataset_item_id": "d", "trace_id": "t", "dataset_item_data": None,
                           "evaluation_task_output": None,
                           "feedback_scores": [{"name": "tone", "value": 0.5}, {"name": "nameless"}],
                           "assertion_results": [{"value": "The response apologises", "passed": False,
                                                  "reason": "no apology"}, {"passed": "yes"}]})
    kinds = [(k, r) for k, r in _read(path)]
    results = [r for k, r in kinds if k == "result"]
    ledger = [r for k, r in kinds if k == "ledger"]
    tone, nameless, judged = results
    assert tone["evaluator"]["type"] is None and tone["passed"] is False
    assert nameless["passed"] is None  # a score with no value: no verdict
    assert judged["evaluator"]["type"] == "llm-judge" and judged["passed"] is False
    assert judged["evaluator"]["name"] == "The response apologises"
    assert len(ledger) == 1  # the assertion result with no passed flag


def test_detection_picks_the_opik_reader_for_its_export_only():
    head = EXPORT.read_text(encoding="utf-8")[:4096]
    assert RESULTS_REGISTRY.readers["opik"].detect(str(EXPORT), head)
    dataset_export = (ROOT / "tests" / "fixtures" / "vendors" / "opik" / "export.json").read_text(encoding="utf-8")
    assert not RESULTS_REGISTRY.readers["opik"].detect("export.json", dataset_export[:4096])
    assert REGISTRY.get("opik").detect(head) == 0.0  # run output is never a case set

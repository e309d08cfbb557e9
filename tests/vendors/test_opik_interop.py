"""Opik's own code takes what evalconv writes, offline: `converters.stream_from_jsonl_file` loads the
dataset items as `DatasetItem`s (every id passes `identifiers.validate_identifier` and is a UUIDv7,
no two share a `content_hash`, so Opik's deduplicating insert keeps every case); the test-suite
items pass `validate_suite_items` and `suite_item_dict_to_dataset_item` (assertions become Opik's
LLMJudge configs); Opik's `build_suite_result` fails the items no assertion checks; `case_metric`
grades a stub output with Opik's `Equals`."""
from __future__ import annotations

import os
import uuid

import pytest
from hypothesis import given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical import jsonvalue
from evalconv.vendors.opik.metrics import NAME, case_metric
from interop import vendor_module
from strategies import any_format_rows

pytestmark = pytest.mark.interop
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # LLMJudge loads litellm: no network

converters = vendor_module("opik.api_objects.dataset.converters", name="converters")


def _export(tmp_path, name="set.opik.jsonl", rows=None):
    out = tmp_path / name
    if rows is None:
        assert evalconv.convert(str(GOLDEN), str(out), to="opik").exit_code == 0
    else:
        evalconv.write(rows, str(out), "opik")
    return out


def _check_items(converters, path, rows):
    from opik.api_objects.dataset import identifiers

    loaded = list(converters.stream_from_jsonl_file(str(path), {}, []))
    assert len(loaded) == len(rows)
    for index, (item, row) in enumerate(zip(loaded, rows)):
        identifiers.validate_identifier(item.id, "id", index)
        assert uuid.UUID(item.id).version == 7 or item.id == row.id
        assert item.get_content()["metadata"]["case"]["caseId"] == row.id
    assert len({item.content_hash() for item in loaded}) == len(loaded)  # nothing merges on insert
    return loaded


def test_opik_loads_the_golden_export_as_dataset_items(converters, tmp_path):
    rows = evalconv.read(str(GOLDEN)).rows
    loaded = _check_items(converters, _export(tmp_path), rows)
    for item, row in zip(loaded, rows):
        content = item.get_content()
        assert content["input"] == row.input
        assert ("expected_output" in content) == row.has_expected
        assert item.evaluators is None and item.execution_policy is None


def test_case_metric_grades_a_stub_output_with_opiks_equals(converters, tmp_path):
    rows = {r.id: r for r in evalconv.read(str(GOLDEN)).rows}
    metric = case_metric()
    scores = {}
    for item in converters.stream_from_jsonl_file(str(_export(tmp_path)), {}, []):
        content = item.get_content()
        row = rows[content["metadata"]["case"]["caseId"]]
        right = row.expected[-1] if row.case["oracleType"] == "acceptable-set" else (
            row.expected if row.has_expected else "")
        good, bad = metric.score(output=right, **content), metric.score(output="something else", **content)
        assert good.name == NAME
        scores[row.id] = (good, bad)
    checked = {i for i, (good, _) in scores.items() if not good.scoring_failed}
    assert checked == {"cs-refund-valid-receipt", "cs-return-window-phrasing", "cs-order-status-tool",
                       "cs-tricky-strings", "cs-extract-receipt"}
    assert all(scores[i][0].value == 1.0 and scores[i][1].value == 0.0 for i in checked)
    assert all(g.value == 0.0 and b.value == 0.0 and g.scoring_failed for i, (g, b) in scores.items()
               if i not in checked)  # never a pass


def test_opik_reads_the_test_suite_export_and_fails_what_no_assertion_checks(converters, tmp_path):
    from opik.api_objects.dataset import validators
    from opik.api_objects.dataset.test_suite import converters as suite
    from opik.api_objects.dataset.test_suite.suite_result_constructor import build_suite_result
    from opik.evaluation import evaluation_result, test_case, test_result

    rows = evalconv.read(str(GOLDEN)).rows
    lines = _export(tmp_path, "set.opik.suite.jsonl").read_text(encoding="utf-8").splitlines()
    raw = [jsonvalue.loads(line) for line in lines]
    validators.validate_suite_items(raw)
    suite_items = suite.from_jsonl_file(str(tmp_path / "set.opik.suite.jsonl"), {}, [])
    loaded = [suite.suite_item_dict_to_dataset_item(i) for i in suite_items]
    judged = {}
    for item, row, line in zip(loaded, rows, raw):
        assert item.get_content()["metadata"]["case"]["caseId"] == row.id
        if item.evaluators:
            assert [e.type for e in item.evaluators] == ["llm_judge"]
            assert [s["name"] for s in item.evaluators[0].config["schema"]] == line["assertions"]
            judged[item.id] = row.id
    assert set(judged.values()) == {"cs-apology-late-delivery"}  # the one case a model judge grades
    # A run with no scores passes in Opik: every item unjudged here must still fail the suite.
    results = [test_result.TestResult(test_case=test_case.TestCase(trace_id="t", dataset_item_id=item.id,
                                                                   task_output={}, dataset_item=item),
                                      score_results=[], trial_id=0) for item in loaded]
    outcome = build_suite_result(evaluation_result.EvaluationResult(
        experiment_id="e", dataset_id="d", experiment_name=None, test_results=results, experiment_url=None,
        trial_count=1))
    passed = {item_id for item_id, r in outcome.item_results.items() if r.passed}
    assert passed == set(judged)  # (with no judge run, only judged items have no verdict against them)


@settings(max_examples=20, deadline=None)
@given(rows=any_format_rows())
def test_opik_loads_every_export(converters, tmp_path_factory, rows):
    from evalconv.canonical.errors import EvalconvError

    tmp = tmp_path_factory.mktemp("opik")
    try:
        out = _export(tmp, rows=rows)
    except EvalconvError:
        return
    _check_items(converters, out, rows)


def test_regression_identical_items_in_opiks_export_would_merge_on_insert_but_survive_through_evalconv(
        converters, tmp_path):
    from opik.api_objects.dataset.dataset_item import DatasetItem

    same = {"input": "Capital of France?", "expected_output": "Paris"}
    export = tmp_path / "export.json"
    export.write_text(jsonvalue.dumps({"id": "d", "name": "geo", "items": [same, same],
                                       "downloaded_at": "2026-12-05T01:00:00"}))
    assert DatasetItem(**same).content_hash() == DatasetItem(**same).content_hash()  # Opik keeps one
    rows = evalconv.read(str(export)).rows
    assert [r.id for r in rows] == ["opik-1", "opik-2"]
    loaded = _check_items(converters, _export(tmp_path, rows=rows), rows)  # distinct content hashes
    assert [i.get_content()["input"] for i in loaded] == ["Capital of France?"] * 2

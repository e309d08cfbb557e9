"""pydantic-evals loads what evalconv writes (`Dataset.from_file`) and grades it with a stub task
(`evaluate_sync`), offline; evalconv reads the files pydantic-evals wrote (`to_file`)."""
from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical.row import Row
from interop import vendor_fixtures, vendor_module
from roundtrip_helpers import read_text
from strategies import any_format_rows

pytestmark = pytest.mark.interop
FIXTURES, MANIFEST = vendor_fixtures("pydantic-evals")
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
NOT_CHECKED = "not checked by pydantic-evals: "

pydantic_evals = vendor_module("pydantic_evals", name="pydantic_evals")


def _load(pydantic_evals, path):
    return pydantic_evals.Dataset[Any, Any, Any].from_file(str(path))


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _run(pydantic_evals, dataset, answer):
    """Grade every case no model judge grades (a judge would call a model) with `answer(case)`."""
    cases = [c for c in dataset.cases if not any(type(e).__name__ in ("LLMJudge", "GEval") for e in c.evaluators)]
    by_input = {_key(c.inputs): c for c in cases}
    sub = pydantic_evals.Dataset[Any, Any, Any](name="sub", cases=cases)
    report = sub.evaluate_sync(lambda inputs: answer(by_input[_key(inputs)]), progress=False)
    return {c.name: c for c in report.cases}


@pytest.mark.parametrize("suffix", [".pydantic-evals.yaml", ".pydantic-evals.json"])
def test_pydantic_evals_loads_the_golden_export_and_grades_it(pydantic_evals, tmp_path, suffix):
    out = tmp_path / f"support{suffix}"
    assert evalconv.convert(str(GOLDEN), str(out), to="pydantic-evals").exit_code == 0
    rows = {r.id: r for r in evalconv.read(str(GOLDEN)).rows}
    dataset = _load(pydantic_evals, out)
    assert [c.name for c in dataset.cases] == list(rows)
    for case in dataset.cases:  # labels never reach the task: only inputs do
        row = rows[case.name]
        assert case.inputs == row.input and case.metadata["case"] == row.case
        assert case.expected_output == (row.expected if row.has_expected else None)
    right = _run(pydantic_evals, dataset, lambda case: case.expected_output)
    assert right["cs-refund-valid-receipt"].assertions["EqualsExpected"].value is True
    wrong = _run(pydantic_evals, dataset, lambda case: "something else")
    assert wrong["cs-refund-valid-receipt"].assertions["EqualsExpected"].value is False
    for name, case in right.items():  # nothing passes that pydantic-evals cannot check
        row = rows[name]
        if row.case["oracleType"] in ("acceptable-set", "expected-final-state", "expected-behavior-only") or \
                row.case.get("evaluator") in ("rubric-human", "human-expert"):
            failing = [k for k, v in case.assertions.items() if v.value is False]
            assert failing and all(k.startswith(NOT_CHECKED) for k in failing), name
    judged = next(c for c in dataset.cases if c.name == "cs-apology-late-delivery")
    judge = judged.evaluators[0]
    assert type(judge).__name__ == "LLMJudge" and judge.include_input
    assert rows["cs-apology-late-delivery"].case["expectedBehavior"] in judge.rubric
    assert "Blames the carrier" in judge.rubric  # the unacceptable behaviour, for the judge only


def test_the_tool_evaluators_pass_the_right_calls_and_fail_the_wrong_ones(pydantic_evals, tmp_path):
    """With OpenTelemetry spans captured (opentelemetry-sdk), the tool evaluators evalconv writes
    check the calls the task made: names, order and arguments."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    tracer = trace.get_tracer("evalconv-test")
    calls = [{"name": "lookup_order", "arguments": {"order_id": "A1"}}, {"name": "issue_refund", "arguments": {"order_id": "A1"}}]
    row = Row.from_json({"id": "refund", "input": "Refund A1", "expected": calls, "metadata": {"case": {
        "caseId": "refund", "oracleType": "expected-tool-calls", "expectedBehavior": "Looks up, then refunds",
        "provenance": "expert-authored"}}})
    out = tmp_path / "tools.pydantic-evals.yaml"
    evalconv.write([row], str(out), "pydantic-evals")
    dataset = _load(pydantic_evals, out)

    def task(made):
        def run(inputs):
            for call in made:
                with tracer.start_as_current_span(f"execute_tool {call['name']}", attributes={
                        "gen_ai.tool.name": call["name"], "gen_ai.tool.call.arguments": json.dumps(call["arguments"])}):
                    pass
            return "done"
        return run

    good = dataset.evaluate_sync(task(calls), progress=False).cases[0]
    assert all(a.value is True for a in good.assertions.values()) and good.scores["TrajectoryMatch"].value == 1.0
    swapped = dataset.evaluate_sync(task(calls[::-1]), progress=False).cases[0]
    assert swapped.scores["TrajectoryMatch"].value == 0.0  # the order is a score
    wrong_args = [calls[0], {"name": "issue_refund", "arguments": {"order_id": "B2"}}]
    bad = dataset.evaluate_sync(task(wrong_args), progress=False).cases[0]
    assert [a.value for a in bad.assertions.values()].count(False) == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=any_format_rows())
def test_pydantic_evals_loads_every_export(pydantic_evals, tmp_path_factory, rows):
    folder = tmp_path_factory.mktemp("pe")
    for suffix in (".yaml", ".json"):
        path = folder / f"x.pydantic-evals{suffix}"
        evalconv.write(rows, str(path), "pydantic-evals")
        dataset = _load(pydantic_evals, path)
        assert [c.name for c in dataset.cases] == [r.id for r in rows]
        for case, row in zip(dataset.cases, rows):
            assert _key(case.inputs) == _key(row.input)
            assert _key(case.expected_output) == _key(row.expected if row.has_expected else None)


@pytest.mark.parametrize("name", ["support.yaml", "support.json"])
def test_files_pydantic_evals_wrote_read_as_the_manifest_says(pydantic_evals, name):
    want = MANIFEST["files"][0]["recover"]
    checked, report = read_text("pydantic-evals", (FIXTURES / name).read_text(encoding="utf-8"), path=name)
    assert [c.findings for c in checked if c.row is None] == []
    rows = {c.row.id: c.row for c in checked}
    assert list(rows) == want["ids"]
    for row_id, oracle in want["oracleType"].items():
        assert rows[row_id].case["oracleType"] == oracle, row_id
    for row_id, evaluator in want["evaluator"].items():
        assert rows[row_id].case["evaluator"] == evaluator, row_id
    for row_id, expected in want["expected"].items():
        assert rows[row_id].expected == expected, row_id
    for row_id, criteria in want["evaluationCriteria"].items():
        assert rows[row_id].case["evaluationCriteria"] == criteria
    for row in rows.values():
        assert row.case["extensions"]["pydantic-evals"]["evaluators"][-1] == {"MaxDuration": 5}
    assert any("dataset-level evaluators" in n for n in report.notes)


def test_a_foreign_file_written_back_keeps_its_evaluators(pydantic_evals, tmp_path):
    read = evalconv.read(str(FIXTURES / "support.yaml"))
    rows = read.rows
    inferred = {i for entry in read.report.to_json()["inferred"] if entry["path"] == "$.expected" for i in entry["ids"]}
    out = tmp_path / "again.pydantic-evals.yaml"
    evalconv.write(rows, str(out), "pydantic-evals")
    original, again = _load(pydantic_evals, FIXTURES / "support.yaml"), _load(pydantic_evals, out)
    for before, after in zip(original.cases, again.cases):
        kept = [e.as_spec() for e in before.evaluators] + [e.as_spec() for e in original.evaluators]
        assert [e.as_spec() for e in after.evaluators] == kept
        assert after.inputs == before.inputs
        # an expected output inferred from Equals / Contains (the read report says so) is written out
        assert after.expected_output == before.expected_output or after.name in inferred


def test_a_file_pydantic_evals_saved_again_reads_back_unchanged(pydantic_evals, tmp_path):
    rows = evalconv.read(str(GOLDEN)).rows
    for suffix in (".yaml", ".json"):
        out, saved = tmp_path / f"set{suffix}", tmp_path / f"saved{suffix}"
        evalconv.write(rows, str(out), "pydantic-evals")
        _load(pydantic_evals, out).to_file(saved, schema_path=None)
        back = evalconv.read(str(saved), from_="pydantic-evals")
        assert back.rows == rows and back.report.edited.entries == {}

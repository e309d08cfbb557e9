"""Inspect AI's own loaders read every export as meant; evalconv reads what Inspect made."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical import jsonvalue
from interop import vendor_fixtures, vendor_module
from roundtrip_helpers import read_text, write_text
from strategies import inspect_rows

pytestmark = pytest.mark.interop
FIXTURES, MANIFEST = vendor_fixtures("inspect")
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


dataset = vendor_module("inspect_ai.dataset", name="dataset")


def load(dataset, path):
    return dataset.csv_dataset(str(path)) if str(path).endswith(".csv") else dataset.json_dataset(str(path))


@pytest.mark.parametrize("variant", ["jsonl", "json", "csv"])
def test_inspect_loads_the_golden_export_with_labels_in_target(dataset, tmp_path, variant):
    out = tmp_path / f"set.inspect.{variant}"
    assert evalconv.convert(str(GOLDEN), str(out), to="inspect").exit_code == 0
    samples = list(load(dataset, out))
    rows = evalconv.read(str(GOLDEN)).rows
    assert [str(s.id) for s in samples] == [r.id for r in rows]
    for sample, row in zip(samples, rows):
        assert sample.metadata["case"] == row.case
        oracle = row.case["oracleType"]
        if oracle == "reference-answer" and isinstance(row.expected, str) and row.expected:
            assert sample.target == row.expected
        if oracle == "acceptable-set" and variant != "csv":
            assert sample.target == row.expected  # match/includes pass on any member
        if isinstance(row.input, str):  # Inspect's CSV reader turns CR LF into LF (reported)
            assert sample.input == (row.input.replace("\r\n", "\n") if variant == "csv" else row.input)
        labels = [row.case["expectedBehavior"], *row.case.get("evaluationCriteria", [])]
        shown = sample.input if isinstance(sample.input, str) else " ".join(m.text for m in sample.input)
        assert not any(label and label in shown and label not in json.dumps(row.input) for label in labels)


@settings(max_examples=25, deadline=None)
@given(rows=inspect_rows())
def test_inspect_loads_every_jsonl_export(dataset, tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("i") / "x.inspect.jsonl"
    evalconv.write(rows, str(path), "inspect")
    text = path.read_text(encoding="utf-8")
    samples = list(dataset.json_dataset(str(path)))
    assert [str(s.id) for s in samples] == [r.id for r in rows]
    for sample, record in zip(samples, map(jsonvalue.loads, text.split("\n")[:-1])):
        if isinstance(record["input"], str):
            assert sample.input == record["input"]
        else:
            assert [m.role for m in sample.input] == [m["role"] for m in record["input"]]
            assert [m.content for m in sample.input] == [m["content"] for m in record["input"]]


def test_fixtures_made_by_inspect_read_as_the_manifest_says(dataset):
    entry = next(f for f in MANIFEST["files"] if f["path"] == "samples.jsonl")
    samples = list(dataset.json_dataset(str(FIXTURES / "samples.jsonl")))
    checked, _ = read_text("inspect", (FIXTURES / "samples.jsonl").read_text(encoding="utf-8"))
    rows = [c.row for c in checked]
    assert [r.id for r in rows] == entry["recover"]["ids"] == [str(s.id) for s in samples]
    assert [r.expected for r in rows] == entry["recover"]["targets"]
    assert [r.case["oracleType"] for r in rows] == entry["recover"]["oracleTypes"]
    for row_id, ext in entry["recover"]["extensions"].items():
        assert next(r for r in rows if r.id == row_id).case["extensions"]["inspect"] == ext


def test_shipped_examples_read_and_go_back_to_inspect_the_same(dataset, tmp_path):
    source = FIXTURES / "theory_of_mind.jsonl"
    checked, _ = read_text("inspect", source.read_text(encoding="utf-8"))
    rows = [c.row for c in checked]
    assert len(rows) == 12 and all(r.case["oracleType"] == "reference-answer" for r in rows)
    text, _ = write_text("inspect", rows, path="x.inspect.jsonl")
    (tmp_path / "x.jsonl").write_text(text, encoding="utf-8")
    again = list(dataset.json_dataset(str(tmp_path / "x.jsonl")))
    original = list(dataset.json_dataset(str(source)))
    assert [(s.input[0].text, s.target) for s in again] == [(s.input[0].text, s.target) for s in original]


def test_field_spec_reads_biology_qa_as_inspect_does(dataset):
    from evalconv.vendors.inspect.read import FieldSpec, read_samples
    import io
    from evalconv.canonical.source import Lines
    from evalconv.reports import ReadReport
    spec = FieldSpec.from_mapping({"id": "id", "input": "question", "target": "answer"}, "spec")
    text = (FIXTURES / "biology_qa.jsonl").read_bytes()
    got = [s.value for s in read_samples(Lines(io.BytesIO(text), source="b"), ReadReport("inspect"), spec)]
    theirs = list(dataset.json_dataset(str(FIXTURES / "biology_qa.jsonl"),
                                       dataset.FieldSpec(id="id", input="question", target="answer")))
    assert [(g["id"], g["input"], g["expected"]) for g in got] == [(s.id, s.input, s.target) for s in theirs]


# ---------------------------------------------------------------- what Inspect's scorers make of each case

EXTRA_ROWS = [
    {"id": "capital-member", "input": "Name a city on the list.", "expected": ["Paris", "Lyon"],
     "metadata": {"case": {"caseId": "capital-member", "oracleType": "acceptable-set", "expectedBehavior": "Names one",
                           "provenance": "expert-authored", "evaluator": "exact-or-programmatic"}}},
    {"id": "no-tool-needed", "input": "What is 2 + 2?", "expected": [],
     "metadata": {"case": {"caseId": "no-tool-needed", "oracleType": "expected-tool-calls",
                           "expectedBehavior": "Answers without calling a tool", "provenance": "expert-authored",
                           "evaluator": "trajectory-or-state-check"}}},
    {"id": "refund-in-order", "input": "Refund order A1.",
     "expected": [{"name": "lookup_order", "arguments": {"order_id": "A1"}},
                  {"name": "issue_refund", "arguments": {"order_id": "A1"}}],
     "metadata": {"case": {"caseId": "refund-in-order", "oracleType": "expected-tool-calls",
                           "expectedBehavior": "Looks the order up, then refunds it",
                           "unacceptableBehavior": ["calls delete_account"], "provenance": "expert-authored",
                           "evaluator": "trajectory-or-state-check"}}},
]
EXTRA_ROWS.append(  # a chat whose history already holds a call: only the calls the model makes count
    {"id": "refund-after-lookup", "input": {"messages": [
        {"role": "user", "content": "Refund order A1."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c0", "function": "lookup_order", "arguments": {"order_id": "A1"}}]},
        {"role": "tool", "content": "paid", "tool_call_id": "c0", "function": "lookup_order"},
        {"role": "user", "content": "Go ahead."}]},
     "expected": [{"name": "issue_refund"}],
     "metadata": {"case": {"caseId": "refund-after-lookup", "oracleType": "expected-tool-calls",
                           "expectedBehavior": "Refunds", "provenance": "expert-authored",
                           "evaluator": "trajectory-or-state-check"}}})
CANNOT_CHECK = {"expected-tool-calls", "expected-final-state", "expected-behavior-only"}


def export_cases(tmp_path, variant):
    from evalconv.canonical.row import Row
    rows = evalconv.read(str(GOLDEN)).rows + [Row.from_json(v) for v in EXTRA_ROWS]
    out = tmp_path / f"set.inspect.{variant}"
    evalconv.write(rows, str(out), "inspect")
    return rows, out


def run_eval(dataset, path, replies, scorers, log_dir):
    """Inspect's own eval under mockllm/model; each sample answers `replies[id]` (a text, or a list
    of tool calls then "done"), echoing its input when the id is not there."""
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import solver

    @solver
    def scripted():
        async def solve(state, generate):
            reply = replies.get(str(state.sample_id), state.input_text)
            if isinstance(reply, list):
                for call in reply:
                    out = ModelOutput.for_tool_call("mockllm/model", call["name"], call.get("arguments", {}))
                    state.messages.append(out.message)
                reply = "done"
            state.output = ModelOutput.from_content("mockllm/model", reply)
            state.messages.append(state.output.message)
            return state
        return solve

    task = Task(dataset=load(dataset, path), solver=scripted(), scorer=scorers)
    log = inspect_eval(task, model="mockllm/model", display="none", log_dir=str(log_dir))[0]
    assert log.status == "success", log.error
    return {str(s.id): {name.split("/")[-1]: score.value for name, score in s.scores.items()} for s in log.samples}


@pytest.mark.parametrize("variant", ["jsonl", "csv"])
def test_inspect_stock_scorers_never_pass_a_case_they_cannot_check(dataset, tmp_path, variant):
    from inspect_ai.scorer import exact, includes, match
    from evalconv.vendors.inspect.scorers import case_scorer
    rows, path = export_cases(tmp_path, variant)
    scores = run_eval(dataset, path, {}, [match(), includes(), exact(), case_scorer()], tmp_path / "logs")
    unchecked = [r.id for r in rows if r.case["oracleType"] in CANNOT_CHECK]
    assert len(unchecked) == 6
    for row_id in unchecked:  # an echo answer: the old empty target made every one of these CORRECT
        assert scores[row_id]["match"] == scores[row_id]["includes"] == scores[row_id]["exact"] == "I", row_id
        if row_id != "no-tool-needed":  # an echo calls no tool, which is what that case asks
            assert scores[row_id]["case_scorer"] != "C", row_id


def test_case_scorer_checks_each_oracle_type_as_the_case_means(dataset, tmp_path):
    from inspect_ai.scorer import includes
    from evalconv.vendors.inspect.scorers import case_scorer, membership, tool_calls
    rows, path = export_cases(tmp_path, "jsonl")
    by_id = {r.id: r for r in rows}
    right = {"cs-refund-valid-receipt": by_id["cs-refund-valid-receipt"].expected, "capital-member": "Lyon",
             "cs-return-window-phrasing": "sixty days", "no-tool-needed": "4",
             "cs-order-status-tool": by_id["cs-order-status-tool"].expected,
             "refund-in-order": by_id["refund-in-order"].expected, "refund-after-lookup": [{"name": "issue_refund"}],
             "cs-extract-receipt": jsonvalue.dumps(by_id["cs-extract-receipt"].expected)}
    scores = run_eval(dataset, path, right, [case_scorer(), includes()], tmp_path / "right")
    assert {i for i, s in scores.items() if s["case_scorer"] == "C"} == set(right)
    for row in rows:  # a judge, a state check or a person: never a pass from a program
        if row.case["oracleType"] in ("rubric", "expected-final-state", "expected-behavior-only"):
            assert scores[row.id]["case_scorer"] == "N", row.id
    forbidden = [*by_id["cs-order-status-tool"].expected, {"name": "delete_account"}]
    wrong = {"capital-member": "Paris, France", "cs-return-window-phrasing": "60",
             "refund-in-order": list(reversed(by_id["refund-in-order"].expected)),
             "cs-order-status-tool": forbidden, "no-tool-needed": [{"name": "calculator"}]}
    scores = run_eval(dataset, path, wrong, [case_scorer(), membership(), tool_calls(), includes()], tmp_path / "wrong")
    assert scores["capital-member"]["includes"] == "C"  # includes() is a substring test, not membership
    assert scores["capital-member"]["membership"] == "I"
    assert all(scores[i]["case_scorer"] == "I" for i in wrong), scores
    assert {scores[i]["tool_calls"] for i in ("refund-in-order", "cs-order-status-tool", "no-tool-needed")} == {"I"}

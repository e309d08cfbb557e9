"""The OpenAI SDK's own models take what evalconv writes: the JSONL data source items, the eval
definition's testing criteria (each grader's pydantic model), the eval create params and the
run; the python grader evalconv writes grades stub samples as each case's oracle type says."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from evalconv.vendors.openai_evals.graders import PYTHON_SOURCE
from interop import vendor_fixtures, vendor_module
from roundtrip_helpers import read_text
from strategies import any_format_rows

pytestmark = pytest.mark.interop
FIXTURES, MANIFEST = vendor_fixtures("openai-evals")
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
GRADERS = {"string_check": "StringCheckGrader", "python": "PythonGrader", "label_model": "LabelModelGrader",
           "score_model": "ScoreModelGrader", "text_similarity": "TextSimilarityGrader"}

openai_types = vendor_module("openai.types", name="openai_types")


def _export(tmp_path, source=GOLDEN, rows=None):
    items, definition = tmp_path / "set.jsonl", tmp_path / "set.eval.json"
    if rows is None:
        assert evalconv.convert(str(source), str(items), to="openai-evals",
                                eval_definition=str(definition)).exit_code == 0
    else:
        evalconv.write(rows, str(items), "openai-evals", eval_definition=str(definition))
    lines = [json.loads(line) for line in items.read_text(encoding="utf-8").split("\n") if line]
    return lines, json.loads(definition.read_text(encoding="utf-8"))


def _check_definition(openai_types, doc, lines):
    from pydantic import TypeAdapter

    from openai.types import eval_create_params, graders
    from openai.types.evals import run_create_params
    from openai.types.evals.create_eval_completions_run_data_source import CreateEvalCompletionsRunDataSource
    from openai.types.evals.create_eval_jsonl_run_data_source import CreateEvalJSONLRunDataSource

    TypeAdapter(eval_create_params.EvalCreateParams).validate_python(doc["eval"])
    TypeAdapter(run_create_params.RunCreateParams).validate_python(doc["run"])
    for criterion in doc["eval"]["testing_criteria"]:
        model = getattr(graders, GRADERS[criterion["type"]])
        model.model_validate({k: v for k, v in criterion.items() if k != "pass_threshold"})
    run = CreateEvalCompletionsRunDataSource.model_validate(doc["run"]["data_source"])
    assert run.input_messages.type == "item_reference" and run.input_messages.item_reference == "item.messages"
    source = CreateEvalJSONLRunDataSource.model_validate(
        {"type": "jsonl", "source": {"type": "file_content", "content": lines}})
    assert len(source.source.content) == len(lines)


def test_the_sdk_takes_the_golden_items_definition_and_run(openai_types, tmp_path):
    lines, doc = _export(tmp_path)
    _check_definition(openai_types, doc, lines)
    # a mixed set (exact, set, judged, tool calls, state, people): one python grader, never a model grader
    assert [c["type"] for c in doc["eval"]["testing_criteria"]] == ["python"]


def test_a_set_of_reference_texts_gets_the_native_string_check(openai_types, tmp_path):
    rows = [r for r in evalconv.read(str(GOLDEN)).rows
            if r.case["oracleType"] == "reference-answer" and isinstance(r.expected, str)
            and r.case.get("evaluator") in (None, "exact-or-programmatic")]
    lines, doc = _export(tmp_path, rows=rows)
    _check_definition(openai_types, doc, lines)
    (criterion,) = doc["eval"]["testing_criteria"]
    assert criterion["type"] == "string_check" and criterion["operation"] == "eq"
    assert criterion["reference"] == "{{item.expected}}"
    assert all(isinstance(line["item"]["expected"], str) for line in lines)


def test_a_set_of_judged_rubric_cases_gets_a_label_model_with_the_criteria(openai_types, tmp_path):
    rows = [r for r in evalconv.read(str(GOLDEN)).rows if r.case.get("evaluator") == "llm-judge"]
    lines, doc = _export(tmp_path, rows=rows)
    _check_definition(openai_types, doc, lines)
    (criterion,) = doc["eval"]["testing_criteria"]
    assert criterion["type"] == "label_model" and criterion["passing_labels"] == ["pass"]
    prompt = "\n".join(m["content"] for m in criterion["input"])
    assert "{{item.metadata.case.evaluationCriteria}}" in prompt and "{{sample.output_text}}" in prompt


def _grade(line, output_text="", output_tools=()):
    scope: dict = {}
    exec(compile(PYTHON_SOURCE, "evalconv_case_check.py", "exec"), scope)  # the source OpenAI runs
    return scope["grade"]({"output_text": output_text, "output_tools": list(output_tools)}, line["item"])


def test_the_python_grader_checks_each_case_as_its_oracle_says(tmp_path):
    lines, _ = _export(tmp_path)
    by_id = {line["item"]["id"]: line for line in lines}
    refund = by_id["cs-refund-valid-receipt"]
    assert _grade(refund, refund["item"]["expected"]) == 1.0
    assert _grade(refund, "We offer a 90-day refund.") == 0.0
    window = by_id["cs-return-window-phrasing"]
    assert _grade(window, "sixty days") == 1.0 and _grade(window, "60") == 0.0
    receipt = by_id["cs-extract-receipt"]
    assert _grade(receipt, json.dumps(receipt["item"]["expected"])) == 1.0
    assert _grade(receipt, json.dumps({**receipt["item"]["expected"], "total": 129})) == 0.0  # 129 is not 129.0
    tool = by_id["cs-order-status-tool"]
    call = {"type": "function", "function": {"name": "lookup_order", "arguments": '{"order_id": "TH-100482"}'}}
    assert _grade(tool, output_tools=[call]) == 1.0
    assert _grade(tool, output_tools=[call, {**call, "function": {"name": "cancel_order", "arguments": "{}"}}]) == 0.0
    assert _grade(tool) == 0.0
    for unchecked in ("cs-apology-late-delivery", "cs-escalate-injury", "cs-warranty-judgement",
                      "cs-starter-greeting", "=cs-formula-injection"):
        with pytest.raises(ValueError, match="evalconv"):  # a grader error: never a pass, never a fail
            _grade(by_id[unchecked], "anything")


def test_labels_never_reach_the_prompt_the_model_sees(tmp_path):
    """The run's prompt is the item reference item.messages, and those messages are made from the
    input alone: the same whatever the expected value, the case profile or the metadata hold."""
    lines, doc = _export(tmp_path)
    assert doc["run"]["data_source"]["input_messages"] == {"type": "item_reference", "item_reference": "item.messages"}
    rows = evalconv.read(str(GOLDEN)).rows
    bare = [Row.from_json({"id": r.id, "input": r.input, "metadata": {"case": {
        "caseId": r.id, "oracleType": "expected-behavior-only", "expectedBehavior": "", "provenance": "imported"}}})
        for r in rows]
    stripped, _ = _export(tmp_path / "bare" if (tmp_path / "bare").mkdir() is None else tmp_path, rows=bare)
    assert [line["item"]["messages"] for line in lines] == [line["item"]["messages"] for line in stripped]
    for line, row in zip(lines, rows):
        for label in (row.case["expectedBehavior"], *row.case.get("evaluationCriteria", [])):
            assert label not in jsonvalue.dumps(line["item"]["messages"]), row.id


@settings(max_examples=20, deadline=None)
@given(rows=any_format_rows())
def test_the_sdk_takes_every_export(openai_types, tmp_path_factory, rows):
    from evalconv.canonical.errors import EvalconvError
    tmp = tmp_path_factory.mktemp("oe")
    try:
        lines, doc = _export(tmp, rows=rows)
    except EvalconvError:  # a row the tool cannot hold is refused in one line (the contract test checks it)
        return
    _check_definition(openai_types, doc, lines)
    kinds = {c["type"] for c in doc["eval"]["testing_criteria"]}
    judged = {r.case.get("evaluator") == "llm-judge" or (r.case["oracleType"] == "rubric" and "evaluator" not in r.case)
              for r in rows}
    assert "label_model" not in kinds or judged == {True}  # a model grader only when every case is judged


def test_files_the_sdk_made_read_as_the_manifest_says(openai_types):
    for entry in MANIFEST["files"]:
        checked, report = read_text("openai-evals", (FIXTURES / entry["path"]).read_text(encoding="utf-8"))
        rows: dict[str, Row] = {c.row.id: c.row for c in checked if c.row is not None}
        want = entry["recover"]
        assert list(rows) == want["ids"] and len(rows) == entry["rows"]
        assert [r.expected for r in rows.values()] == want["expected"]
        for row_id, fields in want.get("fields", {}).items():
            assert rows[row_id].case["extensions"]["openai-evals"]["fields"] == fields
        for row_id, sample in want.get("sample", {}).items():
            assert rows[row_id].case["extensions"]["openai-evals"]["sample"] == sample
        for row_id, metadata in want.get("metadata", {}).items():
            assert {k: v for k, v in rows[row_id].metadata.items() if k != "case"} == metadata
        if "oracleTypes" in want:
            assert [r.case["oracleType"] for r in rows.values()] == want["oracleTypes"]
        assert report.inferred.entries  # every inference is in the read report


def test_what_evalconv_writes_for_the_fixtures_the_sdk_takes_back(openai_types, tmp_path):
    lines, doc = _export(tmp_path, source=FIXTURES / "api_items.jsonl")
    _check_definition(openai_types, doc, lines)
    assert lines[1]["item"]["priority"] == "high" and lines[2]["sample"]["output_text"] == "Other"

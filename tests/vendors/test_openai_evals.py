"""OpenAI Evals items and registry samples: labels out of the prompt, the grader by oracle type,
edits kept (the exact round trips in every variant: tests/formats/test_every_format.py)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import evalconv
from conftest import ROOT
from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from evalconv.cli import cli
from evalconv.registry import REGISTRY
from evalconv.vendors.openai_evals import graders
from evalconv.vendors.openai_evals.graders import Families, family
from roundtrip_helpers import parse_finding, read_text, write_text

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def case(oracle="reference-answer", **extra):
    return {"caseId": "c1", "oracleType": oracle, "expectedBehavior": "b", "provenance": "expert-authored", **extra}


def row(input="Capital of France?", oracle="reference-answer", expected="Paris", **extra):
    value = {"id": "c1", "input": input, "metadata": {"case": case(oracle, **extra)}}
    if expected is not None:
        value["expected"] = expected
    return Row.from_json(value)


def one(r, variant="jsonl"):
    text, loss = write_text("openai-evals", [r], path=f"x.{variant}")
    return jsonvalue.loads(text), loss


def back(text):
    checked, report = read_text("openai-evals", text)
    return checked[0], report


def test_the_item_holds_the_reference_beside_the_prompt_never_in_it():
    line, loss = one(row())
    assert line["item"]["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert line["item"]["expected"] == "Paris" and "$.expected" not in {p for p, _ in loss.carried.entries}


def test_an_input_the_api_cannot_send_exactly_is_json_text_and_carried():
    line, loss = one(row(input={"receipt": "TOTAL 12", "fields": ["total"]}))
    assert line["item"]["messages"] == [{"role": "user", "content": '{"receipt":"TOTAL 12","fields":["total"]}'}]
    assert "$.input" in {p for p, _ in loss.carried.entries}
    chat = {"messages": [{"role": "tool", "content": "x", "tool_call_id": "1"}]}  # not role + text only
    assert "$.input" in {p for p, _ in one(row(input=chat))[1].carried.entries}


def test_registry_ideal_is_a_text_or_a_list_of_texts():
    assert one(row(), "registry.jsonl")[0]["ideal"] == "Paris"
    line, _ = one(row(oracle="acceptable-set", expected=["60 days", "sixty days"]), "registry.jsonl")
    assert line["ideal"] == ["60 days", "sixty days"]
    line, loss = one(row(oracle="expected-tool-calls", expected=[{"name": "lookup"}]), "registry.jsonl")
    assert line["ideal"] == [] and "$.expected" in {p for p, _ in loss.carried.entries}


def test_regression_an_empty_reference_became_an_ideal_every_answer_matches():
    """Match passes an answer that starts with the ideal, and every answer starts with ""."""
    line, loss = one(row(expected=""), "registry.jsonl")
    assert line["ideal"] == [] and line["metadata"]["evalconv"]["expected"] == ""
    line, _ = one(row(oracle="acceptable-set", expected=["", "yes"]), "registry.jsonl")
    assert line["ideal"] == []
    got, _ = back(jsonvalue.dumps(line))
    assert got.row.expected == ["", "yes"]


@pytest.mark.parametrize("r, kind", [
    (row(), "string"),
    (row(expected={"total": 1}), "program"),
    (row(oracle="acceptable-set", expected=["a"]), "program"),
    (row(oracle="expected-tool-calls", expected=[{"name": "f"}]), "program"),
    (row(oracle="expected-final-state", expected={"s": 1}), "state"),
    (row(oracle="rubric", expected=None, evaluationCriteria=["polite"]), "judge"),
    (row(oracle="rubric", expected=None, evaluator="rubric-human"), "person"),
    (row(evaluator="llm-judge"), "judge"),
    (row(oracle="expected-behavior-only", expected=None), "person"),
])
def test_the_oracle_type_and_evaluator_decide_the_grader_kind(r, kind):
    assert family(r)[0] == kind


def _criteria(*rows):
    families = Families()
    for r in rows:
        families.add(family(r))
    return graders.testing_criteria(families)


def test_a_model_grader_never_sees_a_case_a_program_checks():
    judged = row(oracle="rubric", expected=None, evaluationCriteria=["polite"])
    assert [c["type"] for c in _criteria(judged)[0]] == ["label_model"]
    criteria, notes = _criteria(judged, row())
    assert [c["type"] for c in criteria] == ["python"] and "need a model judge" in notes[0]
    assert [c["type"] for c in _criteria(row(), row())[0]] == ["string_check"]


def test_what_no_grader_checks_is_said_on_stderr_and_in_the_report(tmp_path):
    out = tmp_path / "set.jsonl"
    result = CliRunner().invoke(cli, [str(GOLDEN), "--to", "openai-evals", "-o", str(out),
                                      "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.stderr
    assert "graded by a person" in result.stderr and "expected-final-state" in result.stderr
    report = jsonvalue.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert any("graded by a person" in n for n in report["notices"])


def test_the_eval_definition_is_written_beside_the_items_and_names_the_file(tmp_path):
    out, definition = tmp_path / "set.jsonl", tmp_path / "eval.json"
    result = CliRunner().invoke(cli, [str(GOLDEN), "--to", "openai-evals", "-o", str(out),
                                      "--eval-definition", str(definition)])
    assert result.exit_code == 0, result.stderr
    doc = jsonvalue.loads(definition.read_text(encoding="utf-8"))
    assert doc["eval"]["metadata"]["items_file"] == "set.jsonl"


@pytest.mark.parametrize("args, message", [
    (["-o", "{tmp}/set.registry.jsonl", "--eval-definition", "{tmp}/e.json"], "not the legacy registry"),
    (["--eval-definition", "{tmp}/e.json"], "needs the items in a file"),
    (["-o", "{tmp}/set.jsonl", "--eval-definition", "{tmp}/set.jsonl"], "name the same file"),
])
def test_eval_definition_misuse_is_one_line(tmp_path, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = CliRunner().invoke(cli, [str(GOLDEN), "--to", "openai-evals", *args])
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "e.json").exists()


def test_eval_definition_goes_with_openai_evals_only(tmp_path):
    result = CliRunner().invoke(cli, [str(GOLDEN), "--to", "inspect", "-o", str(tmp_path / "s.inspect.jsonl"),
                                      "--eval-definition", str(tmp_path / "e.json")])
    assert result.exit_code == 2 and "it goes with --to openai-evals" in result.stderr


def test_detection_tells_items_from_registry_samples_by_their_keys():
    fmt = REGISTRY.get("openai-evals")
    assert fmt.detect('{"item": {"input": "q", "ideal": "a"}}') == 1.0
    assert fmt.detect('{"item": {"input": "q"}, "sample": {"output_text": "a"}}') == 1.0
    assert fmt.detect('{"input": [{"role": "user", "content": "q"}], "ideal": "a"}') == 1.0
    assert fmt.detect('{"input": "q", "ideal": "a", "label": 1}') == 0.5
    assert fmt.detect('{"input": "q", "target": "a"}') == 0.0  # Inspect's
    assert fmt.detect('{"id": "a", "input": "q", "metadata": {}}') == 0.0  # canonical
    assert REGISTRY.detect("x.jsonl", '{"item": {"input": "q", "ideal": "a"}}').name == "openai-evals"


def test_an_edit_to_the_messages_is_kept_and_named():
    line, _ = one(row(input={"receipt": "TOTAL 12"}))
    line["item"]["messages"] = [{"role": "user", "content": "What is the total on this receipt: TOTAL 12?"}]
    got, report = back(jsonvalue.dumps(line))
    assert got.row.input == {"messages": line["item"]["messages"]}
    assert "$.input" in {p for p, _ in report.edited.entries}
    line, _ = one(row())
    line["item"]["messages"][0]["content"] = "Capital of Spain?"
    got, report = back(jsonvalue.dumps(line))
    assert got.row.input == "Capital of Spain?" and got.row.expected == "Paris"


def test_an_edited_ideal_and_an_added_item_field_are_kept_and_named():
    line, _ = one(row(), "registry.jsonl")
    line["ideal"] = "Paris, France"
    got, report = back(jsonvalue.dumps(line))
    assert got.row.expected == "Paris, France"  # the ideal is the reference's only copy: the edit is the value
    line, _ = one(row())
    line["item"]["difficulty_note"] = "hard"
    got, report = back(jsonvalue.dumps(line))
    assert got.row.case["extensions"]["openai-evals"]["fields"] == {"difficulty_note": "hard"}
    assert "$.metadata.case.extensions.openai-evals.fields" in {p for p, _ in report.edited.entries}
    again, _ = one(got.row)
    assert again["item"]["difficulty_note"] == "hard"


def test_a_foreign_item_keeps_its_fields_and_sample_and_says_what_it_inferred():
    text = '{"item": {"question": "2+2?", "answer": "4", "topic": "math"}, "sample": {"output_text": "4"}}\n'
    got, report = back(text)
    assert got.row.input == {"question": "2+2?", "topic": "math"} and got.row.expected == "4"
    assert got.row.case["extensions"]["openai-evals"]["sample"] == {"output_text": "4"}
    assert {"$.id", "$.expected", "$.input", "$.metadata.case.oracleType"} <= {p for p, _ in report.inferred.entries}


@pytest.mark.parametrize("text, field", [
    ('{"item": "not an object"}\n', "$.item"),
    ('{"item": {"messages": []}}\n', "$.item.messages"),
    ('{"item": {"input": "q"}, "sample": 3}\n', "$.sample"),
    ('{"item": {"input": "q", "metadata": []}}\n', "$.item.metadata"),
    ('{"input": 7, "ideal": "a"}\n', "$.input"),
    ('{"item": {}}\n', "$.item"),
])
def test_a_bad_line_is_a_finding_naming_its_field(text, field):
    finding = parse_finding("openai-evals", text)
    assert finding.path == field, finding.to_json()


def test_roundtrip_command_and_both_variants_pass():
    from evalconv.roundtrip import route

    result = CliRunner().invoke(cli, ["roundtrip", str(GOLDEN), "--via", "openai-evals"])
    assert result.exit_code == 0, result.output + result.stderr
    rows = evalconv.read(str(GOLDEN)).rows
    for suffix in (".jsonl", ".registry.jsonl"):
        done = route(rows, "openai-evals", "support-agent.jsonl", suffix)
        assert done.problems == [] and done.status == "ok" and done.rows == len(rows), suffix

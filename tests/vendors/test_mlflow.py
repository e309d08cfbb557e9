"""MLflow GenAI evaluation datasets: each mapping rule, the reader on MLflow's own files, edits,
refusals and notices. The round trip, fuzz, malformed input and docs table are test_every_format's."""
from __future__ import annotations

import json

import pytest

import evalconv
from conftest import row
from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowRefused
from evalconv.canonical.row import Row
from evalconv.registry import REGISTRY
from interop import vendor_fixtures
from roundtrip_helpers import read_text, write_text

FIXTURES, MANIFEST = vendor_fixtures("mlflow")


def one(value: dict) -> tuple[dict, evalconv.LossReport]:
    text, loss = write_text("mlflow", [Row.from_json(value)])
    return jsonvalue.loads(text), loss


def back(record: dict):
    [checked], report = read_text("mlflow", jsonvalue.dumps(record) + "\n")
    assert checked.row is not None, checked.findings
    return checked.row.to_json(), report


# ---------------------------------------------------------------- writer rules

def test_a_reference_answer_is_expected_response_and_the_id_a_tag():
    source = row("cs-refund", caseFamily="refunds")
    source["metadata"]["topic"] = "returns"
    record, loss = one(source)
    assert list(record) == ["inputs", "expectations", "tags"]  # what merge_records takes, nothing else
    assert record["inputs"] == {"input": "Question?"}
    assert record["expectations"] == {"expected_response": "Yes", "evalconv_check": "exact"}
    assert record["tags"]["case_id"] == "cs-refund" and record["tags"]["topic"] == "returns"
    assert record["tags"]["case"] == source["metadata"]["case"]
    assert loss.carried.paths_for("cs-refund") == {"$.id", *(f"$.metadata.case.{k}" for k in source["metadata"]["case"])}
    assert not loss.lossy
    assert jsonvalue.same(back(record)[0], source)


@pytest.mark.parametrize("oracle, evaluator, expected, key, check", [
    ("acceptable-set", "exact-or-programmatic", ["60 days", "sixty days"], "acceptable_responses", "membership"),
    ("expected-tool-calls", "trajectory-or-state-check", [{"name": "lookup", "arguments": {"id": 1}}],
     "expected_tool_calls", "tool_calls"),
    ("expected-tool-calls", "exact-or-programmatic", [{"name": "lookup", "args": {"id": 1}}], "expected", "tool_calls"),
    ("expected-final-state", "trajectory-or-state-check", {"order": "refunded"}, "expected_final_state", "state"),
    ("reference-answer", "llm-judge", "Paris", "expected_response", "judge"),
    ("reference-answer", "human-expert", "Paris", "expected_response", "human"),
])
def test_the_oracle_type_decides_the_expectation_key_and_the_check(oracle, evaluator, expected, key, check):
    source = row(oracle=oracle, expected=(expected,), evaluator=evaluator, reviewerExpertise="support lead")
    record, _ = one(source)
    assert record["expectations"][key] == expected and record["expectations"]["evalconv_check"] == check
    assert jsonvalue.same(back(record)[0], source)


def test_guidelines_only_where_an_llm_judge_grades_never_on_an_exact_case():
    judged = row(oracle="rubric", expected=(), evaluator="llm-judge", evaluationCriteria=["Apologises", "Offers credit"])
    record, _ = one(judged)
    assert record["expectations"] == {"guidelines": ["Apologises", "Offers credit"], "evalconv_check": "judge"}
    human = row(oracle="rubric", expected=(), evaluator="rubric-human", evaluationCriteria=["Apologises"])
    exact = row(evaluator="exact-or-programmatic", evaluationCriteria=["Says yes"])
    for source in (human, exact):
        record, _ = one(source)
        assert "guidelines" not in record["expectations"]  # MLflow's Guidelines judges would grade it
        assert record["tags"]["case"]["evaluationCriteria"] == source["metadata"]["case"]["evaluationCriteria"]


def test_labels_never_reach_inputs():
    source = row(expected=("secret answer",), unacceptableBehavior=["leaks the code"],
                 evaluationCriteria=["criterion text"], evaluator="llm-judge")
    source["input"] = {"question": "Q?"}
    record, _ = one(source)
    shown = json.dumps(record["inputs"])
    assert record["inputs"] == {"question": "Q?"}
    assert not any(label in shown for label in ("secret answer", "leaks the code", "criterion text",
                                                source["metadata"]["case"]["expectedBehavior"]))


def test_regression_a_null_expected_is_no_expectation_since_evaluate_refuses_a_null_value():
    """mlflow.genai.evaluate raised "The `value` field must be specified" on {"expected_response": null}."""
    source = row(expected=(None,))
    record, loss = one(source)
    assert None not in record["expectations"].values() and record["tags"]["evalconv"]["expectedNull"] is True
    assert "$.expected" in loss.carried.paths_for("cs-1")
    assert back(record)[0]["expected"] is None


def test_metadata_keys_mlflow_or_evalconv_own_are_shadowed_and_restored():
    source = row()
    source["metadata"].update({"case_id": "mine", "mlflow.user": "me", "starter_example": 1, "evalconv": {"x": 1}})
    record, loss = one(source)
    assert record["tags"]["case_id"] == "cs-1" and "mlflow.user" not in record["tags"]
    assert record["tags"]["evalconv"]["shadowed"] == {"case_id": "mine", "mlflow.user": "me", "starter_example": 1,
                                                      "evalconv": {"x": 1}}
    assert {"$.metadata.case_id", "$.metadata.mlflow.user", "$.metadata.evalconv"} <= loss.carried.paths_for("cs-1")
    assert jsonvalue.same(back(record)[0], source)


def test_regression_rows_with_the_same_inputs_are_named_since_merge_records_upserts_on_inputs():
    rows = [Row.from_json(row("a")), Row.from_json(row("b")), Row.from_json(row("c") | {"input": "Other?"})]
    text, loss = write_text("mlflow", rows)
    assert len(text.splitlines()) == 3  # the file keeps them all; MLflow would merge b into a
    [notice] = [n for n in loss.notices if "upserts" in n]
    assert "'b'" in notice and "'a'" not in notice and "'c'" not in notice


def test_inputs_that_mix_goal_with_other_fields_are_refused_in_one_line():
    source = row() | {"input": {"goal": "refund", "question": "Q?"}}
    with pytest.raises(RowRefused, match="goal") as err:
        write_text("mlflow", [Row.from_json(source)])
    assert "\n" not in str(err.value)
    session = row() | {"input": {"goal": "refund", "persona": "angry customer"}}
    assert one(session)[0]["inputs"] == session["input"]


def test_what_no_scorer_in_code_checks_is_said_on_stderr():
    rows = [Row.from_json(row("judge", oracle="rubric", expected=(), evaluator="llm-judge", evaluationCriteria=["c"])),
            Row.from_json(row("exact") | {"input": "Another question?"})]
    _, loss = write_text("mlflow", rows)
    [notice] = loss.notices
    assert "LLM judge" in notice and "'judge'" in notice and "'exact'" not in notice


# ---------------------------------------------------------------- edits made in MLflow

def test_an_edit_in_mlflow_wins_and_is_named():
    source = row(evaluator="llm-judge", evaluationCriteria=["Says yes"])
    record, _ = one(source)
    record["expectations"]["expected_response"] = "Yes, with a receipt"
    record["expectations"]["guidelines"] = ["Says yes", "Names the receipt"]
    record["expectations"]["expected_facts"] = ["a receipt"]
    record["tags"]["reviewed"] = True
    value, report = back(record)
    assert value["expected"] == "Yes, with a receipt"
    assert value["metadata"]["case"]["evaluationCriteria"] == ["Says yes", "Names the receipt"]
    assert value["metadata"]["case"]["extensions"]["mlflow"]["expectations"] == {"expected_facts": ["a receipt"]}
    assert value["metadata"]["reviewed"] is True
    assert set(report.edited.paths_for("cs-1")) == {"$.expected", "$.metadata.case.evaluationCriteria",
                                                    "$.metadata.case.extensions.mlflow.expectations",
                                                    "$.metadata.reviewed"}
    again, _ = one(value)  # the expectations kept go back in place
    assert again["expectations"]["expected_facts"] == ["a receipt"]


def test_mlflow_own_tags_and_columns_are_reported_not_kept():
    record, _ = one(row())
    record["tags"]["mlflow.user"] = "root"
    record |= {"outputs": {"x": 1}, "dataset_record_id": "dr-1", "created_time": 1, "source_type": "HUMAN"}
    value, report = back(record)
    assert "mlflow.user" not in value["metadata"] and value["id"] == "cs-1"
    assert {"$.tags.mlflow.user", "$.outputs", "$.dataset_record_id"} <= set(report.ignored.paths_for("cs-1"))
    assert report.edited.entries == {}


# ---------------------------------------------------------------- MLflow's own files

@pytest.mark.parametrize("entry", MANIFEST["files"], ids=lambda e: e["path"])
def test_mlflow_files_are_detected_and_read_as_the_manifest_says(entry):
    path = FIXTURES / entry["path"]
    assert REGISTRY.detect(str(path), path.read_text(encoding="utf-8")[:8192]).name == "mlflow"
    result = evalconv.read(str(path))
    assert result.log.errors == [] and len(result.rows) == entry["rows"]
    by_input = {jsonvalue.dumps(r.input): r for r in result.rows}
    for fact in entry["recover"]:
        found = by_input[jsonvalue.dumps(fact["input"])]
        assert found.case["oracleType"] == fact["oracleType"] and found.case["provenance"] == "imported"
        assert (found.expected if found.has_expected else "<absent>") == fact.get("expected", "<absent>")
        assert found.case.get("evaluationCriteria") == fact.get("evaluationCriteria")
        assert found.case.get("extensions", {}).get("mlflow", {}).get("expectations") == fact.get("kept")
        assert {k: v for k, v in found.metadata.items() if k != "case"} == fact["metadata"]
        if "id" in fact:
            assert found.id == fact["id"]
        elif entry["path"].startswith("to_df"):
            assert found.id.startswith("dr-")  # MLflow's record id, the only stable one it has

"""Every LangSmith record evalconv writes is an `ExampleCreate`, with no key silently ignored and
every value as intended (offline: `langsmith.schemas` does no I/O)."""
from __future__ import annotations

import datetime
import json
import uuid
import warnings

import pytest
from hypothesis import given, settings

from conftest import row
from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from interop import require_module, vendor_fixtures
from roundtrip_helpers import write_text
from strategies import row_sets

pytestmark = pytest.mark.interop
FIXTURES, _ = vendor_fixtures("langsmith")


def example_create(record: dict) -> dict:
    """Validate like `Client.create_examples` does (`ExampleCreate(**record)`), refusing any key the
    model would drop silently; returns the model's own JSON dump of what would be uploaded."""
    schemas = require_module("langsmith.schemas")
    model = schemas.ExampleCreate
    fields = set(getattr(model, "model_fields", None) or model.__fields__)  # pydantic v2 | v1 (<0.6)
    unknown = set(record) - fields - {"outputs"}
    assert not unknown, f"ExampleCreate would silently drop {sorted(unknown)}"
    assert "dataset_split" not in (record.get("metadata") or {})
    data = dict(record)
    if "reference_outputs" in fields and "outputs" in data:  # langsmith >= 0.14.12
        data["reference_outputs"] = data.pop("outputs")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        example = model(**data)
    if hasattr(example, "model_dump"):
        return example.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.loads(example.json(exclude_none=True))


def assert_loads_as_intended(record: dict) -> None:
    dump = example_create(record)
    assert dump["id"] == str(uuid.UUID(record["id"]))
    for key in ("inputs", "outputs", "metadata", "split"):
        if key in record:
            assert jsonvalue.same(dump[key], record[key]), key
        else:
            assert key not in dump or key == "metadata"


@settings(max_examples=200)
@given(rows=row_sets())
def test_every_written_record_is_an_example_create(rows):
    text, _ = write_text("langsmith", rows)
    for line in text.split("\n")[:-1]:
        assert_loads_as_intended(jsonvalue.loads(line))


@pytest.mark.parametrize("split", ["smoke", ["base", "tools"]])
def test_records_with_splits_wrapping_and_shadowing_load(split):
    value = row("cs-split", expected=(None,), caseFamily="f", linkedConcerns=["x"])
    value["metadata"].update(dataset_split=split, evalconv=[1], case_family="mine")
    text, _ = write_text("langsmith", [Row.from_json(value)])
    assert_loads_as_intended(jsonvalue.loads(text))


def test_the_create_examples_fixture_is_accepted():
    for line in (FIXTURES / "create_examples.jsonl").read_text("utf-8").splitlines():
        example_create(json.loads(line))


def test_a_non_uuid_id_or_a_string_inputs_is_refused_by_langsmith():
    pydantic = require_module("pydantic")
    with pytest.raises(pydantic.ValidationError):
        example_create({"id": "case-001", "inputs": {}})
    with pytest.raises(pydantic.ValidationError):
        example_create({"inputs": "a string"})


def test_regression_one_evaluator_reads_every_reference_and_the_judge_sees_criteria():
    """Issue 14: a final-state row was written as `outputs: {"claims": {...}}` while every other row
    had `{"expected": ...}`, so no one evaluator could read them all; rubric criteria were only in
    metadata, where LangSmith's LLM-as-judge evaluators do not look. Runs LangSmith's own
    `ExampleCreate`, `Example` and function-evaluator machinery (`run_evaluator`), offline."""
    schemas = require_module("langsmith.schemas")
    evaluator_module = require_module("langsmith.evaluation.evaluator")
    values = [row("answer", expected=("$1,000",)),
              row("state", oracle="expected-final-state", expected=({"claims": {"c-1": "closed"}},)),
              row("set", oracle="acceptable-set", expected=(["approved", "under_review"],)),
              row("judged", oracle="rubric", expected=(), evaluator="llm-judge",
                  evaluationCriteria=["Names the amount", "Cites the policy"])]
    text, _ = write_text("langsmith", [Row.from_json(v) for v in values])
    records = [jsonvalue.loads(line) for line in text.splitlines()]

    @evaluator_module.run_evaluator
    def reference(outputs: dict, reference_outputs: dict) -> dict:
        expected = reference_outputs.get("expected")
        answer = outputs["answer"]
        ok = answer in expected if isinstance(expected, list) else answer == expected
        return {"key": "reference", "score": int(ok), "comment": "; ".join(reference_outputs.get("criteria", []))}

    answers = {"answer": "$1,000", "state": {"claims": {"c-1": "closed"}}, "set": "under_review", "judged": "x"}
    scores = {}
    for value, record in zip(values, records):
        dump = example_create(record)
        example = schemas.Example(id=dump["id"], dataset_id=uuid.uuid4(), inputs=dump["inputs"],
                                  outputs=dump.get("outputs"), metadata=dump["metadata"])
        run = schemas.Run(id=uuid.uuid4(), name="target", run_type="chain", inputs=dump["inputs"],
                          outputs={"answer": answers[value["id"]]}, trace_id=uuid.uuid4(),
                          start_time=datetime.datetime(2026, 1, 1))
        result = reference.evaluate_run(run, example)
        scores[value["id"]] = (result.score, result.comment)
        if value["id"] != "judged":
            assert set(dump["outputs"]) == {"expected"}  # one shape for every oracle type
    assert scores == {"answer": (1, ""), "state": (1, ""), "set": (1, ""),
                      "judged": (0, "Names the amount; Cites the policy")}


def test_the_documented_evaluator_checks_each_oracle_type_under_langsmith_evaluate(tmp_path):
    """Issue 24: the evaluator in the docs treated ordered tool calls as a set, scored "no calls"
    false and raised KeyError('expected') on rubric and behaviour-only rows."""
    from doc_snippets import run, snippet_defining
    langsmith = require_module("langsmith")
    space = run(snippet_defining("langsmith.md", "correct"), tmp_path)
    examples, correct = space["examples"], space["correct"]
    by_id = {ex.metadata["evalconv"]["id"]: ex for ex in examples}

    def scores(replies):
        def target(inputs):
            row_id = next(i for i, ex in by_id.items() if ex.inputs == inputs)
            reply = replies.get(row_id, "")
            return {"answer": "done", "tool_calls": reply} if isinstance(reply, list) else {"answer": reply}
        results = langsmith.evaluate(target, data=examples, evaluators=[correct], upload_results=False)
        return {r["example"].metadata["evalconv"]["id"]: r["evaluation_results"]["results"][0].score for r in results}

    expected = {i: (ex.outputs or {}).get("expected") for i, ex in by_id.items()}
    right = {"cs-refund-valid-receipt": expected["cs-refund-valid-receipt"], "cs-return-window-phrasing": "sixty days",
             "cs-order-status-tool": expected["cs-order-status-tool"], "refund-in-order": expected["refund-in-order"],
             "no-tool-needed": [], "cs-extract-receipt": json.dumps(expected["cs-extract-receipt"])}
    got = scores(right)
    assert {i for i, s in got.items() if s is True} == set(right), got
    for row_id, ex in by_id.items():  # rubric, final state, behaviour: not checked here, never a KeyError
        if ex.metadata["case"]["oracleType"] in ("rubric", "expected-final-state", "expected-behavior-only"):
            assert got[row_id] is None, row_id
    wrong = {"refund-in-order": list(reversed(expected["refund-in-order"])), "no-tool-needed": [{"name": "calc"}],
             "cs-order-status-tool": [*expected["cs-order-status-tool"], {"name": "delete_account"}],
             "cs-return-window-phrasing": "60 days, or sixty days"}
    got = scores(wrong)
    assert all(got[i] is False for i in wrong), got

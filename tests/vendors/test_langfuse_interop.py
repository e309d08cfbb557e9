"""Langfuse's own request and item models load what evalconv writes, its run_experiment grades it
offline with evalconv's case evaluator, and evalconv reads the files made with its models."""
from __future__ import annotations

import json
import logging

import pytest
from hypothesis import HealthCheck, given, settings

import evalconv
from conftest import ROOT
from evalconv.vendors.langfuse.write import js_normal
from interop import vendor_fixtures, vendor_module
from roundtrip_helpers import read_text, write_text
from strategies import any_format_rows

pytestmark = pytest.mark.interop
FIXTURES, MANIFEST = vendor_fixtures("langfuse")
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"

langfuse_api = vendor_module("langfuse.api", name="langfuse_api")


def _parse(langfuse_api, model, value):
    from langfuse.api.core.pydantic_utilities import parse_obj_as
    return parse_obj_as(getattr(langfuse_api, model), value)


def _served(item: dict) -> dict:
    """What the API gives back for a created item: JavaScript's numbers, Langfuse's own fields."""
    served = {k: js_normal(v) for k, v in item.items()}
    served.setdefault("status", "ACTIVE")
    for key in ("input", "expectedOutput", "metadata", "sourceTraceId", "sourceObservationId"):
        served.setdefault(key, None)  # the API says null where the item has none
    served.update(datasetId="ds1", createdAt="2026-12-01T00:00:00.000Z", updatedAt="2026-12-01T00:00:00.000Z",
                  mediaReferences=[])
    return served


def test_langfuse_request_models_load_the_golden_export(langfuse_api, tmp_path):
    out = tmp_path / "support-agent.langfuse.jsonl"
    assert evalconv.convert(str(GOLDEN), str(out), to="langfuse").exit_code == 0
    rows = evalconv.read(str(GOLDEN)).rows
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n")[:-1]]
    for row, item in zip(rows, items):
        request = _parse(langfuse_api, "CreateDatasetItemRequest", item)
        assert request.dataset_name == "support-agent" and request.id == f"support-agent:{row.id}"
        assert len(request.id) <= 255 and request.input == row.input  # labels stay out of input
        assert request.expected_output == (row.expected if row.has_expected else None)
        assert request.metadata["case"] == row.case and not request.model_extra
        served = _parse(langfuse_api, "DatasetItem", _served(item))
        assert served.metadata["evalconv"]["id"] == row.id


def test_run_experiment_grades_the_items_offline_with_the_case_evaluator(tmp_path):
    langfuse = pytest.importorskip("langfuse")
    from evalconv.vendors.langfuse.evaluators import case_evaluator

    out = tmp_path / "support-agent.langfuse.jsonl"
    evalconv.convert(str(GOLDEN), str(out), to="langfuse")
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n")[:-1]]
    data = [{"input": i["input"], "expected_output": i.get("expectedOutput"), "metadata": i["metadata"]} for i in items]
    answers = {json.dumps(i["input"], sort_keys=True): i.get("expectedOutput") for i in items}
    logging.getLogger("langfuse").setLevel(logging.CRITICAL)  # no server: its uploads fail, quietly
    client = langfuse.Langfuse(public_key="pk-lf-offline", secret_key="sk-lf-offline", host="http://127.0.0.1:9",
                               tracing_enabled=False)
    try:
        def right(*, item, **kwargs):
            return answers[json.dumps(item["input"], sort_keys=True)]

        result = client.run_experiment(name="offline", data=data, task=right, evaluators=[case_evaluator])
        wrong = client.run_experiment(name="offline", data=data, task=lambda *, item, **kw: "no", evaluators=[case_evaluator])
    finally:
        client.shutdown()
    by_id = {r.item["metadata"]["evalconv"]["id"]: r.evaluations[0] for r in result.item_results}
    wrong_by_id = {r.item["metadata"]["evalconv"]["id"]: r.evaluations[0] for r in wrong.item_results}
    assert by_id["cs-refund-valid-receipt"].value == 1.0 and wrong_by_id["cs-refund-valid-receipt"].value == 0.0
    assert by_id["cs-order-status-tool"].value == 1.0  # the task "made" the expected calls
    for case_id in ("cs-apology-late-delivery", "cs-warranty-judgement", "cs-escalate-injury"):  # judge, person, state
        assert by_id[case_id].value == 0.0 and by_id[case_id].comment.startswith("not checked"), case_id
    assert all(e.value == 0.0 for e in wrong_by_id.values())  # nothing passes by default


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=any_format_rows())
def test_every_export_is_a_valid_request_and_reads_back_after_the_server(langfuse_api, rows):
    try:
        text, _ = write_text("langfuse", rows, path="set.langfuse.jsonl")
    except evalconv.EvalconvError:
        return  # a row Langfuse cannot hold (a NUL) is refused, in one line: checked in test_every_format
    items = [json.loads(line) for line in text.split("\n")[:-1]]
    served = []
    for item in items:
        request = _parse(langfuse_api, "CreateDatasetItemRequest", item)
        assert len(request.id) <= 255 and not request.model_extra
        served.append(json.loads(_parse(langfuse_api, "DatasetItem", _served(item)).json()))
    checked, report = read_text("langfuse", "\n".join(json.dumps(s) for s in served), path="x.langfuse.jsonl")
    assert [c.row for c in checked] == rows  # JavaScript's numbers undone from the carried exact values
    assert report.edited.entries == {}


@pytest.mark.parametrize("name", [f["path"] for f in MANIFEST["files"]])
def test_files_made_with_langfuse_models_read_as_the_manifest_says(langfuse_api, name):
    want = MANIFEST["files"][0]["recover"]
    entry = next(f for f in MANIFEST["files"] if f["path"] == name)
    text = (FIXTURES / name).read_text(encoding="utf-8")
    if name.endswith(".jsonl"):
        for line in text.split("\n")[:-1]:
            _parse(langfuse_api, "CreateDatasetItemRequest", json.loads(line))
    elif name == "api_items.json":
        for item in json.loads(text):
            _parse(langfuse_api, "DatasetItem", item)
    checked, report = read_text("langfuse", text, path=name)
    assert [c.findings for c in checked if c.row is None] == []
    rows = {c.row.id: c.row for c in checked}
    assert list(rows) == want["ids"]
    for row_id, expected in want["expected"].items():
        assert rows[row_id].expected == expected
    for row_id, oracle in want["oracleType"].items():
        assert rows[row_id].case["oracleType"] == oracle
    for row_id, ext in want["extensions"].items():
        assert rows[row_id].case["extensions"]["langfuse"] == ext
    for row_id, metadata in want["metadata"].items():
        assert {k: v for k, v in rows[row_id].metadata.items() if k != "case"} == metadata
    ignored = sorted({e["path"] for e in report.to_json()["ignored"]})
    assert ignored == entry["recover"].get("ignored", [])


def test_an_export_of_what_evalconv_wrote_reads_back_as_written(langfuse_api, tmp_path):
    """The UI's JSON export of items evalconv uploaded (ids kept, Langfuse's fields added) is the set."""
    rows = evalconv.read(str(GOLDEN)).rows
    text, _ = write_text("langfuse", rows, path="support.langfuse.jsonl")
    export = [{"projectId": "p1", **_served(json.loads(line)), "htmlSourcePath": ""} for line in text.split("\n")[:-1]]
    checked, report = read_text("langfuse", json.dumps(export), path="export.json")
    assert [c.row for c in checked] == rows and report.edited.entries == {}

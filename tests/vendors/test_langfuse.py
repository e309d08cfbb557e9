"""What is particular to Langfuse: namespaced ids of at most 255 characters, the dataset name,
JavaScript's numbers, edits made in Langfuse, its CSV, what it refuses and what it cannot check."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

import evalconv
from conftest import ROOT
from evalconv.canonical.errors import RowRefused
from evalconv.canonical.row import Row
from evalconv.cli import cli
from evalconv.registry import REGISTRY
from evalconv.vendors.langfuse.evaluators import verdict
from evalconv.vendors._common import records
from evalconv.vendors.langfuse.write import build_item, changes_in_javascript, item_id, js_normal
from roundtrip_helpers import read_text, write_text

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def row(row_id="r1", oracle="reference-answer", expected="Paris", metadata=None, **case):
    value = {"id": row_id, "input": "q", "metadata": {"case": {"caseId": row_id, "oracleType": oracle,
                                                               "expectedBehavior": "Answers", "provenance": "expert-authored",
                                                               **case}, **(metadata or {})}}
    if expected is not ...:
        value["expected"] = expected
    return Row.from_json(value)


def _items(text: str) -> list[dict]:
    return [json.loads(line) for line in text.split("\n")[:-1]]


def test_ids_are_namespaced_by_the_dataset_and_at_most_255_characters():
    assert item_id("support", "cs-refund") == "support:cs-refund"
    long = item_id("d" * 200, "x" * 200)
    assert len(long) <= 255 and long.startswith("d" * 200 + ":") and long == item_id("d" * 200, "x" * 200) and long != item_id("d" * 200, "y" * 200)
    rows = [row("x" * 300), row("short")]
    text, loss = write_text("langfuse", rows, path="faq.langfuse.jsonl")
    items = _items(text)
    assert [len(i["id"]) <= 255 for i in items] == [True, True] and items[1]["id"] == "faq:short"
    assert {i["datasetName"] for i in items} == {"faq"}
    checked, _ = read_text("langfuse", text, path="faq.langfuse.jsonl")
    assert [c.row.id for c in checked] == ["x" * 300, "short"]  # the case id survives any item id
    assert any(e["path"] == "$.id" for e in loss.to_json()["carried"])


def test_the_dataset_is_named_by_the_option_or_the_output(tmp_path):
    out = tmp_path / "items.jsonl"
    result = CliRunner().invoke(cli, [str(GOLDEN), "--to", "langfuse", "-o", str(out), "--langfuse-dataset", "faq-v2"])
    assert result.exit_code == 0, result.output
    assert {i["datasetName"] for i in _items(out.read_text(encoding="utf-8"))} == {"faq-v2"}
    text, _ = write_text("langfuse", [row()], path=None)
    assert _items(text)[0]["id"] == "evalconv:r1"
    refused = CliRunner().invoke(cli, [str(GOLDEN), "--to", "jsonl", "-o", str(tmp_path / "x.jsonl"),
                                       "--langfuse-dataset", "faq"])
    assert refused.exit_code == 2 and "goes with --to langfuse" in refused.stderr


def test_javascript_numbers_are_carried_exactly_and_reported():
    rows = [row("f", expected=1.0, metadata={"count": 2 ** 60 + 1, "plain": 3})]
    text, loss = write_text("langfuse", rows, path="x.jsonl")
    carried = {e["path"] for e in loss.to_json()["carried"]}
    assert {"$.expected", "$.metadata.count"} <= carried and "$.metadata.plain" not in carried
    served = []
    for item in _items(text):
        served.append({k: js_normal(v) for k, v in item.items()})
    assert served[0]["expectedOutput"] == 1 and type(served[0]["expectedOutput"]) is int
    checked, report = read_text("langfuse", "\n".join(json.dumps(s) for s in served), path="x.jsonl")
    assert checked[0].row == rows[0] and report.edited.entries == {}


def test_a_nul_is_refused_in_one_line():
    with pytest.raises(RowRefused, match="NUL"):
        write_text("langfuse", [row(expected="a\x00b")], path="x.jsonl")


def test_edits_made_in_langfuse_are_kept_and_named():
    text, _ = write_text("langfuse", [row("r1"), row("r2")], path="x.jsonl")
    items = _items(text)
    items[0]["expectedOutput"] = "Lyon"
    items[0]["metadata"]["reviewed"] = True
    items[1]["status"] = "ARCHIVED"
    items[1]["sourceTraceId"] = "trace-9"
    checked, report = read_text("langfuse", "\n".join(json.dumps(i) for i in items), path="x.jsonl")
    first, second = (c.row for c in checked)
    assert first.expected == "Lyon" and first.metadata["reviewed"] is True
    assert second.case["extensions"]["langfuse"] == {"status": "ARCHIVED", "sourceTraceId": "trace-9"}
    edited = {e["path"]: e["ids"] for e in report.to_json()["edited"]}
    assert edited == {"$.expected": ["r1"], "$.metadata.reviewed": ["r1"],
                      "$.metadata.case.extensions.langfuse.status": ["r2"],
                      "$.metadata.case.extensions.langfuse.sourceTraceId": ["r2"]}
    again, _ = write_text("langfuse", [second], path="x.jsonl")  # written back natively
    assert _items(again)[0]["status"] == "ARCHIVED" and _items(again)[0]["sourceTraceId"] == "trace-9"


def test_absent_and_null_expected_come_back_apart_in_every_variant():
    rows = [row("absent", "rubric", ..., evaluator="rubric-human"), row("null", expected=None),
            row("empty", expected=""), row("text-like", expected='{"a": 1}')]
    for path in ("x.jsonl", "x.json", "x.csv"):
        text, _ = write_text("langfuse", rows, path=path)
        checked, report = read_text("langfuse", text, path=path)
        assert [c.row for c in checked] == rows, path
        assert report.edited.entries == {}


def test_what_langfuse_cannot_check_is_said_and_the_case_evaluator_never_passes_by_default():
    _, loss = write_text("langfuse", [row()], path="x.jsonl")
    assert any("Langfuse checks nothing per dataset item" in n for n in loss.to_json()["notices"])
    meta = lambda **case: {"case": {"oracleType": "reference-answer", **case}}
    assert verdict("Paris", "Paris", meta()) == (True, "the output is the reference")
    assert verdict("Paris", "Paris", meta(evaluator="llm-judge"))[0] is False
    assert verdict("Paris", "Paris", meta(evaluator="human-expert"))[0] is False
    assert verdict("b", ["a", "b"], {"case": {"oracleType": "acceptable-set"}})[0] is True
    assert verdict("x", None, {"case": {"oracleType": "expected-final-state"}})[0] is False
    assert verdict("x", None, None)[0] is False


@pytest.mark.parametrize("head, sure", [
    ('{"id":"support:a","datasetName":"support","input":"q","metadata":{}}', 1.0),
    ('{"dataset_name": "support", "input": "q", "expected_output": "a"}', 1.0),
    ('"id","projectId","datasetId","datasetName","status","input","expectedOutput","metadata"\n', 1.0),
    ('{"input": "q", "expected_output": "a", "context": []}', 0.0),  # DeepEval's golden
    ('{"id": "a", "tags": [], "input": "q", "expected": "a"}', 0.0),  # Braintrust
    ('input,expected_output\n', 0.0),
])
def test_detection_goes_by_its_own_keys(head, sure):
    assert REGISTRY.get("langfuse").detect(head) == sure


def test_the_ui_export_is_read_by_content_under_a_plain_name(tmp_path):
    source = ROOT / "tests" / "fixtures" / "vendors" / "langfuse" / "ui_export.csv"
    path = tmp_path / "dataset-export.csv"
    path.write_bytes(source.read_bytes())
    assert evalconv.read(str(path)).report.format == "langfuse"


@pytest.mark.parametrize("text, says", [
    ('{"id": "a", "datasetName": "d", "input": "q", "metadata": "x"}\n', "metadata must be an object"),
    ('"id","datasetName","input","expectedOutput","metadata"\n"a","d","q","","{oops"\n', "metadata cell is not JSON"),
])
def test_a_bad_item_is_one_line_naming_file_line_and_field(tmp_path, text, says):
    path = tmp_path / ("x.langfuse.csv" if text.startswith('"') else "x.langfuse.jsonl")
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    line = next(line for line in result.stderr.splitlines() if says in line)
    assert line.startswith(f"{path}:")


def _exact_types(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_exact_types(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_exact_types(a[k], b[k]) for k in a)
    return a == b


_NUMBERS = st.one_of(st.integers(min_value=-2 ** 80, max_value=2 ** 80), st.integers(min_value=2 ** 52, max_value=2 ** 54),
                     st.floats(allow_nan=False, allow_infinity=False),
                     st.sampled_from([1.0, -0.0, 0.5, 2.0 ** 60, 1e21, 1e22, 2 ** 60, 2 ** 53 + 1]))
_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.text(max_size=3), _NUMBERS),
                       lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)),
                       max_leaves=8)


@settings(max_examples=500)
@given(_VALUES)
def test_changes_in_javascript_says_whether_js_normal_changes_a_value_or_a_type(value):
    # One walk that stops at the first changing number replaced building js_normal(value) and
    # comparing it (a third of the writer's time): the answer must be the comparison's.
    assert changes_in_javascript(value) is not _exact_types(js_normal(value), value)


@settings(max_examples=300)
@given(_VALUES, _VALUES, st.dictionaries(st.text(min_size=1, max_size=3), _VALUES, max_size=3))
def test_fingerprints_are_of_what_javascript_gives_back(input_, expected, extra):
    """The writer fingerprints a value as it is unless a number in it changes in JavaScript (it
    used to build js_normal of every value): the sums are still those of js_normal's values."""
    from evalconv.reports import LossReport

    metadata = {**extra, "case": {"caseId": "cs-1", "oracleType": "reference-answer"}}
    row = Row.from_json({"id": "cs-1", "input": input_, "expected": expected, "metadata": metadata})
    sums = build_item(row, "set", LossReport("langfuse"))["metadata"]["evalconv"]["sums"]
    assert sums == {"input": records.fingerprint(js_normal(input_)), "expectedOutput": records.fingerprint(js_normal(expected)),
                    "metadata": {k: records.fingerprint(js_normal(v)) for k, v in metadata.items()}}

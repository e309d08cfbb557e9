"""Every Braintrust record evalconv writes goes through the SDK's real `Dataset.insert` path (its
in-memory background logger: no login, no HTTP) and comes out uncoerced."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import row
from evalconv.canonical import jsonvalue
from evalconv.canonical.diff import diff_paths, unexplained
from evalconv.canonical.row import Row
from evalconv.vendors.braintrust.format import MAX_DEPTH
from interop import require_module, vendor_fixtures
from roundtrip_helpers import read_text, write_text
from strategies import json_values, row_sets, string_lists

pytestmark = pytest.mark.interop
FIXTURES, _ = vendor_fixtures("braintrust")
BT_KEYS = {"id", "input", "expected", "metadata", "tags", "origin"}  # `bt` DATASET_RECORD_FIELDS


def assert_inserts_uncoerced(record: dict) -> dict:
    assert set(record) <= BT_KEYS - {"origin"}, "bt datasets create denies unknown keys"
    assert isinstance(record.get("id", "x"), str) and record.get("id", "x")
    logged = insert_offline({k: record[k] for k in ("input", "expected", "metadata", "tags", "id") if k in record})
    for key in ("input", "expected", "metadata", "tags"):
        if key in record:
            assert jsonvalue.same(logged.get(key), record[key]), f"{key} coerced by Braintrust"
    return logged


def nested(depth: int):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


EDGE_ROWS = [
    row("plain"),
    row("null-expected", expected=(None,)),
    row("no-expected", oracle="rubric", expected=(), evaluationCriteria=["a"]),
    {**row("object-io", expected=({"n": [1, 1.0, 2 ** 70, -0.0, "é🙂"]},)), "input": {"messages": []}},
    {**row("deep"), "input": nested(MAX_DEPTH), "expected": nested(MAX_DEPTH)},
]
EDGE_ROWS[0]["metadata"].update(tags=["a", "a", "oracle:reference-answer"], evalconv={"x": 1}, model="gpt")


@pytest.mark.parametrize("value", EDGE_ROWS, ids=lambda v: v["id"])
def test_written_records_insert_without_coercion(value):
    text, _ = write_text("braintrust", [Row.from_json(value)])
    logged = assert_inserts_uncoerced(jsonvalue.loads(text))
    assert logged["id"] == value["id"]


@pytest.mark.parametrize("name", ["bt_create.jsonl", "records.json"])
def test_fixture_records_insert_without_coercion(name):
    text = (FIXTURES / name).read_text("utf-8")
    records = json.loads(text) if name.endswith(".json") else [json.loads(x) for x in text.splitlines()]
    for record in records:
        assert_inserts_uncoerced(record)


def test_the_sdk_coerces_what_evalconv_refuses():
    """Pins the behaviour the writer guards against: if Braintrust changes it, this fails."""
    logged = insert_offline({"input": {"nan": float("nan"), "inf": float("inf")},
                             "expected": nested(MAX_DEPTH + 1)})
    assert logged["input"] == {"nan": "NaN", "inf": "Infinity"}
    assert not jsonvalue.same(logged["expected"], nested(MAX_DEPTH + 1))
    assert jsonvalue.same(insert_offline({"expected": nested(MAX_DEPTH)})["expected"], nested(MAX_DEPTH))


def test_the_sdk_stores_a_missing_expected_as_null():
    assert insert_offline({"input": 1})["expected"] is None


@pytest.mark.parametrize("bad", [{"tags": "t"}, {"tags": ["t", "t"]}, {"metadata": [1]}])
def test_the_sdk_refuses_what_the_reader_reports(bad):
    with pytest.raises((ValueError, TypeError)):
        insert_offline({"input": 1, **bad})


def insert_offline(record: dict) -> dict:
    """The event `Dataset.insert(**record)` hands Braintrust's background logger (no login, no HTTP)."""
    logger = require_module("braintrust.logger")
    util = require_module("braintrust.util")
    meta = logger.ProjectDatasetMetadata(logger.ObjectMetadata("p", "offline", {}),
                                         logger.ObjectMetadata("d", "offline", {}))
    with logger._internal_with_memory_background_logger() as bgl:
        logger.Dataset(lazy_metadata=util.LazyValue(lambda: meta, use_mutex=False)).insert(**record)
        [logged] = bgl.pop()
    return logged


def fetched(logged: dict) -> dict:
    """A `fetch()` row: the logged event plus the fields the server assigns."""
    return {"id": logged["id"], "_xact_id": "1000106728890390501", "created": logged["created"],
            "_pagination_key": "p1", "project_id": "p", "dataset_id": logged["dataset_id"],
            "input": logged.get("input"), "expected": logged.get("expected"),
            "metadata": logged.get("metadata"), "tags": logged.get("tags"),
            "span_id": "s", "root_span_id": "s", "is_root": True}


@st.composite
def rows_with_reserved_keys(draw):
    """Rows whose metadata also has the keys the writer treats specially."""
    rows = draw(row_sets(max_size=3))
    for row_ in rows:
        row_.metadata.update(draw(st.dictionaries(st.sampled_from(["tags", "evalconv", "model"]),
                                                  st.one_of(json_values, string_lists), max_size=3)))
    return rows


@settings(max_examples=300)
@given(rows=st.one_of(row_sets(), rows_with_reserved_keys()))
def test_insert_keeps_every_value_and_fetch_reads_back_exactly(rows):
    text, loss = write_text("braintrust", rows)
    dumps = []
    for line in text.split("\n")[:-1]:
        record = jsonvalue.loads(line)
        logged = assert_inserts_uncoerced(record)
        dumps.append(fetched(logged))
    checked, _ = read_text("braintrust", "".join(jsonvalue.dumps(d) + "\n" for d in dumps))
    assert [c.findings for c in checked if c.row is None] == []
    for row_, back in zip(rows, checked):
        assert unexplained(diff_paths(row_.to_json(), back.row.to_json()), loss.dropped_paths(row_.id)) == ([], [])
        assert row_ == back.row


def test_regression_braintrust_eval_scores_every_reference_and_edits_come_back():
    """Issue 14, run in Braintrust's own `Eval` (offline, `no_send_logs=True`): a scorer reading
    `expected` grades every oracle type from the exported records, and a reference edited in the
    file (as the Braintrust UI would) is what evalconv reads back."""
    braintrust = require_module("braintrust")
    values = [row("answer", expected=("$1,000",)),
              row("set", oracle="acceptable-set", expected=(["approved", "under_review"],)),
              row("state", oracle="expected-final-state", expected=({"claims": {"c-1": "closed"}},))]
    text, _ = write_text("braintrust", [Row.from_json(v) for v in values])
    records = [jsonvalue.loads(line) for line in text.splitlines()]

    def task(input, hooks):  # Braintrust passes these by name
        return {"answer": "$1,000", "set": "under_review", "state": {"claims": {"c-1": "closed"}}}[hooks.metadata["case"]["caseId"]]

    def reference(input, output, expected):
        return float(output in expected) if isinstance(expected, list) else float(output == expected)

    result = braintrust.Eval("evalconv-interop", data=lambda: [dict(r) for r in records], task=task,
                             scores=[reference], no_send_logs=True)
    assert [r.scores["reference"] for r in result.results] == [1.0, 1.0, 1.0]
    records[0]["expected"] = "$1,500"
    checked, _ = read_text("braintrust", "".join(jsonvalue.dumps(r) + "\n" for r in records))
    assert checked[0].row.expected == "$1,500"


def test_the_documented_scorer_checks_each_oracle_type_under_braintrust_eval(tmp_path):
    """Issue 24: the scorer in docs/vendors/braintrust.md, run by Braintrust's own Eval offline."""
    from doc_snippets import run, snippet_defining
    braintrust = require_module("braintrust")
    space = run(snippet_defining("braintrust.md", "correct"), tmp_path)
    data, correct = space["data"], space["correct"]
    by_id = {d["id"]: d for d in data}

    def scores(replies):
        def task(input):
            row_id = next(i for i, d in by_id.items() if d["input"] == input)
            reply = replies.get(row_id, "")
            return {"answer": "done", "tool_calls": reply} if isinstance(reply, list) else {"answer": reply}
        result = braintrust.Eval("evalconv-docs", data=data, task=task, scores=[correct], no_send_logs=True)
        return {r.metadata["case"]["caseId"]: r.scores["correct"] for r in result.results}

    right = {"cs-refund-valid-receipt": by_id["cs-refund-valid-receipt"]["expected"], "cs-return-window-phrasing": "sixty days",
             "cs-order-status-tool": by_id["cs-order-status-tool"]["expected"],
             "refund-in-order": by_id["refund-in-order"]["expected"], "no-tool-needed": [],
             "cs-extract-receipt": json.dumps(by_id["cs-extract-receipt"]["expected"])}
    got = scores(right)
    assert {i for i, s in got.items() if s == 1} == set(right), got
    for row_id, d in by_id.items():
        if d["metadata"]["case"]["oracleType"] in ("rubric", "expected-final-state", "expected-behavior-only"):
            assert got[row_id] is None, row_id
    wrong = {"refund-in-order": list(reversed(by_id["refund-in-order"]["expected"])), "no-tool-needed": [{"name": "calc"}],
             "cs-order-status-tool": [*by_id["cs-order-status-tool"]["expected"], {"name": "delete_account"}],
             "cs-return-window-phrasing": "60 days, or sixty days"}
    got = scores(wrong)
    assert all(got[i] == 0 for i in wrong), got

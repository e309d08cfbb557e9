"""The one scanner content detection reads a file's first bytes with (canonical/head.py)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from evalconv.canonical import jsonvalue
from evalconv.canonical.head import header_cells, record_keys
from evalconv.registry import REGISTRY


def keys(head):
    found = record_keys(head)
    return None if found is None else (set(found.top), {".".join(pair) for pair in found.nested})


def test_a_whole_record_gives_its_keys_two_levels_deep():
    head = '{"id": "a", "input": {"q": [1, {"deep": 2}]}, "metadata": {"case": {"caseId": "a"}}}\n{"later": 1}'
    assert keys(head) == ({"id", "input", "metadata"}, {"input.q", "metadata.case"})


def test_the_first_item_of_an_array_after_a_bom_and_blank_lines():
    assert keys('\ufeff\n  [\n  {"input": "q", "expected": "a"}, {"other": 1}]') == ({"input", "expected"}, set())


def test_a_record_cut_off_anywhere_gives_the_keys_seen_so_far():
    head = '{"input": "q", "metadata": {"case": {"caseId": "a"'
    assert keys(head) == ({"input", "metadata"}, {"metadata.case"})
    assert keys('{"input": "q", "expec') == ({"input"}, set())
    assert keys('{"input"') == (set(), set())  # no colon yet: not known to be a key
    assert keys("[") is None and keys("{") == (set(), set())


def test_escaped_quotes_and_escapes_in_keys_and_values():
    head = r'{"say \"hi\"": "a \" } ] {", "tab\tkey": 1, "x\u0041": "\\", "next": 2}'
    assert keys(head) == ({'say "hi"', "tab\tkey", "xA", "next"}, set())
    assert keys(r'{"bad \q": 1}') == ({r"bad \q"}, set())  # a bad escape: the key as written


def test_a_key_below_a_cut_or_broken_key_names_nothing():
    """The bug behind LangSmith's TypeError: a record cut before its first key's opening quote."""
    assert keys('{input": {"q": 1}, "expected": 2}') == (set(), set())
    assert keys('{"a": [{"b": 1}], "c": 2}') == ({"a", "c"}, set())  # keys inside a list are not the record's


def test_text_that_does_not_open_a_record():
    for head in ("", "id,input\n", "- vars: {}\n", "[1, 2]", '["a", {"vars": 1}]', "PAR1\x00", "null"):
        assert record_keys(head) is None


def test_csv_header_cells():
    assert header_cells('\ufeffinput,"expected, quoted"\r\nx,y') == ["input", "expected, quoted"]
    assert header_cells("") == []
    assert header_cells('a,b\rc') is None  # a stray carriage return: the csv module refuses it


@given(st.text())
def test_never_raises_on_any_text(text):
    found = record_keys(text)
    assert found is None or all(isinstance(k, str) for k in found.top)
    header_cells(text)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)),
       st.data())
def test_any_cut_of_a_json_object_gives_a_subset_of_its_keys(value, data):
    record = {"k": value, **(value if isinstance(value, dict) else {})}
    text = jsonvalue.dumps(record)
    cut = data.draw(st.integers(1, len(text)))
    found = record_keys(text[:cut])
    assert found is not None and found.top <= set(record)
    assert record_keys(text).top == set(record)


def test_detection_confidence_is_graded_by_own_evidence():
    mixed = '{"input": "q", "expected_output": "a", "note": 1}'  # golden marks beside a key no golden has
    assert REGISTRY.get("deepeval").detect(mixed) == 0.5
    assert REGISTRY.get("deepeval").detect('{"input": "q", "expected_output": "a"}') == 1.0
    assert REGISTRY.get("jsonl").detect(mixed) < 0.5 < REGISTRY.get("jsonl").detect('{"id": "a", "input": "q"}')
    assert REGISTRY.detect(None, mixed).name == "deepeval"
    golden = (ROOT / "golden_roundtrips" / "support-agent.jsonl").read_text(encoding="utf-8")[:8192]
    assert REGISTRY.detect(None, golden).name == "jsonl"


@pytest.mark.parametrize("path, expected", [
    ("golden_roundtrips/support-agent.braintrust.jsonl", "braintrust"),
    ("golden_roundtrips/support-agent.deepeval.csv", "deepeval"),
    ("golden_roundtrips/support-agent.deepeval.json", "deepeval"),
    ("golden_roundtrips/support-agent.inspect.jsonl", "inspect"),
    ("golden_roundtrips/support-agent.langsmith.jsonl", "langsmith"),
    ("golden_roundtrips/support-agent.promptfoo.csv", "promptfoo"),
    ("golden_roundtrips/support-agent.ragas.jsonl", "ragas"),
    ("golden_roundtrips/support-agent.csv", "csv"),
    ("golden_roundtrips/support-agent.inspect.csv", "csv"),  # an `id` column: canonical CSV is surer
    ("golden_roundtrips/support-agent.json", "json"),
    ("golden_roundtrips/support-agent.jsonl", "jsonl"),
    ("tests/fixtures/vendors/braintrust/bt_create.jsonl", "braintrust"),
    ("tests/fixtures/vendors/braintrust/fetch_dump.jsonl", "braintrust"),
    ("tests/fixtures/vendors/braintrust/records.json", "braintrust"),
    ("tests/fixtures/vendors/deepeval/conversational_goldens.json", "deepeval"),
    ("tests/fixtures/vendors/deepeval/goldens.csv", "deepeval"),
    ("tests/fixtures/vendors/deepeval/goldens.json", "deepeval"),
    ("tests/fixtures/vendors/deepeval/goldens.jsonl", "deepeval"),
    ("tests/fixtures/vendors/inspect/samples.jsonl", "inspect"),
    ("tests/fixtures/vendors/inspect/theory_of_mind.jsonl", "inspect"),
    ("tests/fixtures/vendors/inspect/biology_qa.jsonl", "jsonl"),  # its own field names: needs --from and a spec
    ("tests/fixtures/vendors/langsmith/create_examples.jsonl", "langsmith"),
    ("tests/fixtures/vendors/langsmith/dataset_7cb68b90-d037-455b-97b1-f20cac2a0fe2.csv", "langsmith"),
    ("tests/fixtures/vendors/langsmith/examples_dump.json", "langsmith"),
    ("tests/fixtures/vendors/langsmith/examples_dump.jsonl", "langsmith"),
    ("tests/fixtures/vendors/promptfoo/project/promptfooconfig.yaml", "promptfoo"),
    ("tests/fixtures/vendors/promptfoo/tests.csv", "promptfoo"),
    ("tests/fixtures/vendors/promptfoo/tests.jsonl", "promptfoo"),
    ("tests/fixtures/vendors/ragas/multi_turn.jsonl", "ragas"),
    ("tests/fixtures/vendors/ragas/single_turn.csv", "ragas"),
    ("tests/fixtures/vendors/ragas/single_turn.jsonl", "ragas"),
])
def test_real_files_are_told_by_their_content_alone(path, expected):
    """Each format scores only its own keys; the registry's comparison still tells every real file."""
    head = (ROOT / path).read_bytes()[:8192].decode("utf-8", errors="replace")
    assert REGISTRY.detect(None, head).name == expected

"""Opik dataset and test-suite items: case ids carried beside derived UUIDv7 item ids, no two items
with one content (Opik's insert merges them), labels out of the input, a grader per oracle type and
never an auto-pass, edits kept, Opik's own files read (the exact round trips: tests/formats/test_every_format.py)."""
from __future__ import annotations

import hashlib
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from evalconv.registry import REGISTRY
from evalconv.vendors.opik.fields import NEVER_PASSES
from evalconv.vendors.opik.metrics import verdict
from evalconv.vendors.opik.write import STAMP_MS, item_id
from interop import vendor_fixtures
from roundtrip_helpers import read_text, write_text

FIXTURES, MANIFEST = vendor_fixtures("opik")
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def case(oracle="reference-answer", **extra):
    return {"caseId": "c1", "oracleType": oracle, "expectedBehavior": "b", "provenance": "expert-authored", **extra}


def row(input="Capital of France?", expected="Paris", oracle="reference-answer", absent=False, id="c1", **extra):
    value = {"id": id, "input": input, "metadata": {"case": {**case(oracle, **extra), "caseId": id}}}
    if not absent:
        value["expected"] = expected
    return Row.from_json(value)


def items(rows, path="x.opik.jsonl"):
    text, loss = write_text("opik", rows, path=path)
    return [jsonvalue.loads(line) for line in text.splitlines()], loss


def back(records):
    checked, report = read_text("opik", "".join(jsonvalue.dumps(r) + "\n" for r in records))
    return checked, report


def test_the_item_id_is_a_uuid7_derived_from_the_case_id_and_the_case_id_is_carried():
    (item,), loss = items([row(id="cs-refund")])
    parsed = uuid.UUID(item["id"])
    assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
    assert int.from_bytes(parsed.bytes[:6], "big") == STAMP_MS
    assert item["id"] == item_id("cs-refund") != item_id("cs-refund2")
    assert item["metadata"]["case"]["caseId"] == "cs-refund"
    assert "$.id" in {p for p, _ in loss.carried.entries}
    given = "0193a4b2-1c00-7d00-8000-000000000001"
    assert item_id(given) == given  # an item read from Opik keeps its id
    checked, _ = back([item])
    assert checked[0].row.id == "cs-refund"


def test_regression_identical_cases_but_for_their_ids_would_merge_in_opik_so_the_case_id_is_content():
    written, _ = items([row(id="a"), row(id="b")])
    without_ids = [{k: v for k, v in i.items() if k != "id"} for i in written]
    assert without_ids[0] != without_ids[1]  # Opik's content_hash leaves the id out


def test_labels_are_never_in_the_input_and_assertions_are_outside_data():
    r = row(input={"question": "q"}, expected="a", oracle="rubric", absent=True, evaluator="llm-judge",
            evaluationCriteria=["is kind"])
    (item,), _ = items([r], "x.opik.suite.jsonl")
    assert item["data"]["input"] == {"question": "q"}
    assert item["assertions"] == ["is kind"] and "assertions" not in item["data"]


def test_an_exact_case_never_gets_a_judge_and_never_passes_a_suite_unchecked():
    exact = row(evaluationCriteria=["matches Paris"])  # criteria, yet exact: no LLM assertion
    human = row(id="c2", oracle="rubric", absent=True, evaluator="human-expert", evaluationCriteria=["x"])
    written, loss = items([exact, human], "x.opik.suite.jsonl")
    for item in written:
        assert "assertions" not in item and item["execution_policy"] == NEVER_PASSES
    notes = " ".join(loss.notices)
    assert "case_metric" in notes and "never-passing" not in notes and "pass_threshold: 2" in notes
    assert "a person grades it (human-expert)" in notes


def test_a_judged_case_gets_its_criteria_and_unacceptable_behaviour_as_assertions():
    r = row(oracle="rubric", absent=True, evaluator="llm-judge", evaluationCriteria=["apologises", "apologises"],
            unacceptableBehavior=["blames the courier"])
    (item,), _ = items([r], "x.opik.suite.jsonl")
    assert item["assertions"] == ["apologises", "The output does not do this: blames the courier"]
    assert "execution_policy" not in item
    (plain,), loss = items([r])
    assert "assertions" not in plain and "evaluators" not in plain
    assert any(".suite.jsonl" in n for n in loss.notices)


def test_edits_made_in_opik_are_kept_and_named():
    r = row(oracle="rubric", absent=True, evaluator="llm-judge", evaluationCriteria=["apologises"])
    (item,), _ = items([r], "x.opik.suite.jsonl")
    item["data"]["input"] = "edited"
    item["assertions"] = ["apologises", "offers a refund"]
    item["description"] = "from the UI"
    (checked,), report = back([item])
    edited = {p for p, _ in report.edited.entries}
    assert {"$.input", "$.metadata.case.extensions.opik.assertions", "$.metadata.case.extensions.opik.description"} <= edited
    assert checked.row.input == "edited"
    (again,), _ = items([checked.row], "x.opik.suite.jsonl")
    assert again["assertions"] == ["apologises", "offers a refund"] and again["description"] == "from the UI"


def test_an_item_evalconv_wrote_reads_back_with_nothing_inferred():
    rows = [c.row for c in read_text("jsonl", GOLDEN.read_text(encoding="utf-8"))[0]]
    for path in ("x.opik.jsonl", "x.opik.suite.jsonl"):
        written, _ = items(rows, path)
        checked, report = back(written)
        assert [c.row for c in checked] == rows
        assert report.inferred.entries == {} and report.edited.entries == {}


def test_detection_claims_opik_items_not_bare_input_expected_output_records():
    opik = REGISTRY.get("opik")
    for entry in MANIFEST["files"]:
        assert opik.detect((FIXTURES / entry["path"]).read_text(encoding="utf-8")[:8192]) == 1.0, entry["path"]
    bare = '{"input": "q", "expected_output": "a"}\n'  # DeepEval's golden too: no Opik mark, no UUID id
    assert opik.detect(bare) == 0.0 and REGISTRY.detect("x.jsonl", bare).name != "opik"
    for path in ("x.opik.jsonl", "x.opik.suite.jsonl"):
        text, _ = write_text("opik", [row()], path=path)
        assert REGISTRY.detect("x.jsonl", text).name == "opik"


def test_files_opik_wrote_read_as_the_manifest_says():
    for entry in MANIFEST["files"]:
        checked, _ = read_text("opik", (FIXTURES / entry["path"]).read_text(encoding="utf-8"))
        rows = [c.row for c in checked]
        want = entry["recover"]
        assert None not in rows and len(rows) == entry["rows"], [c.findings for c in checked]
        assert [r.id for r in rows] == want["ids"]
        if "inputs" in want:
            assert [r.input for r in rows] == want["inputs"]
        assert [r.expected if r.has_expected else None for r in rows] == want["expected"]
        if "oracles" in want:
            assert [r.case["oracleType"] for r in rows] == want["oracles"]
        if "opik" in want:
            assert [r.case.get("extensions", {}).get("opik") for r in rows] == want["opik"]


def test_case_metric_verdicts_never_pass_what_they_cannot_check():
    meta = {"case": case("acceptable-set")}
    assert verdict(["60 days"], [["60 days"], ["sixty"]], meta)[0] is True
    assert verdict(129.0, [129], {"case": case()})[0] is False  # whole values, type and all
    calls = [{"name": "lookup", "arguments": {"id": 1}}]
    assert verdict({"tool_calls": calls}, calls, {"case": case("expected-tool-calls")})[0] is True
    assert verdict([{"name": "lookup", "arguments": {"id": 2}}], calls, {"case": case("expected-tool-calls")})[0] is False
    assert verdict("x", None, {"case": case("rubric", evaluator="llm-judge")})[0] is None
    assert verdict("x", "x", {"case": case(evaluator="human-expert")})[0] is None
    assert verdict("x", "x", {})[0] is None


def test_an_item_whose_metadata_is_not_an_object_is_one_finding_naming_it():
    checked, _ = back([{"id": "0193a4b2-1c00-7d00-8000-000000000001", "input": "q", "metadata": ["x"]},
                       {"id": "0193a4b2-1c00-7d00-8000-000000000002", "input": "q", "metadata": {}}])
    bad, good = checked
    assert bad.row is None and [(f.path, f.message) for f in bad.findings] == [("$.metadata", "metadata must be an object")]
    assert good.row is not None


@settings(max_examples=300)
@given(st.one_of(st.text(max_size=45), st.text(alphabet="0123456789abcdefABCDEF-{}:urnid", max_size=45),
                 st.uuids().map(str), st.uuids().map(lambda u: "{" + u.hex + "}"), st.uuids().map(lambda u: u.urn)))
def test_item_id_is_the_uuid_it_always_was(case_id):
    """item_id skips uuid.UUID for text too short to be one and formats the digest itself (a tenth
    of the writer's time went to UUID objects): the same ids as building them."""
    try:
        expected = str(uuid.UUID(case_id))
    except ValueError:
        digest = bytearray(STAMP_MS.to_bytes(6, "big") + hashlib.sha256(case_id.encode("utf-8")).digest()[:10])
        digest[6] = 0x70 | (digest[6] & 0x0F)
        digest[8] = 0x80 | (digest[8] & 0x3F)
        expected = str(uuid.UUID(bytes=bytes(digest)))
    assert item_id(case_id) == expected

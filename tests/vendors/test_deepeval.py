"""DeepEval goldens: mapping rules, the fixture files DeepEval wrote, detection (the exact round
trips in every variant: tests/formats/test_every_format.py)."""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

import evalconv
from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from evalconv.canonical.source import Lines
from evalconv.canonical.validator import Validator
from evalconv.registry import REGISTRY
from evalconv.reports import LossReport, ReadReport
from evalconv.vendors.deepeval.format import FORMAT
from evalconv.vendors.deepeval.fields import GOLDEN_KEYS
from evalconv.vendors.deepeval.write import PANDAS_NA, pandas_kind
from interop import vendor_fixtures

ROOT = Path(__file__).resolve().parents[2]
FIXTURES, MANIFEST = vendor_fixtures("deepeval")
VARIANTS = {"json": "out.json", "jsonl": "out.jsonl", "csv": "out.csv"}


def make_row(row_id="cs-1", *, input="Where is my order?", expected=("It ships today.",),
             oracle="reference-answer", metadata=None, **case_extra) -> Row:
    case = {"caseId": row_id, "oracleType": oracle, "expectedBehavior": "Says when it ships.",
            "provenance": "expert-authored", **case_extra}
    value = {"id": row_id, "input": input, "metadata": {"case": case, **(metadata or {})}}
    if expected != ():
        value["expected"] = expected[0] if isinstance(expected, tuple) else expected
    return Row.from_json(value)


def write(rows, variant="json") -> tuple[str, LossReport]:
    out, report = io.StringIO(newline=""), LossReport("deepeval")
    writer = FORMAT.open_writer(out, report, FORMAT.make_options(VARIANTS[variant]))
    for row in rows:
        writer.write(row)
    writer.close()
    return out.getvalue(), report


def read(text: str):
    report = ReadReport("deepeval", "mem")
    lines = Lines(io.BytesIO(text.encode("utf-8")), source="mem")
    return list(Validator(source="mem").check_all(FORMAT.read(lines, report))), report


def goldens(text: str, variant: str) -> list[dict]:
    if variant == "json":
        return json.loads(text)
    if variant == "jsonl":
        return [json.loads(line) for line in text.splitlines()]
    return list(csv.DictReader(io.StringIO(text, newline="")))


def carried(report: LossReport, row_id: str) -> dict[str, str]:
    return {path: reason for (path, reason), ids in report.carried.entries.items() if row_id in ids}


# --- the loss report (exact round trips in every variant: tests/formats/test_every_format.py) ----------

def test_report_uses_the_field_map_paths_and_reasons():
    declared = {(f.path, f.reason) for f in FORMAT.field_map}
    row = make_row(input={"vars": 1}, expected=None, metadata={"team": "a", "x.y": 1},
                   scenario="s", unacceptableBehavior=["ok", " "], actor="a")
    _, report = write([row], "csv")
    for (path, reason) in report.carried.entries:
        generic = re.sub(r"\[\d+\]", "[*]", path)
        generic = re.sub(r"^\$\.metadata(\.team|\['x\.y'\])$", "$.metadata.*", generic)
        assert (generic, reason) in declared, (path, reason)


# --- writer: mapping rules -------------------------------------------------------------------

def test_string_input_and_reference_answer_are_native():
    text, report = write([make_row()])
    (golden,) = json.loads(text)
    assert list(golden) == list(GOLDEN_KEYS)
    assert golden["input"] == "Where is my order?"
    assert golden["expected_output"] == "It ships today."
    assert golden["name"] == "cs-1"
    assert golden["expectations"] is None  # an exact-match case: no LLM judge is attached
    assert golden["additional_metadata"] == {"evalconv": make_row().to_json()}
    assert set(carried(report, "cs-1")) == {"$.metadata.case.caseId", "$.metadata.case.oracleType",
                                             "$.metadata.case.provenance", "$.metadata.case.expectedBehavior"}


@pytest.mark.parametrize("evaluator, oracle, judged", [
    ("llm-judge", "reference-answer", True), (None, "rubric", True), ("llm-judge", "acceptable-set", True),
    (None, "reference-answer", False), ("exact-or-programmatic", "reference-answer", False),
    ("human-expert", "reference-answer", False), ("rubric-human", "rubric", False),
    (None, "expected-behavior-only", False), (None, "expected-tool-calls", False)])
def test_regression_expectations_only_on_cases_an_llm_judge_may_grade(evaluator, oracle, judged):
    """Issue 14: every golden carried expectations.must, so DeepEval attached an LLM-judged metric
    to exact-match and human-graded cases too (a correct `$1,000` failed for want of an API key)."""
    extra = {"evaluator": evaluator} if evaluator else {}
    expected = {"acceptable-set": ["a", "b"], "expected-tool-calls": [{"name": "t"}], "rubric": (),
                "expected-behavior-only": ()}.get(oracle, ("$1,000",))
    row = make_row(expected=expected, oracle=oracle, unacceptableBehavior=["Guesses."], **extra)
    text, report = write([row])
    (golden,) = json.loads(text)
    assert (golden["expectations"] is not None) == judged
    reasons = carried(report, "cs-1")
    assert ("$.metadata.case.expectedBehavior" in reasons) != judged
    if not judged:
        assert "not graded by an LLM judge" in reasons["$.metadata.case.unacceptableBehavior"]
    assert "scenario" not in golden


def test_non_string_input_becomes_json_text_and_is_carried():
    text, report = write([make_row(input={"question": "hi", "lang": ["en"]})])
    (golden,) = json.loads(text)
    assert json.loads(golden["input"]) == {"question": "hi", "lang": ["en"]}
    assert "$.input" in carried(report, "cs-1")


@pytest.mark.parametrize("expected", [["a", "b"], {"state": 1}, 3, True])
def test_non_string_reference_becomes_json_text_and_is_carried(expected):
    text, report = write([make_row(expected=expected, oracle="reference-answer")])
    (golden,) = json.loads(text)
    assert jsonvalue.loads(golden["expected_output"]) == expected
    assert golden["expected_tools"] is None
    assert "$.expected" in carried(report, "cs-1")


@pytest.mark.parametrize("oracle, expected, why", [
    ("acceptable-set", ["approved", "under_review"], "membership"),
    ("acceptable-set", "approved", "membership"),
    ("expected-final-state", {"claims": {"c-1": "closed"}}, "final state"),
    ("expected-final-state", "closed", "final state")])
def test_regression_sets_and_final_states_never_become_expected_output_text(oracle, expected, why):
    """Issue 14: an acceptable set was written as JSON text in expected_output, so DeepEval's
    ExactMatchMetric scored the correct member `under_review` 0.0. It is carried instead."""
    text, report = write([make_row(expected=expected, oracle=oracle)])
    (golden,) = json.loads(text)
    assert golden["expected_output"] is None and golden["expected_tools"] is None
    assert why in carried(report, "cs-1")["$.expected"]
    assert golden["additional_metadata"]["evalconv"]["expected"] == expected


def test_null_expected_is_carried_and_absent_is_silent():
    _, report = write([make_row("a", expected=None), make_row("b", expected=())])
    assert "$.expected" in carried(report, "a")
    assert "$.expected" not in carried(report, "b")


def test_expected_tool_calls_become_expected_tools():
    calls = [{"name": "lookup", "arguments": {"id": "7"}}, {"name": "refund", "id": "call_2"}]
    text, report = write([make_row(expected=calls, oracle="expected-tool-calls")])
    (golden,) = json.loads(text)
    assert golden["expected_tools"] == [{"name": "lookup", "type": "FUNCTION", "inputParameters": {"id": "7"}},
                                        {"name": "refund", "type": "FUNCTION"}]
    assert golden["expected_output"] is None
    assert "$.expected[1].id" in carried(report, "cs-1")
    assert "$.expected" not in carried(report, "cs-1")


def test_tool_calls_of_the_wrong_shape_become_json_text():
    text, report = write([make_row(expected=[{"name": "x", "arguments": [1]}], oracle="expected-tool-calls")])
    (golden,) = json.loads(text)
    assert golden["expected_tools"] is None and golden["expected_output"] == '[{"name":"x","arguments":[1]}]'
    assert "$.expected" in carried(report, "cs-1")


def test_expectations_are_stripped_and_blank_items_carried():
    row = make_row(expectedBehavior="  ", unacceptableBehavior=[" Lies. ", "", "Shouts."], evaluator="llm-judge")
    text, report = write([row])
    (golden,) = json.loads(text)
    assert golden["expectations"]["must"] == [] and golden["expectations"]["must_not"] == ["Lies.", "Shouts."]
    got = carried(report, "cs-1")
    assert "$.metadata.case.expectedBehavior" in got and "$.metadata.case.unacceptableBehavior[1]" in got
    assert "$.metadata.case.unacceptableBehavior" not in got


def test_no_expectations_when_nothing_to_judge():
    text, _ = write([make_row(expectedBehavior="", evaluator="llm-judge")])
    assert json.loads(text)[0]["expectations"] is None


def test_labels_and_scenario_never_reach_input_or_a_top_level_scenario():
    row = make_row(scenario="Angry customer", evaluationCriteria=["Polite"], toolActionExpectation="No refund")
    text, report = write([row], "jsonl")
    golden = json.loads(text)
    assert golden["input"] == "Where is my order?" and "scenario" not in golden
    for path in ("$.metadata.case.scenario", "$.metadata.case.evaluationCriteria",
                 "$.metadata.case.toolActionExpectation"):
        assert path in carried(report, "cs-1")


def test_user_metadata_is_carried_and_deepeval_fields_go_back_in_place():
    metadata = {"team": "billing", "referenceContexts": ["Refunds take 5 days."],
                "deepeval": {"context": ["old"], "comments": "note", "source_file": "kb.md",
                             "custom_column_key_values": {"tier": "gold"}, "user_description": "x",
                             "additional_metadata": {"ticket": "ZD-1"}},
                "deepeval_run": {"actual_output": "ok", "token_cost": 0.5, "input_token_count": "bad"}}
    text, report = write([make_row(metadata=metadata)])
    (golden,) = json.loads(text)
    assert golden["context"] == ["Refunds take 5 days."] and golden["comments"] == "note"
    assert golden["source_file"] == "kb.md" and golden["custom_column_key_values"] == {"tier": "gold"}
    assert golden["actual_output"] == "ok" and golden["token_cost"] == 0.5
    assert golden["input_token_count"] is None
    assert golden["additional_metadata"]["ticket"] == "ZD-1"
    got = carried(report, "cs-1")
    assert {"$.metadata.team", "$.metadata.deepeval.user_description", "$.metadata.deepeval.context",
            "$.metadata.deepeval_run.input_token_count", "$.metadata.deepeval.additional_metadata"} <= set(got)
    assert "$.metadata.referenceContexts" not in got


def test_jsonl_keeps_lists_as_lists():
    text, _ = write([make_row(metadata={"referenceContexts": ["a|b", "c"]})], "jsonl")
    assert json.loads(text)["context"] == ["a|b", "c"]


# --- writer: CSV and pandas --------------------------------------------------------------------

def test_csv_has_save_as_header_and_crlf():
    text, _ = write([make_row()], "csv")
    assert text.split("\r\n", 1)[0] == ",".join(GOLDEN_KEYS)
    (record,) = goldens(text, "csv")
    assert record["input"] == "Where is my order?" and record["actual_output"] == ""


def test_csv_reports_na_like_cells():
    text, report = write([make_row("a", input="N/A", expected="null"), make_row("b", expected="fine")], "csv")
    assert carried(report, "a")["$.input"].startswith("CSV: DeepEval's loader (pandas) reads an NA-like cell")
    assert "$.expected" in carried(report, "a") and "$.expected" not in carried(report, "b")
    assert any("input of row 'a'" in note for note in report.notes)


def test_csv_reports_number_like_columns_only_when_the_whole_column_is():
    _, report = write([make_row("007", expected="12"), make_row("1e5", expected="3")], "csv")
    assert "$.id" in carried(report, "007") and "$.expected" in carried(report, "1e5")
    assert any("every name cell looks like a number" in n for n in report.notes)
    _, mixed = write([make_row("007", expected="12"), make_row("x", expected="3")], "csv")
    assert "$.id" not in carried(mixed, "007")
    assert "$.expected" in carried(mixed, "007")
    _, bools = write([make_row("a", expected="True"), make_row("b", expected="1")], "csv")
    assert "$.expected" not in carried(bools, "a")  # numbers and booleans mixed stay text


def test_csv_reports_pipes_in_list_items_and_nul_characters():
    row = make_row(input="a\x00b", metadata={"referenceContexts": ["x|y", "z"]})
    text, report = write([row], "csv")
    got = carried(report, "cs-1")
    assert "$.metadata.referenceContexts[0]" in got and "$.input" in got
    assert "\x00" not in text
    (record,) = goldens(text, "csv")
    assert record["input"] == '"a\\u0000b"' and record["context"] == "x|y|z"


@pytest.mark.parametrize("cell, kind", [("", "na"), ("NA", "na"), ("null", "na"), (" NA", "text"),
                                        ("007", "number"), (" 1\n", "number"), ("1e5", "number"),
                                        (".5", "number"), ("-Infinity", "number"), ("inf ", "text"),
                                        ("tRuE", "bool"), (" True", "text"), ("1_000", "text"),
                                        ("1,5", "text"), ("\u00a01", "text"), ("١", "text")])
def test_pandas_kind(cell, kind):
    assert pandas_kind(cell) == kind
    assert "NA" in PANDAS_NA


# --- reader: DeepEval's own files ------------------------------------------------------------

def manifest_entry(name: str) -> dict:
    return next(f for f in MANIFEST["files"] if f["path"] == f"deepeval/{name}")


@pytest.mark.parametrize("name", ["goldens.json", "goldens.jsonl", "goldens.csv", "conversational_goldens.json"])
def test_fixture_reads_into_valid_rows_with_the_manifest_facts(name):
    entry = manifest_entry(name)
    result = evalconv.read(str(FIXTURES / name))
    assert result.format == "deepeval"
    assert result.log.error_count == 0 and len(result.rows) == entry["rows"]
    for fact in entry["facts"]:
        row = result.rows[fact["row"]]
        assert row.id == fact["id"]["value"] == row.case["caseId"]
        assert row.case["provenance"] == "imported"
        golden_input = fact["input"]["value"]
        if fact["input"]["field"] == "scenario+turns":
            assert row.case["scenario"] == golden_input["scenario"]
            assert row.input == {"messages": [_file_turn(t) for t in golden_input["turns"]]}
        else:
            assert row.input == golden_input
        also = fact.get("also", {})
        if "expected_tools" in also:
            assert row.case["oracleType"] == "expected-tool-calls"
            assert row.expected == [{"name": t["name"], "arguments": t["input_parameters"]}
                                    for t in also["expected_tools"]]
            assert row.metadata["deepeval"]["expected_output"] == fact["expected"]["value"]
        elif fact["expected"]["value"] is None:  # expectations.must alone: an LLM-judged rubric
            judged = bool(also.get("expectations", {}).get("must"))
            assert not row.has_expected
            assert row.case["oracleType"] == ("rubric" if judged else "expected-behavior-only")
        else:
            assert row.expected == fact["expected"]["value"]
            assert row.case["oracleType"] == "reference-answer"
        if "expectations" in also:
            if also["expectations"]["must"] and "expected_tools" not in also:
                assert row.case["evaluator"] == "llm-judge"
            must = also["expectations"]["must"]
            assert row.case["expectedBehavior"] == must[0]  # the rest are criteria, as the writer writes them
            assert row.case.get("evaluationCriteria") == (must[1:] or (must if row.case["oracleType"] == "rubric"
                                                                       else None))
            assert row.case["unacceptableBehavior"] == also["expectations"]["must_not"]
        if "context" in also:  # DeepEval's ground truth: the reference contexts
            assert row.metadata["referenceContexts"] == also["context"]
        if "retrieval_context" in also:
            assert row.metadata["deepeval_run"]["retrieval_context"] == also["retrieval_context"]


def _file_turn(turn: dict) -> dict:
    """A manifest turn (model_dump names) as the file writes it (inputParameters, type)."""
    out = dict(turn)
    if "tools_called" in out:
        out["tools_called"] = [{**{k: v for k, v in t.items() if k != "input_parameters"},
                                "inputParameters": t["input_parameters"]} for t in out["tools_called"]]
    return out


def test_the_three_fixture_variants_read_the_same():
    rows = {name: evalconv.read(str(FIXTURES / name)).rows
            for name in ("goldens.json", "goldens.jsonl", "goldens.csv")}
    assert rows["goldens.json"] == rows["goldens.jsonl"] == rows["goldens.csv"]


def test_run_outputs_are_kept_and_listed_in_the_read_report():
    result = evalconv.read(str(FIXTURES / "goldens.json"))
    row = next(r for r in result.rows if r.id == "tool-return-label-003")
    assert row.metadata["deepeval_run"]["actual_output"].startswith("I've looked up")
    assert [t["name"] for t in row.metadata["deepeval_run"]["tools_called"]] == ["lookup_order", "create_return_label"]
    ignored = {e["path"] for e in result.report.to_json()["ignored"] if "tool-return-label-003" in e["ids"]}
    assert {"$.actual_output", "$.tools_called"} <= ignored
    inferred = {e["path"] for e in result.report.to_json()["inferred"]}
    assert {"$.metadata.case.oracleType", "$.metadata.case.provenance"} <= inferred


@pytest.mark.parametrize("variant", VARIANTS)
def test_deepeval_to_evalconv_to_deepeval_keeps_deepeval_fields_in_place(variant):
    source = json.loads((FIXTURES / "goldens.json").read_text("utf-8"))
    rows = evalconv.read(str(FIXTURES / "goldens.json")).rows
    text, _ = write(rows, variant)
    back = json.loads(write([c.row for c in read(text)[0]], "json")[0])
    for before, after in zip(source, back):
        for key in ("input", "expected_output", "context", "retrieval_context", "name", "comments",
                    "source_file", "tools_called", "custom_column_key_values"):
            assert after[key] == before[key], key
        assert {k: v for k, v in after["additional_metadata"].items() if k != "evalconv"} == \
            (before["additional_metadata"] or {})


def test_an_empty_file_is_an_empty_set():
    assert read("")[0] == [] and read("\n \n")[0] == []


def test_generated_ids_and_missing_fields():
    text = '[{"input": "hi"}, {"input": "yo", "expected_output": "x", "actual_output": null}]'
    checked, report = read(text)
    assert [c.row.id for c in checked] == ["golden-1", "golden-2"]
    assert checked[0].row.case["oracleType"] == "expected-behavior-only"
    assert "$.id" in {e["path"] for e in report.to_json()["inferred"]}


def test_unknown_keys_are_kept_and_reported():
    checked, report = read('{"input": "hi", "name": "a", "priority": 3}\n')
    assert checked[0].row.metadata["deepeval"]["priority"] == 3
    assert any("not a DeepEval golden field" in e["reason"] for e in report.to_json()["ignored"])


def test_jsonl_pipe_joined_context_is_split_like_deepeval():
    checked, _ = read('{"input": "q", "name": "a", "context": "x|y", "retrieval_context": "r"}\n')
    assert checked[0].row.metadata["referenceContexts"] == ["x", "y"]
    assert checked[0].row.metadata["deepeval_run"]["retrieval_context"] == ["r"]


def _edited(text: str, variant: str, change) -> str:
    goldens_ = goldens(text, variant)
    change(goldens_[0])
    if variant == "json":
        return json.dumps(goldens_)
    if variant == "jsonl":
        return "".join(json.dumps(g) + "\n" for g in goldens_)
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(goldens_[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(goldens_)
    return out.getvalue()


@pytest.mark.parametrize("variant", VARIANTS)
def test_regression_an_edit_in_the_deepeval_file_wins_and_is_said(variant):
    """Issue 14: expected_output edited from `$1,000` to `$1,500` read back as `$1,000` (the copy
    carried in additional_metadata silently won) and the CLI said "lossless"."""
    row = make_row(expected="$1,000")
    text, _ = write([row], variant)
    checked, report = read(_edited(text, variant, lambda g: g.update(expected_output="$1,500")))
    want = row.to_json()
    want["expected"] = "$1,500"
    assert checked[0].row.to_json() == want
    [entry] = report.to_json()["edited"]
    assert entry["path"] == "$.expected" and entry["ids"] == ["cs-1"] and "edit is kept" in entry["reason"]
    assert report.notices() == [f"row 'cs-1' $.expected: {entry['reason']}"]
    _, quiet = read(text)
    assert "edited" not in quiet.to_json() and quiet.to_json()["ignored"] == []


def test_edits_to_every_native_field_come_back():
    calls = [{"name": "lookup", "arguments": {"id": "7"}, "id": "call_1"}]
    rows = [make_row("a", input="Old?", evaluator="llm-judge", unacceptableBehavior=["Lies."]),
            make_row("b", expected=calls, oracle="expected-tool-calls"),
            make_row("c", input={"q": 1}, expected=None)]
    text, _ = write(rows)
    edited = json.loads(text)
    edited[0].update(input="New?", name="a2")
    edited[0]["expectations"]["must"] = ["Says it ships tomorrow."]
    edited[0]["expectations"]["must_not"] = []
    edited[1]["expected_tools"][0]["inputParameters"] = {"id": "8"}
    edited[2]["input"] = '{"q": 2}'
    checked, report = read(json.dumps(edited))
    a, b, c = (item.row for item in checked)
    assert a.id == a.case["caseId"] == "a2" and a.input == "New?"
    assert a.case["expectedBehavior"] == "Says it ships tomorrow." and "unacceptableBehavior" not in a.case
    assert b.expected == [{"name": "lookup", "arguments": {"id": "8"}, "id": "call_1"}]
    assert c.input == {"q": 2}
    said = {(e["path"], tuple(e["ids"])) for e in report.to_json()["edited"]}
    assert said == {("$.id", ("a",)), ("$.input", ("a", "c")), ("$.metadata.case.expectedBehavior and "
                    "$.metadata.case.unacceptableBehavior", ("a",)), ("$.expected", ("b",))}


# --- reader: bad input -----------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ('{"input": "a", "name": "x"}\n{oops\n', "line is not valid JSON"),
    ('[{"name": "x"}]', "the golden has no input"),
    ('[{"input": "a", "expected_tools": [{"inputParameters": {}}]}]', "must be an object with a string 'name'"),
    ('[{"input": "a", "expected_tools": [{"name": "t", "inputParameters": [1]}]}]', "must be an object"),
    ('[{"input": "a", "expectations": {"must": [1]}}]', "expectations.must must be a list of strings"),
    ('[{"input": "a", "name": 7}]', "'name' must be a non-empty string"),
    ('input,expected_tools\na,[oops\n', "column 'expected_tools' is not valid JSON"),
    ('input,name\na,b,c\n', "record has 3 cells"),
    ('[1]', "each element must be a JSON object"),
])
def test_bad_rows_become_row_errors(text, message):
    checked, _ = read(text)
    errors = [f.message for c in checked for f in c.errors]
    assert any(message in e for e in errors), errors


@pytest.mark.parametrize("text, message", [
    ('[{"input": "a"}', "the array is not closed"),
    ('{\n  "input": "a"\n}\n', "the first line is not a JSON object"),
    ('name,comments\nx,y\n', "neither an 'input' nor a 'scenario' column"),
    ('input,input\na,b\n', "appears twice"),
    ('input,name\n"a,b\n', "malformed CSV"),
])
def test_unreadable_files_raise_one_line_errors(text, message):
    from evalconv.canonical.errors import ReadError
    with pytest.raises(ReadError) as err:
        read(text)
    assert message in str(err.value) and "\n" not in str(err.value)


# --- detection --------------------------------------------------------------------------------

@pytest.mark.parametrize("head, claimed", [
    ((FIXTURES / "goldens.json").read_text("utf-8")[:8192], True),
    ((FIXTURES / "goldens.jsonl").read_text("utf-8")[:8192], True),
    ((FIXTURES / "goldens.csv").read_text("utf-8")[:8192], True),
    ((FIXTURES / "conversational_goldens.json").read_text("utf-8")[:8192], True),
    ('[{"id": "a", "input": "q", "metadata": {"case": {"expected_output": 1}}}]', False),
    ('{"id": "a", "input": "q", "expected": "x", "metadata": {"case": {}}}', False),
    ('{"inputs": {"q": 1}, "outputs": {"expected_output": "x"}, "metadata": {}}', False),
    ('{"id": "a", "input": "q", "expected": "x", "tags": [], "_xact_id": "1"}', False),
    ('[{"input": "q", "expected": "x", "metadata": {"expected_output": 1}}]', False),
    ('id,input,expected,case.oracleType\n', False),
    ('input_question,output_answer\n', False),
    ('[{"input": "q", "expected_output": "a"', True),
    ('input,expected_output\n', True),
    ('[{"input": "q"}]', False),
])
def test_detect(head, claimed):
    assert (FORMAT.detect(head) > 0) is claimed


def test_paths_claimed():
    for path in ("a.json", "a.JSONL", "a.csv", "a.deepeval.json", "x.deepeval.csv"):
        assert FORMAT.matches_path(path)
    assert not FORMAT.matches_path("a.yaml")
    assert REGISTRY.detect("set.json", '[{"id": "a", "input": "q", "metadata": {"case": {}}}]').name == "json"
    assert REGISTRY.detect("set.json", '[{"input": "q", "expected_output": "a"}]').name == "deepeval"


def test_write_and_read_through_the_library(tmp_path):
    rows = [make_row("a"), make_row("b", expected=[{"name": "t"}], oracle="expected-tool-calls")]
    for suffix in (".deepeval.json", ".deepeval.jsonl", ".deepeval.csv"):
        path = str(tmp_path / f"set{suffix}")
        report = evalconv.write(rows, path, "deepeval")
        assert report.rows == 2 and not report.lossy
        assert evalconv.read(path).rows == rows


def test_a_chat_input_says_why_it_is_not_a_conversational_golden():
    """Issue 14: a chat input became a JSON string with no word on conversational goldens."""
    chat = {"messages": [{"role": "user", "content": "Refund order 7?"}]}
    text, report = write([make_row(input=chat), make_row("plain")])  # a mixed set: single-turn goldens
    golden = json.loads(text)[0]
    assert json.loads(golden["input"]) == chat and "scenario" not in golden
    assert "conversational goldens" in carried(report, "cs-1")["$.input"]


@pytest.mark.parametrize("variant", ["json", "jsonl"])
def test_regression_a_set_of_chats_becomes_conversational_goldens(variant):
    """Issue 14: a chat input became a JSON string; DeepEval has conversational goldens (turns)."""
    chat = {"messages": [{"role": "user", "content": "Refund?"}, {"role": "assistant", "content": "Which order?"}]}
    rows = [make_row("a", input=chat, scenario="Refund request"), make_row("b", input=chat, expected=())]
    text, report = write(rows, variant)
    a, b = goldens(text, variant)
    assert list(a) == ["scenario", "turns", "expected_outcome", "user_description", "persona", "context", "name",
                       "comments", "additional_metadata", "custom_column_key_values", "expectations"]
    assert (a["scenario"], a["turns"], a["expected_outcome"]) == ("Refund request", chat["messages"], "It ships today.")
    assert b["scenario"] == "b" and b["expected_outcome"] is None
    assert "$.input" not in carried(report, "a") and "$.metadata.case.scenario" not in carried(report, "a")
    checked, read_report = read(text)
    assert [c.row for c in checked] == rows and "edited" not in read_report.to_json()
    mixed, _ = write([*rows, make_row("c")], variant)  # one plain row: all single-turn, in order
    assert [g["name"] for g in goldens(mixed, variant)] == ["a", "b", "c"]
    assert all("turns" not in g for g in goldens(mixed, variant))


def test_edits_to_a_conversational_golden_come_back():
    chat = {"messages": [{"role": "user", "content": "Refund?"}]}
    text, _ = write([make_row("a", input=chat)])
    goldens_ = json.loads(text)
    goldens_[0]["turns"][0]["content"] = "Refund now?"
    goldens_[0]["expected_outcome"] = "Edited"
    checked, report = read(json.dumps(goldens_))
    assert checked[0].row.input == {"messages": [{"role": "user", "content": "Refund now?"}]}
    assert checked[0].row.expected == "Edited"
    assert {e["path"] for e in report.to_json()["edited"]} == {"$.input", "$.expected"}


@pytest.mark.parametrize("variant", VARIANTS)
def test_regression_added_context_comments_and_retrieval_context_are_kept_and_named(variant):
    """Issue 24: context, comments and retrieval_context added to an exported golden were dropped
    and the read said nothing. Each is kept where the canonical row holds it, and named."""
    row = make_row(expected="$1,000")
    text, _ = write([row], variant)

    def items(*texts):  # save_as joins list cells with '|' in CSV
        return "|".join(texts) if variant == "csv" else list(texts)

    def change(golden):
        golden.update(context=items("Refunds take 5 days."), comments="checked", retrieval_context=items("Policy."),
                      actual_output="$1,000", source_file="kb.md")
    checked, report = read(_edited(text, variant, change))
    got = checked[0].row
    assert got.metadata["referenceContexts"] == ["Refunds take 5 days."]
    assert got.metadata["deepeval"] == {"comments": "checked", "source_file": "kb.md"}
    assert got.metadata["deepeval_run"] == {"retrieval_context": ["Policy."], "actual_output": "$1,000"}
    assert {e["path"] for e in report.to_json()["edited"]} == {
        "$.metadata.referenceContexts", "$.metadata.deepeval.comments", "$.metadata.deepeval.source_file",
        "$.metadata.deepeval_run.retrieval_context", "$.metadata.deepeval_run.actual_output"}
    again, quiet = read(write([got], variant)[0])  # written back in place: no edit the second time
    assert again[0].row == got and "edited" not in quiet.to_json()


def test_regression_a_rubric_s_must_items_are_its_behaviour_then_its_criteria():
    """Issue 24: the judge read only the expected behaviour; the criteria follow it in
    expectations.must, and a golden read without the carried row gives both back."""
    row = make_row(oracle="rubric", expected=(), evaluator="llm-judge", evaluationCriteria=[" Polite ", "Brief"])
    once = make_row("one", oracle="rubric", expected=(), evaluationCriteria=["Says when it ships."])
    text, report = write([row, once])
    goldens_ = json.loads(text)
    assert goldens_[0]["expectations"]["must"] == ["Says when it ships.", "Polite", "Brief"]
    assert goldens_[1]["expectations"]["must"] == ["Says when it ships."]  # its one criterion is its behaviour
    assert "$.metadata.case.evaluationCriteria" not in carried(report, "cs-1")
    for golden in goldens_:
        golden["additional_metadata"] = None
    checked, _ = read(json.dumps(goldens_))
    assert checked[0].row.case["evaluationCriteria"] == ["Polite", "Brief"]
    assert checked[1].row.case["evaluationCriteria"] == ["Says when it ships."]
    assert [c.row.case["expectedBehavior"] for c in checked] == ["Says when it ships."] * 2

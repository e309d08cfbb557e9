"""Inspect AI samples: labels in target, edits win (the exact round trips in every variant:
tests/formats/test_every_format.py)."""
from __future__ import annotations

import io

import pytest

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import WriteError
from evalconv.canonical.row import Row
from evalconv.vendors.inspect.fields import NO_TARGET_CSV
from evalconv.vendors.inspect.read import FieldSpec, read_samples
from evalconv.reports import ReadReport
from evalconv.canonical.source import Lines
from roundtrip_helpers import parse_finding, read_text, write_text



NO_TARGET_MARK = {"jsonl": '"target":[]', "csv": NO_TARGET_CSV}
TYPED = {"jsonl": '"target":"lookup then refund"', "csv": "lookup then refund"}


def case(oracle="reference-answer", **extra):
    return {"caseId": "c1", "oracleType": oracle, "expectedBehavior": "b", "provenance": "expert-authored", **extra}


def one(value, variant="jsonl"):
    text, loss = write_text("inspect", [Row.from_json(value)], path=f"x.inspect.{variant}")
    return text, loss


def back(text):
    checked, report = read_text("inspect", text)
    return checked[0], report


def test_labels_go_to_target_never_into_input():
    text, loss = one({"id": "c1", "input": "Capital of France?", "expected": "Paris",
                      "metadata": {"case": case()}})
    sample = jsonvalue.loads(text)
    assert sample["input"] == "Capital of France?" and sample["target"] == "Paris"
    assert "$.expected" not in {p for p, _ in loss.carried.entries}


def test_acceptable_set_is_a_list_of_targets_and_csv_says_it_cannot_hold_one():
    value = {"id": "c1", "input": "q", "expected": ["60 days", "sixty days"],
             "metadata": {"case": case("acceptable-set")}}
    assert jsonvalue.loads(one(value)[0])["target"] == ["60 days", "sixty days"]
    _, loss = one(value, "csv")
    assert any("CSV holds one target" in reason for _, reason in loss.carried.entries)


def test_rubric_criteria_are_the_judge_guidance():
    value = {"id": "c1", "input": "q", "metadata": {"case": case("rubric", evaluationCriteria=["Polite", "Names the fee"])}}
    assert jsonvalue.loads(one(value)[0])["target"] == ["Polite", "Names the fee"]


def test_chat_input_is_chat_messages_and_object_input_is_json_text_carried():
    chat = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}
    sample = jsonvalue.loads(one({"id": "c1", "input": chat, "expected": "Hello", "metadata": {"case": case()}})[0])
    assert sample["input"] == chat["messages"]
    text, loss = one({"id": "c1", "input": {"name": "Dana"}, "expected": "Hello", "metadata": {"case": case()}})
    assert jsonvalue.loads(text)["input"] == '{"name":"Dana"}'
    assert "$.input" in {p for p, _ in loss.carried.entries}


def test_regression_empty_input_is_refused_in_one_line_not_written():
    with pytest.raises(WriteError, match="empty input"):
        one({"id": "c1", "input": "", "metadata": {"case": case()}})
    with pytest.raises(WriteError, match="NUL"):
        one({"id": "c\x001", "input": "q", "metadata": {"case": case(caseId="c\x001")}}, "csv")


@pytest.mark.parametrize("variant", ["jsonl", "csv"])
def test_regression_an_edited_target_wins_over_the_carried_copy(variant):
    # A text target is the only copy: the edit is simply read.
    text, _ = one({"id": "c1", "input": "How much?", "expected": "$1,000", "metadata": {"case": case()}}, variant)
    checked, report = back(text.replace("$1,000", "$1,500"))
    assert checked.row.expected == "$1,500" and not report.inferred.entries
    # A JSON value is carried beside its text target: the edited text wins, and the read says so.
    text, _ = one({"id": "c1", "input": "How much?", "expected": {"usd": 1000}, "metadata": {"case": case()}}, variant)
    edited = text.replace('{""usd"":1000}', "1500 USD", 1) if variant == "csv" else text.replace('"{\\"usd\\":1000}"', '"1500 USD"')
    assert edited != text
    checked, report = back(edited)
    assert checked.row.expected == "1500 USD"
    assert "$.expected" in {p for p, _ in report.edited.entries} and not report.inferred.entries


def test_an_edited_set_and_criteria_win():
    text, _ = one({"id": "c1", "input": "q", "expected": ["a", "b"], "metadata": {"case": case("acceptable-set")}})
    sample = jsonvalue.loads(text)
    sample["target"] = ["a", "b", "c"]
    assert back(jsonvalue.dumps(sample) + "\n")[0].row.expected == ["a", "b", "c"]
    text, _ = one({"id": "c1", "input": "q", "metadata": {"case": case("rubric", evaluationCriteria=["x"])}})
    sample = jsonvalue.loads(text)
    sample["target"] = ["x", "y"]
    row = back(jsonvalue.dumps(sample) + "\n")[0].row
    assert row.case["evaluationCriteria"] == ["x", "y"] and not row.has_expected


def test_foreign_samples_infer_a_profile_and_keep_the_sample_fields():
    lines = [{"id": 7, "input": [{"role": "user", "content": "Pick one"}], "target": "A", "choices": ["x", "y"],
              "metadata": {"topic": "bio"}},
             {"input": "Say hi", "target": ["hi", "hello"]},
             {"input": "Be kind"}]
    text = "".join(jsonvalue.dumps(v) + "\n" for v in lines)
    checked, report = read_text("inspect", text)
    rows = [c.row for c in checked]
    assert [r.id for r in rows] == ["7", "inspect-2", "inspect-3"]
    assert rows[0].input == {"messages": [{"role": "user", "content": "Pick one"}]}
    assert rows[0].case["extensions"]["inspect"] == {"idType": "integer", "choices": ["x", "y"]}
    assert rows[0].metadata["topic"] == "bio" and rows[0].case["provenance"] == "imported"
    assert rows[1].case["oracleType"] == "acceptable-set"
    assert rows[2].case["oracleType"] == "expected-behavior-only"
    out, _ = write_text("inspect", rows[:1], path="x.inspect.jsonl")
    again = jsonvalue.loads(out)
    assert again["id"] == 7 and again["choices"] == ["x", "y"] and again["target"] == "A"


def test_field_spec_maps_other_column_names():
    text = '{"qid": "q1", "question": "Largest organ?", "answer": "Skin", "topic": "bio"}\n'
    report = ReadReport("inspect", "mem")
    spec = FieldSpec.from_mapping({"id": "qid", "input": "question", "target": "answer", "metadata": ["topic"]}, "spec")
    got = list(read_samples(Lines(io.BytesIO(text.encode()), source="mem"), report, spec))
    assert got[0].value["input"] == "Largest organ?" and got[0].value["expected"] == "Skin"
    assert got[0].value["metadata"]["topic"] == "bio" and got[0].value["id"] == "q1"


@pytest.mark.parametrize("line, words", [
    ('{"input": "", "target": "x"}', "no input"),
    ('{"input": "q", "target": "x", "metadata": 3}', "metadata must be an object"),
])
def test_bad_samples_are_parse_findings(line, words):
    assert words in parse_finding("inspect", line + "\n").message


def test_starter_rows_are_marked_where_an_inspect_user_looks_and_read_back_unmarked():
    value = {"id": "c1", "input": "Hi", "expected": "Hello",
             "metadata": {"case": case(provenance="starter-example")}}
    for variant in ("jsonl", "csv"):
        text, _ = one(value, variant)
        assert "starter example, not a validated gold-standard answer" in text
        checked, _ = back(text)
        assert checked.row == Row.from_json(value)


@pytest.mark.parametrize("variant", ["jsonl", "csv"])
@pytest.mark.parametrize("oracle, expected", [
    ("expected-tool-calls", [{"name": "lookup", "arguments": {"id": 1}}, {"name": "refund"}]),
    ("expected-tool-calls", []),
    ("expected-final-state", {"order": "cancelled"}),
    ("expected-behavior-only", None),
    ("reference-answer", ""),
    ("reference-answer", None),
])
def test_a_case_with_no_target_text_gets_a_target_no_answer_matches(variant, oracle, expected):
    value = {"id": "c1", "input": "q", "metadata": {"case": case(oracle)}}
    if expected is not None:
        value["expected"] = expected
    text, _ = one(value, variant)
    checked, report = back(text)
    assert checked.row == Row.from_json(value) and not report.edited.entries
    if variant == "jsonl":
        assert jsonvalue.loads(text)["target"] == []
    else:
        assert NO_TARGET_CSV in text


@pytest.mark.parametrize("variant", ["jsonl", "csv"])
def test_a_target_typed_on_a_tool_call_row_keeps_the_calls_and_is_named_as_edited(variant):
    calls = [{"name": "lookup", "arguments": {"id": 1}}, {"name": "refund"}]
    value = {"id": "c1", "input": "q", "expected": calls, "metadata": {"case": case("expected-tool-calls")}}
    text, _ = one(value, variant)
    marker = NO_TARGET_MARK[variant]
    assert marker in text
    checked, report = back(text.replace(marker, TYPED[variant], 1))
    row = checked.row
    assert row.expected == calls
    assert row.case["extensions"]["inspect"]["target"] == "lookup then refund"
    assert {p for p, _ in report.edited.entries} == {"$.metadata.case.extensions.inspect.target"}
    again, _ = write_text("inspect", [row], path=f"x.inspect.{variant}")
    checked, report = back(again)
    assert checked.row == row and not report.edited.entries  # the typed target goes back in place
    cleared, _ = back(again.replace(TYPED[variant], NO_TARGET_MARK[variant], 1))
    assert cleared.row == Row.from_json(value)


def test_every_inspect_edit_is_named_edited_never_inferred():
    value = {"id": "c1", "input": "q", "expected": "a", "metadata": {"case": case(extensions={"inspect": {"choices": ["a", "b"]}})}}
    sample = jsonvalue.loads(one(value)[0])
    sample.update(input="q2", target="b", choices=["a", "b", "c"])
    sample["metadata"]["topic"] = "billing"
    checked, report = back(jsonvalue.dumps(sample) + "\n")
    assert checked.row.input == "q2" and checked.row.expected == "b" and checked.row.metadata["topic"] == "billing"
    assert {p for p, _ in report.edited.entries} == {"$.input", "$.expected", "$.metadata.topic",
                                                     "$.metadata.case.extensions.inspect.choices"}
    assert not report.inferred.entries


def test_inspect_edits_are_printed_on_stderr_with_row_and_path(tmp_path, capsys):
    """Issue 24: every Inspect edit was listed as inferred (or not at all), so the terminal said nothing."""
    from conftest import run_cli
    rows = [{"id": "ref", "input": "q", "expected": "a", "metadata": {"case": case(caseId="ref")}},
            {"id": "calls", "input": "q", "expected": [{"name": "lookup"}],
             "metadata": {"case": case("expected-tool-calls", caseId="calls")}}]
    text, _ = write_text("inspect", [Row.from_json(r) for r in rows], path="x.inspect.jsonl")
    samples = [jsonvalue.loads(line) for line in text.splitlines()]
    samples[0].update(input="q, edited", target="b")
    samples[1]["target"] = "lookup"
    path = tmp_path / "edited.inspect.jsonl"
    path.write_text("".join(jsonvalue.dumps(s) + "\n" for s in samples), encoding="utf-8")
    code, err = run_cli([str(path), "--from", "inspect", "--to", "jsonl", "-o", str(tmp_path / "out.jsonl")], capsys)
    assert code == 0
    for where in ("row 'ref' $.input", "row 'ref' $.expected", "row 'calls' $.metadata.case.extensions.inspect.target"):
        assert where in err, err
    out = [jsonvalue.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert out[1]["expected"] == [{"name": "lookup"}]

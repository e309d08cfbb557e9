"""Phoenix dataset examples: dicts only (how values are wrapped), labels in output never in
input, edits kept, Phoenix's own exports read (the exact round trips: tests/formats/test_every_format.py)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from conftest import ROOT
from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from evalconv.cli import cli
from evalconv.registry import REGISTRY
from roundtrip_helpers import parse_finding, read_text, write_text

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def case(oracle="reference-answer", **extra):
    return {"caseId": "c1", "oracleType": oracle, "expectedBehavior": "b", "provenance": "expert-authored", **extra}


def row(input="Capital of France?", expected="Paris", oracle="reference-answer", absent=False, **extra):
    value = {"id": "c1", "input": input, "metadata": {"case": case(oracle, **extra)}}
    if not absent:
        value["expected"] = expected
    return Row.from_json(value)


def one(r):
    text, loss = write_text("phoenix", [r], path="x.phoenix.jsonl")
    return jsonvalue.loads(text), loss


def back(example):
    checked, report = read_text("phoenix", jsonvalue.dumps(example) + "\n")
    return checked[0], report


def test_a_text_is_wrapped_in_a_dict_and_a_dict_goes_as_it_is():
    example, loss = one(row())
    assert example["input"] == {"input": "Capital of France?"} and example["output"] == {"expected": "Paris"}
    assert example["metadata"]["evalconv"] == {"input": "wrapped", "output": "wrapped"}
    example, _ = one(row(input={"question": "q", "context": "c"}, expected={"answer": "a"}))
    assert example["input"] == {"question": "q", "context": "c"} and example["output"] == {"answer": "a"}
    assert "evalconv" not in example["metadata"]
    assert {p for p, _ in loss.carried.entries} <= {f"$.metadata.case.{k}" for k in case()}


def test_regression_no_expected_and_an_empty_dict_expected_both_wrote_an_empty_output():
    absent, _ = one(row(oracle="rubric", absent=True))
    empty, _ = one(row(expected={}))
    assert absent["output"] == empty["output"] == {}
    assert back(absent)[0].row.has_expected is False
    assert back(empty)[0].row.expected == {}


def test_labels_are_in_output_never_in_the_input_the_task_gets():
    example, _ = one(row(input={"messages": [{"role": "user", "content": "Hi"}]}, expected="Hello",
                         oracle="reference-answer", evaluationCriteria=["greets"]))
    assert example["input"] == {"messages": [{"role": "user", "content": "Hi"}]}
    assert "Hello" not in jsonvalue.dumps(example["input"]) and "greets" not in jsonvalue.dumps(example["input"])


def test_an_edited_output_and_a_wrapped_input_that_gained_keys_are_kept_and_named():
    example, _ = one(row())
    example["output"] = {"expected": "Paris, France"}
    got, report = back(example)
    assert got.row.expected == "Paris, France"  # the output is the reference's only copy: the edit is the value
    example["input"] = {"input": "Capital of France?", "locale": "fr"}
    got, report = back(example)
    assert got.row.input == {"input": "Capital of France?", "locale": "fr"}
    assert "$.input" in {p for p, _ in report.edited.entries}
    example, _ = one(row(oracle="rubric", absent=True))
    example["output"] = {"expected": "Be kind"}
    got, report = back(example)
    assert got.row.expected == {"expected": "Be kind"} and "$.expected" in {p for p, _ in report.edited.entries}


def test_splits_edited_in_phoenix_are_kept_and_written_back():
    example, _ = one(row(extensions={"phoenix": {"splits": ["test"]}}))
    assert example["splits"] == ["test"]
    example["splits"] = ["train"]
    got, report = back(example)
    assert got.row.case["extensions"]["phoenix"]["splits"] == ["train"]
    assert "$.metadata.case.extensions.phoenix.splits" in {p for p, _ in report.edited.entries}
    assert one(got.row)[0]["splits"] == ["train"]


def test_an_example_evalconv_did_not_write_keeps_its_output_key():
    got, report = back({"id": "q1", "input": {"question": "2+2?"}, "output": {"answer": "4"},
                        "metadata": {"topic": "math"}, "updated_at": "2026-12-01T00:00:00+00:00"})
    assert got.row.input == {"question": "2+2?"} and got.row.expected == "4"
    assert got.row.case["extensions"]["phoenix"]["outputKey"] == "answer"
    assert "$.updated_at" in {p for p, _ in report.ignored.entries}
    assert one(got.row)[0]["output"] == {"answer": "4"}
    got, _ = back({"input": {"q": "x"}, "output": {"label": "a", "score": 1}})
    assert got.row.expected == {"label": "a", "score": 1} and got.row.id == "phoenix-1"


def test_phoenix_csv_export_reads_prefixed_columns_and_python_literals():
    text = ("example_id,input_question,input_history,output_answer,metadata_topic\n"
            "RGF0YXNldEV4YW1wbGU6MQ==,2+2?,\"[{'role': 'user', 'content': 'hi'}]\",4,math\n")
    checked, report = read_text("phoenix", text, path="export.csv")
    got = checked[0].row
    assert got.id == "RGF0YXNldEV4YW1wbGU6MQ==" and got.expected == "4" and got.metadata["topic"] == "math"
    assert got.input == {"question": "2+2?", "history": [{"role": "user", "content": "hi"}]}
    assert REGISTRY.detect("export.csv", text).name == "phoenix"


def test_a_csv_column_phoenix_does_not_write_is_a_finding():
    finding = parse_finding("phoenix", "example_id,input_q,notes\nx,q,n\n", path="export.phoenix.csv")
    assert finding.path == "$.notes"


def test_phoenix_openai_exports_read_as_chats():
    got, report = back({"messages": [{"role": "user", "content": "Reset my password"}], "ideal": "Link sent."})
    assert got.row.input == {"messages": [{"role": "user", "content": "Reset my password"}]}
    assert got.row.expected == "Link sent."
    got, _ = back({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
                   "tools": [{"type": "function", "function": {"name": "f"}}]})
    assert got.row.input["messages"] == [{"role": "user", "content": "Hi"}] and "tools" in got.row.input
    assert got.row.expected == {"messages": [{"role": "assistant", "content": "Hello"}]}


def test_detection_claims_examples_by_their_keys():
    fmt = REGISTRY.get("phoenix")
    assert fmt.detect('{"id": "a", "input": {"q": 1}, "output": {}, "metadata": {}}') == 1.0
    assert fmt.detect('{"input": {"q": 1}, "output": {}, "extra": 1}') == 0.5
    assert fmt.detect('{"id": "a", "input": "q", "expected": "x", "metadata": {}}') == 0.0  # canonical
    assert fmt.detect('{"inputs": {"q": 1}, "outputs": {}}') == 0.0  # LangSmith's
    assert REGISTRY.detect("x.jsonl", '{"input": {"q": 1}, "output": {"a": 2}, "splits": "test"}').name == "phoenix"
    ours = jsonvalue.dumps(one(row(input={"q": 1}, expected={"a": 2}))[0])
    assert REGISTRY.detect("x.jsonl", ours).name == "phoenix"
    # {input, output} alone is also a Braintrust record (an earlier format wins the tie): --from phoenix


def test_phoenix_checks_nothing_and_says_so(tmp_path):
    result = CliRunner().invoke(cli, [str(GOLDEN), "--to", "phoenix", "-o", str(tmp_path / "s.phoenix.jsonl")])
    assert result.exit_code == 0 and "Phoenix checks nothing on a dataset example" in result.stderr
    assert "checks 5 of these cases" in result.stderr and "leaves 5 unscored" in result.stderr


@pytest.mark.parametrize("text, field", [
    ('{"input": "q", "output": {}}\n', "$.input"),
    ('{"input": {"q": 1}, "output": "a"}\n', "$.output"),
    ('{"input": {"q": 1}}\n', "$.output"),
    ('{"input": {"q": 1}, "output": {}, "metadata": []}\n', "$.metadata"),
])
def test_a_bad_example_is_a_finding_naming_its_field(text, field):
    assert parse_finding("phoenix", text).path == field


def test_roundtrip_command_passes():
    result = CliRunner().invoke(cli, ["roundtrip", str(GOLDEN), "--via", "phoenix"])
    assert result.exit_code == 0, result.output + result.stderr


# --- the CSV export layout (issue 29: it was read but not written) -------------------------------

def _csv(rows):
    import csv
    import io

    text, loss = write_text("phoenix", rows, path="x.phoenix.csv")
    return text, list(csv.DictReader(io.StringIO(text, newline=""))), loss


def test_regression_issue29_the_csv_export_was_read_but_not_written():
    import evalconv

    rows = evalconv.read(str(GOLDEN)).rows
    text, records, _ = _csv(rows)
    header = text.split("\r\n", 1)[0].split(",")
    assert header[0] == "example_id" and header[1:] == sorted(header[1:], key=lambda c: (
        ("input_", "output_", "metadata_").index(c.split("_", 1)[0] + "_"), c))
    assert [r["example_id"] for r in records] == [r.id for r in rows]
    checked, report = read_text("phoenix", text, path="x.phoenix.csv")
    assert [c.row for c in checked] == rows
    assert report.inferred.entries == {} and report.edited.entries == {}


def test_csv_cells_are_text_and_what_a_cell_cannot_give_back_is_carried_and_named():
    r = Row.from_json({"id": "c1", "input": {"n": 3, "flag": True, "none": None, "empty": "", "looks": "[1, 2]",
                                             "text": "plain", "nested": {"a": [1, 2.5]}},
                       "expected": "Paris", "metadata": {"case": case(), "score": 0.5, "tags": ["a"]}})
    text, records, loss = _csv([r])
    cells = records[0]
    assert cells["input_n"] == "3" and cells["input_flag"] == "true" and cells["input_none"] == "null"
    assert cells["input_empty"] == '""' and cells["input_looks"] == '"[1, 2]"'
    assert cells["input_text"] == "plain" and cells["input_nested"] == "{'a': [1, 2.5]}"  # as the export writes
    assert cells["metadata_tags"] == "['a']" and cells["metadata_score"] == "0.5"
    carried = {path for path, _ in loss.carried.entries}
    assert {"$.input", "$.metadata.score"} <= carried and "$.metadata.tags" not in carried
    checked, report = read_text("phoenix", text, path="x.phoenix.csv")
    assert checked[0].row == r and report.edited.entries == {}


def test_a_csv_cell_edited_after_export_wins_and_is_named():
    r = Row.from_json({"id": "c1", "input": {"n": 3, "q": "x"}, "expected": "Paris",
                       "metadata": {"case": case()}})
    text, _, _ = _csv([r])
    edited = text.replace("c1,3,x,", "c1,4,x,", 1)
    assert edited != text
    checked, report = read_text("phoenix", edited, path="x.phoenix.csv")
    assert checked[0].row.input == {"n": "4", "q": "x"}  # the cell, as Phoenix would read it: text
    assert ("$.input", "edited in Phoenix: the native value differs from the copy evalconv carried; "
                       "the edit wins") in report.edited.entries


def test_a_nul_in_a_csv_column_name_is_refused_in_one_line_and_jsonl_keeps_it():
    from evalconv.canonical.errors import RowRefused

    r = Row.from_json({"id": "c1", "input": {"a\x00b": "x"}, "expected": "Paris", "metadata": {"case": case()}})
    with pytest.raises(RowRefused, match="NUL") as err:
        _csv([r])
    assert "\n" not in str(err.value)
    write_text("phoenix", [r], path="x.phoenix.jsonl")  # JSON escapes it


def test_regression_issue29_the_csv_writer_parsed_every_nested_cell_back_to_prove_it(monkeypatch):
    """2.7x JSONL -> CSV's CPU at 100k rows: each list or dict cell went through ast.literal_eval
    to prove it reads back; a shallow literal of JSON values always does, so only a deep one is."""
    import evalconv
    import evalconv.vendors.phoenix.csv_export as csv_export

    parsed = []
    real = csv_export.cell_value
    monkeypatch.setattr(csv_export, "cell_value", lambda cell: (parsed.append(cell), real(cell))[1])
    _csv(evalconv.read(str(GOLDEN)).rows)
    assert parsed == []
    deep = Row.from_json({"id": "c1", "input": {"deep": [[[]]] * 30 + [{"a": [1]}] * 40}, "expected": "x",
                          "metadata": {"case": case()}})
    text, _, _ = _csv([deep])
    assert parsed and read_text("phoenix", text, path="x.csv")[0][0].row == deep

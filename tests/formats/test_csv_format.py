"""Canonical CSV: every distinction the spec lists survives; hand-written sheets read the obvious way."""
from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import row
from evalconv.canonical.csv_format import HEADER, csv_line, join_list, split_list
from evalconv.canonical.errors import ReadError
from evalconv.canonical.row import Row
from roundtrip_helpers import read_text, roundtrip, write_text

SPEC_STRINGS = ["a|b", "back\\slash", '"quoted"', "com,ma", "line\nfeed", "crlf\r\nline", "tab\there",
                "  padded  ", "日本語 🙂", "007", "1e5", "true", "null", "NA", "N/A", '{"a":1}', "", "\x00nul"]
SPEC_VALUES = [None, "", [], [""], {"a": 1}, [1, 2], 1, 1.0, True, False, 2**80, -0.5, {"messages": []}]


def one(value: dict) -> Row:
    return Row.from_json(value)


def back(rows: list[Row]) -> list[dict]:
    _, checked = roundtrip("csv", rows)
    assert [c.findings for c in checked if c.row is None] == []
    return [c.row.to_json() for c in checked]


@pytest.mark.parametrize("text", SPEC_STRINGS)
def test_strings_survive_in_every_text_field(text):
    value = row(expected=(text,), scenario=text, unacceptableBehavior=[text, "x"], evaluationCriteria=[text])
    value["input"] = text
    value["metadata"]["note"] = text
    assert back([one(value)]) == [value]


@pytest.mark.parametrize("value", SPEC_VALUES, ids=repr)
def test_typed_values_survive_as_input_expected_and_metadata(value):
    original = row(expected=(value,))
    original["input"] = value
    original["metadata"]["k"] = value
    [got] = back([one(original)])
    assert got == original and type(got["expected"]) is type(value) and type(got["input"]) is type(value)


def test_absent_null_empty_and_empty_lists_stay_distinct():
    variants = [row("absent", expected=()), row("null", expected=(None,)), row("empty", expected=("",)),
                row("list0", expected=([],)), row("list1", expected=([""],))]
    for field in ["unacceptableBehavior", "evaluationCriteria", "linkedConcerns"]:
        variants[3]["metadata"]["case"][field] = []
        variants[4]["metadata"]["case"][field] = [""]
    variants[2]["metadata"]["case"]["scenario"] = ""
    got = back([one(v) for v in variants])
    assert got == variants
    assert "expected" not in got[0] and got[1]["expected"] is None and got[2]["expected"] == ""


def test_metadata_keys_with_dots_and_pipes_and_extensions():
    value = row(extensions={"acme.v1": {"a|b": [1, {"c": None}]}})
    value["metadata"].update({"a.b": 1, "c|d": [""], "case2": {"x": 1.0}})
    assert back([one(value)]) == [value]


def test_an_empty_set_gets_the_required_columns_and_reads_back_empty():
    text, _ = write_text("csv", [])
    assert next(csv.reader(io.StringIO(text))) == ["id", "input", "case.caseId", "case.oracleType",
                                                   "case.expectedBehavior", "case.provenance"]
    assert read_sheet(text) == []


def test_the_documented_column_order_is_every_fixed_column():
    assert HEADER[:6] == ("id", "id:json", "input", "input:json", "expected", "expected:json")
    assert HEADER[-2:] == ("case:json", "metadata:json") and "case.extensions" in HEADER


@pytest.mark.parametrize("items", [["a|b", "c"], ["\\", "|"], ["a\\|b"], ["x"]])
def test_list_escaping_roundtrips(items):
    assert split_list(join_list(items)) == items


def read_sheet(text: str):
    checked, _ = read_text("csv", text)
    return checked


def test_hand_written_sheet_reads_the_obvious_way():
    sheet = ("id,input,case.caseId,case.oracleType,case.expectedBehavior,case.provenance,"
             "case.linkedConcerns,case.evaluator,metadata.reason,expected\r\n"
             "cs-1,What is the window?,cs-1, reference-answer ,Says 60 days.,expert-authored,"
             "refunds | policy,,Regression,60 days\r\n")
    [result] = read_sheet(sheet)
    assert result.findings == []
    assert result.row.to_json() == {
        "id": "cs-1", "input": "What is the window?", "expected": "60 days",
        "metadata": {"case": {"caseId": "cs-1", "oracleType": "reference-answer",
                              "expectedBehavior": "Says 60 days.", "provenance": "expert-authored",
                              "linkedConcerns": ["refunds", "policy"]},
                     "reason": "Regression"}}


def test_text_that_looks_like_json_stays_text():
    sheet = ("id,input,expected,case.caseId,case.oracleType,case.expectedBehavior,case.provenance\n"
             'cs-1,"{""a"":1}",007,cs-1,reference-answer,x,imported\n')
    [result] = read_sheet(sheet)
    assert result.row.input == '{"a":1}' and result.row.expected == "007"


def test_bom_and_crlf_are_not_errors():
    sheet = ("\ufeffid,input,case.caseId,case.oracleType,case.expectedBehavior,case.provenance\r\n"
             "cs-1,hi,cs-1,rubric,x,imported\r\n")
    [result] = read_sheet(sheet)
    assert result.row.id == "cs-1"


@pytest.mark.parametrize("header,message", [
    ("id,input,input,case.caseId", "column 'input' appears twice"),
    ("id,input,case.caseId,case.oracleType,case.expectedBehavior,case.provenance,score", "unknown column 'score'"),
    ("input,case.caseId,case.oracleType,case.expectedBehavior,case.provenance", "required field id"),
    ("id,input,case.caseId", "case.oracleType, case.expectedBehavior, case.provenance"),
])
def test_header_errors(header, message):
    with pytest.raises(ReadError) as err:
        read_sheet(header + "\n")
    assert message in str(err.value) and err.value.line == 1


HEAD = "id,input,input:json,case.caseId,case.oracleType,case.expectedBehavior,case.provenance,case:json,metadata:json\n"


@pytest.mark.parametrize("record,path,message", [
    ("cs-1,hi,,cs-1,rubric,x,imported,,\n".replace(",,\n", ",\n"), "$", "record has 8 cells but the header has 9"),
    ('cs-1,hi,"""x""",cs-1,rubric,x,imported,,\n', "$.input", "both 'input' and 'input:json' are filled"),
    ("cs-1,,{bad,cs-1,rubric,x,imported,,\n", "$.input", "'input:json' is not valid JSON"),
    ("cs-1,,NaN,cs-1,rubric,x,imported,,\n", "$.input", "NaN is not valid JSON"),
    ("cs-1,hi,,cs-1,rubric,x,imported,[1],\n", "$.metadata.case", "'case:json' must hold a JSON object"),
    ('cs-1,hi,,cs-1,rubric,x,imported,"{""oracleType"":""rubric""}",\n', "$.metadata.case.oracleType",
     "set in both 'case.oracleType' and 'case:json'"),
    ('cs-1,hi,,cs-1,rubric,x,imported,,"{""case"":{}}"\n', "$.metadata.case", "must not hold 'case'"),
])
def test_bad_records_are_parse_findings_with_path_and_record(record, path, message):
    [result] = read_sheet(HEAD + record)
    [finding] = result.findings
    assert (finding.code, finding.path, finding.record, finding.line, finding.id) == ("parse", path, 1, 2, "cs-1")
    assert message in finding.message


def test_unbalanced_quote_is_unreadable_with_the_line():
    with pytest.raises(ReadError) as err:
        read_sheet(HEAD + "cs-1,hi,,cs-1,rubric,x,imported,,\n" + 'cs-2,"unclosed,,cs-2,rubric,x,imported,,\n')
    assert err.value.line == 3 and "closing quote" in str(err.value)


def test_record_and_line_numbers_follow_multiline_cells():
    rows = [one(row("a")), one(row("b")), one(row("c"))]
    rows[0].input = "two\nlines"
    rows[1].input = "three\nlines\nhere"
    text, _ = write_text("csv", rows)
    checked, _ = read_text("csv", text)
    assert [(c.source.line, c.source.record) for c in checked] == [(2, 1), (4, 2), (7, 3)]


def test_cells_longer_than_pythons_default_limit():
    big = "x" * (1 << 20)
    value = row(expected=(big,))
    value["input"] = big
    assert back([one(value)]) == [value]


def test_excel_safe_guards_formulas_and_reads_back():
    value = row("=cmd", expected=("+1",), evaluationCriteria=["-x", "@y"])
    value["input"] = "=HYPERLINK(\"x\")"
    value["metadata"]["q"] = "'=already quoted"
    text, checked = roundtrip("csv", [one(value)], excel_safe=True)
    assert checked[0].row.to_json() == value
    assert text.startswith("\ufeff")  # Excel reads UTF-8 with a BOM as UTF-8
    header, record = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    cells = dict(zip(header, record))
    assert cells["id"] == "'=cmd" and cells["input"] == "'=HYPERLINK(\"x\")" and cells["expected"] == "'+1"
    assert cells["metadata.q"] == "''=already quoted"


def test_a_leading_apostrophe_survives_without_excel_safe():
    value = row(expected=("'=x",))
    value["input"] = "''"
    assert back([one(value)]) == [value]


@pytest.mark.parametrize("excel_safe", [False, True])
def test_a_leading_apostrophe_survives_in_a_quoted_cell(excel_safe):
    value = row(expected=("'=x, y",), evaluationCriteria=["'+a,b"])
    value["input"] = "'-\"q\""
    text, checked = roundtrip("csv", [one(value)], excel_safe=excel_safe)
    assert checked[0].row.to_json() == value


@given(st.lists(st.text(alphabet=st.sampled_from('a,"\r\n \t\'=é'), max_size=6), max_size=5))
def test_csv_line_writes_what_the_csv_module_writes(cells):
    expected = io.StringIO(newline="")
    csv.writer(expected, lineterminator="\r\n").writerow(cells)
    assert csv_line(cells) == expected.getvalue()


def test_other_encodings():
    sheet = HEAD.replace(",case:json,metadata:json", "").replace(",input:json", "") + "cs-1,caf\xe9,cs-1,rubric,x,imported\n"
    checked, _ = read_text("csv", sheet, encoding="cp1252")
    assert checked[0].row.input == "café"
    from evalconv.canonical.source import Lines
    lines = Lines(io.BytesIO(sheet.encode("cp1252")), source="s.csv")  # cp1252 bytes read as UTF-8
    with pytest.raises(ReadError) as err:
        list(lines)
    assert err.value.line == 2 and "--encoding" in str(err.value)


def test_an_empty_file_has_no_header_and_is_unreadable():
    with pytest.raises(ReadError) as err:
        read_sheet("")
    assert "the file is empty" in str(err.value)


def test_blank_lines_before_the_header_are_skipped():
    [result] = read_sheet("\n\n" + HEAD + "cs-1,hi,,cs-1,rubric,x,imported,,\n")
    assert result.row is not None and result.source.line == 4


@pytest.mark.parametrize("column", ["metadata.", "metadata.case"])
def test_metadata_columns_must_name_a_users_key(column):
    with pytest.raises(ReadError) as err:
        read_sheet(HEAD.rstrip("\n") + f",{column}\n")
    assert "names no metadata key" in str(err.value)


def test_extensions_in_two_places_is_a_parse_finding_not_a_silent_choice():
    head = HEAD.rstrip("\n") + ",case.extensions\n"
    record = 'cs-1,hi,,cs-1,rubric,x,imported,"{""extensions"":{""a"":{}}}",,"{""b"":{}}"\n'
    [result] = read_sheet(head + record)
    assert [f.code for f in result.findings] == ["parse"] and "both 'case.extensions'" in result.findings[0].message

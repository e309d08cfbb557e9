"""Canonical JSON and JSONL: strict JSON, line numbers, clear errors."""
from __future__ import annotations

import pytest

from conftest import row
from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import ReadError
from evalconv.canonical.row import Row
from roundtrip_helpers import read_text, write_text


def test_json_writer_is_an_indented_array_a_row_at_a_time():
    text, _ = write_text("json", [Row.from_json(row("a")), Row.from_json(row("b"))])
    assert text.startswith("[\n  {\n    \"id\": \"a\"") and text.endswith("\n]\n")
    assert jsonvalue.loads(text) == [row("a"), row("b")]
    assert write_text("json", [])[0] == "[]\n"


def test_json_reader_knows_each_rows_line():
    text, _ = write_text("json", [Row.from_json(row("a")), Row.from_json(row("b"))])
    checked, _ = read_text("json", text)
    starts = [n for n, line in enumerate(text.split("\n"), 1) if line == "  {"]  # each row opens a line
    assert [c.source.line for c in checked] == starts == [2, starts[1]] and starts[1] > 2


def test_jsonl_line_numbers_skip_blank_lines():
    text = jsonvalue.dumps(row("a")) + "\n\n" + jsonvalue.dumps(row("b")) + "\n"
    checked, _ = read_text("jsonl", text)
    assert [(c.number, c.source.line) for c in checked] == [(1, 1), (2, 3)]


@pytest.mark.parametrize("text,line,fragment", [
    ('[{"id": "a"}', 1, "the array is not closed"),
    ('[\n{"id": "a"},\n{"id": ', 3, "invalid JSON in the array"),
    ('{"id": "a"}', 1, "found an object (a row per line is JSONL"),
    ("", None, "the file is empty"),
    ('[{"a": NaN}]', 1, "NaN is not valid JSON"),
    ("[] []", 1, "unexpected text after the closing ']'"),
])
def test_json_unreadable_files(text, line, fragment):
    with pytest.raises(ReadError) as err:
        read_text("json", text)
    assert fragment in str(err.value) and err.value.line == line


@pytest.mark.parametrize("line_text,fragment", [
    ('{"id": "a", ', "line is not valid JSON"),
    ("[1, 2]", "each line must be a JSON object (a row), got an array"),
    ('"row"', "got a string"),
    ('{"x": Infinity}', "Infinity is not valid JSON"),
    ('{"x": 1e400}', "too large"),
])
def test_jsonl_bad_lines_are_parse_findings(line_text, fragment):
    text = jsonvalue.dumps(row("a")) + "\n" + line_text + "\n"
    checked, _ = read_text("jsonl", text)
    assert checked[0].row is not None
    [finding] = checked[1].findings
    assert finding.code == "parse" and finding.line == 2 and fragment in finding.message


def test_big_integers_and_float_ints_survive_jsonl():
    value = row(expected=([2**64, 2**100, -(2**70), 1.0, 1, 0.1],))
    checked, _ = read_text("jsonl", jsonvalue.dumps(value) + "\n")
    got = checked[0].row.expected
    assert got == [2**64, 2**100, -(2**70), 1.0, 1, 0.1] and [type(x) for x in got] == [int, int, int, float, int, float]


@pytest.mark.parametrize("levels", [201, 300, 100_000])  # orjson itself stops at 1024
def test_deep_nesting_is_a_clear_error_not_a_crash(levels):
    deep = "[" * levels + "]" * levels
    checked, _ = read_text("jsonl", '{"id": "a", "input": ' + deep + "}\n")
    assert checked[0].findings[0].code == "parse" and "too deep" in checked[0].findings[0].message


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_writers_refuse_non_finite_numbers_instead_of_writing_null(bad):
    value = row(expected=([1, {"x": bad}],))
    with pytest.raises(jsonvalue.JSONValueError):
        jsonvalue.dumps(value)


@pytest.mark.parametrize("window", [16, 64, 1 << 20])
def test_json_arrays_are_read_through_a_small_window_with_the_same_rows_and_lines(monkeypatch, window):
    """A JSON set is read a row at a time through a sliding window; rows that straddle a refill
    and lines far into the file come out as the whole-text reading gives them."""
    from evalconv.canonical import json_format
    monkeypatch.setattr(json_format, "_REFILL_CHARS", window)
    rows = [Row.from_json(row(f"r{i}", expected=({"long": "x" * (i * 7), "n": [1.0, 2**70]},))) for i in range(40)]
    text, _ = write_text("json", rows)
    checked, _ = read_text("json", text)
    assert [c.row for c in checked] == rows
    starts = [i + 1 for i, line in enumerate(text.split("\n")) if line == "  {"]
    assert [c.source.line for c in checked] == starts
    broken = text[: text.rindex('"id": "r39"')] + '"id": 39 39'
    with pytest.raises(ReadError) as err:
        read_text("json", broken)
    assert err.value.line == starts[-1]
    assert f"at line {starts[-1] + 1} column 14" in str(err.value)

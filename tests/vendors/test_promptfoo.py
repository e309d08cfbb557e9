"""Promptfoo tests: mapping rules, detection, bad input (the exact round trips in every variant:
tests/formats/test_every_format.py)."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import yaml

import evalconv
from evalconv.canonical.errors import ReadError
from evalconv.canonical.row import Row
from evalconv.canonical.source import Lines
from evalconv.registry import REGISTRY
from evalconv.reports import LossReport, ReadReport
from evalconv.vendors.promptfoo.format import FIELD_MAP, FORMAT
from evalconv.vendors.promptfoo.csv_tests import assertion_from_string, split_values
from evalconv.vendors.promptfoo.text import escape, unescape


VARIANTS = ("yaml", "json", "jsonl", "csv")


def make_row(row_id="cs-1", *, input="Where is my order?", expected=("It ships today.",),
             oracle="reference-answer", metadata=None, **case_extra) -> Row:
    case = {"caseId": row_id, "oracleType": oracle, "expectedBehavior": "Says when it ships.",
            "provenance": "expert-authored", **case_extra}
    value = {"id": row_id, "input": input, "metadata": {"case": case, **(metadata or {})}}
    if expected != ():
        value["expected"] = expected[0]
    return Row.from_json(value)


def write(rows, tmp_path, kind="yaml"):
    path = tmp_path / f"out.{kind}"
    report = evalconv.write(rows, str(path), "promptfoo")
    return path, report


def written_tests(rows, tmp_path, kind="yaml"):
    path, report = write(rows, tmp_path, kind)
    text = path.read_text("utf-8")
    if kind == "yaml":
        return yaml.safe_load(text), report
    if kind == "json":
        return json.loads(text), report
    return [json.loads(line) for line in text.splitlines()], report


def read_back(path):
    result = evalconv.read(str(path), from_="promptfoo")
    assert result.log.error_count == 0, [e.to_json() for e in result.log.errors]
    return result


# --- the loss report ------------------------------------------------------------------------

def test_report_paths_and_reasons_come_from_the_field_map(tmp_path):
    rows = [make_row("a", input=None, metadata={"team": "cx"}, scenario="s"),
            make_row("b", expected=([{"name": "t", "arguments": {"x": 1}}],), oracle="expected-tool-calls")]
    for kind in VARIANTS:
        _, report = write(rows, tmp_path, kind)
        declared = {(f.path, f.reason) for f in FIELD_MAP if f.fate == "carried"}
        for entry in report.to_json()["carried"]:
            key = entry["path"] if not entry["path"].startswith("$.metadata.team") else "$.metadata.<key>"
            assert (key, entry["reason"]) in declared, entry


# --- mapping rules ----------------------------------------------------------------------------

def test_only_the_input_goes_into_vars(tmp_path):
    row = make_row(expected=("secret answer",), evaluationCriteria=["c"], unacceptableBehavior=["u"])
    (test,), _ = written_tests([row], tmp_path)
    assert test["vars"] == {"input": "Where is my order?"}
    assert "secret answer" not in json.dumps(test["vars"])


def test_reference_answer_becomes_equals_or_factuality(tmp_path):
    (plain,), report = written_tests([make_row()], tmp_path)
    assert plain["assert"] == [{"type": "equals", "value": "It ships today."}]
    assert report.to_json()["carried"][0]["path"] != "$.expected"
    judged = make_row(evaluator="llm-judge")
    (test,), _ = written_tests([judged], tmp_path)
    assert test["assert"][0] == {"type": "factuality", "value": "It ships today."}


def test_object_reference_is_a_deep_equals(tmp_path):
    (test,), report = written_tests([make_row(expected=({"total": 1.0, "n": 2},))], tmp_path)
    assert test["assert"] == [{"type": "equals", "value": {"total": 1.0, "n": 2}}]
    assert "$.expected" not in {e["path"] for e in report.to_json()["carried"]}


def test_acceptable_set_is_a_javascript_membership_check(tmp_path):
    row = make_row(expected=(["Paris", "paris"],), oracle="acceptable-set")
    (test,), _ = written_tests([row], tmp_path)
    assert test["assert"] == [{"type": "javascript", "value": '["Paris","paris"].includes(output)'}]


def test_tool_calls_without_arguments_are_native_with_arguments_carried(tmp_path):
    names = make_row(expected=([{"name": "lookup_order"}],), oracle="expected-tool-calls")
    args = make_row("b", expected=([{"name": "lookup_order", "arguments": {"id": 1}}],), oracle="expected-tool-calls")
    tests, report = written_tests([names, args], tmp_path)
    sequence = {"type": "trajectory:tool-sequence", "value": {"mode": "exact", "steps": [{"name": "lookup_order"}]}}
    assert tests[0]["assert"] == [{"type": "tool-call-f1", "value": ["lookup_order"]}, sequence]
    assert tests[1]["assert"] == [{"type": "tool-call-f1", "value": ["lookup_order"]}, sequence, {
        "type": "trajectory:tool-args-match", "value": {"name": "lookup_order", "args": {"id": 1}, "mode": "exact"}}]
    assert {e["path"]: e["ids"] for e in report.to_json()["carried"]}["$.expected"] == ["b"]


def test_regression_tool_call_order_and_absence_are_checked_and_need_tracing_said(tmp_path):
    """Issue 14: tool-call-f1 ignores order, and a case expecting no tool calls got an assertion
    that always fails. Now: an exact trajectory:tool-sequence, a not-trajectory:tool-used, and
    the report says they need tracing."""
    calls = [{"name": "refund"}, {"name": "lookup_order"}, {"name": "refund"}]
    ordered = make_row("ordered", expected=(calls,), oracle="expected-tool-calls")
    none = make_row("none", expected=([],), oracle="expected-tool-calls")
    glob = make_row("glob", expected=([{"name": "refund_*"}],), oracle="expected-tool-calls")
    tests, report = written_tests([ordered, none, glob], tmp_path)
    assert tests[0]["assert"][1]["value"]["steps"] == [{"name": "refund"}, {"name": "lookup_order"}, {"name": "refund"}]
    assert tests[1]["assert"] == [{"type": "not-trajectory:tool-used", "value": {"pattern": "*"}}]
    assert "evalconv:" in tests[2]["assert"][0]["value"]  # a name promptfoo would match as a glob
    [traced] = [n for n in report.notes if "need promptfoo tracing" in n]
    assert traced.startswith("2 rows (ordered, none) hold trajectory assertions")
    assert any("needs tracing to check the tool calls of 2 tests (ordered, none)" in n for n in report.notices)


def test_people_grade_so_the_test_cannot_pass(tmp_path):
    (test,), report = written_tests([make_row(evaluator="human-expert", reviewerExpertise="x")], tmp_path)
    assert test["assert"] == [{"type": "javascript", "value": '({pass: false, score: 0, reason: "evalconv: this '
                               'case needs human-expert grading: promptfoo cannot grade it"})'}]
    assert "$.expected" in {e["path"] for e in report.to_json()["carried"]}


def test_llm_judge_criteria_become_rubrics(tmp_path):
    row = make_row(oracle="rubric", expected=(), evaluator="llm-judge",
                   evaluationCriteria=["Names Paris", "No hedging"], unacceptableBehavior=["Names Lyon"])
    (test,), report = written_tests([row], tmp_path)
    assert test["assert"] == [{"type": "llm-rubric", "value": "Names Paris"},
                              {"type": "llm-rubric", "value": "No hedging"},
                              {"type": "not-llm-rubric", "value": "Names Lyon"}]
    carried = {e["path"] for e in report.to_json()["carried"]}
    assert "$.metadata.case.evaluationCriteria" not in carried
    assert "$.metadata.case.oracleType" in carried


def test_object_input_is_spread_into_vars_and_lists_do_not_fan_out(tmp_path):
    tests, _ = written_tests([make_row(input={"question": "q", "context": ["a", "b"]}),
                              make_row("b", input={"input": "x"})], tmp_path)
    assert tests[0]["vars"] == {"question": "q", "context": ["a", "b"]}
    assert tests[0]["options"] == {"disableVarExpansion": True}
    assert tests[1]["vars"] == {"input": {"input": "x"}}


def test_template_text_is_spelled_so_promptfoo_renders_it_back(tmp_path):
    row = make_row(input="Total {{ 7*7 }}\n", expected=("file://answer.txt",))
    (test,), _ = written_tests([row], tmp_path)
    assert test["vars"]["input"] == '{% raw %}Total {% endraw %}{{ "{{" }}{% raw %} 7*7 }}\n{% endraw %}'
    assert test["assert"][0]["value"] == "{% raw %}file://answer.txt{% endraw %}"


@pytest.mark.parametrize("text", ["Hi {{ name }}", "{{ input }}", "x {{ y }}\n", "{% raw %}x{% endraw %}", "{%raw%}",
                                  "Dear {{ policyholder }}"])
def test_regression_template_text_is_native_and_never_substituted(tmp_path, text):
    """Issue 14: `{{ policyholder }}` in a raw wrapper was replaced by the var before Nunjucks ran,
    and text raw could not hold was only carried. The spelling leaves no `{{ name }}` for
    promptfoo's substitution (promptfoo itself: test_promptfoo_exact_input.py)."""
    row = make_row(input={"letter": text, "policyholder": "Dana Ortiz"})
    (test,), report = written_tests([row], tmp_path)
    assert "$.input" not in {e["path"] for e in report.to_json()["carried"]}
    assert "{{ policyholder }}" not in test["vars"]["letter"] and "{{ name }}" not in test["vars"]["letter"]
    path, _ = write([make_row(input=text)], tmp_path)
    assert read_back(path).rows[0].input == text


def test_metadata_promptfoo_would_load_goes_into_the_envelope(tmp_path):
    row = make_row(metadata={"doc": "file://kb/x.md", "ref": {"$ref": "#/a"}})
    (test,), _ = written_tests([row], tmp_path)
    assert set(test["metadata"]) == {"evalconv"}
    assert json.loads(test["metadata"]["evalconv"])["metadata"]["doc"] == "file://kb/x.md"


def test_a_users_evalconv_key_never_meets_the_envelope(tmp_path):
    row = make_row(metadata={"evalconv": "mine", "~evalconv": "also mine"})
    path, _ = write([row], tmp_path)
    (test,) = yaml.safe_load(path.read_text("utf-8"))
    assert test["metadata"]["~evalconv"] == "mine" and test["metadata"]["~~evalconv"] == "also mine"
    assert read_back(path).rows[0] == row


def test_escape_round_trip():
    for text in ("plain", "{{ x }}", "{# c #}", "file://x", "a }} b"):
        assert unescape(escape(text)) == text


# --- importing files evalconv did not write ---------------------------------------------------

def read_text(text: str, kind: str = "yaml"):
    lines = Lines(io.BytesIO(text.encode("utf-8")), source=f"t.{kind}", path=f"t.{kind}")
    report = ReadReport("promptfoo", "t")
    return list(FORMAT.read(lines, report)), report


def test_import_infers_the_oracle_from_the_assertions():
    rows, report = read_text("""
- vars: {input: q1}
  assert: [{type: equals, value: A}]
  metadata: {case_id: r1}
- vars: {input: q2}
  assert: [{type: llm-rubric, value: Be kind}, {type: not-llm-rubric, value: Is rude}]
- vars: {question: q3, context: c}
  assert: [{type: icontains, value: x}]
  description: Third one
""")
    first, second, third = (r.value for r in rows)
    assert first["id"] == "r1" and first["expected"] == "A" and first["input"] == "q1"
    assert first["metadata"]["case"]["oracleType"] == "reference-answer"
    assert first["metadata"]["case"]["provenance"] == "imported"
    assert second["id"] == "row-2"
    assert second["metadata"]["case"]["evaluationCriteria"] == ["Be kind"]
    assert second["metadata"]["case"]["unacceptableBehavior"] == ["Is rude"]
    assert third["id"] == "third-one" and third["input"] == {"question": "q3", "context": "c"}
    assert third["metadata"]["case"]["oracleType"] == "expected-behavior-only"
    assert third["metadata"]["case"]["extensions"]["promptfoo"]["assert"] == [{"type": "icontains", "value": "x"}]
    inferred = {e["path"] for e in report.to_json()["inferred"]}
    assert {"$.id", "$.input", "$.expected", "$.metadata.case.oracleType", "$.metadata.case.provenance"} <= inferred


def test_imported_tests_go_back_to_promptfoo_with_their_own_assertions(tmp_path):
    source = tmp_path / "in.yaml"
    source.write_text("- description: d\n  vars: {input: q}\n  assert: [{type: icontains, value: x}, "
                      "{type: equals, value: A}]\n  threshold: 0.5\n  metadata: {case_id: r1}\n")
    rows = read_back(source).rows
    (test,), _ = written_tests(rows, tmp_path)
    assert test["assert"] == [{"type": "icontains", "value": "x"}, {"type": "equals", "value": "A"}]
    assert test["threshold"] == 0.5 and test["description"] == "d"
    assert json.loads(test["metadata"]["evalconv"]) == {"expectedFrom": 1}


def test_csv_cells_parse_as_promptfoo_parses_them():
    assert assertion_from_string("equals:  a b ") == {"type": "equals", "value": "a b"}
    assert assertion_from_string("llm-rubric: keep spaces") == {"type": "llm-rubric", "value": " keep spaces"}
    assert assertion_from_string("similar(0.9):x") == {"type": "similar", "value": "x", "threshold": 0.9}
    assert assertion_from_string("Paris") == {"type": "equals", "value": "Paris"}
    assert assertion_from_string("contains-any:a,\"b, c\"") == {"type": "contains-any", "value": ["a", "b, c"]}
    assert split_values(' x , "y""z" ,') == ["x", 'y"z']


# --- detection and bad input ------------------------------------------------------------------

@pytest.mark.parametrize("name,text,expected", [
    ("t.yaml", "- vars: {input: x}\n", True),
    ("t.json", '[{"description": "d", "vars": {"input": "x"}}]', True),
    ("t.jsonl", '{"vars": {"input": "x"}, "assert": []}\n', True),
    ("t.csv", "input,__expected1\nx,equals:y\n", True),
    ("t.jsonl", '{"id": "a", "input": "x", "metadata": {"case": {}}}\n', False),
    ("t.json", '[{"input": "x", "expected_output": "y"}]', False),
    ("t.csv", "id,input,case.oracleType\n", False),
    ("t.jsonl", '{"inputs": {"q": 1}, "outputs": {}}\n', False),
])
def test_detect(name, text, expected):
    assert (FORMAT.detect(text) > 0) is expected
    if expected:
        assert REGISTRY.detect(name, text) is FORMAT


def test_canonical_jsonl_is_not_claimed():
    assert REGISTRY.detect("x.jsonl", '{"id":"a","input":"x","metadata":{"case":{}}}\n').name != "promptfoo"


@pytest.mark.parametrize("text,where", [
    ("- vars: [1, 2\n", "t.yaml:"),
    ("just text\n", "t.yaml:1"),
    ("prompts: [x]\n", "t.yaml:1"),
])
def test_unreadable_files_give_one_line_errors(text, where):
    with pytest.raises(ReadError) as info:
        read_text(text)
    assert str(info.value).startswith(where) and "\n" not in str(info.value)


def test_bad_tests_become_row_problems_not_tracebacks():
    rows, _ = read_text("- 7\n- vars: 3\n- metadata: {evalconv: 'not json'}\n- metadata: [1]\n")
    assert [r.value for r in rows] == [None] * 4
    assert [r.problems[0].path for r in rows] == ["$", "$.vars", "$.metadata.evalconv", "$.metadata"]
    assert all(r.line for r in rows)


def test_csv_record_with_extra_cells_is_a_row_problem():
    rows, _ = read_text("input,__expected1\na,b,c\nq,equals:x\n", "csv")
    assert rows[0].problems and rows[0].line == 2
    assert rows[1].value["expected"] == "x"


def test_config_file_reference_needs_a_path():
    lines = Lines(io.BytesIO(b"tests: [file://x.yaml]\nprompts: [p]\n"), source="<stdin>")
    with pytest.raises(ReadError, match="standard input"):
        list(FORMAT.read(lines, ReadReport("promptfoo")))


def test_missing_referenced_file_is_a_read_error(tmp_path):
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: [p]\ntests: [file://missing.yaml]\n")
    with pytest.raises(ReadError, match="missing.yaml"):
        evalconv.read(str(config), from_="promptfoo")


def test_empty_yaml_writes_and_reads_an_empty_list(tmp_path):
    path, report = write([], tmp_path)
    assert path.read_text() == "[]\n" and report.rows == 0
    assert read_back(path).rows == []


def test_loss_report_is_per_row():
    report = LossReport("promptfoo")
    writer = FORMAT.open_writer(io.StringIO(), report, FORMAT.make_options(None))
    writer.write(make_row("a", input=None))
    writer.write(make_row("b"))
    writer.close()
    carried = {e["path"]: e["ids"] for e in report.to_json()["carried"]}
    assert carried["$.id"] == ["a", "b"] and carried["$.input"] == ["a"]


def test_nothing_is_dropped():
    assert all(f.fate in ("native", "carried") for f in FIELD_MAP)


@pytest.mark.parametrize("text,message", [
    ("- vars: {input: !!binary aGVsbG8=}\n", "binary value is not a JSON value"),
    ("- vars: {input: .nan}\n", "not a JSON number"),
    ("- &a [*a]\n", "refers to the node that contains it"),
    ("- vars: {input: \x07}\n", r"U\+0007"),
    ("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(6))
     + "tests: [*g]\n", "alias bomb"),
])
def test_yaml_that_is_not_json_is_refused_with_its_line(text, message):
    with pytest.raises(ReadError, match=message):
        read_text(text)


def test_yaml_dates_stay_text_and_keys_become_strings_as_in_javascript():
    rows, _ = read_text("- vars: {input: 2026-10-14, 1: a, true: b, null: c}\n")
    assert rows[0].value["input"] == {"input": "2026-10-14", "1": "a", "true": "b", "null": "c"}


def test_libyaml_and_pure_python_loaders_read_the_same_values():
    """libyaml is the fast path only where its C-stack composer is safe; both must agree."""
    from evalconv.canonical import safe_yaml as promptfoo_yaml

    from conftest import ROOT
    text = (ROOT / "golden_roundtrips" / "support-agent.promptfoo.yaml").read_text(encoding="utf-8")
    if not promptfoo_yaml._C_LOADER:
        pytest.skip("PyYAML was built without libyaml")
    fast = promptfoo_yaml.load_yaml(text, "t.yaml")[1]
    assert promptfoo_yaml._nesting_within_bounds(text)
    slow = promptfoo_yaml._JSONLoader(text)
    try:
        assert fast == slow.get_single_data()
    finally:
        slow.dispose()
    deep = "a: " + "[" * 300 + "]" * 300 + "\n"
    assert not promptfoo_yaml._nesting_within_bounds(deep)


def test_a_yaml_test_list_is_read_a_test_at_a_time():
    """A top-level test list streams: the first test comes out long before the file is read."""
    from evalconv.canonical.safe_yaml import iter_yaml_list

    consumed = 0

    def lines():
        nonlocal consumed
        for i in range(20_000):
            consumed += 1
            yield f"- vars: {{input: 'q{i}'}}\n"

    items = iter_yaml_list(lines(), "t.yaml")
    line, first = next(items)
    assert (line, first) == (1, {"vars": {"input": "q0"}}) and consumed < 2_000
    assert sum(1 for _ in items) == 19_999


@pytest.mark.parametrize("text,fragment", [
    ("- a: 1\n- b\x07\n", "character U+0007 is not allowed in YAML"),
    ("- a: 1\n---\n- b: 2\n", "holds one YAML document"),
    ("- &x [*x]\n", "alias"),
])
def test_a_streamed_yaml_list_reports_problems_on_one_line(text, fragment):
    from evalconv.canonical.errors import ReadError
    from evalconv.canonical.safe_yaml import iter_yaml_list

    with pytest.raises(ReadError) as err:
        list(iter_yaml_list(iter(text.splitlines(keepends=True)), "t.yaml"))
    assert fragment in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("kind", ["yaml", "jsonl"])
def test_regression_edits_in_the_promptfoo_file_win_over_carried_copies(tmp_path, kind):
    """Issue 14: a value promptfoo holds natively (vars, the assertion holding the reference, the
    llm-rubric criteria) edited after export wins over the copy evalconv carried, and is said."""
    judged = make_row("judged", oracle="rubric", expected=(), evaluator="llm-judge", evaluationCriteria=["A", "B"])
    tools = make_row("tools", oracle="expected-tool-calls", expected=([{"name": "t", "arguments": {"x": 1}}],))
    carried_input = make_row("obj", input={"q": "x", "n": None})
    path, _ = write([judged, tools, carried_input], tmp_path, kind)
    text = Path(path).read_text("utf-8")
    tests = yaml.safe_load(text) if kind == "yaml" else [json.loads(line) for line in text.splitlines()]
    assert read_back(path).report.to_json().get("edited") is None  # nothing edited: nothing said
    tests[0]["assert"][0]["value"] = "A, edited"
    tests[1]["assert"][0]["value"] = ["t", "u"]
    tests[2]["vars"] = {"q": "edited"}
    Path(path).write_text(yaml.safe_dump(tests) if kind == "yaml" else
                          "".join(json.dumps(t) + "\n" for t in tests), "utf-8")
    result = read_back(path)
    rows = {row.id: row for row in result.rows}
    assert rows["judged"].case["evaluationCriteria"] == ["A, edited", "B"]
    assert rows["tools"].expected == [{"name": "t", "arguments": {"x": 1}}, {"name": "u"}]
    assert rows["obj"].input == {"q": "edited"}
    edited = {e["path"]: e["ids"] for e in result.report.to_json()["edited"]}
    # the order check still names the old calls: the edited assertions are the user's, kept as written
    assert edited == {"$.metadata.case.evaluationCriteria": ["judged"], "$.expected": ["tools"], "$.input": ["obj"],
                      "$.metadata.case.extensions.promptfoo.assert": ["tools"]}
    assert rows["tools"].case["extensions"]["promptfoo"]["assert"] == tests[1]["assert"]
    assert "extensions" not in rows["judged"].case  # the criteria edit explains its assertions


def test_the_cli_says_on_stderr_which_rows_need_tracing(tmp_path):
    from click.testing import CliRunner

    from evalconv.cli import cli
    row = make_row("ordered", expected=([{"name": "lookup"}, {"name": "refund"}],), oracle="expected-tool-calls")
    source = tmp_path / "set.jsonl"
    source.write_text(json.dumps(row.to_json()) + "\n", "utf-8")
    result = CliRunner().invoke(cli, [str(source), "--to", "promptfoo", "-o", str(tmp_path / "t.yaml")])
    assert result.exit_code == 0, result.output
    assert "evalconv: note: promptfoo needs tracing to check the tool calls of 1 test (ordered)" in result.stderr


def test_regression_every_edit_a_user_makes_in_promptfoo_is_kept_or_named(tmp_path, capsys):
    """Issue 24 §3: edit every native field a promptfoo user would touch in a file evalconv wrote;
    promptfoo still validates and runs it (echo), and reading it back keeps each edit and names it
    on stderr with the row and the path: no edit is lost behind "lossless", no row becomes unreadable."""
    import os
    import subprocess

    from conftest import run_cli
    from interop import promptfoo_bin
    rows = [make_row("icontains"), make_row("threshold"), make_row("to-contains"), make_row("emptied"),
            make_row("real-check", oracle="expected-behavior-only", expected=(), evaluator="human-expert",
                     reviewerExpertise="support lead"),
            make_row("added", oracle="rubric", expected=(), evaluator="rubric-human", evaluationCriteria=["Kind"]),
            make_row("judged", oracle="rubric", expected=(), evaluator="llm-judge", evaluationCriteria=["A", "B"]),
            make_row("carried", input={"q": "x", "n": None})]
    path, _ = write(rows, tmp_path)
    tests = {t["metadata"]["case"]["caseId"]: t for t in yaml.safe_load(path.read_text("utf-8"))}
    tests["icontains"]["assert"].append({"type": "icontains", "value": "ships"})
    tests["threshold"]["threshold"] = 0.5
    tests["to-contains"]["assert"][0]["type"] = "contains"
    tests["emptied"]["assert"] = []
    tests["real-check"]["assert"] = [{"type": "icontains", "value": "order"}]
    tests["added"]["assert"].append({"type": "icontains", "value": "sorry"})
    tests["judged"]["assert"][0]["value"] = "A, edited"
    tests["carried"]["vars"] = {"q": "edited"}
    path.write_text(yaml.safe_dump(list(tests.values()), allow_unicode=True, sort_keys=False), "utf-8")

    binary = promptfoo_bin()
    if binary:  # the edited file is still a promptfoo file: it validates and runs under echo
        (tmp_path / "c.yaml").write_text(yaml.safe_dump({"prompts": ["{{ input if input is defined else q }}"],
                                                         "providers": ["echo"], "tests": ["file://out.yaml"]}))
        env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
               "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"}
        for args in (["validate", "-c", "c.yaml"], ["eval", "-c", "c.yaml", "--no-cache", "--no-share", "--no-table",
                                                    "--no-progress-bar", "-o", "out.json"]):
            done = subprocess.run([binary, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
            assert args[0] != "validate" or done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        results = json.loads((tmp_path / "out.json").read_text("utf-8"))["results"]["results"]
        assert len(results) == len(rows)

    out = tmp_path / "back.jsonl"
    code, err = run_cli(["convert", str(path), "--to", "jsonl", "-o", str(out)], capsys)
    assert code == 0, err
    back = {r["id"]: Row.from_json(r) for r in map(json.loads, out.read_text("utf-8").splitlines())}
    assert len(back) == len(rows)
    own = {row_id: row.case.get("extensions", {}).get("promptfoo", {}) for row_id, row in back.items()}
    assert own["icontains"]["assert"] == tests["icontains"]["assert"]
    assert own["threshold"] == {"threshold": 0.5}
    assert own["to-contains"]["assert"][0]["type"] == "contains" and back["to-contains"].expected == "It ships today."
    assert not back["emptied"].has_expected and own["emptied"] == {"assert": []}
    assert own["real-check"]["assert"] == [{"type": "icontains", "value": "order"}]
    assert own["added"]["assert"][-1] == {"type": "icontains", "value": "sorry"}
    assert back["judged"].case["evaluationCriteria"] == ["A, edited", "B"] and own["judged"] == {}
    assert back["carried"].input == {"q": "edited"}
    said = {m.groups() for m in re.finditer(r"edited in the file: row '([^']+)' \$(\S+):", err)}
    assert {("icontains", ".metadata.case.extensions.promptfoo.assert"),
            ("threshold", ".metadata.case.extensions.promptfoo.threshold"),
            ("to-contains", ".expected"), ("to-contains", ".metadata.case.extensions.promptfoo.assert"),
            ("emptied", ".expected"), ("emptied", ".metadata.case.extensions.promptfoo.assert"),
            ("real-check", ".metadata.case.extensions.promptfoo.assert"),
            ("added", ".metadata.case.extensions.promptfoo.assert"),
            ("judged", ".metadata.case.evaluationCriteria"), ("carried", ".input")} <= said, err

    again = tmp_path / "again.yaml"
    code, err = run_cli(["convert", str(out), "--to", "promptfoo", "-o", str(again)], capsys)
    assert code == 0, err
    written = {t["metadata"]["case"]["caseId"]: t for t in yaml.safe_load(again.read_text("utf-8"))}
    for row_id in ("icontains", "to-contains", "real-check", "added"):
        assert written[row_id]["assert"] == tests[row_id]["assert"], row_id  # the user's checks, written back
    assert written["threshold"]["threshold"] == 0.5

"""Promptfoo: assertions follow the oracle type and the evaluator; no test can pass without a
check; starter rows say so; `--config` writes a runnable config; YAML depth is bounded."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

import evalconv
from evalconv.canonical.diff import diff_paths, unexplained
from evalconv.canonical.errors import ReadError, UsageError
from evalconv.canonical.row import Row
from evalconv.reports import LossReport
from evalconv.vendors.promptfoo.format import FORMAT, oracle_to_assertion_table
from evalconv.vendors.promptfoo.config import prompt_for
from evalconv.vendors.promptfoo.read import cannot_pass_reason
from evalconv.canonical.safe_yaml import MAX_DEPTH

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ("yaml", "json", "jsonl", "csv")


def row(row_id="r", *, expected=("Paris",), oracle="reference-answer", input="q", **case) -> Row:
    profile = {"caseId": row_id, "oracleType": oracle, "expectedBehavior": "Answers well.",
               "provenance": "expert-authored", **case}
    value = {"id": row_id, "input": input, "metadata": {"case": profile}}
    if expected != ():
        value["expected"] = expected[0]
    return Row.from_json(value)


def round_trip(rows, tmp_path, kind="yaml", **options):
    path = tmp_path / f"out.{kind}"
    report = evalconv.write(rows, str(path), "promptfoo", **options)
    text = path.read_text("utf-8")
    if kind == "csv":
        records = list(csv.DictReader(io.StringIO(text)))
        tests = [{"assert": [r["__expected1"]], "description": r["__description"]} for r in records]
    elif kind == "yaml":
        tests = yaml.safe_load(text)
    elif kind == "json":
        tests = json.loads(text)
    else:
        tests = [json.loads(line) for line in text.splitlines()]
    back = evalconv.read(str(path), from_="promptfoo")
    assert back.log.error_count == 0
    for original, again in zip(rows, back.rows, strict=True):
        assert unexplained(diff_paths(original.to_json(), again.to_json()), report.dropped_paths(original.id)) == ([], [])
    return tests, report


HUMAN_ROWS = [
    row("human", evaluator="human-expert", reviewerExpertise="tax law"),
    row("rubric-human", oracle="rubric", expected=(), evaluator="rubric-human", evaluationCriteria=["c"]),
    row("behavior", oracle="expected-behavior-only", expected=()),
    row("state", oracle="expected-final-state", expected=({"refund": True},)),
    row("null-ref", expected=(None,)),
]


# --- no test promptfoo can pass without a check -----------------------------------------------

@pytest.mark.parametrize("kind", VARIANTS)
def test_rows_no_automated_evaluator_may_grade_get_an_assertion_that_always_fails(tmp_path, kind):
    tests, report = round_trip(HUMAN_ROWS, tmp_path, kind)
    for test in tests:
        (assertion,) = test["assert"]
        if kind == "csv":
            assert assertion.startswith("javascript:({pass: false, score: 0, reason: \"evalconv: ")
        else:
            assert cannot_pass_reason(assertion)
    notes = " ".join(report.notes)
    assert "5 row(s) (human, rubric-human, behavior, state, null-ref)" not in notes  # grouped by reason
    assert "this case needs human-expert grading" in notes and "always fails" in notes
    assert "rubric-human grading" in notes and "expected-final-state" in notes


def test_the_reason_names_the_evaluator(tmp_path):
    tests, _ = round_trip(HUMAN_ROWS[:3], tmp_path)
    reasons = [cannot_pass_reason(t["assert"][0]) for t in tests]
    assert reasons == ["this case needs human-expert grading: promptfoo cannot grade it",
                       "this case needs rubric-human grading: promptfoo cannot grade it",
                       "this case needs human-expert grading: promptfoo cannot grade it"]


def test_every_written_test_has_an_assertion(tmp_path):
    rows = HUMAN_ROWS + [row("a"), row("b", oracle="rubric", expected=())]
    tests, _ = round_trip(rows, tmp_path)
    assert all(t.get("assert") for t in tests)


def test_a_hand_edited_marker_row_imports_as_human_expert(tmp_path):
    source = tmp_path / "t.yaml"
    source.write_text("- vars: {input: q}\n  assert:\n  - type: javascript\n    value: '({pass: false, score: 0, "
                      "reason: \"evalconv: this case needs human-expert grading: promptfoo cannot grade it\"})'\n")
    (imported,) = evalconv.read(str(source), from_="promptfoo").rows
    assert imported.case["oracleType"] == "expected-behavior-only" and imported.case["evaluator"] == "human-expert"


# --- the evaluator decides the assertion ------------------------------------------------------

def test_no_evaluator_picks_the_automated_one_that_needs_no_model(tmp_path):
    rows = [row("ref"), row("set", oracle="acceptable-set", expected=(["Paris", "paris"],)),
            row("rubric", oracle="rubric", expected=(), evaluationCriteria=["Names Paris"])]
    tests, report = round_trip(rows, tmp_path)
    assert tests[0]["assert"] == [{"type": "equals", "value": "Paris"}]
    assert tests[1]["assert"] == [{"type": "javascript", "value": '["Paris","paris"].includes(output)'}]
    assert tests[2]["assert"] == [{"type": "llm-rubric", "value": "Names Paris"}]
    notes = " ".join(report.notes)
    assert "graded as exact-or-programmatic" in notes and "graded as llm-judge" in notes


def test_a_judged_reference_or_set_goes_into_the_judge_prompt(tmp_path):
    rows = [row("ref", expected=({"city": "Paris"},), evaluator="llm-judge"),
            row("set", oracle="acceptable-set", expected=(["Paris", "Paname"],), evaluator="llm-judge")]
    tests, _ = round_trip(rows, tmp_path)
    assert tests[0]["assert"] == [{"type": "factuality", "value": '{"city":"Paris"}'}]
    (rubric,) = tests[1]["assert"]
    assert rubric["type"] == "llm-rubric" and "- Paris\n- Paname" in rubric["value"]


def test_a_rubric_without_criteria_is_judged_on_the_expected_behaviour(tmp_path):
    tests, _ = round_trip([row(oracle="rubric", expected=(), evaluator="llm-judge")], tmp_path)
    assert tests[0]["assert"] == [{"type": "llm-rubric", "value": "Answers well."}]


@pytest.mark.parametrize("expected", [{"a": [1, 2.5]}, [1, "two"], 42, True])
def test_a_reference_that_is_not_text_compares_as_json(tmp_path, expected):
    tests, report = round_trip([row(expected=(expected,))], tmp_path)
    assert tests[0]["assert"] == [{"type": "equals", "value": expected}]
    assert "$.expected" not in {e["path"] for e in report.to_json().get("carried", [])}


def test_csv_joins_model_graded_checks_into_one_rubric(tmp_path):
    judged = row(evaluator="llm-judge", evaluationCriteria=["Names {{ city }}"], unacceptableBehavior=["Hedges"])
    tests, _ = round_trip([judged], tmp_path, "csv")
    cell = tests[0]["assert"][0]
    assert cell.startswith("llm-rubric:{% raw %}The output passes only if all of these hold:\n")
    from evalconv.vendors.promptfoo.text import unescape
    assert "- Agrees with this reference answer: Paris\n- Names {{ city }}\n- Must not: Hedges" in \
        unescape(cell.removeprefix("llm-rubric:"))


def test_csv_cannot_hold_argument_checks_so_the_test_cannot_pass(tmp_path):
    calls = row(oracle="expected-tool-calls", expected=([{"name": "t", "arguments": {"x": 1}}],))
    tests, _ = round_trip([calls], tmp_path, "csv")
    assert "promptfoo CSV cannot hold the checks of this case" in tests[0]["assert"][0]


def test_csv_report_says_what_promptfoo_csv_cannot_hold(tmp_path):
    _, report = round_trip([row()], tmp_path, "csv")
    assert any("no nesting, types" in note and "weights" in note for note in report.notes)


def test_docs_oracle_table_is_rendered_from_the_code():
    page = (ROOT / "docs" / "vendors" / "promptfoo.md").read_text("utf-8")
    assert oracle_to_assertion_table() in page


# --- starter rows -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", VARIANTS)
def test_starter_rows_say_they_are_examples_and_read_back_exactly(tmp_path, kind):
    rows = [row("s1", provenance="starter-example", scenario="refund"),
            row("s2", provenance="overlay-starter-needs-expert-validation"), row("plain")]
    tests, report = round_trip(rows, tmp_path, kind)
    prefix = "[starter example, not a validated answer] "
    assert [t["description"].startswith(prefix) for t in tests] == [True, True, False]
    assert tests[0]["description"] == prefix + "s1: refund"
    assert any("2 rows (s1, s2) are starter rows" in note for note in report.notes)


# --- --config ---------------------------------------------------------------------------------

def test_config_points_at_the_tests_by_a_relative_path(tmp_path):
    (tmp_path / "suite").mkdir()
    config = tmp_path / "promptfooconfig.yaml"
    round_trip([row()], tmp_path / "suite", "json", config=str(config))
    written = yaml.safe_load(config.read_text("utf-8"))
    assert written["tests"] == ["file://suite/out.json"]
    assert written["prompts"] == ["{{input}}"] and written["providers"] == ["echo"]
    assert config.read_text("utf-8").startswith("# promptfoo config written by evalconv")
    assert not list(tmp_path.glob(".*evalconv-tmp"))


def test_config_prompt_shows_each_input_shape_exactly():
    assert prompt_for(["input"], {"text"}) == "{{input}}"
    assert prompt_for(["messages"]) == "{{ messages | dump }}"
    assert prompt_for(["question", "not a name"]) == '{{ {"question": question} | dump }}'
    mixed = prompt_for(["input", "messages", "question"], {"text", "chat", "object"})
    assert mixed.startswith("{% if messages is defined and input is not defined and question is not defined %}"
                            "{{ messages | dump }}{% elif input is defined")
    assert mixed.endswith('{% else %}{{ {"input": input, "messages": messages, "question": question} | dump }}'
                          "{% endif %}")
    assert "\n" not in mixed  # nothing around the input: no label, no trailing newline


def test_config_is_refused_when_the_tests_go_to_standard_output():
    with pytest.raises(UsageError, match="--config needs the tests in a file"):
        FORMAT.open_writer(io.StringIO(), LossReport("promptfoo"), FORMAT.make_options(None, config="c.yaml"))


def test_config_is_refused_when_it_names_the_tests_file(tmp_path):
    path = str(tmp_path / "t.yaml")
    with pytest.raises(UsageError, match="tests file itself"):
        FORMAT.open_writer(io.StringIO(), LossReport("promptfoo"), FORMAT.make_options(path, config=path))


def test_config_from_the_command_line(tmp_path):
    from click.testing import CliRunner
    from evalconv.cli import cli as main
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(row().to_json()) + "\n")
    runner = CliRunner()
    done = runner.invoke(main, ["convert", str(source), "--to", "promptfoo", "--config", str(tmp_path / "c.yaml")])
    assert done.exit_code == 2 and "--config needs the tests in a file" in done.output
    done = runner.invoke(main, ["convert", str(source), "--to", "promptfoo", "-o", str(tmp_path / "t.yaml"),
                                "--config", str(tmp_path / "c.yaml")])
    assert done.exit_code == 0, done.output
    assert yaml.safe_load((tmp_path / "c.yaml").read_text())["tests"] == ["file://t.yaml"]


# --- YAML nesting -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "- vars: {input: " + "[" * 100_000 + "]" * 100_000 + "}\n",
    "- vars:\n    input:\n" + "".join("  " * (i + 3) + "-\n" for i in range(MAX_DEPTH + 50)),
])
def test_deep_yaml_is_a_one_line_error_whatever_the_recursion_limit(tmp_path, text):
    import sys
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(200_000)  # the guard must not depend on Python's own limit
    try:
        with pytest.raises(ReadError, match="nesting is too deep") as info:
            evalconv.read(str(path), from_="promptfoo")
    finally:
        sys.setrecursionlimit(old)
    assert "\n" not in str(info.value) and str(info.value).startswith(f"{path}:")


# --- issue 24: a sheet's acceptable set, a null reference -----------------------------------------

def test_sheet_acceptable_set_written_as_one_cell_says_how_to_mark_it(tmp_path, capsys):
    from conftest import run_cli
    sheet = tmp_path / "set.csv"
    sheet.write_text("id,input,expected,case.caseId,case.oracleType,case.expectedBehavior,case.provenance\n"
                     "r2,I was charged twice,refunds|billing,r2,acceptable-set,Routes it,expert-authored\n", "utf-8")
    code, err = run_cli(["validate", str(sheet)], capsys)
    assert code == 0
    line = next(l for l in err.splitlines() if "expected-shape" in l)
    assert line.startswith(f"{sheet}:2: row 1 (r2) $.expected: warning[expected-shape]")
    assert 'expected "refunds|billing", one text' in line and '["refunds","billing"]' in line
    assert "expected:json column" in line and "never split at |" in line
    code, err = run_cli(["convert", str(sheet), "--to", "promptfoo", "-o", str(tmp_path / "t.yaml")], capsys)
    assert code == 0
    notice = next(l for l in err.splitlines() if "promptfoo will fail" in l)
    assert "no promptfoo assertion can check" in notice and "not a list of acceptable answers" in notice
    assert "person" not in notice
    test = yaml.safe_load((tmp_path / "t.yaml").read_text("utf-8"))[0]
    assert "not a list of acceptable answers" in cannot_pass_reason(test["assert"][0])


@pytest.mark.parametrize("evaluator", ["exact-or-programmatic", "llm-judge", None])
@pytest.mark.parametrize("kind", VARIANTS)
def test_null_reference_always_fails_whatever_the_evaluator(tmp_path, kind, evaluator):
    case = {"evaluator": evaluator} if evaluator else {}
    nulls = [row("null-ref", expected=(None,), evaluationCriteria=["Names Paris"], **case)]
    path = tmp_path / f"out.{kind}"
    report = evalconv.write(nulls, str(path), "promptfoo")
    tests = FORMAT_TESTS[kind](path)
    assert len(tests[0]["assert"]) == 1
    reason = cannot_pass_reason(tests[0]["assert"][0])
    assert reason and "expected is null" in reason
    assert any("expected is null" in n for n in report.notices)
    assert evalconv.read(str(path)).rows == nulls


def _csv_tests(path):
    from evalconv.vendors.promptfoo.csv_tests import test_from_cells
    return [test_from_cells(r) for r in csv.DictReader(io.StringIO(path.read_text("utf-8"), newline=""))]


FORMAT_TESTS = {"yaml": lambda p: yaml.safe_load(p.read_text("utf-8")),
                "json": lambda p: json.loads(p.read_text("utf-8")),
                "jsonl": lambda p: [json.loads(line) for line in p.read_text("utf-8").splitlines()],
                "csv": _csv_tests}

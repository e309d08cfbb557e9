"""What is particular to pydantic-evals: the oracle decides the evaluators, edits made in the file
are kept and named, absent and null expected outputs, dataset-level evaluators, and bad files."""
from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical.row import Row
from evalconv.cli import cli
from evalconv.registry import REGISTRY
from evalconv.vendors._common import yaml_emit
from evalconv.vendors._common.grading import effective_evaluator
from evalconv.vendors.pydantic_evals.evaluators import (JUDGES, normal_form, not_checked_reason, oracle_table, plan,
                                                        spec_name)
from roundtrip_helpers import read_text, write_text
from strategies import any_format_rows

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
ASSERTIONS = {"EqualsExpected", "Equals", "IsInstance", "ToolCorrectness", "ArgumentCorrectness", "LLMJudge"}


def row(row_id="r1", oracle="reference-answer", expected="Paris", **case):
    value = {"id": row_id, "input": "q", "metadata": {"case": {"caseId": row_id, "oracleType": oracle,
                                                               "expectedBehavior": "Answers", "provenance": "expert-authored",
                                                               **case}}}
    if expected is not ...:
        value["expected"] = expected
    return Row.from_json(value)


@settings(max_examples=200, deadline=None)
@given(rows=any_format_rows())
def test_the_oracle_decides_the_evaluators_never_a_judge_on_an_exact_case_never_an_auto_pass(rows):
    for r in rows:
        chosen = plan(r)
        names = [spec_name(s) for s in chosen.specs]
        assert bool(set(names) & JUDGES) == (effective_evaluator(r)[0] == "llm-judge"), (r.case, names)
        assert set(names) & ASSERTIONS, names  # some assertion decides the case: none passes by having no check
        if chosen.blocked:
            assert [not_checked_reason(s) for s in chosen.specs] == [chosen.blocked]


@settings(max_examples=200, deadline=None)
@given(rows=any_format_rows())
def test_issue29_speed_evalconvs_own_evaluators_are_fingerprinted_as_they_are(rows):
    """The writer fingerprints a plan's specs without `normal_form` unless they were kept from a
    file: the specs `plan` makes must already be in normal form (the same fingerprint as before)."""
    from evalconv.vendors._common.records import fingerprint
    from evalconv.vendors.pydantic_evals.write import _specs_and_sum

    for r in rows:
        chosen = plan(r)
        if not chosen.kept:
            assert [normal_form(s) for s in chosen.specs] == chosen.specs  # (fingerprints sort keys)
        # the shared constant lists the writer hands the emitter are the plan's specs, and so are their sums
        specs, specs_sum = _specs_and_sum(chosen)
        assert specs == chosen.specs and specs_sum == fingerprint([normal_form(s) for s in chosen.specs])


def _pyyaml_text(text: str) -> str:
    """What PyYAML writes, with the writer's dumper, for the dataset `text` holds."""
    return yaml.dump(yaml.safe_load(text), Dumper=yaml_emit.DUMPER, allow_unicode=True, sort_keys=False,
                     width=1_000_000)


@settings(max_examples=150, deadline=None)
@given(rows=any_format_rows())
def test_issue29_speed_the_yaml_written_without_pyyaml_is_pyyamls_text(rows):
    """The YAML writer was 4.5x the canonical CSV route (PyYAML per case); the cases now go
    through the shared emitter (`_common/yaml_emit.py`), which must write PyYAML's text exactly."""
    text, _ = write_text("pydantic-evals", rows, path="x.yaml")
    assert text == _pyyaml_text(text)


def test_issue29_speed_the_golden_cases_never_fall_back_to_pyyaml(monkeypatch):
    monkeypatch.setattr(yaml_emit, "dump_item_by_events", lambda *a: pytest.fail("took the events path"))
    text, _ = write_text("pydantic-evals", evalconv.read(str(GOLDEN)).rows, path="x.yaml")
    assert text == _pyyaml_text(text)


def test_the_docs_oracle_table_is_rendered_from_the_code():
    page = (ROOT / "docs" / "vendors" / "pydantic-evals.md").read_text(encoding="utf-8")
    assert oracle_table() in page


def test_what_pydantic_evals_cannot_check_is_said_in_the_loss_report():
    rows = [row("set", "acceptable-set", ["a", "b"]), row("one", "acceptable-set", ["a"]),
            row("state", "expected-final-state", {"x": 1}), row("human", evaluator="human-expert", reviewerExpertise="law")]
    text, loss = write_text("pydantic-evals", rows, path="x.yaml")
    notices = "\n".join(loss.to_json()["notices"])
    assert "any one of several values" in notices and "'set'" in notices and "'one'" not in notices
    assert "inspects a final state" in notices and "'state'" in notices
    assert "a person grades this case (human-expert)" in notices
    assert "- Equals: a\n" in text  # a set of one is an equality


def test_absent_and_null_expected_come_back_apart():
    rows = [row("absent", "rubric", ..., evaluator="rubric-human"), row("null", expected=None)]
    text, _ = write_text("pydantic-evals", rows, path="x.yaml")
    assert "- Equals: null" in text  # EqualsExpected records nothing for a null: Equals checks it
    checked, _ = read_text("pydantic-evals", text, path="x.yaml")
    assert [c.row for c in checked] == rows


def _edited(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_edits_made_in_the_file_are_kept_and_named():
    rows = [row("r1"), row("r2", expected="Lyon")]
    text, _ = write_text("pydantic-evals", rows, path="x.yaml")
    text = _edited(text, "expected_output: Paris", "expected_output: Marseille")
    text = _edited(text, "- name: r2", "- name: r2-renamed")
    text = _edited(text, "  evaluators:\n  - EqualsExpected\n- name: r2",
                   "  evaluators:\n  - EqualsExpected\n  - MaxDuration: 2\n- name: r2")
    checked, report = read_text("pydantic-evals", text, path="x.yaml")
    first, second = (c.row for c in checked)
    assert first.expected == "Marseille" and second.id == "r2-renamed" and second.case["caseId"] == "r2-renamed"
    assert first.case["extensions"]["pydantic-evals"]["evaluators"] == ["EqualsExpected", {"MaxDuration": 2}]
    edited = {e["path"]: e["ids"] for e in report.to_json()["edited"]}
    assert edited == {"$.expected": ["r1"], "$.id": ["r2-renamed"],
                      "$.metadata.case.extensions.pydantic-evals.evaluators": ["r1"]}
    again, loss = write_text("pydantic-evals", [first], path="x.yaml")  # the kept evaluators go back as they are
    assert "  - EqualsExpected\n  - MaxDuration: 2\n" in again
    assert any("written as they are" in n for n in loss.to_json()["notices"])


def test_dataset_level_evaluators_are_read_as_each_cases_own():
    text, _ = write_text("pydantic-evals", [row("r1")], path="x.yaml")
    checked, report = read_text("pydantic-evals", text + "evaluators:\n- MaxDuration: 5\n", path="x.yaml")
    assert checked[0].row.case["extensions"]["pydantic-evals"]["evaluators"] == ["EqualsExpected", {"MaxDuration": 5}]
    assert any("dataset-level" in n for n in report.notes)


@pytest.mark.parametrize("head, sure", [
    ("cases:\n- name: a\n  inputs: q\n", 1.0),
    ("name: support\ncases:\n- name: a\n  inputs: q\n  expected_output: x\nevaluators: []\n", 1.0),
    ('{"name": "support", "cases": [{"name": "a", "inputs": "q"', 1.0),
    ("- vars: {q: 1}\n  assert: []\n", 0.0),
    ("tests:\n- vars: {q: 1}\n", 0.0),
    ('[{"cases": 1}]', 0.0),
])
def test_detection_goes_by_its_own_keys(head, sure):
    assert REGISTRY.get("pydantic-evals").detect(head) == sure


def test_a_yaml_dataset_is_told_from_a_promptfoo_file_by_content(tmp_path):
    path = tmp_path / "evals.yaml"
    evalconv.convert(str(GOLDEN), str(tmp_path / "x.pydantic-evals.yaml"), to="pydantic-evals")
    path.write_text((tmp_path / "x.pydantic-evals.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    assert evalconv.read(str(path)).report.format == "pydantic-evals"


@pytest.mark.parametrize("text, where, says", [
    ("cases:\n- name: a\n  inputs: q\n- name: b\n  input: q\n", ":4:", "`input` is not a pydantic-evals case field"),
    ("cases:\n- name: a\n  inputs: q\n- name: b\n  metadata: x\n", ":4:", "the case has no inputs"),
    ("cases:\n- name: a\n  inputs: q\n  metadata: [1]\n", ":2:", "metadata must be a mapping"),
    ("cases:\n- name: a\n  inputs: q\n  evaluators: EqualsExpected\n", ":2:", "evaluators must be a list"),
])
def test_a_bad_case_is_one_line_naming_file_line_and_field(tmp_path, text, where, says):
    path = tmp_path / "x.pydantic-evals.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    line = next(line for line in result.stderr.splitlines() if says in line)
    assert line.startswith(str(path) + where)


@pytest.mark.parametrize("text, says", [
    ("cases:\n- name: a\n  inputs: [q\n", ":4: invalid YAML"),
    ("name: x\n", "a mapping with `cases:`"),
    ("cases: {a: 1}\n", "`cases` must be a list"),
    ('{"cases": [', "invalid JSON"),
])
def test_a_file_that_is_not_a_dataset_is_one_line_exit_2(tmp_path, text, says):
    path = tmp_path / "x.pydantic-evals.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1 and says in result.stderr and str(path) in result.stderr


def test_an_empty_set_is_a_dataset_pydantic_evals_loads():
    assert write_text("pydantic-evals", [], path="x.yaml")[0] == "cases: []\n"
    assert write_text("pydantic-evals", [], path="x.json")[0] == '{"cases": []}\n'


def test_regression_a_promptfoo_list_starting_with_description_was_read_as_pydantic_evals():
    """promptfoo's detect answered 0 for its own tests list when an item's first key is
    `description` (vars and assert indented below it); with a second `.yaml` reader the tie went
    to pydantic-evals."""
    head = (ROOT / "golden_roundtrips" / "support-agent.promptfoo.yaml").read_text(encoding="utf-8")[:8192]
    assert REGISTRY.get("promptfoo").detect(head) == 1.0 and REGISTRY.get("pydantic-evals").detect(head) == 0.0
    assert REGISTRY.detect("support-agent.promptfoo.yaml", head).name == "promptfoo"


def test_regression_a_promptfoo_yaml_opening_with_a_comment_holding_a_comma_was_read_as_pydantic_evals():
    """A leading `# ..., ...` comment made promptfoo's detect take the line for a CSV header (0), and
    the .yaml tie went to pydantic-evals, whose reader then refused the promptfoo config."""
    from evalconv.registry import REGISTRY

    head = ("# Support suite: shared defaults, vars in files.\n\n# second comment\nprompts:\n  - '{{input}}'\n"
            "providers:\n  - id: echo\ntests:\n  - vars: {input: hi}\n")
    assert REGISTRY.detect("promptfooconfig.yaml", head).name == "promptfoo"
    listing = "# Bare test list, one case.\n- description: refund\n  vars: {input: hi}\n  assert: []\n"
    assert REGISTRY.detect("tests.yaml", listing).name == "promptfoo"


@pytest.mark.parametrize("where", ["input", "expected", "metadata"])
def test_nan_and_infinities_are_refused_with_their_path_and_nothing_noted(where):
    from evalconv.canonical.errors import WriteError
    value = row().to_json()
    bad = {"x": [1, float("nan")]}
    if where == "metadata":
        value["metadata"]["score"] = bad
    else:
        value[where] = bad
    with pytest.raises(WriteError) as err:
        write_text("pydantic-evals", [Row.from_json(value)])
    assert err.value.field == f"$.{where}{'.score' if where == 'metadata' else ''}.x[1]"


def test_a_null_expected_and_null_metadata_are_written_as_null():
    value = row(expected=None).to_json()
    value["metadata"]["note"] = None
    text, _ = write_text("pydantic-evals", [Row.from_json(value)])
    [case] = yaml.safe_load(text)["cases"]
    assert case["expected_output"] is None and case["metadata"]["note"] is None

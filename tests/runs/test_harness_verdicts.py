"""Issue 25 section 1: the verdict is the harness's verdict (promptfoo threshold, weight, assert-set,
manual ratings), thresholds for scores without a pass rule, typing that asks, both headlines."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import ROOT
from evalconv.cli import cli

RUNS = ROOT / "tests" / "fixtures" / "runs"
VERDICTS = RUNS / "promptfoo" / "verdicts"


def cli_report(*args: str) -> tuple[int, dict]:
    out = CliRunner().invoke(cli, ["report", *args, "--format", "json"])
    assert out.exit_code in (0, 1), out.output
    return out.exit_code, json.loads(out.output)


def outcome_of(result: dict, case_id: str) -> str:
    """The case's outcome, read back from the single-case slice evalconv puts it in (its caseId)."""
    got = result["slices"]["id"][case_id]
    return next(k for k in ("passed", "failed", "unscored") if got[k])


def promptfoo_entries(name: str) -> tuple[dict[str, dict], dict]:
    document = json.loads((VERDICTS / name).read_text("utf-8"))
    entries = {e["testCase"]["metadata"]["case"]["caseId"]: e for e in document["results"]["results"]}
    return entries, document["results"]["stats"]


@pytest.mark.parametrize("name", ["results.json", "rated.json"])
def test_promptfoo_threshold_weight_and_assert_set_are_promptfoos_verdict(name):
    entries, stats = promptfoo_entries(name)
    # promptfoo's own decisions, as its code made them (the fixture's reason for being)
    assert entries["v-weighted"]["success"] and entries["v-weighted"]["gradingResult"]["reason"].startswith("Aggregate score 0.75")
    assert [c["pass"] for c in entries["v-weighted"]["gradingResult"]["componentResults"]] == [False, True]
    assert entries["v-assert-set"]["success"]
    assert "Aggregate score 0.50" in entries["v-assert-set"]["gradingResult"]["componentResults"][0]["reason"]
    _, result = cli_report(str(VERDICTS / name), "--cases", str(VERDICTS / "cases.jsonl"), "--by", "id")
    for case_id, entry in entries.items():
        expected = "passed" if entry["success"] else "failed"
        if case_id == "v-only-barred":
            expected = "unscored"  # its only check is barred for expected-behavior-only: excluded
        if case_id == "v-manual" and not entry["success"]:
            expected = "unscored"  # evalconv's placeholder: a person's grading is pending
        assert outcome_of(result, case_id) == expected, case_id
    # counts equal promptfoo's own summary, but for the cases the headline names
    head = result["headline"]
    assert head["harness"][0] | {"text": None} == {
        "harness": "promptfoo", "successes": stats["successes"], "failures": stats["failures"],
        "errors": stats["errors"], "passRate": stats["successes"] / 6, "text": None}
    named = {d["caseId"]: d["why"] for d in head["differences"]}
    assert named == ({"v-only-barred": "excluded"} if name == "rated.json" else
                     {"v-only-barred": "excluded", "v-manual": "unscored"})
    overall = result["overall"]
    assert overall["passed"] == stats["successes"] - 1 and overall["failed"] == stats["failures"] - (name == "results.json")


def test_promptfoo_headline_names_the_difference_in_one_line():
    out = CliRunner().invoke(cli, ["report", str(VERDICTS / "rated.json"), "--cases", str(VERDICTS / "cases.jsonl"),
                                   "--format", "text"])
    assert out.exit_code == 0, out.output
    assert ("headline: promptfoo 83.33% (5/6) vs evalconv 80.0% (4 passed, 1 failed, 1 unscored): "
            "excluded: v-only-barred") in out.output.splitlines()


def test_a_barred_check_inside_promptfoos_passing_verdict_is_named_per_case():
    _, result = cli_report(str(VERDICTS / "rated.json"), "--cases", str(VERDICTS / "cases.jsonl"))
    notes = {n["caseId"]: n["notes"] for n in result["verdicts"]["caseNotes"]}
    assert notes["v-barred-inside"] == [
        "promptfoo passed it with a check rubric bars inside: icontains (exact-or-programmatic); "
        "the admitted checks alone: failed"]


def test_promptfoo_manual_rating_counts_as_human_expert_where_the_oracle_admits_it():
    """The rating the export asked for: rubric-human is barred on expected-behavior-only, human-expert is not."""
    entries, _ = promptfoo_entries("rated.json")
    human = entries["v-manual"]["gradingResult"]["componentResults"][-1]
    assert human["assertion"] == {"type": "human"} and human["reason"].startswith("Manual result (overrides")
    _, result = cli_report(str(VERDICTS / "rated.json"), "--cases", str(VERDICTS / "cases.jsonl"), "--by", "id")
    assert outcome_of(result, "v-manual") == "passed"
    notes = {n["caseId"]: n["notes"] for n in result["verdicts"]["caseNotes"]}
    assert "counted as human-expert" in notes["v-manual"][0]


def test_promptfoo_manual_fail_overrides_passing_checks(tmp_path):
    document = json.loads((VERDICTS / "rated.json").read_text("utf-8"))
    for entry in document["results"]["results"]:
        if entry["testCase"]["metadata"]["case"]["caseId"] == "v-weighted":  # rate it failed, as the UI writes it
            manual = {"pass": False, "score": 0, "reason": "Manual result (overrides all other grading results)",
                      "assertion": {"type": "human"}}
            entry["gradingResult"]["componentResults"].append(manual)
            entry["gradingResult"]["pass"] = False
            entry["success"] = False
    path = tmp_path / "rated.json"
    path.write_text(json.dumps(document), "utf-8")
    _, result = cli_report(str(path), "--cases", str(VERDICTS / "cases.jsonl"), "--by", "id")
    assert outcome_of(result, "v-weighted") == "failed"


BRAINTRUST = RUNS / "braintrust" / "eval_result.json"


def test_braintrust_unknown_scorer_is_a_question_not_a_guess():
    out = CliRunner().invoke(cli, ["report", str(BRAINTRUST), "--cases", str(RUNS / "cases.jsonl"), "--format", "text"])
    assert out.exit_code == 0, out.output
    assert ("warning: braintrust scorer 'length_check': evaluator type unknown (9 verdicts admitted unchecked); "
            "set it with --evaluator 'length_check=TYPE'") in out.output.splitlines()
    _, result = cli_report(str(BRAINTRUST), "--cases", str(RUNS / "cases.jsonl"),
                           "--evaluator", "length_check=exact-or-programmatic")
    typing = {t["scorer"]: (t["type"], t["why"]) for t in result["verdicts"]["typing"]}
    assert typing["length_check"] == ("exact-or-programmatic", "--evaluator flag")
    assert typing["exact_match"] == (None, "default: unknown (not an autoevals class)")
    assert not any("length_check" in w for w in result["verdicts"]["warnings"])


BRAINTRUST_PARTIAL = RUNS / "braintrust" / "partial_scores.json"  # autoevals' Levenshtein and an LLMClassifier "tone"


def test_braintrust_partial_score_passes_at_the_threshold_given():
    path = BRAINTRUST_PARTIAL
    args = [str(path), "--cases", str(RUNS / "cases.jsonl"), "--by", "id", "--evaluator", "tone=llm-judge"]
    _, strict = cli_report(*args)
    assert outcome_of(strict, "r-refund-receipt") == "failed"  # the default: a pass is 1.0
    assert strict["verdicts"]["thresholds"]["braintrust (default)"] == 1.0
    _, lenient = cli_report(*args, "--threshold", "Levenshtein=0.9", "--threshold", "braintrust=0.5")
    assert outcome_of(lenient, "r-refund-receipt") == "passed"
    assert lenient["verdicts"]["thresholds"] == {"Levenshtein": 0.9, "braintrust": 0.5}
    _, tone_strict = cli_report(*args, "--threshold", "Levenshtein=0.9", "--threshold", "tone=0.6")
    assert outcome_of(tone_strict, "r-refund-receipt") == "failed"
    typing = {t["scorer"]: (t["type"], t["why"]) for t in lenient["verdicts"]["typing"]}
    assert typing["Levenshtein"] == ("exact-or-programmatic", "autoevals class")
    assert typing["tone"] == ("llm-judge", "--evaluator flag")
    assert outcome_of(lenient, "r-window-wrong") == "failed"  # "ninety days": Levenshtein 0.73 < 0.9


def test_braintrust_custom_llm_scorer_type_is_a_question_the_report_asks():
    out = CliRunner().invoke(cli, ["report", str(BRAINTRUST_PARTIAL), "--cases", str(RUNS / "cases.jsonl"),
                                   "--format", "json"])
    result = json.loads(out.stdout)
    typing = {t["scorer"]: t["type"] for t in result["verdicts"]["typing"]}
    assert typing == {"Levenshtein": "exact-or-programmatic", "tone": None}
    assert any("'tone'" in w and "--evaluator 'tone=TYPE'" in w for w in result["verdicts"]["warnings"])


def test_threshold_flag_rejects_a_bad_value():
    out = CliRunner().invoke(cli, ["report", str(BRAINTRUST), "--cases", str(RUNS / "cases.jsonl"),
                                   "--threshold", "braintrust=high"])
    assert out.exit_code == 2 and "--threshold 'braintrust=high'" in out.output and "Traceback" not in out.output


def test_langsmith_model_feedback_is_typed_by_its_openevals_key_else_asked():
    """openevals' exact_match and LLM-as-judge and a custom evaluator, all logged by LangSmith as
    `model` feedback (tests/fixtures/runs/make/make_langsmith_openevals.py)."""
    folder = RUNS / "langsmith"
    _, result = cli_report(str(folder / "openevals_runs.jsonl"), str(folder / "openevals_feedback.jsonl"),
                           "--cases", str(RUNS / "cases.jsonl"), "--by", "id")
    typing = {t["scorer"]: (t["type"], t["why"]) for t in result["verdicts"]["typing"]}
    assert typing["correctness"] == ("llm-judge", "openevals LLM-as-judge key")
    assert typing["exact_match"] == ("exact-or-programmatic", "openevals code evaluator key")
    assert typing["in_set"][0] is None
    assert any("'in_set'" in w and "--evaluator" in w for w in result["verdicts"]["warnings"])
    # the judge's failure on an acceptable-set case is a conditional llm-judge verdict, marked as such
    assert outcome_of(result, "r-window-wrong") == "failed" and result["flags"]["conditionalResults"] == 5


def test_inspect_unknown_scorer_warns_and_ragas_threshold_applies(tmp_path):
    _, inspect_result = cli_report(str(RUNS / "inspect" / "log.json"), "--cases", str(RUNS / "cases.jsonl"))
    assert any("inspect scorer 'short_answer'" in w for w in inspect_result["verdicts"]["warnings"])
    lines = (RUNS / "ragas" / "results.csv").read_text("utf-8").splitlines()
    assert lines[1].endswith(",1.0,1.0")  # r-refund-receipt: both metrics 1.0; make them partial
    ragas = tmp_path / "results.csv"
    ragas.write_text("\n".join([lines[0], lines[1][: -len("1.0,1.0")] + "0.7,0.7", *lines[2:]]) + "\n", "utf-8")
    args = [str(ragas), "--cases", str(RUNS / "cases.jsonl"), "--by", "id"]
    _, default = cli_report(*args)
    _, strict = cli_report(*args, "--threshold", "ragas=0.8")
    assert default["verdicts"]["thresholds"] == {"ragas (default)": 0.5}
    assert strict["verdicts"]["thresholds"] == {"ragas": 0.8}
    assert outcome_of(default, "r-refund-receipt") == "passed" and outcome_of(strict, "r-refund-receipt") == "failed"


def test_the_page_prints_both_headlines_the_notes_and_the_typing(tmp_path):
    page = tmp_path / "report.html"
    out = CliRunner().invoke(cli, ["report", str(VERDICTS / "rated.json"), "--cases", str(VERDICTS / "cases.jsonl"),
                                   "--html", str(page), "--format", "json"])
    assert out.exit_code == 0, out.output
    html = page.read_text("utf-8")
    line = json.loads(out.output.split("\nevalconv: wrote", 1)[0])["headline"]["line"]
    assert line.startswith("promptfoo 83.33% (5/6) vs evalconv 80.0%") and f'data-headline="{line}"' in html
    assert "v-barred-inside" in html and "counted as human-expert" in html
    assert "How each scorer was typed (6)" in html and "promptfoo manual rating (a person)" in html

"""Issue 25 sections 2-4: `report` names the failed and unscored cases, a gate cannot pass on cases
nobody graded or on an llm-judge nobody validated, and `stats`, `report` and the validator share one
meaning of slices, blanks and release gates."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import ROOT
from evalconv.canonical import runs, schema
from evalconv.canonical.vocabulary import EVALUATOR_TYPES, STARTER_PROVENANCES
from evalconv.cli import cli

RUNS = ROOT / "tests" / "fixtures" / "runs"
PROMPTFOO = RUNS / "promptfoo" / "results.json"
CASES = RUNS / "cases.jsonl"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def report_json(*args):
    out = run("report", *args, "--format", "json")
    return out.exit_code, json.loads(out.output)


def _row(case_id: str, *, oracle: str = "reference-answer", family: str = "policy", **metadata) -> dict:
    case = {"caseId": case_id, "oracleType": oracle, "expectedBehavior": "x", "provenance": "expert-authored",
            "caseFamily": family, "evaluator": "llm-judge"}
    return {"id": case_id, "input": f"q {case_id}", "expected": "a", "metadata": {"case": case, **metadata}}


def _store(tmp_path, rows: list[dict], verdicts: dict[str, list[tuple[str, str, bool | None]]]):
    """Cases and a run store: per case id, (evaluator name, type, passed) results on one attempt."""
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    folder = tmp_path / "store"
    folder.mkdir()
    attempts, results = [], []
    for case_id, given in verdicts.items():
        attempt = runs.attempt(harness="evalconv", key=(case_id,), case_id=case_id, system="app",
                               output_ref=f"outputs/{case_id}.txt")
        attempts.append(attempt)
        for name, type_, passed in given:
            results.append(runs.result(attempt_id=attempt["id"], name=name, type_=type_, type_source="declared",
                                       score=None, passed=passed, review_status="automated",
                                       reason=f"{name} says {passed} on {case_id}"))
    (folder / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    return folder, tmp_path / "cases.jsonl"


# ---- §4: one meaning for slices and gates

def test_gate_count_agrees_between_stats_report_validator(tmp_path):
    rows = [_row("g-true", gate=True, reason="Regression: a"), _row("g-text", gate="release", reason="  "),
            _row("g-list", gate=["release"], reason="Regression: b"), _row("g-blank", gate="  ", reason="Boundary"),
            _row("g-typo", gate="Release", reason="Boundary")]
    folder, cases = _store(tmp_path, rows, {r["id"]: [("exact", "exact-or-programmatic", True)] for r in rows})
    stats = json.loads(run("stats", cases, "--format", "json").output)
    code, report = report_json(folder, "--cases", cases, "--by", "metadata.gate", "--by", "metadata.reason",
                               "--fail-under", "overall:1.0")
    gaps = {g["code"]: g for g in stats["gaps"]}
    # release-gating: true, "release", ["release"]; "  " is no value, "Release" is not the word
    assert gaps["gate-not-deterministic"]["count"] == 3
    gate = report["gates"][0]
    assert code == 0 and gate["passed"] + gate["failed"] + gate["unscored"] == 3
    for name in ("metadata.gate", "metadata.reason"):
        counted = {value: bucket["passed"] for value, bucket in report["slices"][name].items()}
        assert counted == {k: v for k, v in stats["slices"][name].items() if v}, name
    assert report["slices"]["metadata.reason"]["(none)"]["passed"] == gaps["no-reason"]["count"] == 1
    validated = json.loads(run("validate", cases, "--require", "metadata.reason", "--require", "metadata.gate",
                               "--format", "json").output)["files"][0]
    missing = sorted(e["id"] for e in validated["errors"] if e["code"] == "missing-required-field")
    assert missing == ["g-blank", "g-text"]  # the blank gate and the blank reason: the (none) slices above
    off = [(w["id"], w["message"]) for w in validated["warnings"] if w["code"] == "off-vocabulary"]
    assert off == [("g-typo", "gate 'Release' is not one of release, trend: did you mean 'release'?")]


def test_vocabulary_is_the_schemas():
    assert EVALUATOR_TYPES == schema.enum("evaluator")
    assert set(STARTER_PROVENANCES) <= set(schema.enum("provenance"))


# ---- issue 26 item 9: reason values outside the documented vocabulary

def test_severity_outside_the_vocabulary_is_a_warning_naming_the_nearest(tmp_path):
    rows = [_row("s-1", severity="Harmful"), _row("s-2", severity="high"), _row("s-3", severity="harmful"),
            _row("s-4", origin="prod")]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = run("validate", path, "--format", "json")
    assert out.exit_code == 0  # a warning, not an error: other values are allowed
    warnings = {w["id"]: w for w in json.loads(out.output)["files"][0]["warnings"] if w["code"] == "off-vocabulary"}
    assert sorted(warnings) == ["s-1", "s-2", "s-4"]
    assert warnings["s-1"]["message"] == ("severity 'Harmful' is not one of cosmetic, wrong-answer, harmful: "
                                          "did you mean 'harmful'?")
    assert warnings["s-1"]["path"] == "$.metadata.severity"
    assert "did you mean 'harmful'?" in warnings["s-2"]["message"]
    assert "did you mean 'production'?" in warnings["s-4"]["message"]
    text = run("validate", path)
    assert "warning[off-vocabulary]" in text.output + text.stderr


# ---- §2: failures by name

def _promptfoo_failures() -> dict[str, str]:
    """Per case id, promptfoo's own message of the first failing component (from the raw file);
    evalconv's always-failing "cannot grade here" placeholder leaves a case unscored, not failed."""
    entries = json.loads(PROMPTFOO.read_text("utf-8"))["results"]["results"]
    out = {}
    for entry in entries:
        case = ((entry["testCase"].get("metadata") or {}).get("case") or {}).get("caseId")
        failing = [c for c in (entry.get("gradingResult") or {}).get("componentResults") or [] if not c["pass"]
                   and "evalconv: " not in str(c["assertion"].get("value", ""))]
        if case and failing and not entry["success"] and entry["failureReason"] == 1:
            out[case] = failing[0]["reason"]
    return out


def test_report_lists_failed_cases_by_name_with_promptfoos_message():
    code, result = report_json(PROMPTFOO, "--cases", CASES)
    rows = {r["id"]: r for r in map(json.loads, CASES.read_text("utf-8").splitlines())}
    harmful = result["failures"]["metadata.severity"]["harmful"]
    assert [c["id"] for c in harmful["failed"]] == ["r-refund-no-receipt"]
    named = harmful["failed"][0]
    assert named["reason"] == rows["r-refund-no-receipt"]["metadata"]["reason"] and named["severity"] == "harmful"
    assert named["message"] == _promptfoo_failures()["r-refund-no-receipt"]
    assert named["outputRef"] == f"{PROMPTFOO} entry 1"  # the harness's own file and entry
    listed = {c["id"] for values in result["failures"]["case.oracleType"].values() for c in values["failed"]}
    assert listed == {c for c in _promptfoo_failures() if c in rows}
    unscored = {c["id"]: c for c in harmful["unscored"]}
    assert set(unscored) == {"r-order-status-tool", "r-injury-escalation"}
    assert "No trace data" in unscored["r-order-status-tool"]["message"]
    assert list(result["failures"]["metadata.severity"]) == ["harmful", "wrong-answer", "cosmetic"]  # worst first


def test_failures_per_slice_are_capped_and_the_rest_counted(tmp_path):
    rows = [_row(f"f-{i}", severity="harmful") for i in range(5)]
    folder, cases = _store(tmp_path, rows, {r["id"]: [("exact", "exact-or-programmatic", False)] for r in rows})
    listing = report_json(folder, "--cases", cases, "--show-cases", "2")[1]["failures"]["metadata.severity"]["harmful"]
    assert [c["id"] for c in listing["failed"]] == ["f-0", "f-1"] and listing["failedNotShown"] == 3
    assert listing["failed"][0]["outputRef"] == "outputs/f-0.txt"
    assert listing["failed"][0]["message"] == "exact says False on f-0" and listing["failed"][0]["evaluator"] == "exact"
    text = run("report", folder, "--cases", cases, "--by", "metadata.severity").output
    assert text.count("harmful: failed f-") == 3 and "... and 2 more failed (--show-cases 0 lists them all)" in text
    every = run("report", folder, "--cases", cases, "--by", "metadata.severity", "--show-cases", "0").output
    assert every.count("harmful: failed f-") == 5 and "more failed" not in every


def test_grep_finds_a_failing_case_in_the_report_page(tmp_path):
    page = tmp_path / "report.html"
    assert run("report", PROMPTFOO, "--cases", CASES, "--html", page).exit_code == 0
    found = subprocess.run(["grep", "-c", '<span class="id">r-refund-no-receipt</span>', str(page)],
                           capture_output=True, text=True)
    assert found.returncode == 0


# ---- §3: gates that cannot pass on ungraded cases or an unvalidated judge

def test_gate_fails_on_unscored_cases_and_names_them(tmp_path):
    rows = [_row(f"h-{i}", oracle="reference-answer", severity="harmful", gate="release") for i in range(4)]
    verdicts = {"h-0": [("exact", "exact-or-programmatic", True)], "h-1": [("exact", "exact-or-programmatic", None)],
                "h-2": [("exact", "exact-or-programmatic", None)]}  # h-3 was never run
    folder, cases = _store(tmp_path, rows, verdicts)
    gate_args = (folder, "--cases", cases, "--fail-under", "metadata.severity=harmful:1.0")
    code, result = report_json(*gate_args)
    gate = result["gates"][0]
    assert code == 1 and (gate["passed"], gate["unscored"], gate["ok"]) == (1, 3, False)
    assert gate["unscoredCases"] == ["h-1", "h-2", "h-3"] and "h-1, h-2, h-3" in gate["why"]
    text = run("report", *gate_args)
    assert text.exit_code == 1 and "FAILED: 3 cases nobody graded: h-1, h-2, h-3" in text.output
    assert report_json(*gate_args, "--allow-unscored")[0] == 0
    assert report_json(*gate_args, "--min-graded", "0.25")[0] == 0
    code, result = report_json(*gate_args, "--min-graded", "0.5")
    assert code == 1 and "graded 25% < --min-graded 0.5" in result["gates"][0]["why"]


def _judged(tmp_path, humans: list[bool]):
    """Four release cases passed by an llm-judge alone; people also graded the first ones."""
    rows = [_row(f"j-{i}", gate="release") for i in range(4)] + \
           [_row(f"k-{i}", gate="trend") for i in range(len(humans))]
    verdicts = {f"j-{i}": [("judge", "llm-judge", True)] for i in range(4)}
    for i, by_human in enumerate(humans):  # agreement evidence on the same case family, off the gate
        verdicts[f"k-{i}"] = [("judge", "llm-judge", True), ("reviewer", "rubric-human", by_human)]
    return _store(tmp_path, rows, verdicts)


def test_gate_refuses_passes_of_an_unvalidated_judge(tmp_path):
    folder, cases = _judged(tmp_path, [])
    args = (folder, "--cases", cases, "--fail-under", "overall:1.0")
    code, result = report_json(*args)
    gate = result["gates"][0]
    assert code == 1 and gate["passed"] == 4 and gate["gatePassRate"] == 0.0
    assert gate["judgeOnlyCases"] == ["j-0", "j-1", "j-2", "j-3"]
    assert gate["unvalidatedJudge"][0]["family"] == "policy"
    assert "unvalidated" in gate["why"] and "no judge-agreement evidence" in gate["why"] and "--trust-judge" in gate["why"]
    assert result["slices"]["case.oracleType"]["reference-answer"]["conditional"] == 4  # marked in the report
    assert result["flags"]["conditionalResults"] == 4 and result["flags"]["judgeOnlyCases"] == 4
    assert report_json(*args, "--trust-judge")[0] == 0
    text = run("report", *args).output
    assert "reference-answer" in text and "(4 passed on a judge alone)" in text
    assert "conditional: 4 results from an llm-judge" in text


def test_a_failure_given_by_a_conditionally_admitted_judge_is_marked(tmp_path):
    rows = [_row("c-judge", severity="harmful"), _row("c-exact", severity="harmful")]
    folder, cases = _store(tmp_path, rows, {"c-judge": [("judge", "llm-judge", False)],
                                            "c-exact": [("exact", "exact-or-programmatic", False)]})
    failed = report_json(folder, "--cases", cases)[1]["failures"]["metadata.severity"]["harmful"]["failed"]
    assert {c["id"]: c["conditional"] for c in failed} == {"c-judge": True, "c-exact": False}
    page = tmp_path / "report.html"
    assert run("report", folder, "--cases", cases, "--html", page).exit_code == 0
    assert "llm-judge, admitted once validated" in page.read_text("utf-8")


def test_gate_accepts_a_judge_that_agrees_with_people(tmp_path):
    folder, cases = _judged(tmp_path, [True, True, True, False])  # 3 of 4 agree: 75%
    args = (folder, "--cases", cases, "--fail-under", "overall:1.0")
    code, result = report_json(*args)
    assert code == 1 and "agreement 75% < --min-agreement 0.8" in result["gates"][0]["why"]
    assert report_json(*args, "--min-agreement", "0.75")[0] == 0


def test_report_hint_and_new_flags_are_in_the_help():
    out = subprocess.run([sys.executable, "-m", "evalconv", "report", "--help"], capture_output=True, text=True)
    for flag in ("--allow-unscored", "--min-graded", "--min-agreement", "--trust-judge", "--show-cases"):
        assert flag in out.stdout


@pytest.mark.parametrize("flag, value", [("--min-graded", "1.5"), ("--min-agreement", "-1"), ("--show-cases", "-2")])
def test_bad_gate_options_are_usage_errors(flag, value):
    out = run("report", PROMPTFOO, "--cases", CASES, flag, value)
    assert out.exit_code == 2 and "Traceback" not in out.output

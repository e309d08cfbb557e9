"""`evalconv report` against each harness's own output: the counts equal the harness's, slice by
slice, computed here straight from the raw files; the mixing-problem exclusions are listed by hand."""
from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner
from conftest import ROOT
from evalconv.cli import cli
from evalconv.runs.report import DEFAULT_BY, report

RUNS = ROOT / "tests" / "fixtures" / "runs"
CASES = RUNS / "cases.jsonl"
CASE_ROWS = {r["id"]: r for r in map(json.loads, CASES.read_text("utf-8").splitlines())}
PLACEHOLDER = "evalconv: "  # the always-failing assertion evalconv writes when promptfoo cannot grade


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def expected_slices(outcomes: dict[str, str], by=DEFAULT_BY) -> dict:
    """Slice counts from per-case outcomes; a case no attempt reached is unscored."""
    out: dict = {}
    for case_id, row in CASE_ROWS.items():
        outcome = outcomes.get(case_id, "unscored")
        for field in by:
            parts = field.replace("case.", "metadata.case.", 1).split(".")
            value = row
            for p in parts:
                value = value.get(p) if isinstance(value, dict) else None
            counts = out.setdefault(field, {}).setdefault(value if value is not None else "(none)", Counter())
            counts[outcome] += 1
    return out


def assert_slices_match(result: dict, outcomes: dict[str, str]) -> None:
    total = Counter(outcomes.get(c, "unscored") for c in CASE_ROWS)
    got = result["overall"]
    assert (got["passed"], got["failed"], got["unscored"]) == (total["passed"], total["failed"], total["unscored"])
    for field, values in expected_slices(outcomes).items():
        assert set(result["slices"][field]) == set(values), field
        for value, counts in values.items():
            bucket = result["slices"][field][value]
            assert (bucket["passed"], bucket["failed"], bucket["unscored"]) == \
                (counts["passed"], counts["failed"], counts["unscored"]), (field, value)
            scored = counts["passed"] + counts["failed"]
            assert bucket["passRate"] == (counts["passed"] / scored if scored else None)


# ---- promptfoo: success -> passed; failureReason 1 -> failed, except a test whose only failing
# assertion is evalconv's "cannot grade here" placeholder (grading pending: unscored);
# failureReason 2 (the grader could not run) -> unscored.

def promptfoo_outcomes(entries: list[dict]) -> tuple[dict[str, str], int]:
    outcomes, orphans = {}, 0
    for entry in entries:
        case = ((entry["testCase"].get("metadata") or {}).get("case") or {}).get("caseId")
        if case is None:
            orphans += 1
            continue
        components = (entry.get("gradingResult") or {}).get("componentResults") or []
        failing = [c for c in components if not c["pass"]]
        if entry["success"]:
            outcomes[case] = "passed"
        elif entry["failureReason"] == 2 or all(str(c["assertion"].get("value", "")).find(PLACEHOLDER) >= 0
                                                for c in failing):
            outcomes[case] = "unscored"
        else:
            outcomes[case] = "failed"
    return outcomes, orphans


@pytest.mark.parametrize("name", ["results.json", "rerun.jsonl"])
def test_promptfoo_counts_equal_promptfoos_own(name):
    path = RUNS / "promptfoo" / name
    if name.endswith(".json"):
        document = json.loads(path.read_text("utf-8"))
        entries, stats = document["results"]["results"], document["results"]["stats"]
    else:
        entries = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        stats = {"successes": sum(e["success"] for e in entries),
                 "failures": sum(e["failureReason"] == 1 for e in entries),
                 "errors": sum(e["failureReason"] == 2 for e in entries)}
    outcomes, orphans = promptfoo_outcomes(entries)
    result = report([str(path)], [str(CASES)])
    assert_slices_match(result, outcomes)
    # promptfoo's own totals: its successes are ours plus the orphan (a hand-added test, in the
    # ledger); its failures are ours plus the two placeholders; its errors are unscored (the grader
    # error, and the tool-call order check that needs a trace the echo provider does not emit).
    assert stats["successes"] == result["overall"]["passed"] + orphans == 4
    assert stats["failures"] == result["overall"]["failed"] + 2 == 4
    assert stats["errors"] == 2
    assert result["attempts"] == len(entries) == 10
    # component pairs + the grader error of r-apology-tone + the trace error, and promptfoo's own verdict per test
    assert result["results"] == 18 + 10
    assert result["ledgerCounts"] == {"attempt-without-case": 1}
    # the defaultTest javascript check on the expected-behavior-only case is barred: excluded
    assert result["flags"]["excludedResults"] == 1
    assert result["slices"]["case.oracleType"]["expected-behavior-only"]["excluded"] == 1
    assert result["flags"]["notRun"] == 1 and result["flags"]["starterCases"] == 1


# ---- DeepEval: a test case's own success, except where every metric on it is barred.

def test_deepeval_test_runs_counts_equal_deepevals_own():
    files = sorted((RUNS / "deepeval").glob("test_run_*.json"))
    outcomes, passed, failed = {}, 0, 0
    for f in files:
        document = json.loads(f.read_text("utf-8"))
        passed, failed = passed + document["testPassed"], failed + document["testFailed"]
        for test in document["testCases"]:
            outcomes[test["name"]] = "passed" if test["success"] else "failed"
    # hand-computed mixing: the rubric case was graded only by "Length Check", a code metric,
    # which a rubric bars; DeepEval counts it passed, evalconv excludes it (unscored).
    assert outcomes["r-apology-tone"] == "passed"
    outcomes["r-apology-tone"] = "unscored"
    result = report([str(f) for f in files], [str(CASES)])
    assert_slices_match(result, outcomes)
    assert passed == result["overall"]["passed"] + 1 and failed == result["overall"]["failed"]
    assert result["flags"]["excludedResults"] == 1 and result["ledger"] == []


def test_deepeval_evaluate_results_read_the_same_as_its_test_runs():
    runs_ = report([str(f) for f in sorted((RUNS / "deepeval").glob("test_run_*.json"))], [str(CASES)])
    returned = report([str(RUNS / "deepeval" / "evaluate_results.json")], [str(CASES)])
    for key in ("overall", "slices", "flags", "attempts", "results"):
        assert runs_[key] == returned[key]


# ---- Braintrust: a row passes when every score it got is 1 (None: not scored); rows whose only
# score is the barred length_check (rubric, expected-behavior-only) are unscored. The fixture's
# scorers are code functions, not autoevals classes: the user types them (the report asks).
BRAINTRUST_TYPES = {name: "exact-or-programmatic" for name in ("exact_match", "length_check", "set_membership", "tool_names")}

def test_braintrust_counts_equal_braintrusts_own():
    document = json.loads((RUNS / "braintrust" / "eval_result.json").read_text("utf-8"))
    outcomes = {}
    for row in document["results"]:
        scores = {k: v for k, v in row["scores"].items() if v is not None}
        case = row["metadata"]["case"]
        if case["oracleType"] in ("rubric", "expected-behavior-only"):
            assert list(scores) == ["length_check"]
            outcomes[case["caseId"]] = "unscored"
            continue
        outcomes[case["caseId"]] = "passed" if all(v == 1 for v in scores.values()) else "failed"
    result = report([str(RUNS / "braintrust" / "eval_result.json")], [str(CASES)], evaluators=BRAINTRUST_TYPES)
    assert_slices_match(result, outcomes)
    assert result["results"] == sum(v is not None for r in document["results"] for v in r["scores"].values()) == 15
    assert result["flags"]["excludedResults"] == 2
    # Braintrust's own per-scorer summary is the mean of the results evalconv read, scorer by scorer
    from evalconv.vendors.braintrust.results import READER

    by_name: dict[str, list] = {}
    for kind, record in READER.read(str(RUNS / "braintrust" / "eval_result.json")):
        if kind == "result":
            by_name.setdefault(record["evaluator"]["name"], []).append(record["score"])
    summary = document["summary"]["comparison"]["scores"]
    assert set(summary) == set(by_name)
    for name, scores in by_name.items():
        assert summary[name]["score"] == pytest.approx(sum(scores) / len(scores))


EXPORT = RUNS / "braintrust" / "experiment_export.jsonl"


def test_braintrust_experiment_export_counts_equal_braintrusts_own():
    """An experiment as an export dumps it: one row per span; each scorer's scores are on its own
    score span, linked to the row's root span by root_span_id."""
    spans = [json.loads(line) for line in EXPORT.read_text("utf-8").splitlines()]
    roots = {s["root_span_id"]: s for s in spans if s["is_root"]}
    assert len(roots) == 9 and all("scores" not in r for r in roots.values())  # Eval puts no scores on the root
    scores: dict[str, dict] = {trace: {} for trace in roots}
    for span in spans:
        for name, value in (span.get("scores") or {}).items():
            if value is not None:
                scores[span["root_span_id"]][name] = value
    outcomes = {}
    for trace, got in scores.items():
        case = roots[trace]["metadata"]["case"]
        if case["oracleType"] in ("rubric", "expected-behavior-only"):
            assert list(got) == ["length_check"]
            outcomes[case["caseId"]] = "unscored"
        else:
            outcomes[case["caseId"]] = "passed" if all(v == 1 for v in got.values()) else "failed"
    result = report([str(EXPORT)], [str(CASES)], evaluators=BRAINTRUST_TYPES)
    assert_slices_match(result, outcomes)
    assert (result["attempts"], result["results"]) == (9, sum(len(g) for g in scores.values())) == (9, 15)
    assert result["flags"]["excludedResults"] == 2 and result["ledgerCounts"] == {}
    # the same Eval as Eval returned it reads to the same report
    returned = report([str(RUNS / "braintrust" / "eval_result.json")], [str(CASES)], evaluators=BRAINTRUST_TYPES)
    for key in ("overall", "slices", "flags", "attempts", "results"):
        assert result[key] == returned[key]


@pytest.mark.parametrize("shape", ["reversed JSONL", "JSON array"])
def test_braintrust_export_spans_may_come_in_any_order(tmp_path, shape):
    """The server does not promise root spans before their score spans."""
    lines = EXPORT.read_text("utf-8").splitlines()[::-1]
    path = tmp_path / ("export.jsonl" if shape == "reversed JSONL" else "export.json")
    path.write_text("\n".join(lines) + "\n" if shape == "reversed JSONL" else
                    json.dumps([json.loads(line) for line in lines], indent=2))
    out = CliRunner().invoke(cli, ["report", str(path), "--cases", str(CASES), "--format", "json"])
    assert out.exit_code == 0, out.output
    got, stored = json.loads(out.output), report([str(EXPORT)], [str(CASES)])
    for key in ("overall", "slices", "flags", "attempts", "results", "ledgerCounts"):
        assert got[key] == stored[key]


def test_braintrust_export_a_root_span_with_scores_and_a_broken_line(tmp_path):
    """`experiment.log(input=..., scores=...)` puts scores on the root span itself; a line that is
    not JSON goes to the ledger with its line number."""
    root = {"id": "r1", "span_id": "s1", "root_span_id": "t1", "span_parents": None, "experiment_id": "e1",
            "input": "q", "output": "Full refund within 60 days with a receipt.",
            "metadata": {"case": {"caseId": "r-refund-receipt"}}, "scores": {"exact": 1, "judge": None}}
    path = tmp_path / "logged.jsonl"
    path.write_text(json.dumps(root) + "\n{broken\n")
    result = report([str(path)], [str(CASES)])
    assert (result["attempts"], result["results"]) == (1, 1)
    assert result["ledger"][0]["source"]["line"] == 2 and result["ledgerCounts"] == {"unreadable": 1}
    assert result["slices"]["case.caseFamily"]["policy-lookup"]["passed"] == 1


# ---- LangSmith: feedback of 1 passes, 0 fails; runs reach their case by the example's uuid5.

def test_langsmith_counts_equal_langsmiths_own():
    runs_ = [json.loads(line) for line in (RUNS / "langsmith" / "runs.jsonl").read_text("utf-8").splitlines()]
    feedback = [json.loads(line) for line in (RUNS / "langsmith" / "feedback.jsonl").read_text("utf-8").splitlines()]
    by_input = {r["input"]: cid for cid, r in CASE_ROWS.items()}
    run_case = {r["id"]: by_input[r["inputs"]["input"]] for r in runs_}
    scores: dict[str, list] = {}
    for f in feedback:
        if f["run_id"] in run_case:
            scores.setdefault(run_case[f["run_id"]], []).append((f["key"], f["score"]))
    outcomes = {case: "passed" if all(s == 1 for _, s in got) else "failed" for case, got in scores.items()}
    # hand-computed mixing: the warranty case's only feedback is a person's annotation (source
    # "app": rubric-human), which expected-behavior-only bars unless it is a human expert.
    assert scores["r-warranty-judgement"] == [("expert_review", 0)]
    outcomes["r-warranty-judgement"] = "unscored"
    paths = [str(RUNS / "langsmith" / "runs.jsonl"), str(RUNS / "langsmith" / "feedback.jsonl")]
    result = report(paths, [str(CASES)])
    assert_slices_match(result, outcomes)
    assert result["ledgerCounts"] == {"result-without-attempt": 1}
    # Said to be a human expert, the annotation counts: the case fails.
    outcomes["r-warranty-judgement"] = "failed"
    assert_slices_match(report(paths, [str(CASES)], evaluators={"expert_review": "human-expert"}), outcomes)


# ---- the mixing problem, by hand

def test_a_barred_result_never_reaches_a_pass_rate(tmp_path):
    from evalconv.canonical import runs

    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(CASE_ROWS[c]) + "\n" for c in ("r-apology-tone", "r-refund-receipt")))
    records = tmp_path / "store"
    records.mkdir()
    a1 = runs.attempt(harness="evalconv", key=("a1",), case_id="r-apology-tone", system="app")
    a2 = runs.attempt(harness="evalconv", key=("a2",), case_id="r-refund-receipt", system="app")
    results = [
        runs.result(attempt_id=a1["id"], name="exact", type_="exact-or-programmatic", type_source="declared",
                    score=1.0, passed=True, review_status="automated"),   # barred on a rubric
        runs.result(attempt_id=a2["id"], name="exact", type_="exact-or-programmatic", type_source="declared",
                    score=0.0, passed=False, review_status="automated"),
    ]
    (records / "attempts.jsonl").write_text(json.dumps(a1) + "\n" + json.dumps(a2) + "\n")
    (records / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    result = report([str(records)], [str(cases)])
    # Mixed in, the headline would be 1 of 2 (50%). Admissible only: 0 of 1, the rubric case unscored.
    assert result["overall"] == {"passed": 0, "failed": 1, "unscored": 1, "excluded": 1, "passRate": 0.0, "starter": 0,
                                 "conditional": 0}


def test_cli_json_is_the_library_dict_and_worst_slice_comes_first():
    args = [RUNS / "promptfoo" / "results.json", "--cases", CASES]
    out = run("report", *args, "--format", "json")
    assert out.exit_code == 0
    printed = json.loads(out.output)
    assert printed == json.loads(json.dumps(report([str(args[0])], [str(CASES)])))
    assert set(printed) >= {"cases", "attempts", "results", "overall", "slices", "ledger"}
    assert list(printed["slices"]["metadata.severity"]) == ["harmful", "wrong-answer", "cosmetic"]
    rates = [b["passRate"] for b in printed["slices"]["case.caseFamily"].values()]
    scored = [r for r in rates if r is not None]
    assert scored == sorted(scored) and rates[: len(scored)] == scored


def test_fail_under_gates_only_release_cases():
    args = ["report", RUNS / "promptfoo" / "results.json", "--cases", CASES, "--format", "json"]
    harmful = run(*args, "--fail-under", "metadata.severity=harmful:1.0")
    assert harmful.exit_code == 1
    gate = json.loads(harmful.output)["gates"][0]
    assert (gate["passed"], gate["failed"], gate["unscored"], gate["ok"]) == (0, 1, 2, False)
    # cosmetic cases are all trend probes: nothing release-gating to judge, so the gate is not met
    cosmetic = json.loads(run(*args, "--fail-under", "metadata.severity=cosmetic:0.5").output)["gates"][0]
    assert cosmetic["passed"] + cosmetic["failed"] + cosmetic["unscored"] == 0 and not cosmetic["ok"]
    # release cases overall: r-refund-receipt passes; r-refund-no-receipt and r-window-wrong fail;
    # r-order-status-tool is unscored (its tool-order check needs a trace the echo provider lacks),
    # r-injury-escalation waits for grading and r-size-exchange was not run: the gate cannot pass on them
    overall = run(*args, "--fail-under", "overall:0.25")
    assert overall.exit_code == 1
    gate = json.loads(overall.output)["gates"][0]
    assert gate["passRate"] == pytest.approx(1 / 3)
    assert gate["unscoredCases"] == ["r-order-status-tool", "r-injury-escalation", "r-size-exchange"]
    allowed = run(*args, "--fail-under", "overall:0.25", "--allow-unscored")
    assert allowed.exit_code == 0 and json.loads(allowed.output)["gates"][0]["ok"]


@pytest.mark.parametrize("args, message", [
    (["--by", "severity!!"], "not a field path"),
    (["--fail-under", "metadata.severity=harmful"], "--fail-under"),
    (["--fail-under", "overall:1.5"], "RATE from 0 to 1"),
    (["--evaluator", "x=robot"], "not an evaluator type"),
])
def test_bad_options_are_one_line_usage_errors(args, message):
    out = run("report", RUNS / "promptfoo" / "results.json", "--cases", CASES, *args)
    assert out.exit_code == 2 and message in out.stderr and "Traceback" not in out.output


def test_an_unknown_run_file_is_a_usage_error_naming_it():
    out = run("report", CASES, "--cases", CASES)
    assert out.exit_code == 2 and "cases.jsonl" in out.stderr and "not a run output" in out.stderr


def test_text_report_names_the_ledger_and_the_exclusions():
    out = run("report", RUNS / "promptfoo" / "results.json", "--cases", CASES)
    assert out.exit_code == 0
    assert "by metadata.severity (worst first):" in out.output
    assert "excluded: 1 result from" in out.output and "ledger: 1 attempt-without-case" in out.output
    assert "not run: 1 case has" in out.output


def test_a_cut_short_harness_file_is_one_line_naming_it(tmp_path):
    cut = tmp_path / "results.json"
    cut.write_bytes((RUNS / "promptfoo" / "results.json").read_bytes()[:3000])
    out = run("report", cut, "--cases", CASES)
    assert out.exit_code == 2 and "Traceback" not in out.output
    message = out.stderr.strip()
    assert "\n" not in message and str(cut) in message and "not valid JSON" in message


def test_a_broken_line_in_a_harness_jsonl_goes_to_the_ledger(tmp_path):
    lines_ = (RUNS / "promptfoo" / "rerun.jsonl").read_text("utf-8").splitlines()
    broken = tmp_path / "rerun.jsonl"
    broken.write_text("\n".join(lines_[:3] + ['{"testCase": '] + lines_[3:]) + "\n")
    result = report([str(broken)], [str(CASES)])
    assert result["ledgerCounts"] == {"attempt-without-case": 1, "unreadable": 1}
    unreadable = next(e for e in result["ledger"] if e["kind"] == "unreadable")
    assert unreadable["source"]["line"] == 4 and unreadable["source"]["file"] == str(broken)
    assert result["attempts"] == 10

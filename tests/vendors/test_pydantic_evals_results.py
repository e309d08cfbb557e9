"""pydantic-evals EvaluationReports read as run output (issue 29): verdicts equal pydantic-evals' own,
case by case, through `evalconv report` and `evalconv runs import`."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, run_cli
from evalconv.runs.readers import RESULTS_REGISTRY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

RUNS = ROOT / "tests" / "fixtures" / "runs"
REPORT = RUNS / "pydantic_evals" / "report.json"
CASES = RUNS / "cases.jsonl"


def read(path) -> list[tuple[str, dict]]:
    return list(RESULTS_REGISTRY.read(str(path)))


def report_json(*args: str) -> tuple[int, dict]:
    from click.testing import CliRunner
    from evalconv.cli import cli

    out = CliRunner().invoke(cli, ["report", str(REPORT), "--cases", str(CASES), "--by", "id", "--format", "json", *args])
    assert out.exit_code in (0, 1), out.output
    return out.exit_code, json.loads(out.output)


def outcome(result: dict, case_id: str) -> str:
    got = result["slices"]["id"][case_id]
    return next(k for k in ("passed", "failed", "unscored") if got[k])


def test_pydantic_evals_report_results_equal_pydantic_evals_own():
    from pydantic_evals.reporting import EvaluationReportAdapter

    own = EvaluationReportAdapter.validate_json(REPORT.read_bytes())
    records = read(REPORT)
    attempts = {r["id"]: r for k, r in records if k == "attempt"}
    mine = {(attempts[r["attemptId"]]["caseId"], r["evaluator"]["name"]): r for k, r in records if k == "result"}
    for case in own.cases:
        for name, result in case.assertions.items():
            got = mine[(case.name, "evalconv:needs-grading" if name.startswith("not checked by") else name)]
            assert got["passed"] is (None if name.startswith("not checked by") else result.value)
        for name, result in case.scores.items():
            got = mine[(case.name, name)]
            assert got["score"] == result.value
            assert got["passed"] is None and "passAt" in got and got["passAt"] is None  # no pass rule: unscored
        for failure in case.evaluator_failures:
            got = mine[(case.name, failure.name)]
            assert got["reviewStatus"] == "error" and got["passed"] is None and failure.error_message in got["reason"]
    errored = {r["caseId"]: r["error"] for r in attempts.values() if r["status"] == "error"}
    assert errored == {f.name: f.error_message for f in own.failures}
    assert len(attempts) == len(own.cases) + len(own.failures)
    manifest = json.loads((REPORT.parent / "MANIFEST.json").read_text("utf-8"))["files"][0]
    kinds = [k for k, _ in records]
    assert {"attempts": kinds.count("attempt"), "results": kinds.count("result"),
            "ledger": kinds.count("ledger")} == manifest["reader_must_recover"]


def test_pydantic_evals_evaluators_typed_by_class_custom_ones_asked_for():
    records = [r for k, r in read(REPORT) if k == "result"]
    types = {r["evaluator"]["name"]: r["evaluator"]["type"] for r in records}
    assert types == {"EqualsExpected": "exact-or-programmatic", "LLMJudge": "llm-judge",
                     "ToolCorrectness": "trajectory-or-state-check", "TrajectoryMatch": "trajectory-or-state-check",
                     "Brevity": None, "Answered": None, "evalconv:needs-grading": None}
    code, out = report_json()
    assert any("'Answered=TYPE'" in w for w in out["verdicts"]["warnings"])
    assert out["verdicts"]["thresholds"] == {}  # no default: pydantic-evals states none for scores


def test_pydantic_evals_report_names_failing_case_and_gate_fails_on_ungraded(capsys):
    code, out = report_json("--by", "metadata.severity", "--fail-under", "metadata.severity=harmful:1.0")
    assert code == 1
    failed = out["failures"]["metadata.severity"]["harmful"]["failed"]
    assert [(f["id"], f["evaluator"]) for f in failed][0] == ("r-refund-no-receipt", "EqualsExpected")
    [gate] = out["gates"]
    assert not gate["ok"] and gate["unscoredCases"] == ["r-injury-escalation"]  # the task raised: no verdict
    assert outcome(out, "r-window-phrasing") == "unscored"  # evalconv's placeholder: grading pending
    assert outcome(out, "r-starter-greeting") == "unscored"  # an evaluator raised: errored, not passed
    code, err = run_cli(["report", str(REPORT), "--cases", str(CASES), "--fail-under", "metadata.severity=harmful:1.0"],
                        capsys)
    assert code == 1 and "Traceback" not in err


def test_pydantic_evals_partial_score_unscored_until_threshold():
    _, plain = report_json()
    assert outcome(plain, "r-refund-receipt") == "unscored"  # Brevity 0.5: no pass rule in pydantic-evals
    _, given_ = report_json("--threshold", "Brevity=0.5")
    assert outcome(given_, "r-refund-receipt") == "passed" and given_["verdicts"]["thresholds"] == {"Brevity": 0.5}
    _, strict = report_json("--threshold", "pydantic-evals=0.9")
    assert outcome(strict, "r-refund-receipt") == "failed"


def test_pydantic_evals_typed_evaluator_barred_by_the_oracle_is_excluded():
    _, out = report_json("--evaluator", "Answered=exact-or-programmatic", "--evaluator", "Brevity=exact-or-programmatic")
    # a rubric case (LLMJudge failed it) keeps its judge's verdict; the code checks on it are excluded
    assert out["slices"]["id"]["r-apology-tone"]["excluded"] == 2 and outcome(out, "r-apology-tone") == "failed"
    assert out["flags"]["excludedResults"] >= 2
    assert outcome(out, "r-warranty-judgement") == "unscored"  # behaviour-only: code checks barred, a person pending


def test_pydantic_evals_report_import_twice_adds_nothing(tmp_path, capsys):
    store = tmp_path / "store"
    assert run_cli(["runs", "import", str(REPORT), "--store", str(store)], capsys)[0] == 0
    assert len((store / "attempts.jsonl").read_text().splitlines()) == 9
    assert len((store / "results.jsonl").read_text().splitlines()) == 25
    assert run_cli(["runs", "import", str(REPORT), "--store", str(store)], capsys)[0] == 0
    assert len((store / "results.jsonl").read_text().splitlines()) == 25


def test_pydantic_evals_report_detected_by_content_not_name(tmp_path):
    renamed = tmp_path / "whatever.txt"
    shutil.copy(REPORT, renamed)
    assert RESULTS_REGISTRY.detect(str(renamed)).name == "pydantic-evals"
    compact = tmp_path / "compact.json"  # dump_json without indent
    compact.write_text(json.dumps(json.loads(REPORT.read_text("utf-8"))))
    assert RESULTS_REGISTRY.detect(str(compact)).name == "pydantic-evals"
    dataset = tmp_path / "cases.pydantic-evals.json"  # a Dataset file is cases, not run output
    from evalconv import api

    api.convert(str(CASES), str(dataset), to="pydantic-evals")
    assert not RESULTS_REGISTRY.readers["pydantic-evals"].detect(str(dataset), dataset.read_text("utf-8")[:4096])


def test_pydantic_evals_malformed_assertion_names_entry_and_field(tmp_path):
    document = json.loads(REPORT.read_text("utf-8"))
    document["cases"][1]["assertions"]["EqualsExpected"]["value"] = "yes"
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps(document, indent=2))
    ledger = [r for k, r in read(bad) if k == "ledger"]
    assert [e["reason"] for e in ledger] == ["$.cases[1].assertions.EqualsExpected.value: not true or false"]
    assert ledger[0]["source"] == {"file": str(bad), "line": None, "entry": 1}


def test_pydantic_evals_report_cut_short_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "report.json"
    bad.write_text(REPORT.read_text("utf-8")[:5000])
    code, err = run_cli(["report", str(bad), "--cases", str(CASES)], capsys)
    assert code == 2 and "report.json" in err and "cut short" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.floats(0, 1, allow_nan=False), st.booleans()), min_size=1, max_size=6))
def test_pydantic_evals_serialized_reports_read_to_their_verdicts(tmp_path, rows):
    """Reports built and serialized by pydantic-evals' own adapter read back verdict for verdict."""
    from pydantic_evals.reporting import EvaluationReportAdapter

    def result(name, value):
        return {"name": name, "value": value, "reason": None, "source": {"name": name, "arguments": None}}

    cases = [{"name": f"c{i}", "inputs": "q", "metadata": {"case": {"caseId": f"c{i}"}}, "expected_output": None,
              "output": "a", "metrics": {}, "attributes": {}, "labels": {}, "task_duration": 0.1,
              "total_duration": 0.2, "assertions": {"Equals": result("Equals", ok)},
              "scores": {"Sim": result("Sim", score)} if has_score else {}}
             for i, (ok, score, has_score) in enumerate(rows)]
    report = EvaluationReportAdapter.validate_python({"name": "h", "cases": cases})
    path = tmp_path / "h.json"
    path.write_bytes(EvaluationReportAdapter.dump_json(report))
    got = {(r["attemptId"], r["evaluator"]["name"]): r["passed"] for k, r in read(path) if k == "result"}
    assert sorted(v for (_, n), v in got.items() if n == "Equals") == sorted(ok for ok, _, _ in rows)
    want = sorted((None, s) for _, s, h in rows if h)
    scores = sorted((r["passed"], r["score"]) for k, r in read(path) if k == "result" and r["evaluator"]["name"] == "Sim")
    assert scores == want


@pytest.mark.interop
def test_pydantic_evals_evaluate_sync_makes_the_same_report(tmp_path):
    pytest.importorskip("pydantic_evals")
    from evalconv import api
    from evalconv.runs.report import report

    export = tmp_path / "cases.pydantic-evals.yaml"
    api.convert(str(CASES), str(export), to="pydantic-evals")
    done = subprocess.run([sys.executable, str(RUNS / "make" / "make_pydantic_evals.py"), str(export), str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    fresh, kept = report([str(tmp_path / "report.json")], [str(CASES)]), report([str(REPORT)], [str(CASES)])
    for key in ("cases", "overall", "slices", "flags", "ledgerCounts", "attempts", "results"):
        assert fresh[key] == kept[key], key


def test_compact_evaluation_report_is_not_taken_for_a_braintrust_jsonl_row(tmp_path):
    """Regression: a compact EvaluationReport is one line holding "scores" and "output", which
    Braintrust's one-row-a-line rule took for its own; Braintrust JSONL rows are still Braintrust's."""
    compact = tmp_path / "report.json"
    compact.write_text(json.dumps(json.loads(REPORT.read_text("utf-8")), separators=(",", ":")))
    head = compact.read_text("utf-8")[:4096]
    assert not RESULTS_REGISTRY.readers["braintrust"].detect(str(compact), head)
    assert RESULTS_REGISTRY.detect(str(compact)).name == "pydantic-evals"
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "r1", "output": "a", "scores": {"ExactMatch": 1}}) + "\n")
    assert RESULTS_REGISTRY.detect(str(rows)).name == "braintrust"

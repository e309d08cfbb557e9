"""MLflow genai.evaluate traces read as run output (issue 29): result_df and search_traces saved
as JSON, verdicts as MLflow's own EvaluationResult reads them, through `evalconv report` and
`evalconv runs import`."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import ROOT, run_cli
from evalconv.cli import cli
from evalconv.runs.readers import RESULTS_REGISTRY
from hypothesis import given, settings
from hypothesis import strategies as st

RUNS = ROOT / "tests" / "fixtures" / "runs"
RESULT_DF = RUNS / "mlflow" / "result_df.jsonl"
TRACES = RUNS / "mlflow" / "traces.json"
CASES = RUNS / "cases.jsonl"


def rows(path) -> list[dict]:
    text = path.read_text("utf-8")
    return json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines() if line]


def report_json(path, *args: str) -> tuple[int, dict]:
    out = CliRunner().invoke(cli, ["report", str(path), "--cases", str(CASES), "--by", "id", "--format", "json", *args])
    assert out.exit_code in (0, 1), out.output
    return out.exit_code, json.loads(out.output)


def outcome(result: dict, case_id: str) -> str:
    got = result["slices"]["id"][case_id]
    return next(k for k in ("passed", "failed", "unscored") if got[k])


@pytest.mark.parametrize("path", [RESULT_DF, TRACES], ids=lambda p: p.name)
def test_mlflow_results_equal_mlflows_own_verdicts(path):
    """Each feedback read as MLflow's EvaluationResult.passed reads it (its own _assertion_outcome)."""
    from mlflow.genai.evaluation.entities import _assertion_outcome

    records = list(RESULTS_REGISTRY.read(str(path)))
    attempts = {r["id"]: r for k, r in records if k == "attempt"}
    mine = {(attempts[r["attemptId"]]["caseId"], r["evaluator"]["name"]): r for k, r in records if k == "result"}
    theirs = 0
    for row in rows(path):
        for a in (a for a in row["assessments"] if "feedback" in a):
            got = mine[(row["tags"]["case_id"], a["assessment_name"])]
            value, error = a["feedback"].get("value"), a["feedback"].get("error")
            if error:
                assert got["reviewStatus"] == "error" and got["passed"] is None  # MLflow: a failure; evalconv: errored
            elif value is None:
                assert got["reviewStatus"] == "pending" and got["passed"] is None
            elif isinstance(value, (bool, str)):
                assert got["passed"] is _assertion_outcome(value, None, None, None)[0]
            else:  # a number: MLflow fails it unless pass_if (not saved); evalconv leaves it unscored
                assert got["passed"] is None and got["passAt"] is None and got["score"] == value
            theirs += 1
    assert theirs == len(mine)
    errored = {r["caseId"]: r["error"] for r in attempts.values() if r["status"] == "error"}
    assert errored == {"r-injury-escalation": "RuntimeError: upstream ticketing API timed out"}
    manifest = {e["path"]: e for e in json.loads((path.parent / "MANIFEST.json").read_text("utf-8"))["files"]}
    kinds = [k for k, _ in records]
    assert {"attempts": kinds.count("attempt"), "results": kinds.count("result"),
            "ledger": kinds.count("ledger")} == manifest[path.name]["reader_must_recover"]


def test_mlflow_scorers_typed_by_source_and_evalconv_check():
    records = [r for k, r in RESULTS_REGISTRY.read(str(TRACES)) if k == "result"]
    types = {(r["evaluator"]["name"], r["evaluator"]["type"]) for r in records}
    assert ("reviewer", "rubric-human") in types and ("brevity", None) in types
    assert {t for n, t in types if n == "evalconv_case"} == {"exact-or-programmatic", "trajectory-or-state-check",
                                                             "llm-judge", "human-expert"}
    person = next(r for r in records if r["evaluator"]["name"] == "reviewer")
    assert person["reviewStatus"] == "reviewed" and person["passed"] is True


def test_mlflow_report_names_failing_case_and_gate_fails_on_ungraded(capsys):
    code, out = report_json(RESULT_DF, "--by", "metadata.severity", "--fail-under", "metadata.severity=harmful:1.0")
    assert code == 1
    failed = out["failures"]["metadata.severity"]["harmful"]["failed"]
    assert ("r-refund-no-receipt", "evalconv_case", "the output is not the reference") in \
        [(f["id"], f["evaluator"], f["message"]) for f in failed]
    [gate] = out["gates"]
    assert not gate["ok"] and gate["unscoredCases"] == ["r-injury-escalation"]  # the app raised; the scorer erred
    code, err = run_cli(["report", str(RESULT_DF), "--cases", str(CASES), "--fail-under",
                         "metadata.severity=harmful:1.0"], capsys)
    assert code == 1 and "Traceback" not in err


def test_mlflow_number_unscored_until_threshold():
    _, plain = report_json(RESULT_DF)
    assert outcome(plain, "r-starter-greeting") == "unscored" and plain["verdicts"]["thresholds"] == {}
    _, given_ = report_json(RESULT_DF, "--threshold", "brevity=0.5")
    assert outcome(given_, "r-starter-greeting") == "passed" and outcome(given_, "r-refund-receipt") == "passed"
    _, strict = report_json(RESULT_DF, "--threshold", "mlflow=0.9")
    assert outcome(strict, "r-refund-receipt") == "failed" and strict["verdicts"]["thresholds"] == {"mlflow": 0.9}


def test_mlflow_persons_review_is_excluded_where_the_oracle_bars_it_until_typed_expert():
    """r-warranty-judgement is expected-behavior-only: a human expert's verdict only."""
    _, plain = report_json(TRACES)
    assert plain["slices"]["id"]["r-warranty-judgement"]["excluded"] == 1
    assert outcome(plain, "r-warranty-judgement") == "unscored"
    _, expert = report_json(TRACES, "--evaluator", "reviewer=human-expert")
    assert outcome(expert, "r-warranty-judgement") == "passed"


def test_mlflow_result_df_and_traces_import_and_reimport_add_nothing(tmp_path, capsys):
    store = tmp_path / "store"
    assert run_cli(["runs", "import", str(RESULT_DF), "--store", str(store)], capsys)[0] == 0
    assert len((store / "attempts.jsonl").read_text().splitlines()) == 9
    # the same traces from search_traces: the same attempts and results, plus the person's review
    assert run_cli(["runs", "import", str(TRACES), "--store", str(store)], capsys)[0] == 0
    assert len((store / "attempts.jsonl").read_text().splitlines()) == 9
    assert len((store / "results.jsonl").read_text().splitlines()) == 19
    assert (store / "ledger.jsonl").read_text() == ""


def test_mlflow_traces_detected_by_content_not_name(tmp_path):
    for source in (RESULT_DF, TRACES):
        renamed = tmp_path / f"export-{source.stem}.txt"
        shutil.copy(source, renamed)
        assert RESULTS_REGISTRY.detect(str(renamed)).name == "mlflow"
    dataset = tmp_path / "cases.mlflow.jsonl"  # dataset records are cases, not run output
    from evalconv import api

    api.convert(str(CASES), str(dataset), to="mlflow")
    assert not RESULTS_REGISTRY.readers["mlflow"].detect(str(dataset), dataset.read_text("utf-8")[:4096])


def test_mlflow_malformed_assessment_names_line_and_field(tmp_path, capsys):
    lines = RESULT_DF.read_text("utf-8").splitlines()
    row = json.loads(lines[2])
    row["assessments"][0]["feedback"] = "yes"
    lines[2] = json.dumps(row)
    bad = tmp_path / "result_df.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    ledger = [r for k, r in RESULTS_REGISTRY.read(str(bad)) if k == "ledger"]
    assert [e["reason"] for e in ledger] == ["line 3: $.assessments[0].feedback: not an object"]
    code, _ = run_cli(["report", str(bad), "--cases", str(CASES)], capsys)
    assert code == 0  # the row goes to the ledger; the other traces are read


def test_mlflow_traces_cut_short_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "traces.json"
    bad.write_text(TRACES.read_text("utf-8")[:6000])
    code, err = run_cli(["report", str(bad), "--cases", str(CASES)], capsys)
    assert code == 2 and "traces.json" in err and "cut short" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


_VALUES = st.one_of(st.booleans(), st.sampled_from(["yes", "no", "Yes", " no "]), st.floats(0, 5, allow_nan=False),
                    st.none())


@settings(max_examples=40, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=5))
def test_mlflow_feedback_values_read_as_mlflow_reads_them(values):
    """Any feedback value: a verdict exactly where MLflow's _assertion_outcome has one without pass_if."""
    import tempfile
    from pathlib import Path

    from mlflow.genai.evaluation.entities import _assertion_outcome

    row = json.loads(RESULT_DF.read_text("utf-8").splitlines()[0])
    row["assessments"] = [{"assessment_name": f"s{i}", "source": {"source_type": "CODE", "source_id": "x"},
                           "feedback": {"value": v}} for i, v in enumerate(values)]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "r.jsonl"
        path.write_text(json.dumps(row) + "\n")
        got = {r["evaluator"]["name"]: r["passed"] for k, r in RESULTS_REGISTRY.read(str(path)) if k == "result"}
    for i, value in enumerate(values):
        verdict = isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in ("yes", "no"))
        assert got[f"s{i}"] is (_assertion_outcome(value, None, None, None)[0] if verdict else None)


@pytest.mark.interop
def test_mlflow_genai_evaluate_makes_the_same_report(tmp_path):
    pytest.importorskip("mlflow")
    from evalconv import api
    from evalconv.runs.report import report

    export = tmp_path / "cases.mlflow.jsonl"
    api.convert(str(CASES), str(export), to="mlflow")
    done = subprocess.run([sys.executable, str(RUNS / "make" / "make_mlflow.py"), str(export), str(tmp_path)],
                          capture_output=True, text=True, timeout=400, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("result_df.jsonl", "traces.json"):
        fresh, kept = report([str(tmp_path / name)], [str(CASES)]), report([str(RUNS / "mlflow" / name)], [str(CASES)])
        for key in ("cases", "overall", "slices", "flags", "ledgerCounts", "attempts", "results"):
            assert fresh[key] == kept[key], (name, key)


@pytest.mark.parametrize("saved", ["csv", "parquet"])
def test_mlflow_traces_saved_as_csv_or_parquet_is_one_line_error_saying_why(saved, tmp_path, capsys):
    """CSV keeps assessments as Python reprs; Parquet gives every feedback value one type (true -> 1.0)."""
    import pandas as pd

    frame = pd.read_json(RESULT_DF, orient="records", lines=True)
    path = tmp_path / f"result_df.{saved}"
    frame.to_csv(path, index=False) if saved == "csv" else frame.to_parquet(path)
    code, err = run_cli(["report", str(path), "--cases", str(CASES)], capsys)
    assert code == 2 and str(path) in err and "to_json(orient='records', lines=True)" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1

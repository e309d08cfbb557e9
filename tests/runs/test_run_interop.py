"""Each harness's own code makes its run output again, offline, with the scripts in
tests/fixtures/runs/make/; evalconv reads it to the same report as the stored fixture."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from evalconv.runs.report import report
from interop import require_module, require_promptfoo

pytestmark = pytest.mark.interop
RUNS = ROOT / "tests" / "fixtures" / "runs"
MAKE = RUNS / "make"
CASES = RUNS / "cases.jsonl"
STABLE = ("cases", "overall", "slices", "flags", "judgeAgreement", "ledgerCounts")


def _same_report(made: list[Path], stored: list[Path]) -> None:
    fresh = report([str(p) for p in made], [str(CASES)])
    kept = report([str(p) for p in stored], [str(CASES)])
    assert {k: fresh[k] for k in STABLE} == {k: kept[k] for k in STABLE}
    assert (fresh["attempts"], fresh["results"]) == (kept["attempts"], kept["results"])


def _export(to: str, out: Path) -> Path:
    target = out / f"cases.{to}.{'json' if to == 'deepeval' else 'jsonl'}"
    from evalconv import api

    api.convert(str(CASES), str(target), to=to)
    return target


def _python(script: str, *args: str, cwd: Path) -> None:
    env = {**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "1", "LANGSMITH_TRACING": "false", "BRAINTRUST_API_KEY": ""}
    done = subprocess.run([sys.executable, str(MAKE / script), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_promptfoo_eval_output_reads_to_the_same_report(tmp_path):
    binary = require_promptfoo()
    env = {**os.environ, "EVALCONV_PROMPTFOO": binary, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(MAKE / "make_promptfoo.sh"), str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("results.json", "rerun.jsonl"):
        _same_report([tmp_path / name], [RUNS / "promptfoo" / name])


def test_promptfoo_verdicts_threshold_weight_assert_set_and_a_manual_rating_read_to_the_same_report(tmp_path):
    """Issue 25: promptfoo makes the verdict fixture again, its own server stores the person's rating."""
    binary = require_promptfoo()
    env = {**os.environ, "EVALCONV_PROMPTFOO": binary, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(MAKE / "make_promptfoo_verdicts.sh"), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    cases = [str(RUNS / "promptfoo" / "verdicts" / "cases.jsonl")]
    for name in ("results.json", "rated.json"):
        fresh = report([str(tmp_path / name)], cases)
        kept = report([str(RUNS / "promptfoo" / "verdicts" / name)], cases)
        for key in (*STABLE, "verdicts"):
            assert fresh[key] == kept[key], key
        assert fresh["headline"]["line"] == kept["headline"]["line"]
        stats = json.loads((tmp_path / name).read_text("utf-8"))["results"]["stats"]
        assert [fresh["headline"]["harness"][0][k] for k in ("successes", "failures", "errors")] == \
            [stats["successes"], stats["failures"], stats["errors"]]


def test_deepeval_evaluate_output_reads_to_the_same_report(tmp_path):
    require_module("deepeval")
    shutil.copy(_export("deepeval", tmp_path), tmp_path / "goldens.json")
    _python("make_deepeval.py", str(tmp_path), cwd=tmp_path)
    made = sorted(tmp_path.glob("test_run_*.json"))
    assert len(made) == 4
    _same_report(made, sorted((RUNS / "deepeval").glob("test_run_*.json")))
    _same_report([tmp_path / "evaluate_results.json"], [RUNS / "deepeval" / "evaluate_results.json"])


def test_braintrust_eval_output_reads_to_the_same_report(tmp_path):
    require_module("braintrust")
    _python("make_braintrust.py", str(_export("braintrust", tmp_path)), str(tmp_path), cwd=tmp_path)
    _same_report([tmp_path / "eval_result.json"], [RUNS / "braintrust" / "eval_result.json"])
    _same_report([tmp_path / "experiment_export.jsonl"], [RUNS / "braintrust" / "experiment_export.jsonl"])
    # the export is the SDK's experiment rows: every span of the run, each score on its scorer's span
    kinds = [json.loads(line)["span_attributes"]["type"] for line in (tmp_path / "experiment_export.jsonl").open()]
    assert (kinds.count("eval"), kinds.count("task"), kinds.count("score")) == (9, 9, 36)


def test_langsmith_openevals_feedback_reads_to_the_same_report(tmp_path):
    require_module("langsmith")
    require_module("openevals")
    _python("make_langsmith_openevals.py", str(_export("langsmith", tmp_path)), str(tmp_path), cwd=tmp_path)
    made = [tmp_path / "openevals_runs.jsonl", tmp_path / "openevals_feedback.jsonl"]
    _same_report(made, [RUNS / "langsmith" / p.name for p in made])


def test_braintrust_partial_scores_from_autoevals_read_to_the_same_report(tmp_path):
    require_module("braintrust")
    require_module("autoevals")
    _python("make_braintrust_partial.py", str(_export("braintrust", tmp_path)), str(tmp_path), cwd=tmp_path)
    _same_report([tmp_path / "partial_scores.json"], [RUNS / "braintrust" / "partial_scores.json"])
    scores = [r["scores"] for r in json.loads((tmp_path / "partial_scores.json").read_text("utf-8"))["results"]]
    assert all(0 < s["Levenshtein"] < 1 and s["tone"] == 0.5 for s in scores)


def test_langsmith_runs_and_feedback_read_to_the_same_report(tmp_path):
    require_module("langsmith")
    _python("make_langsmith.py", str(_export("langsmith", tmp_path)), str(tmp_path), cwd=tmp_path)
    _same_report([tmp_path / "runs.jsonl", tmp_path / "feedback.jsonl"],
                 [RUNS / "langsmith" / "runs.jsonl", RUNS / "langsmith" / "feedback.jsonl"])


def test_langfuse_run_experiment_items_read_to_the_same_report(tmp_path):
    """Issue 29: Langfuse's run_experiment makes the experiment items again (offline)."""
    require_module("langfuse")
    _python("make_langfuse.py", str(_export("langfuse", tmp_path)), str(tmp_path), cwd=tmp_path)
    for name in ("experiment_items.json", "experiment_items.jsonl"):
        _same_report([tmp_path / name], [RUNS / "langfuse" / name])


def test_phoenix_run_experiment_download_reads_to_the_same_report(tmp_path):
    """Issue 29: Phoenix's client runs the experiment again against the stand-in server (offline)."""
    require_module("phoenix.client")
    _python("make_phoenix.py", str(_export("phoenix", tmp_path)), str(tmp_path), cwd=tmp_path)
    _same_report([tmp_path / "experiment.json"], [RUNS / "phoenix" / "experiment.json"])


def test_opik_experiment_export_reads_to_the_same_report(tmp_path):
    require_module("opik")
    _python("make_opik.py", str(_export("opik", tmp_path)), str(tmp_path), cwd=tmp_path)
    _same_report([tmp_path / "experiment_export.json"], [RUNS / "opik" / "experiment_export.json"])
    made = json.loads((tmp_path / "experiment_export.json").read_text("utf-8"))
    names = [s["name"] for item in made["items"] for s in item["feedback_scores"]]
    assert (names.count("evalconv_case"), names.count("equals_metric")) == (9, 7)

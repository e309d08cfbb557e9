"""DeepEval run output -> attempts and results.

Reads a test run as DeepEval saves it (`test_run_*.json` in DEEPEVAL_RESULTS_FOLDER, or
`.deepeval/.latest_test_run.json`: `testCases[]` and `conversationalTestCases[]`, each with
`metricsData[]`) and `evaluate()`'s return value dumped as JSON (`test_results[]`, each with
`metrics_data[]`). Each test case is an attempt, each metric's data a result. evalconv's export
carries the whole canonical row in `additional_metadata.evalconv`, so its id links the attempt;
a golden evalconv did not write is linked by its name. A test run has no id of its own offline,
so the run is named by a digest of the file's bytes (the same file imports to the same ids).
"""
from __future__ import annotations

import hashlib
from typing import Any, Iterator

from evalconv.canonical import runs

from .._common import runfiles
from .fields import CARRIER

HARNESS = "deepeval"
_TRAJECTORY = {"Tool Correctness", "Tool Use", "Tool Permission", "Step Efficiency", "Plan Adherence"}
_PROGRAMMATIC = {"Exact Match", "Pattern Match", "Json Correctness"}
_FIELDS = {  # test-run JSON (camelCase) and evaluate() TestResult (snake_case)
    "metrics": ("metricsData", "metrics_data"), "output": ("actualOutput", "actual_output"),
    "tools": ("toolsCalled", "tools_called"), "duration": ("runDuration", "run_duration"),
    "model": ("evaluationModel", "evaluation_model"),
}


def _get(record: dict[str, Any], field: str) -> Any:
    for key in _FIELDS[field]:
        if key in record:
            return record[key]
    return None


def evaluator_type(name: str, model: Any) -> tuple[str, str]:
    """(type, how it was decided). DeepEval records the judge model of every model-graded metric."""
    if isinstance(model, str) and model:
        return "llm-judge", "inferred"
    if name in _TRAJECTORY:
        return "trajectory-or-state-check", "inferred"
    return "exact-or-programmatic", "inferred"  # a metric with no model is code: Exact Match, custom BaseMetric


def case_link(test: dict[str, Any]) -> tuple[str | None, str | None, dict[str, str] | None]:
    metadata = test.get("metadata") if "metadata" in test else test.get("additional_metadata")
    row = metadata.get(CARRIER) if isinstance(metadata, dict) else None
    if isinstance(row, dict) and isinstance(row.get("id"), str) and row["id"]:
        case = (row.get("metadata") or {}).get("case") if isinstance(row.get("metadata"), dict) else None
        version = case.get("version") if isinstance(case, dict) else None
        return row["id"], version if isinstance(version, str) else None, None
    name = test.get("name")
    return None, None, ({"kind": "name", "value": name} if isinstance(name, str) and name else None)


def _digest(path: str) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            sha.update(block)
    return "sha256:" + sha.hexdigest()[:16]


class DeepEvalResults:
    name = HARNESS
    title = "DeepEval test run (test_run_*.json) or evaluate() results as JSON"
    files = "DeepEval test_run_*.json / evaluate() results dumped as JSON"

    def detect(self, path: str, head: str) -> bool:
        top = head[:400]
        return head.startswith(("{", "[")) and ('"testCases"' in top or '"test_results"' in top
                                                or '"conversationalTestCases"' in top)

    def read(self, path: str) -> Iterator[runfiles.Record]:
        run = _digest(path)
        head = runfiles.read_head_text(path)
        if head.startswith("["):  # several evaluate() results in one array
            prefixes = ["item.test_results.item"]
        elif '"test_results"' in head[:400]:
            prefixes = ["test_results.item"]
        else:
            prefixes = ["testCases.item", "conversationalTestCases.item"]
        index = 0
        for prefix in prefixes:
            for test in runfiles.items(path, prefix):
                yield from self._test(test, path, index, run)
                index += 1

    def _test(self, test: Any, path: str, index: int, run: str) -> Iterator[runfiles.Record]:
        source = runfiles.where(path, entry=index)
        if not isinstance(test, dict):
            yield runfiles.unreadable(path, "a DeepEval test case that is not an object", entry=index)
            return
        case_id, version, ref = case_link(test)
        duration = runfiles.number(_get(test, "duration"))
        tools = _get(test, "tools")
        trace = [{"name": t["name"], **{k: v for k, v in t.items() if k != "name"}} for t in tools
                 if isinstance(t, dict) and isinstance(t.get("name"), str)] if isinstance(tools, list) else None
        order = test.get("order", test.get("index", index))
        attempt = runs.attempt(
            harness=HARNESS, key=(run, order, test.get("name")), case_id=case_id, case_ref=ref, case_version=version,
            run=run, system="deepeval test case", duration_ms=duration * 1000 if duration is not None else None,
            output=_get(test, "output"), has_output=_get(test, "output") is not None, tool_trace=trace, source=source)
        yield "attempt", attempt
        metrics = _get(test, "metrics")
        for i, metric in enumerate(metrics if isinstance(metrics, list) else []):
            if isinstance(metric, dict):
                yield "result", _metric(metric, attempt["id"], i, source)


def _metric(metric: dict[str, Any], attempt_id: str, index: int, source: dict[str, Any]) -> runs.Result:
    name = given if isinstance(given := metric.get("name"), str) and given else f"metric {index + 1}"
    model = _get(metric, "model")
    type_, how = evaluator_type(name, model)
    error = runs.first_line(metric.get("error"))
    success = metric.get("success")
    return runs.result(
        attempt_id=attempt_id, name=name, type_=type_, type_source=how, score=runfiles.number(metric.get("score")),
        passed=None if error else (success if isinstance(success, bool) else None),
        review_status="error" if error else "automated", reason=error or metric.get("reason"),
        model=model if isinstance(model, str) else None, own_id=index, source=source)


RULES = {
    "verdict": "DeepEval's own: each metric's `success` (its score against the metric's own threshold)",
    "threshold": "the metric's own (`threshold=` on the metric); `--threshold` does not apply",
    "typing": "a metric that records a judge model: llm-judge; " + ", ".join(f"`{n}`" for n in sorted(_TRAJECTORY))
              + ": trajectory-or-state-check; any other (Exact Match, a custom BaseMetric): exact-or-programmatic",
}

READER = DeepEvalResults()

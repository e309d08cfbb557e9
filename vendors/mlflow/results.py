"""MLflow GenAI evaluation results -> attempts and results.

Reads the traces an `mlflow.genai.evaluate(...)` run leaves, as users save them: its
`EvaluationResult.result_df` or the run's `mlflow.search_traces(run_id=...)` DataFrame, with
`.to_json(orient="records", lines=True)` (JSONL, read a line at a time) or `orient="records"` (a
JSON array, streamed). Each row is a trace: an attempt (state ERROR: an errored attempt, its root
span's status message the error). Each of its `assessments` that is feedback is a result
(expectations are the case's data; an assessment MLflow marks `valid: false` was overridden and is
not read). The `<scorer>/value` columns are a summary of the same assessments and are not read.

Linking: MLflow puts a dataset record's tags on its trace, so the tag `case_id` evalconv's export
writes links the trace to its case; a trace without it links by its `request` `{"input": text}`.

Verdicts: MLflow's own (`EvaluationResult.passed`): true/false and yes/no ratings pass or fail; a
scorer that raised is an error (unscored here). A number has no pass rule MLflow saves (a scorer's
`pass_if` lives in the process), so it is unscored (`passAt: null`) until `--threshold` gives one. Typing: by the assessment's source (an
LLM_JUDGE source: llm-judge; a HUMAN's feedback: rubric-human); a CODE scorer by name: evalconv's
`evalconv_case` by the check its expectations name, any other: unknown (the report asks).
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Iterator

from evalconv.canonical import runs
from evalconv.canonical.errors import ReadError

from .._common import runfiles
from .fields import CASE_SCORER, CHECK_KEY, ID_TAG, INPUT_KEY

HARNESS = "mlflow"
_OPENING = re.compile(r'^\[?\s*\{\s*"trace_id"\s*:\s*"tr-')
# What evalconv's case_scorer checks, by the check its record's expectations name.
# (judge, human and state: no value, who must grade it, in its rationale: a pending result of that type.)
CHECK_TYPES = {"exact": "exact-or-programmatic", "membership": "exact-or-programmatic",
               "tool_calls": "trajectory-or-state-check", "state": "trajectory-or-state-check",
               "judge": "llm-judge", "human": "human-expert"}
SOURCE_TYPES = {"LLM_JUDGE": "llm-judge", "HUMAN": "rubric-human"}
_RATINGS = {"yes": True, "no": False}


def case_link(row: dict[str, Any]) -> tuple[str | None, dict[str, str] | None]:
    tags = row.get("tags")
    case_id = tags.get(ID_TAG) if isinstance(tags, dict) else None
    if isinstance(case_id, str) and case_id:
        return case_id, None
    request = row.get("request")
    if isinstance(request, dict) and set(request) == {INPUT_KEY} and isinstance(request[INPUT_KEY], str):
        return None, {"kind": "input", "value": request[INPUT_KEY]}
    return None, None


def verdict(value: Any) -> tuple[bool | None, float | None, str | None]:
    """(passed, score, why not a verdict) of one feedback value, as MLflow's EvaluationResult.passed reads it."""
    if isinstance(value, bool):
        return value, float(value), None
    if isinstance(value, str) and value.strip().lower() in _RATINGS:
        passed = _RATINGS[value.strip().lower()]
        return passed, float(passed), None
    number = runfiles.number(value)
    if number is not None:
        return None, number, (f"value {number:g}: MLflow counts only true/false and yes/no as verdicts (a "
                              "scorer's pass_if is not saved with the results); give one with --threshold")
    return None, None, f"value {str(value)[:60]!r} is not a verdict MLflow reads (true/false, yes/no)"


class MlflowResults:
    name = HARNESS
    title = "MLflow genai.evaluate traces (result_df or search_traces(run_id=...) saved with to_json)"
    files = "MLflow EvaluationResult.result_df / mlflow.search_traces(run_id=...) .to_json(orient='records'[, lines=True])"

    def detect(self, path: str, head: str) -> bool:
        return bool(_OPENING.match(head)) and '"trace":' in head or _lossy(path, head) is not None

    def read(self, path: str) -> Iterator[runfiles.Record]:
        lossy = _lossy(path, runfiles.read_head_text(path))
        if lossy is not None:
            raise ReadError(f"MLflow traces saved as {lossy}: save result_df or search_traces(...) with "
                            "to_json(orient='records', lines=True) and read that", source=path)
        if runfiles.read_head_text(path, 64).startswith("["):
            for index, row in enumerate(runfiles.items(path, "item")):
                yield from _row(row, path, None, index)
            return
        for line, row, problem in runfiles.jsonl(path):
            if problem is not None:
                yield runfiles.unreadable(path, f"line {line}: {problem}", line=line, entry=line - 1)
            else:
                yield from _row(row, path, line, line - 1)


def _lossy(path: str, head: str) -> str | None:
    """Why a saved trace frame cannot be read as MLflow wrote it (CSV, Parquet), or None."""
    first = head.split("\n", 1)[0]
    if first.startswith("trace_id,") and "assessments" in first:
        return "CSV, which holds each assessment as a Python repr, not JSON"
    if head.startswith("PAR1") and path.endswith(".parquet"):
        import pyarrow.parquet as pq

        try:
            names = set(pq.read_schema(path).names)
        except (OSError, ValueError):
            return None
        if {"trace_id", "assessments"} <= names:
            return "Parquet, where pyarrow gives every feedback value one type (true becomes 1.0)"
    return None


def _row(row: Any, path: str, line: int | None, index: int) -> Iterator[runfiles.Record]:
    label = f"line {line}" if line is not None else f"entry {index}"
    problem = _shape(row)
    if problem:
        yield runfiles.unreadable(path, f"{label}: {problem}", line=line, entry=index)
        return
    source = runfiles.where(path, line=line, entry=index)
    case_id, ref = case_link(row)
    metadata = row.get("trace_metadata") if isinstance(row.get("trace_metadata"), dict) else {}
    run = metadata.get("mlflow.sourceRun")
    failed = row.get("state") == "ERROR"
    output = row.get("response")
    started = runfiles.number(row.get("request_time"))
    attempt = runs.attempt(
        harness=HARNESS, key=("trace", row["trace_id"]), case_id=case_id, case_ref=ref,
        run=run if isinstance(run, str) else None, system="mlflow predict_fn",
        started_at=datetime.fromtimestamp(started / 1000, timezone.utc).isoformat() if started is not None else None,
        duration_ms=runfiles.number(row.get("execution_duration")),
        status="error" if failed else "completed", error=_error(row) if failed else None,
        output=output, has_output=output is not None, source=source)
    yield "attempt", attempt
    assessments = row["assessments"]
    check = next((a["expectation"].get("value") for a in assessments
                  if a.get("assessment_name") == CHECK_KEY and isinstance(a.get("expectation"), dict)), None)
    for assessment in assessments:
        if isinstance(assessment.get("feedback"), dict) and assessment.get("valid", True) is not False:
            yield "result", _result(attempt["id"], assessment, check, source)


def _shape(row: Any) -> str | None:
    """Why a row cannot be read, naming the field; None when it can."""
    if not isinstance(row, dict):
        return "not a JSON object (a trace row)"
    if not isinstance(row.get("trace_id"), str) or not row["trace_id"]:
        return "$.trace_id: missing or not a string"
    assessments = row.get("assessments")
    if not isinstance(assessments, list):
        return "$.assessments: missing or not a list (save the whole result_df or search_traces frame)"
    for number, assessment in enumerate(assessments):
        if not isinstance(assessment, dict) or not isinstance(assessment.get("assessment_name"), str):
            return f"$.assessments[{number}]: not an assessment (an object with an assessment_name)"
        feedback = assessment.get("feedback")
        if feedback is not None and not isinstance(feedback, dict):
            return f"$.assessments[{number}].feedback: not an object"
    return None


def _error(row: dict[str, Any]) -> str:
    spans = given if isinstance(given := row.get("spans"), list) else []
    root = next((s for s in spans if isinstance(s, dict) and not s.get("parent_span_id")), None)
    status = root.get("status") if isinstance(root, dict) else None
    message = status.get("message") if isinstance(status, dict) else None
    return runs.first_line(message) or "the trace ended in state ERROR"


def _origin(assessment: dict[str, Any]) -> dict[str, Any]:
    return given if isinstance(given := assessment.get("source"), dict) else {}


def _typed(assessment: dict[str, Any], check: Any) -> tuple[str | None, str]:
    kind = _origin(assessment).get("source_type")
    if kind in SOURCE_TYPES:
        return SOURCE_TYPES[kind], f"MLflow assessment source {kind}"
    name = assessment["assessment_name"]
    if name == CASE_SCORER and check in CHECK_TYPES:
        return CHECK_TYPES[check], f"evalconv's case_scorer, check {check}"
    return None, f"default: unknown (a {kind or 'CODE'} scorer evalconv does not know)"


def _result(attempt_id: str, assessment: dict[str, Any], check: Any, source: dict[str, Any]) -> runs.Result:
    name = assessment["assessment_name"]
    feedback = assessment["feedback"]
    error = feedback.get("error")
    rationale = assessment.get("rationale") if isinstance(assessment.get("rationale"), str) else None
    type_, typed_by = _typed(assessment, check)
    origin = _origin(assessment)
    human = origin.get("source_type") == "HUMAN"
    if error:
        message = error.get("error_message") if isinstance(error, dict) else error
        passed, score, status = None, None, "error"
        reason = f"the scorer raised: {runs.first_line(str(message)) or 'an error'}"
    elif feedback.get("value") is None:
        passed, score, status = None, None, "pending"
        reason = rationale or "no value: the scorer did not grade this trace"
    else:
        passed, score, why = verdict(feedback["value"])
        status = "reviewed" if human else "automated"
        reason = "; ".join(p for p in (rationale, why) if p)
    if type_ is None and passed is not None:
        reason = (reason + " " if reason else "") + f"(unknown scorer '{name}': type it with --evaluator '{name}=TYPE')"
    model = origin.get("source_id") if origin.get("source_type") == "LLM_JUDGE" else None
    own = assessment.get("assessment_id")
    record = runs.result(
        attempt_id=attempt_id, name=name, type_=type_, type_source="inferred", score=score, passed=passed,
        review_status=status, reason=runs.first_line(reason), model=model if isinstance(model, str) else None,
        recorded_at=assessment.get("create_time") if isinstance(assessment.get("create_time"), str) else None,
        own_id=own if isinstance(own, str) and own else None, source=source, typed_by=typed_by)
    if passed is None and score is not None:
        record["passAt"] = None  # a number MLflow saves no rule for: unscored until --threshold gives one
    return record


RULES = {
    "verdict": "MLflow's own (`EvaluationResult.passed`): true/false and yes/no pass or fail; a number is unscored "
               "until `--threshold` gives one (a scorer's pass_if is not saved); no value: pending; a scorer that "
               "raised: an error, unscored; a trace in state ERROR: an errored attempt",
    "threshold": "none: MLflow saves no pass rule for numbers (`--threshold mlflow=SCORE` or per scorer "
                 "`--threshold NAME=SCORE` gives one)",
    "typing": "by assessment source: `LLM_JUDGE`: llm-judge; `HUMAN`: rubric-human (`--evaluator NAME=human-expert` "
              "for an expert's review); a `CODE` scorer: evalconv's `evalconv_case` by the check its expectations "
              "name (" + ", ".join(f"`{k}`: {v}" for k, v in CHECK_TYPES.items()) + "); any other: unknown, a warning "
              "names it and `--evaluator NAME=TYPE`",
}

READER = MlflowResults()

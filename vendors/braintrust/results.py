"""Braintrust experiment results -> attempts and results.

Reads what `Eval(...)` returns, as `EvalResultWithSummary.as_dict()` saved to JSON
(`{"summary", "results": [...]}`): each row is an attempt, each of its scores a result. And an
experiment as an export dumps it (JSONL or a JSON array, the rows `ReadonlyExperiment.fetch()`
returns, system fields included): one row per span. A root span (`is_root`, or no
`span_parents`) is an attempt, keyed by its trace (`root_span_id`); the scores are on the spans
of the trace (`Eval` logs each scorer's scores on its own `score` span; a root span logged with
`scores` carries its own), each score a result of the trace's attempt. The file is read twice
(attempts, then results), so the spans may come in any order and nothing is held in memory. Rows
without `root_span_id` (an `Eval` result list saved as rows) are read like `as_dict()` rows.

A scorer that returns None did not score the row (Braintrust's own meaning), so it makes no
result. Braintrust scores are numbers in [0, 1] with no pass rule of their own: evalconv counts a
score of 1 as a pass (`PASS_AT`, overridable: `evalconv report --threshold braintrust=0.8` or
`--threshold Levenshtein=0.9`) and says so in the result's reason. A scorer is typed by its
autoevals class name; any other name (a custom function, an LLMClassifier named `tone`) is of
unknown type, and the report asks for it (`--evaluator tone=llm-judge`). evalconv's export puts the
case profile in the record's metadata (`metadata.case.caseId`); a dataset row's `origin.id`
(evalconv writes the case id as the record id) is the fallback link.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from evalconv.canonical import runs

from .._common import runfiles

HARNESS = "braintrust"
PASS_AT = 1.0
# autoevals' model-graded scorers (the rest of autoevals is code).
_JUDGES = {"Factuality", "ClosedQA", "Humor", "Security", "Sql", "Summary", "Translation", "Possible",
           "AnswerCorrectness", "AnswerRelevancy", "Faithfulness", "ContextRelevancy", "ContextRecall",
           "ContextPrecision", "ContextEntityRecall", "Moderation", "LLMClassifier"}
_PAIRWISE = {"Battle"}
# autoevals' code scorers, by the names they score under.
_CODE = {"ExactMatch", "Levenshtein", "LevenshteinScorer", "NumericDiff", "JSONDiff", "ValidJSON", "ListContains",
         "EmbeddingSimilarity", "SemanticListContains"}
TYPED_BY = "autoevals class"
_REPORT_OPENING = re.compile(r'\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"cases"\s*:')


def evaluator_type(name: str) -> str | None:
    """The type of an autoevals scorer by its name; None for any other (a custom scorer: ask)."""
    if name in _JUDGES:
        return "llm-judge"
    if name in _PAIRWISE:
        return "pairwise-preference"
    if name in _CODE:
        return "exact-or-programmatic"
    return None


def case_link(record: dict[str, Any]) -> tuple[str | None, str | None, dict[str, str] | None]:
    metadata = record.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if isinstance(case, dict) and isinstance(case.get("caseId"), str) and case["caseId"]:
        version = case.get("version")
        return case["caseId"], version if isinstance(version, str) else None, None
    origin = record.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("id"), str) and origin["id"]:
        return None, None, {"kind": "name", "value": origin["id"]}
    return None, None, None


class BraintrustResults:
    name = HARNESS
    title = "Braintrust Eval results (as_dict() JSON) or an experiment export (its spans, JSONL or JSON array)"
    files = "Braintrust EvalResultWithSummary.as_dict() JSON / experiment export (fetch() rows)"

    def detect(self, path: str, head: str) -> bool:
        top = head[:600]
        if head.startswith("{") and '"summary"' in top and '"results"' in head:
            return '"experiment_name"' in top or '"project_name"' in top
        if head.startswith(("{", "[")) and '"experiment_id"' in head and any(
                key in head for key in ('"root_span_id"', '"span_parents"', '"span_attributes"')):
            return True  # an experiment export: the first span need not carry scores
        first = head.split("\n", 1)[0]
        if _REPORT_OPENING.match(first):  # a compact pydantic-evals EvaluationReport is one line too
            return False
        return head.startswith(("{", "[")) and '"scores"' in first and ('"output"' in first or '"span_id"' in first) \
            and '"experimentItemId"' not in first  # Langfuse's experiment items carry scores and output too

    def read(self, path: str) -> Iterator[runfiles.Record]:
        head = runfiles.read_head_text(path)
        if head.startswith("{") and '"summary"' in head[:600]:
            summary = runfiles.first_value(path, "summary")
            summary = summary if isinstance(summary, dict) else {}
            run = summary.get("experiment_id") or summary.get("experiment_name")
            for index, row in enumerate(runfiles.items(path, "results.item")):
                yield from self._row(row, path, None, index, run)
        elif _is_span(next((row for _, _, row, problem in _rows(path, head.startswith("[")) if problem is None), None)):
            yield from self._spans(path, head.startswith("["))
        else:
            for line, index, row, problem in _rows(path, head.startswith("[")):
                if problem is not None:
                    yield runfiles.unreadable(path, problem, line=line, entry=index)
                else:
                    yield from self._row(row, path, line, index, None)

    def _row(self, row: Any, path: str, line: int | None, index: int, run: Any) -> Iterator[runfiles.Record]:
        """An `Eval` result row: the attempt and its scores."""
        if not isinstance(row, dict) or not isinstance(row.get("scores", {}), dict):
            yield runfiles.unreadable(path, "a Braintrust result that is not an object with scores", line=line, entry=index)
            return
        case_id = case_link(row)[0]
        own = row.get("id")
        attempt = _attempt(row, path, line, index, run, (own,) if isinstance(own, str) and own else (run, index, case_id))
        yield "attempt", attempt
        yield from _results(row, attempt["id"], runfiles.where(path, line=line, entry=index))

    def _spans(self, path: str, array: bool) -> Iterator[runfiles.Record]:
        """An experiment export: attempts from the root spans, then results from every span's scores."""
        for line, index, row, problem in _rows(path, array):
            if problem is not None or not isinstance(row, dict) or not isinstance(row.get("scores") or {}, dict):
                yield runfiles.unreadable(path, problem or "a Braintrust span that is not an object with scores",
                                          line=line, entry=index)
            elif _is_root(row):
                yield "attempt", _attempt(row, path, line, index, row.get("experiment_id"), _trace(row))
        for line, index, row, problem in _rows(path, array):
            if problem is None and isinstance(row, dict) and isinstance(row.get("scores"), dict):
                yield from _results(row, runs.attempt_id(HARNESS, *_trace(row)), runfiles.where(path, line=line, entry=index),
                                    span=row.get("id") or row.get("span_id"))


def _rows(path: str, array: bool) -> Iterator[tuple[int | None, int, Any, str | None]]:
    """(line, entry, row, problem) for each row of a JSON array or a JSONL file."""
    if array:
        for index, row in enumerate(runfiles.items(path, "item")):
            yield None, index, row, None
    else:
        for line, row, problem in runfiles.jsonl(path):
            yield line, line - 1, row, problem


def _is_span(row: Any) -> bool:
    return isinstance(row, dict) and "root_span_id" in row


def _is_root(span: dict[str, Any]) -> bool:
    return span["is_root"] if isinstance(span.get("is_root"), bool) else not span.get("span_parents")


def _trace(span: dict[str, Any]) -> tuple[str, Any]:
    return "trace", span.get("root_span_id") or span.get("span_id") or span.get("id")


def _attempt(row: dict[str, Any], path: str, line: int | None, index: int, run: Any, key: tuple[Any, ...]) -> runs.Attempt:
    case_id, version, ref = case_link(row)
    error = runs.first_line(row.get("error") if isinstance(row.get("error"), str) else
                            (str(row["error"]) if row.get("error") else None))
    metrics = row["metrics"] if isinstance(row.get("metrics"), dict) else {}
    start, end = runfiles.number(metrics.get("start")), runfiles.number(metrics.get("end"))
    run = run or row.get("experiment_id")
    return runs.attempt(
        harness=HARNESS, key=key, case_id=case_id, case_ref=ref, case_version=version,
        run=run if isinstance(run, str) else None, system="braintrust task",
        duration_ms=(end - start) * 1000 if start is not None and end is not None else None,
        status="error" if error else "completed", error=error,
        output=row.get("output"), has_output="output" in row, source=runfiles.where(path, line=line, entry=index))


def _results(row: dict[str, Any], attempt_id: str, source: dict[str, Any], span: Any = None) -> Iterator[runfiles.Record]:
    """A row's scores, each a result (`span`: the id of the span that carries them, in an export)."""
    for name, score in (row.get("scores") or {}).items():
        value = runfiles.number(score)
        if value is None:
            continue  # None: the scorer did not score this row
        passed = value >= PASS_AT
        type_ = evaluator_type(name)
        yield "result", runs.result(
            attempt_id=attempt_id, name=name, type_=type_, type_source="inferred", score=value,
            passed=passed, review_status="automated",
            reason=f"score {value:g} {'>=' if passed else '<'} {PASS_AT:g} (evalconv's pass rule for Braintrust scores)",
            own_id=name if span is None else (span, name), source=source,
            typed_by=TYPED_BY if type_ else "default: unknown (not an autoevals class)", pass_at=PASS_AT)


RULES = {
    "verdict": "a score (0 to 1) at or above the threshold passes; a scorer returning None did not score",
    "threshold": f"{PASS_AT} (`--threshold braintrust=SCORE`, or per scorer `--threshold NAME=SCORE`)",
    "typing": "by autoevals class name: " + ", ".join(f"`{n}`" for n in sorted(_JUDGES)) + ": llm-judge; "
              + ", ".join(f"`{n}`" for n in sorted(_PAIRWISE)) + ": pairwise-preference; "
              + ", ".join(f"`{n}`" for n in sorted(_CODE)) + ": exact-or-programmatic; any other name (a custom "
              "function, an LLMClassifier named `tone`): unknown, a warning names it and `--evaluator NAME=TYPE`",
}

READER = BraintrustResults()

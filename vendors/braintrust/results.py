"""Braintrust experiment results -> attempts and results.

Reads what `Eval(...)` returns, as `EvalResultWithSummary.as_dict()` saved to JSON
(`{"summary", "results": [...]}`), and experiment rows as an export dumps them (JSONL or a JSON
array of rows with `scores`). Each row is an attempt; each score a result. A scorer that returns
None did not score the row (Braintrust's own meaning), so it makes no result. Braintrust scores
are numbers in [0, 1] with no pass rule of their own: evalconv counts a score of 1 as a pass
(`PASS_AT`) and says so in the result's reason. evalconv's export puts the case profile in the
record's metadata (`metadata.case.caseId`); a dataset row's `origin.id` (evalconv writes the case
id as the record id) is the fallback link.
"""
from __future__ import annotations

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


def evaluator_type(name: str) -> str:
    if name in _JUDGES:
        return "llm-judge"
    if name in _PAIRWISE:
        return "pairwise-preference"
    return "exact-or-programmatic"  # ExactMatch, Levenshtein, JSONDiff, a custom function scorer


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
    title = "Braintrust Eval results (as_dict() JSON) or experiment rows (JSONL export)"
    files = "Braintrust EvalResultWithSummary.as_dict() JSON / experiment export rows"

    def detect(self, path: str, head: str) -> bool:
        top = head[:600]
        if head.startswith("{") and '"summary"' in top and '"results"' in head:
            return '"experiment_name"' in top or '"project_name"' in top
        first = head.split("\n", 1)[0]
        return head.startswith(("{", "[")) and '"scores"' in first and ('"output"' in first or '"span_id"' in first)

    def read(self, path: str) -> Iterator[runfiles.Record]:
        head = runfiles.read_head_text(path)
        if head.startswith("{") and '"summary"' in head[:600]:
            summary = runfiles.first_value(path, "summary")
            summary = summary if isinstance(summary, dict) else {}
            run = summary.get("experiment_id") or summary.get("experiment_name")
            for index, row in enumerate(runfiles.items(path, "results.item")):
                yield from self._row(row, path, None, index, run)
        elif head.startswith("["):
            for index, row in enumerate(runfiles.items(path, "item")):
                yield from self._row(row, path, None, index, None)
        else:
            for line, row, problem in runfiles.jsonl(path):
                if problem is not None:
                    yield runfiles.unreadable(path, problem, line=line)
                    continue
                yield from self._row(row, path, line, line - 1, None)

    def _row(self, row: Any, path: str, line: int | None, index: int, run: Any) -> Iterator[runfiles.Record]:
        source = runfiles.where(path, line=line, entry=index)
        if not isinstance(row, dict) or not isinstance(row.get("scores", {}), dict):
            yield runfiles.unreadable(path, "a Braintrust result that is not an object with scores", line=line, entry=index)
            return
        case_id, version, ref = case_link(row)
        run = run or row.get("experiment_id")
        own = row.get("id")
        key = (own,) if isinstance(own, str) and own else (run, index, case_id)
        error = runs.first_line(row.get("error") if isinstance(row.get("error"), str) else
                                (str(row["error"]) if row.get("error") else None))
        metrics = row["metrics"] if isinstance(row.get("metrics"), dict) else {}
        start, end = runfiles.number(metrics.get("start")), runfiles.number(metrics.get("end"))
        attempt = runs.attempt(
            harness=HARNESS, key=key, case_id=case_id, case_ref=ref, case_version=version,
            run=run if isinstance(run, str) else None, system="braintrust task",
            duration_ms=(end - start) * 1000 if start is not None and end is not None else None,
            status="error" if error else "completed", error=error,
            output=row.get("output"), has_output="output" in row, source=source)
        yield "attempt", attempt
        for name, score in (row.get("scores") or {}).items():
            value = runfiles.number(score)
            if value is None:
                continue  # None: the scorer did not score this row
            passed = value >= PASS_AT
            yield "result", runs.result(
                attempt_id=attempt["id"], name=name, type_=evaluator_type(name), type_source="inferred", score=value,
                passed=passed, review_status="automated",
                reason=f"score {value:g} {'>=' if passed else '<'} {PASS_AT:g} (evalconv's pass rule for Braintrust scores)",
                own_id=name, source=source)


READER = BraintrustResults()

"""LangSmith experiment runs and feedback -> attempts and results.

Reads runs and feedback as the SDK lists them (`Client.list_runs()` -> `schemas.Run`,
`Client.list_feedback()` -> `schemas.Feedback`), saved one object a line (`.model_dump_json()`)
or as a JSON array. Give the runs file before the feedback file. Each root run is an attempt;
child runs (parent_run_id set) are steps inside an attempt's trace, not attempts, and are
skipped; each feedback is a result. A run names its example by
`reference_example_id`, which for an evalconv export is the uuid5 of the case id
(`vendors/langsmith/format.py:example_id`), resolved against the case set in the report.

Feedback has no pass rule: a numeric score of 1 (or true) passes, 0 fails, other scores are
kept with passed null. Source type `app` (the UI, annotation queues) is a person:
rubric-human; `model` is what evaluate() logs for every evaluator, code or judge, so it says
nothing about the type: the feedback key of an openevals evaluator types it (its code evaluators
exact-or-programmatic, its LLM-as-judge prompts llm-judge); any other key is of unknown type and
the report asks for it (`--evaluator KEY=TYPE`). A score of 1 passes (`PASS_AT`; `--threshold`).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Iterator

from evalconv.canonical import runs

from .._common import runfiles
from .format import example_id

HARNESS = "langsmith"
EXAMPLE_REF = "langsmith-example-id"  # a run's reference_example_id, as a caseRef kind
PASS_AT = 1.0
_STATUS = {"success": "completed", "error": "error", "timeout": "timeout", "cancelled": "cancelled"}
# openevals' feedback keys: its code evaluators and its LLM-as-judge prompts (openevals.prompts).
OPENEVALS_CODE = {"exact_match", "levenshtein_distance", "embedding_similarity", "json_match"}
OPENEVALS_JUDGES = {"correctness", "conciseness", "hallucination", "helpfulness", "rag_helpfulness",
                    "rag_groundedness", "rag_retrieval_relevance", "toxicity", "plan_adherence",
                    "trajectory_accuracy", "score"}


def model_feedback_type(key: str) -> tuple[str | None, str]:
    """(type, why) of `model` feedback: only an openevals key says what made it."""
    if key in OPENEVALS_CODE:
        return "exact-or-programmatic", "openevals code evaluator key"
    if key in OPENEVALS_JUDGES:
        return "llm-judge", "openevals LLM-as-judge key"
    return None, "default: unknown (LangSmith model feedback, code or judge)"


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def verdict(score: Any, value: Any) -> bool | None:
    if isinstance(score, bool):
        return score
    number = runfiles.number(score)
    if number is not None:
        return True if number >= PASS_AT else False if number <= 0 else None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("pass", "passed", "fail", "failed"):
        return value.lower().startswith("pass")
    return None


class LangSmithResults:
    name = HARNESS
    title = "LangSmith runs and feedback as list_runs() / list_feedback() give them (JSONL or JSON)"
    files = "LangSmith Run objects (runs.jsonl) then Feedback objects (feedback.jsonl)"
    # A run names its example by id: the id the writer gave the case's example.
    case_refs = {EXAMPLE_REF: example_id}

    def detect(self, path: str, head: str) -> bool:
        first = head.split("\n", 1)[0]
        if not head.startswith(("{", "[")):
            return False
        return ('"run_type"' in first and '"trace_id"' in first) or ('"feedback_source"' in first and '"run_id"' in first)

    def read(self, path: str) -> Iterator[runfiles.Record]:
        head = runfiles.read_head_text(path)
        if head.startswith("["):
            for index, record in enumerate(runfiles.items(path, "item")):
                yield from self._record(record, path, None, index)
            return
        for line, record, problem in runfiles.jsonl(path):
            if problem is not None:
                yield runfiles.unreadable(path, problem, line=line)
                continue
            yield from self._record(record, path, line, line - 1)

    def _record(self, record: Any, path: str, line: int | None, index: int) -> Iterator[runfiles.Record]:
        source = runfiles.where(path, line=line, entry=index)
        if isinstance(record, dict) and "feedback_source" in record and isinstance(record.get("run_id"), str):
            yield "result", _feedback(record, source)
        elif isinstance(record, dict) and isinstance(record.get("id"), str) and "run_type" in record:
            if record.get("parent_run_id") is None:
                yield "attempt", _run(record, source)
        else:
            yield runfiles.unreadable(path, "neither a LangSmith run nor a feedback object", line=line, entry=index)


def _run(run: dict[str, Any], source: dict[str, Any]) -> runs.Attempt:
    start, end = _time(run.get("start_time")), _time(run.get("end_time"))
    example = run.get("reference_example_id")
    extra = given if isinstance(given := run.get("extra"), dict) else {}
    meta = given if isinstance(given := extra.get("metadata"), dict) else {}
    status = _STATUS.get(run.get("status") or "", "error" if run.get("error") else "completed")
    return runs.attempt(
        harness=HARNESS, key=(run["id"],), case_id=None,
        case_ref={"kind": EXAMPLE_REF, "value": example} if isinstance(example, str) else None,
        run=run.get("session_id") if isinstance(run.get("session_id"), str) else None,
        system=str(run.get("name") or "target"),
        system_version=meta.get("revision_id") if isinstance(meta.get("revision_id"), str) else None,
        started_at=run.get("start_time") if isinstance(run.get("start_time"), str) else None,
        duration_ms=(end - start).total_seconds() * 1000 if start and end else None, status=status,
        error=runs.first_line(run.get("error")), output=run.get("outputs"), has_output="outputs" in run,
        source=source)


def _feedback(feedback: dict[str, Any], source: dict[str, Any]) -> runs.Result:
    origin = given if isinstance(given := feedback.get("feedback_source"), dict) else {}
    kind = origin.get("type")
    key = given if isinstance(given := feedback.get("key"), str) and given else "feedback"
    type_: str | None
    if kind == "app":
        type_, status, why = "rubric-human", "reviewed", "LangSmith feedback source app (a person)"
    elif kind == "model":
        (type_, why), status = model_feedback_type(key), "automated"
    else:
        type_, status, why = None, "automated", f"default: unknown (feedback source {kind!r})"
    score = runfiles.number(feedback.get("score"))
    comment = feedback.get("comment")
    return runs.result(
        attempt_id=runs.attempt_id(HARNESS, feedback["run_id"]), name=key, type_=type_, type_source="inferred",
        score=score, passed=verdict(feedback.get("score"), feedback.get("value")),
        review_status=status, reason=comment if isinstance(comment, str) else None,
        recorded_at=feedback.get("created_at") if isinstance(feedback.get("created_at"), str) else None,
        own_id=feedback.get("id"), source=source, typed_by=why,
        pass_at=PASS_AT if score is not None and not isinstance(feedback.get("score"), bool) else None)


RULES = {
    "verdict": "feedback has no pass rule: a score at or above the threshold (or true) passes, 0 (or false) fails, "
               "a score in between is unscored unless `--threshold` is given; a `pass`/`fail` value as it says",
    "threshold": f"{PASS_AT} (`--threshold langsmith=SCORE` or `--threshold KEY=SCORE`)",
    "typing": "source `app` (the UI, annotation queues): rubric-human; source `model` (code or judge alike) by "
              "openevals key: " + ", ".join(f"`{n}`" for n in sorted(OPENEVALS_CODE)) + ": exact-or-programmatic; "
              + ", ".join(f"`{n}`" for n in sorted(OPENEVALS_JUDGES)) + ": llm-judge; any other key: unknown, "
              "a warning names it and `--evaluator KEY=TYPE`",
}

READER = LangSmithResults()

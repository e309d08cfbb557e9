"""Langfuse experiment items -> attempts and results.

Reads what Langfuse's public API gives for a dataset run (an experiment): `GET
/api/public/experiment-items?fields=core,dataset,io,itemMetadata,scores` (the SDK's
`langfuse.api.experiments.list_items(...)`), saved as the response page (`{"data": [...], "meta"}`),
a JSON array of its items, or one `ExperimentItem` a line (`item.json()`). `run_experiment`'s
`ExperimentResult` has no JSON form of its own (only `format()` text), so the API's items are
the file to bring back. Each item (one trace of the task on one dataset item) is an attempt, keyed
by its trace id; each of its scores a result. An item at level ERROR (the task raised; Langfuse
keeps its message) is an errored attempt. Scores fetched on their own (`GET /api/public/v3/scores`,
`langfuse.api.scores.get_many`, or v2's `/api/public/v2/scores`: a person's annotation after the
run, a rescoring) are read too, after the items, each a result of the item whose trace it is on.

Linked to its case by the case profile evalconv's export puts in the dataset item's metadata
(`experimentItemMetadata.case.caseId`, else `evalconv.id`); else by the dataset item id, whose
`<dataset>:` namespace evalconv's export adds (`golden:r-refund` is case `r-refund`).

Scores state no pass rule (vendors/_common/labels.py): BOOLEAN says it; CATEGORICAL only with a pass
or fail word; NUMERIC is unscored (`passAt: null`) until `--threshold` gives the rule, except the 1
(pass) and 0 (fail) of evalconv's own `evalconv_case`. TEXT and CORRECTION scores are notes and a corrected output, not judgements: no
result. Typing by the score's source: ANNOTATION (a person, in the UI or a queue) rubric-human;
EVAL (Langfuse's managed LLM-as-a-judge) llm-judge; API (what `run_experiment`'s evaluators and
the SDK post, code or judge alike) unknown, except evalconv's own `evalconv_case` (a program).
"""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Iterator

from evalconv.canonical import runs

from .._common import labels, runfiles
from .evaluators import NAME as CASE_EVALUATOR

HARNESS = "langfuse"
FLAG = "`--threshold langfuse=SCORE` or `--threshold NAME=SCORE`"
NOT_JUDGEMENTS = {"TEXT", "CORRECTION"}
_SOURCES = {"ANNOTATION": ("rubric-human", "reviewed", "Langfuse score source ANNOTATION (a person)"),
            "EVAL": ("llm-judge", "automated", "Langfuse score source EVAL (its LLM-as-a-judge)")}


def evaluator_type(source: Any, name: str) -> tuple[str | None, str, str]:
    """(type, review status, why) of a score."""
    if source in _SOURCES:
        return _SOURCES[source]
    if name == CASE_EVALUATOR:
        return "exact-or-programmatic", "automated", "evalconv's case_evaluator"
    return None, "automated", f"default: unknown (Langfuse score source {source}, code or judge)"


def case_link(item: dict[str, Any]) -> tuple[str | None, str | None, dict[str, str] | None]:
    for key in ("experimentItemMetadata", "metadata"):
        meta = item.get(key)
        case = meta.get("case") if isinstance(meta, dict) else None
        if isinstance(case, dict) and isinstance(case.get("caseId"), str) and case["caseId"]:
            version = case.get("version")
            return case["caseId"], version if isinstance(version, str) else None, None
        envelope = meta.get("evalconv") if isinstance(meta, dict) else None
        if isinstance(envelope, dict) and isinstance(envelope.get("id"), str) and envelope["id"]:
            return envelope["id"], None, None
    own = item.get("experimentItemId")
    if isinstance(own, str) and own:
        return None, None, {"kind": "name", "value": own.split(":", 1)[1] if ":" in own else own}
    return None, None, None


class LangfuseResults:
    name = HARNESS
    title = ("Langfuse experiment items (GET /api/public/experiment-items with scores) and scores (GET "
             "/api/public/v3/scores): the page, a JSON array or JSONL")
    files = "Langfuse experiment items with their scores (experiments.list_items JSON or JSONL), then any scores file"

    def detect(self, path: str, head: str) -> bool:
        if not head.startswith(("{", "[")):
            return False
        if '"experimentItemId"' in head and '"traceId"' in head:
            return True
        return '"dataType"' in head and '"projectId"' in head and ('"traceId"' in head or '"subject"' in head)

    def read(self, path: str) -> Iterator[runfiles.Record]:
        head = runfiles.read_head_text(path)
        if head.startswith("["):
            rows: Iterator[tuple[int | None, int, Any, str | None]] = (
                (None, index, item, None) for index, item in enumerate(runfiles.items(path, "item")))
        elif head.startswith("{") and head[1:].lstrip().startswith('"data"'):
            rows = ((None, index, item, None) for index, item in enumerate(runfiles.items(path, "data.item")))
        else:
            rows = ((line, line - 1, item, problem) for line, item, problem in runfiles.jsonl(path))
        for line, index, item, problem in rows:
            score = isinstance(item, dict) and "dataType" in item and "experimentItemId" not in item
            problem = problem or (_score_shape(item) if score else _shape(item))
            if problem is not None:
                where = f"line {line}" if line is not None else f"item {index + 1}"
                yield runfiles.unreadable(path, f"{where}: {problem}", line=line, entry=index)
            elif score and item.get("dataType") not in NOT_JUDGEMENTS:
                yield "result", _score(runs.attempt_id(HARNESS, "trace", _trace_of(item)), item,
                                       runfiles.where(path, line=line, entry=index))
            elif not score:
                yield from _item(item, runfiles.where(path, line=line, entry=index))


def _trace_of(score: dict[str, Any]) -> Any:
    """The trace a score (v2: `traceId`; v3: its `subject`) is on."""
    given = score.get("subject")
    subject: dict[str, Any] = given if isinstance(given, dict) else {}
    return score.get("traceId") or (subject.get("id") if subject.get("kind") == "trace" else subject.get("traceId"))


def _score_shape(score: dict[str, Any]) -> str | None:
    """Why a score read on its own cannot be a result, naming the field; None when it can."""
    if not isinstance(_trace_of(score), str) or not _trace_of(score):
        return "$.traceId: missing (a score on a session or an experiment, not on an item's trace)"
    if not isinstance(score.get("name"), str) or not score["name"]:
        return "$.name: missing or not a string"
    return None if "value" in score else "$.value: missing"


def _shape(item: Any) -> str | None:
    """Why an experiment item cannot be read, naming the field; None when it can."""
    if not isinstance(item, dict):
        return "not an object"
    if not isinstance(item.get("traceId"), str) or not item["traceId"]:
        return "$.traceId: missing or not a string"
    scores = item.get("scores")
    if scores is not None and not isinstance(scores, list):
        return "$.scores: not a list"
    for n, score in enumerate(scores or []):
        if not isinstance(score, dict):
            return f"$.scores[{n}]: not an object"
        if not isinstance(score.get("name"), str) or not score["name"]:
            return f"$.scores[{n}].name: missing or not a string"
        if "value" not in score:
            return f"$.scores[{n}].value: missing"
    return None


def _item(item: dict[str, Any], source: dict[str, Any]) -> Iterator[runfiles.Record]:
    case_id, version, ref = case_link(item)
    failed = item.get("level") == "ERROR"
    error = (runs.first_line(item.get("statusMessage")) or "Langfuse observation level ERROR") if failed else None
    start, end = _seconds(item.get("startTime")), _seconds(item.get("endTime"))
    text = lambda key: item[key] if isinstance(item.get(key), str) else None  # noqa: E731
    attempt = runs.attempt(
        harness=HARNESS, key=("trace", item["traceId"]), case_id=case_id, case_ref=ref, case_version=version,
        run=text("experimentId"), system=text("experimentName") or "langfuse task", started_at=text("startTime"),
        duration_ms=(end - start) * 1000 if start is not None and end is not None else None,
        status="error" if failed else "completed", error=error,
        output=item.get("output"), has_output="output" in item and not failed, source=source)
    yield "attempt", attempt
    for score in item.get("scores") or []:
        if score.get("dataType") not in NOT_JUDGEMENTS:
            yield "result", _score(attempt["id"], score, source)


def _seconds(stamp: Any) -> float | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() if isinstance(stamp, str) else None
    except ValueError:
        return None


def _verdict(kind: Any, value: Any, name: str) -> tuple[bool | None, str, bool]:
    """(passed, what the score said, a number with no rule) of one score, by its data type."""
    if kind == "BOOLEAN" or isinstance(value, bool):
        passed = labels.label_verdict(value) if isinstance(value, str) else (
            bool(value) if isinstance(value, bool) or runfiles.number(value) is not None else None)
        return passed, f"{'no verdict' if passed is None else str(passed).lower()} (BOOLEAN)", False
    if kind == "NUMERIC" or (kind is None and runfiles.number(value) is not None):
        number = runfiles.number(value)
        if number is None:
            return None, "no score", False
        if name == CASE_EVALUATOR and number in (0.0, 1.0):  # evalconv's own rule: 1 passes, 0 fails
            return number == 1.0, f"score {number:g} ({CASE_EVALUATOR}: 1 passes, 0 fails)", False
        return None, labels.no_rule(number, FLAG), True
    passed = labels.label_verdict(value)
    said = f"category {json.dumps(value)[:60]}" + ("" if passed is not None else " is not a pass or a fail word: unscored")
    return passed, said, False


def _score(attempt_id: str, score: dict[str, Any], source: dict[str, Any]) -> runs.Result:
    name = score["name"]
    value = score["stringValue"] if score.get("dataType") == "CATEGORICAL" and isinstance(score.get("stringValue"), str) \
        else score["value"]  # v2 gives a category its number and its text
    type_, status, why = evaluator_type(score.get("source"), name)
    passed, said, numeric = _verdict(score.get("dataType"), value, name)
    comment = score.get("comment")
    reason = said + (f": {comment}" if isinstance(comment, str) and comment.strip() else "")
    if type_ is None:
        reason += f" (type it with --evaluator '{name}=TYPE')"
    boolean = score.get("dataType") == "BOOLEAN" and passed is not None
    record = runs.result(
        attempt_id=attempt_id, name=name, type_=type_, type_source="inferred",
        score=runfiles.number(value) if not boolean else (1.0 if passed else 0.0),
        passed=passed, review_status=status, reason=runs.first_line(reason),
        recorded_at=score.get("timestamp") if isinstance(score.get("timestamp"), str) else None,
        own_id=score.get("id") if isinstance(score.get("id"), str) else name, source=source, typed_by=why)
    return labels.unscored_until_threshold(record) if numeric else record


RULES = {
    "verdict": "scores state no pass rule: BOOLEAN as it says; CATEGORICAL " + labels.words_text() + ", any other "
               f"category unscored; NUMERIC unscored until `--threshold` (`passAt: null`), except `{CASE_EVALUATOR}`'s "
               "1 (pass) and 0 (fail); TEXT and CORRECTION scores are not judgements (no result); an item at level "
               "ERROR is an errored attempt",
    "threshold": f"none: a NUMERIC score is unscored until {FLAG}",
    "typing": "by score source: `ANNOTATION` (a person): rubric-human; `EVAL` (Langfuse's LLM-as-a-judge): "
              f"llm-judge; `API` (run_experiment's evaluators, code or judge alike): unknown, except `{CASE_EVALUATOR}` "
              "(evalconv's case_evaluator): exact-or-programmatic; a warning names each unknown one and "
              "`--evaluator NAME=TYPE`",
}

READER = LangfuseResults()

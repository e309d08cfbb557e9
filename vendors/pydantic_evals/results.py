"""pydantic-evals evaluation reports -> attempts and results.

Reads what `Dataset.evaluate` / `evaluate_sync` returns as pydantic-evals serializes it:
`EvaluationReportAdapter.dump_json(report)` (the `EvaluationReport` as JSON; `validate_json` reads
it back). Each of its `cases` (one run of the task on one case; with `repeat`, one per run) is an
attempt, each of its `failures` (the task raised) an errored attempt; each entry of a case's
`assertions` and `scores` is a result, and each of its `evaluator_failures` (an evaluator raised)
an errored result. `labels` are categories, not verdicts, and are not read. The report's cases and
failures are streamed with ijson.

Linking: evalconv's export writes the case id as the case `name` and the case profile in its
`metadata` (`metadata.case.caseId`); the name (`source_case_name` for a repeated run) is the fallback.

Verdicts: an assertion is pydantic-evals' own pass or fail. A score has no pass rule in
pydantic-evals, so it is unscored (`passAt: null`) until `--threshold NAME=SCORE` gives one (the
TrajectoryMatch score evalconv's export writes for a tool-call case is 1.0 or 0.0:
`--threshold TrajectoryMatch=1`). The always-failing `IsInstance` evalconv
writes for a case pydantic-evals cannot grade (named `not checked by pydantic-evals: ...`) is read as
what it stands for: grading still pending. Evaluators are typed by the class pydantic-evals records
(`source.name`); a custom evaluator's type is unknown and the report asks for it.
"""
from __future__ import annotations

from typing import Any, Iterator

from evalconv.canonical import runs

from .._common import labels, runfiles
from .evaluators import JUDGES, NOT_CHECKED_PREFIX, TRACED

HARNESS = "pydantic-evals"
PLACEHOLDER = "evalconv:needs-grading"
PROGRAMMATIC = frozenset({"Equals", "EqualsExpected", "Contains", "IsInstance", "MaxDuration"})
TYPED_BY = "pydantic-evals evaluator class"
# Keys only an EvaluationReport has (a Dataset file has `cases` too, never these).
_REPORT_KEYS = ('"assertions"', '"task_duration"', '"evaluator_failures"', '"report_evaluator_failures"',
                '"error_stacktrace"')


def evaluator_type(evaluator: str | None) -> str | None:
    """The type of a pydantic-evals evaluator by its class name; None for a custom one (ask)."""
    if evaluator in JUDGES:
        return "llm-judge"
    if evaluator in TRACED:
        return "trajectory-or-state-check"
    if evaluator in PROGRAMMATIC:
        return "exact-or-programmatic"
    return None


def case_link(case: dict[str, Any]) -> tuple[str | None, str | None, dict[str, str] | None]:
    metadata = case.get("metadata")
    profile = metadata.get("case") if isinstance(metadata, dict) else None
    if isinstance(profile, dict) and isinstance(profile.get("caseId"), str) and profile["caseId"]:
        version = profile.get("version")
        return profile["caseId"], version if isinstance(version, str) else None, None
    name = case.get("source_case_name") or case.get("name")
    return None, None, ({"kind": "name", "value": name} if isinstance(name, str) and name else None)


class PydanticEvalsResults:
    name = HARNESS
    title = "pydantic-evals EvaluationReport JSON (EvaluationReportAdapter.dump_json(report))"
    files = "pydantic-evals EvaluationReport as EvaluationReportAdapter.dump_json(report) writes it"

    def detect(self, path: str, head: str) -> bool:
        return head.startswith("{") and '"cases"' in head[:600] and any(key in head for key in _REPORT_KEYS)

    def read(self, path: str) -> Iterator[runfiles.Record]:
        report = runfiles.first_value(path, "name")
        run = report if isinstance(report, str) else None
        base = path.rsplit("/", 1)[-1]
        for index, case in enumerate(runfiles.items(path, "cases.item")):
            yield from _case(case, path, run, base, index, failed=False)
        for index, case in enumerate(runfiles.items(path, "failures.item")):
            yield from _case(case, path, run, base, index, failed=True)


def _case(case: Any, path: str, run: str | None, base: str, index: int, failed: bool) -> Iterator[runfiles.Record]:
    where = f"$.{'failures' if failed else 'cases'}[{index}]"
    source = runfiles.where(path, entry=index)
    problem = _shape(case, failed)
    if problem:
        yield runfiles.unreadable(path, f"{where}{problem}", entry=index)
        return
    case_id, version, ref = case_link(case)
    span = case.get("span_id")
    key = (span,) if isinstance(span, str) and span else (base, run, case["name"])
    duration = runfiles.number(case.get("task_duration"))
    error = runs.first_line(case.get("error_message")) if failed else None
    attempt = runs.attempt(
        harness=HARNESS, key=key, case_id=case_id, case_ref=ref, case_version=version, run=run,
        system="pydantic-evals task", duration_ms=duration * 1000 if duration is not None else None,
        status="error" if failed else "completed", error=error or ("the task raised" if failed else None),
        output=case.get("output"), has_output="output" in case, source=source)
    yield "attempt", attempt
    if failed:
        return
    for name, result in case["assertions"].items():
        yield "result", _assertion(attempt["id"], name, result, source)
    for name, result in case["scores"].items():
        yield "result", _score(attempt["id"], name, result, source)
    for number, failure in enumerate(case.get("evaluator_failures") or []):
        yield "result", _failure(attempt["id"], failure, number, source)


def _shape(case: Any, failed: bool) -> str | None:
    """Why a report case cannot be read (the field, from the case), or None."""
    if not isinstance(case, dict):
        return ": not an object"
    if not isinstance(case.get("name"), str) or not case["name"]:
        return ".name: missing or not a string"
    if failed:
        return None
    for group, kinds in (("assertions", (bool,)), ("scores", (int, float))):
        results = case.get(group)
        if not isinstance(results, dict):
            return f".{group}: missing or not an object"
        for name, result in results.items():
            value = result.get("value") if isinstance(result, dict) else None
            if not isinstance(value, kinds) or (group == "scores" and isinstance(value, bool)):
                want = "true or false" if group == "assertions" else "a number"
                return f".{group}.{name}.value: not {want}"
    failures = case.get("evaluator_failures")
    if failures is not None and not (isinstance(failures, list) and all(isinstance(f, dict) for f in failures)):
        return ".evaluator_failures: not a list of objects"
    return None


def _class(result: dict[str, Any]) -> str | None:
    source = result.get("source")
    name = source.get("name") if isinstance(source, dict) else None
    return name if isinstance(name, str) else None


def _typed(name: str, evaluator: str | None) -> tuple[str | None, str]:
    type_ = evaluator_type(evaluator)
    return type_, TYPED_BY if type_ else f"default: unknown (not a pydantic-evals evaluator: {evaluator or name})"


def _assertion(attempt_id: str, name: str, result: dict[str, Any], source: dict[str, Any]) -> runs.Result:
    evaluator = _class(result)
    if evaluator == "IsInstance" and name.startswith(NOT_CHECKED_PREFIX):
        return runs.result(attempt_id=attempt_id, name=PLACEHOLDER, type_=None, type_source="unknown", score=None,
                           passed=None, review_status="pending", reason=name, own_id=("assertion", name),
                           source=source, typed_by="evalconv's placeholder: grading is pending")
    type_, typed_by = _typed(name, evaluator)
    reason = result.get("reason") if isinstance(result.get("reason"), str) else None
    if type_ is None:
        reason = (reason + " " if reason else "") + f"(unknown evaluator '{name}': type it with --evaluator '{name}=TYPE')"
    return runs.result(
        attempt_id=attempt_id, name=name, type_=type_, type_source="inferred", score=float(result["value"]),
        passed=result["value"], review_status="automated", reason=runs.first_line(reason),
        version=_version(result), own_id=("assertion", name), source=source, typed_by=typed_by)


def _score(attempt_id: str, name: str, result: dict[str, Any], source: dict[str, Any]) -> runs.Result:
    score = float(result["value"])
    type_, typed_by = _typed(name, _class(result))
    reason = result.get("reason")
    why = f"score {score:g}: pydantic-evals has no pass rule for scores; give one with --threshold '{name}=SCORE'"
    return labels.unscored_until_threshold(runs.result(
        attempt_id=attempt_id, name=name, type_=type_, type_source="inferred", score=score, passed=None,
        review_status="automated", reason=runs.first_line(why + (f": {reason}" if isinstance(reason, str) else "")),
        version=_version(result), own_id=("score", name), source=source, typed_by=typed_by))


def _failure(attempt_id: str, failure: dict[str, Any], number: int, source: dict[str, Any]) -> runs.Result:
    evaluator = _class(failure)
    given = failure.get("name")
    name: str = given if isinstance(given, str) else evaluator or "evaluator"
    type_, typed_by = _typed(name, evaluator)
    message = runs.first_line(failure.get("error_message")) or "the evaluator raised"
    return runs.result(
        attempt_id=attempt_id, name=name, type_=type_, type_source="inferred", score=None, passed=None,
        review_status="error", reason=f"the evaluator raised: {message}", version=_version(failure),
        own_id=("failure", name, number), source=source, typed_by=typed_by)


def _version(result: dict[str, Any]) -> str | None:
    version = result.get("evaluator_version")
    return version if isinstance(version, str) else None


RULES = {
    "verdict": "an assertion is pydantic-evals' own pass or fail; a score has no pass rule of its own: unscored "
               "until `--threshold` gives one; an evaluator that raised: an error, unscored; a task that raised: an "
               "errored attempt; evalconv's `not checked` placeholder: pending",
    "threshold": "none for scores (`--threshold pydantic-evals=SCORE` or per evaluation `--threshold NAME=SCORE` "
                 "gives one, e.g. `TrajectoryMatch=1`); assertions are the tool's own verdicts",
    "typing": "by evaluator class (`source.name`): " + ", ".join(f"`{n}`" for n in sorted(PROGRAMMATIC))
              + ": exact-or-programmatic; " + ", ".join(f"`{n}`" for n in sorted(JUDGES)) + ": llm-judge; "
              + ", ".join(f"`{n}`" for n in sorted(TRACED)) + ": trajectory-or-state-check; any other (a custom "
              "Evaluator): unknown, a warning names it and `--evaluator NAME=TYPE`",
}

READER = PydanticEvalsResults()

"""promptfoo run output -> attempts and results.

Reads `promptfoo eval -o results.json` (streamed: `results.results[]`) and `-o results.jsonl`
(one EvaluateResult a line). Each entry (test x prompt x provider) is an attempt; each assertion's
component result is a result, kept one by one. evalconv's export puts the case profile in the
test's metadata, so `metadata.case.caseId` links the attempt to its case; a test evalconv did not
write is linked by its description. The always-failing assertion evalconv writes for a case
promptfoo cannot grade is read as what it stands for: grading still pending (passed null).

promptfoo decides a test itself (`success`: every assertion passes, or the weighted score
reaches the test's `threshold`; an `assert-set` by its own threshold; a person's manual rating
overrides all other grading). That verdict is one more result, `role: verdict`, named
`promptfoo`, beside the components; a manual rating is `role: override`. The report counts the
verdict and uses the components to exclude what the case's oracle bars (docs/runs.md).
"""
from __future__ import annotations

from typing import Any, Iterator

from evalconv.canonical import runs
from evalconv.canonical.errors import RowError

from .._common import runfiles
from .read import ENVELOPE, cannot_pass_reason, parse_envelope

HARNESS = "promptfoo"
PLACEHOLDER = "evalconv:needs-grading"
MANUAL = "Manual result (overrides all other grading results)"  # what promptfoo's UI writes
TYPED_BY = "promptfoo assertion type"

_JUDGE = {"llm-rubric", "g-eval", "factuality", "model-graded-closedqa", "model-graded-factuality",
          "answer-relevance", "context-faithfulness", "context-recall", "context-relevance",
          "search-rubric", "conversation-relevance", "pi", "classifier", "moderation"}
_PAIRWISE = {"select-best", "max-score"}
_TRAJECTORY = {"tool-call-f1", "is-valid-openai-tools-call", "is-valid-openai-function-call",
               "is-valid-function-call", "trace-span-count", "trace-span-duration", "trace-error-spans"}
_HUMAN = {"human"}


def evaluator_type(assertion_type: str) -> str | None:
    """The evaluator type of a promptfoo assertion type (`not-` checks the same way); None: unknown."""
    kind = assertion_type[4:] if assertion_type.startswith("not-") else assertion_type
    if kind in _JUDGE:
        return "llm-judge"
    if kind in _PAIRWISE:
        return "pairwise-preference"
    if kind in _TRAJECTORY or kind.startswith("trajectory:"):
        return "trajectory-or-state-check"
    if kind in _HUMAN:
        return "rubric-human"
    if kind in ("webhook", "assert-set"):
        return None
    return "exact-or-programmatic"  # equals, contains*, regex, is-json, javascript, python, similar, ...


def case_link(test: dict[str, Any]) -> tuple[str | None, str | None, dict[str, str] | None]:
    """(caseId, case version, caseRef) of a promptfoo test as it ran."""
    metadata = test.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    case = metadata.get("case")
    if ENVELOPE in metadata and not isinstance(case, dict):
        try:
            inner = parse_envelope(metadata).get("metadata")
        except RowError:
            inner = None
        case = inner.get("case") if isinstance(inner, dict) else None
    if isinstance(case, dict) and isinstance(case.get("caseId"), str) and case["caseId"]:
        version = case.get("version")
        return case["caseId"], version if isinstance(version, str) else None, None
    description = test.get("description")
    ref = {"kind": "name", "value": description} if isinstance(description, str) and description else None
    return None, None, ref


class PromptfooResults:
    name = HARNESS
    title = "promptfoo eval output (-o results.json or results.jsonl)"
    files = "promptfoo eval -o results.json / results.jsonl"

    def detect(self, path: str, head: str) -> bool:
        if head.startswith("{") and '"evalId"' in head[:200]:
            return True
        first = head.split("\n", 1)[0]
        return head.startswith("{") and '"testCase"' in first and ('"gradingResult"' in first or '"failureReason"' in first)

    def read(self, path: str) -> Iterator[runfiles.Record]:
        head = runfiles.first_value(path, "evalId") if path.lower().endswith(".json") else None
        if head is not None or path.lower().endswith(".json"):
            run = head if isinstance(head, str) else None
            version = runfiles.first_value(path, "metadata.promptfooVersion")
            stamp = runfiles.first_value(path, "results.timestamp")
            for index, entry in enumerate(runfiles.items(path, "results.results.item")):
                yield from self._entry(entry, path, None, index, run, version, stamp)
            return
        for line, entry, problem in runfiles.jsonl(path):
            if problem is not None:
                yield runfiles.unreadable(path, problem, line=line)
                continue
            yield from self._entry(entry, path, line, line - 1, None, None, None)

    def _entry(self, entry: Any, path: str, line: int | None, index: int, run: str | None,
               version: Any, stamp: Any) -> Iterator[runfiles.Record]:
        source = runfiles.where(path, line=line, entry=index)
        if not isinstance(entry, dict) or not isinstance(entry.get("testCase"), dict):
            yield "ledger", runs.ledger_entry("unreadable", "a promptfoo result without a testCase", source=source)
            return
        test = entry["testCase"]
        case_id, case_version, ref = case_link(test)
        own = entry.get("id")
        provider = given if isinstance(given := entry.get("provider"), dict) else {}
        key = (own,) if isinstance(own, str) and own else (run, entry.get("testIdx"), entry.get("promptIdx"), provider.get("id"))
        response = given if isinstance(given := entry.get("response"), dict) else None
        # No response: promptfoo replaced the entry by its error (a grader that could not run does that).
        failed_call = response is None or bool(response.get("error"))
        error = runs.first_line((response or {}).get("error") or entry.get("error"))
        status = "completed"
        if failed_call:
            status = "timeout" if error and "timed out" in error.lower() else "error"
        prompt = given if isinstance(given := entry.get("prompt"), dict) else {}
        attempt = runs.attempt(
            harness=HARNESS, key=key, case_id=case_id, case_ref=ref, case_version=case_version, run=run,
            harness_version=version if isinstance(version, str) else None,
            system=str(provider.get("label") or provider.get("id") or "unknown"),
            system_version=entry.get("promptId") if isinstance(entry.get("promptId"), str) else prompt.get("label"),
            started_at=stamp if isinstance(stamp, str) else None,
            duration_ms=runfiles.number(entry.get("latencyMs")), status=status,
            error=error if failed_call else None, output=(response or {}).get("output"),
            has_output=response is not None and "output" in response, source=source)
        yield "attempt", attempt
        yield from self._results(entry, attempt["id"], response is not None and failed_call, source)

    def _results(self, entry: dict[str, Any], attempt_id: str, system_failed: bool,
                 source: dict[str, Any]) -> Iterator[runfiles.Record]:
        grading = entry.get("gradingResult")
        yield "result", _verdict(entry, grading, attempt_id, source)
        if not isinstance(grading, dict):
            if not system_failed and entry.get("failureReason") == 2:
                yield "result", runs.result(
                    attempt_id=attempt_id, name="promptfoo:grading", type_=None, type_source="unknown", score=None,
                    passed=None, review_status="error", reason=runs.first_line(entry.get("error")),
                    own_id="grading", source=source)
            return
        components = grading.get("componentResults")
        if not isinstance(components, list) or not components:
            components = [{**grading, "assertion": None}]
        for i, component in enumerate(components):
            # An assert-set's own result (no assertion, its parts inside) is in the verdict already;
            # its parts follow it in the list, each typed by its assertion.
            if isinstance(component, dict) and not (component.get("assertion") is None
                                                    and isinstance(component.get("componentResults"), list)):
                yield "result", _component(component, attempt_id, i, source)


def _verdict(entry: dict[str, Any], grading: Any, attempt_id: str, source: dict[str, Any]) -> runs.Result:
    """promptfoo's own verdict on the test: `success` (an error, failureReason 2, is no verdict)."""
    success = entry.get("success")
    errored = entry.get("failureReason") == 2 and success is not True
    grading = grading if isinstance(grading, dict) else {}
    reason = runs.first_line(grading.get("reason") if not errored else entry.get("error"))
    return runs.result(
        attempt_id=attempt_id, name=HARNESS, type_=None, type_source="unknown",
        score=runfiles.number(grading.get("score", entry.get("score"))),
        passed=None if errored or not isinstance(success, bool) else success,
        review_status="error" if errored else "automated", reason=reason, own_id="verdict", source=source,
        typed_by="the harness's verdict on the test: typed by its components", role="verdict")


def _component(component: dict[str, Any], attempt_id: str, index: int, source: dict[str, Any]) -> runs.Result:
    assertion = given if isinstance(given := component.get("assertion"), dict) else {}
    kind = given if isinstance(given := assertion.get("type"), str) else "promptfoo:grading"
    placeholder = cannot_pass_reason(assertion)
    passed = component.get("pass")
    reason = component.get("reason") if isinstance(component.get("reason"), str) else None
    if placeholder is not None:
        return runs.result(attempt_id=attempt_id, name=PLACEHOLDER, type_=None, type_source="unknown", score=None,
                           passed=None, review_status="pending", reason=placeholder, own_id=index, source=source,
                           typed_by="evalconv's placeholder: a person's grading is pending")
    metric = assertion.get("metric")
    name = f"{kind}:{metric}" if isinstance(metric, str) and metric else kind
    type_ = evaluator_type(kind) if kind != "promptfoo:grading" else None
    manual = kind in _HUMAN and reason == MANUAL
    return runs.result(
        attempt_id=attempt_id, name=name, type_=type_, type_source="inferred", score=runfiles.number(component.get("score")),
        passed=passed if isinstance(passed, bool) else None,
        review_status="reviewed" if type_ in runs.HUMAN_TYPES else "automated", reason=reason,
        model=_grader(assertion), own_id=index, source=source,
        typed_by="promptfoo manual rating (a person)" if manual else TYPED_BY if type_ else "unknown promptfoo check",
        role="override" if manual else None)


def _grader(assertion: dict[str, Any]) -> str | None:
    provider = assertion.get("provider")
    if isinstance(provider, str):
        return provider
    if isinstance(provider, dict) and isinstance(provider.get("id"), str):
        return provider["id"]
    return None


RULES = {
    "verdict": "promptfoo's own: the test's `success` (every assertion passes, or the weighted score reaches the "
               "test's `threshold`; an `assert-set` by its own threshold; a manual rating overrides all other "
               "grading), a `role: verdict` result beside the components. The verdict decides the attempt unless "
               "a person's admitted rating does or an admitted component is pending; components the oracle bars "
               "are excluded and, inside a verdict, named per case; a test whose every component is barred is "
               "unscored. An error (failureReason 2) is unscored",
    "threshold": "promptfoo's own (`threshold`, `weight`, `assert-set`); `--threshold` does not apply",
    "typing": "by assertion type: " + ", ".join(f"{', '.join(f'`{k}`' for k in sorted(kinds))}: {type_}" for kinds, type_ in (
        (_JUDGE, "llm-judge"), (_PAIRWISE, "pairwise-preference"), (_TRAJECTORY, "trajectory-or-state-check"))) +
              "; `human` (a manual rating): rubric-human, counted as human-expert where the oracle bars rubric-human "
              "and admits human-expert; `webhook`: unknown (the report asks); any other: exact-or-programmatic",
}

READER = PromptfooResults()

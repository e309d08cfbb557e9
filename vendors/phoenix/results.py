"""Phoenix experiment runs -> attempts and results.

Reads an experiment as Phoenix gives it back: the JSON download (`GET /v1/experiments/{id}/json`,
the experiment page's download, what `client.experiments.get_experiment` reads its evaluations
from), a JSON array with one record per run (`example_id`, `repetition_number`, `input`,
`reference_output`, `output`, `error`, times, `trace_id`, `annotations`). Each run (one repetition
of the task on one example) is an attempt; a run with an `error` (the task raised) an errored one.
Each annotation (one evaluator's evaluation of the run) is a result; one with an `error` (the
evaluator raised) is an errored result, unscored.

Linked to its case by the example id where the server kept the case id as it (evalconv's export
sends it as the example id); the download names examples by Phoenix's own GlobalID
(`RGF0YXNldEV4YW1wbGU6MQ==`, "DatasetExample:1") and carries no metadata, so such a run links by
its input text (evalconv wraps a text input as `{"input": text}`), as Ragas results do: two cases
with the same input link neither.

An annotation has no pass rule (vendors/_common/labels.py): its label says it when it is a pass or
fail word (a boolean evaluator's `True` / `False`, evalconv's `case_check` `pass` / `fail`); any
other label (`not checked`) is unscored; a score with no label states no rule: unscored (`passAt:
null`) until `--threshold` gives one. Typing by Phoenix's annotator kind: LLM llm-judge, HUMAN
rubric-human, CODE (a function evaluator) exact-or-programmatic.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Iterator

from evalconv.canonical import runs

from .._common import labels, runfiles
from .write import INPUT_KEY

HARNESS = "phoenix"
FLAG = "`--threshold phoenix=SCORE` or `--threshold NAME=SCORE`"
_KINDS = {"LLM": ("llm-judge", "automated"), "HUMAN": ("rubric-human", "reviewed"),
          "CODE": ("exact-or-programmatic", "automated")}


def node_id(text: str) -> bool:
    """Is this Phoenix's own GlobalID of an example (base64 of `DatasetExample:N`)?"""
    try:
        return base64.b64decode(text, validate=True).startswith(b"DatasetExample:")
    except (binascii.Error, ValueError):
        return False


def case_link(run: dict[str, Any]) -> dict[str, str] | None:
    """The run's caseRef: the example id when it is not Phoenix's own, else the input text."""
    example = run.get("example_id")
    if isinstance(example, str) and example and not node_id(example):
        return {"kind": "name", "value": example}
    given = run.get("input")
    text = given.get(INPUT_KEY) if isinstance(given, dict) and given.keys() == {INPUT_KEY} else given
    if isinstance(text, str):
        return {"kind": "input", "value": text}
    return {"kind": "name", "value": example} if isinstance(example, str) and example else None


class PhoenixResults:
    name = HARNESS
    title = "Phoenix experiment runs with their evaluations (the experiment's JSON download, GET /v1/experiments/{id}/json)"
    files = "Phoenix experiment JSON (GET /v1/experiments/{id}/json, the experiment page's download)"

    def detect(self, path: str, head: str) -> bool:
        return head.startswith("[") and '"example_id"' in head and '"repetition_number"' in head

    def read(self, path: str) -> Iterator[runfiles.Record]:
        for index, run in enumerate(runfiles.items(path, "item")):
            problem = _shape(run)
            source = runfiles.where(path, entry=index)
            if problem is not None:
                yield runfiles.unreadable(path, f"run {index + 1}: {problem}", entry=index)
                continue
            yield from _run(run, source)


def _shape(run: Any) -> str | None:
    """Why a run record cannot be read, naming the field; None when it can."""
    if not isinstance(run, dict):
        return "not an object"
    if not isinstance(run.get("example_id"), str) or not run["example_id"]:
        return "$.example_id: missing or not a string"
    annotations = run.get("annotations")
    if annotations is not None and not isinstance(annotations, list):
        return "$.annotations: not a list"
    for n, note in enumerate(annotations or []):
        if not isinstance(note, dict):
            return f"$.annotations[{n}]: not an object"
        if not isinstance(note.get("name"), str) or not note["name"]:
            return f"$.annotations[{n}].name: missing or not a string"
    return None


def _run(run: dict[str, Any], source: dict[str, Any]) -> Iterator[runfiles.Record]:
    error = runs.first_line(run.get("error"))
    text = lambda key: run[key] if isinstance(run.get(key), str) else None  # noqa: E731
    repetition = run.get("repetition_number")
    attempt = runs.attempt(
        harness=HARNESS, key=("run", run["example_id"], repetition, text("trace_id") or text("start_time")),
        case_id=None, case_ref=case_link(run), system="phoenix task", started_at=text("start_time"),
        duration_ms=runfiles.number(run.get("latency_ms")), status="error" if error else "completed", error=error,
        output=run.get("output"), has_output="output" in run and not error, source=source)
    yield "attempt", attempt
    for note in run.get("annotations") or []:
        yield "result", _annotation(attempt["id"], note, source)


def _annotation(attempt_id: str, note: dict[str, Any], source: dict[str, Any]) -> runs.Result:
    name, kind = note["name"], note.get("annotator_kind")
    type_, status = _KINDS.get(kind, (None, "automated")) if isinstance(kind, str) else (None, "automated")
    label, score = note.get("label"), runfiles.number(note.get("score"))
    numeric = False
    passed: bool | None
    if note.get("error"):
        passed, said, status = None, f"the evaluator failed: {runs.first_line(note['error'])}", "error"
    elif isinstance(label, str) and label:
        passed = labels.label_verdict(label)
        said = f"label {json.dumps(label)[:60]}" + ("" if passed is not None else " is not a pass or a fail word: unscored")
    else:
        numeric = score is not None
        passed, said = None, labels.no_rule(score, FLAG) if score is not None else "no label and no score"
    explanation = note.get("explanation")
    reason = said + (f": {explanation}" if isinstance(explanation, str) and explanation.strip() else "")
    if type_ is None:
        reason += f" (annotator kind {kind!r}: type it with --evaluator '{name}=TYPE')"
    record = runs.result(
        attempt_id=attempt_id, name=name, type_=type_, type_source="inferred", score=score, passed=passed,
        review_status=status, reason=runs.first_line(reason),
        recorded_at=note.get("end_time") if isinstance(note.get("end_time"), str) else None,
        own_id=(name, note.get("start_time")), source=source,
        typed_by=f"Phoenix annotator kind {kind}" if type_ else "default: unknown (no annotator kind)")
    return labels.unscored_until_threshold(record) if numeric else record


RULES = {
    "verdict": "an annotation's label as it says: " + labels.words_text() + " (a boolean evaluator's "
               "`True`/`False`, evalconv's case_check `pass`/`fail`), any other label (`not checked`) unscored; "
               "a score with no label states no rule: unscored until `--threshold` (`passAt: null`); an "
               "evaluator that raised (`error`) is unscored; a run with an `error` is an errored attempt",
    "threshold": f"none: a score without a label is unscored until {FLAG}",
    "typing": "by annotator kind: `LLM`: llm-judge; `HUMAN`: rubric-human; `CODE` (a function evaluator, Phoenix's "
              "default kind): exact-or-programmatic (`--evaluator NAME=TYPE` where a CODE evaluator calls a model)",
}

READER = PhoenixResults()

"""Ragas evaluation results -> attempts and results.

Reads what `ragas.evaluate(...)` returns as users save it: `EvaluationResult.to_pandas()` then
`.to_csv(index=False)` or `.to_json(orient="records", lines=True)`, one row per sample with the
sample's columns (`user_input`, `response`, `reference`, ...) and one column per metric. Each row
is an attempt, each metric cell a result. Streamed: CSV with the csv module, JSONL a line at a time.

Linking: Ragas' loaders drop the `evalconv` key evalconv's export carries the case id in, so a
results row links by its `user_input` text to the case with that input (`caseRef` kind `input`;
two cases with the same input text link neither, and the row goes to the ledger). A row that
kept the `evalconv` column (a DataFrame built from the export file itself) links by its `id`.

Metric scores have no pass rule in Ragas: a score in [0, 1] passes at `PASS_AT` (0.5); a score
outside [0, 1] is kept with `passed: null`; an empty cell (NaN: Ragas could not compute the metric,
`raise_exceptions=False`) is an errored, unscored result. Typing: Ragas' non-LLM metrics are
exact-or-programmatic, its tool-call metrics trajectory-or-state-check, any other metric an LLM
judge (inferred: retype one with `--evaluator NAME=TYPE`).
"""
from __future__ import annotations

import csv
import json
import math
from typing import Any, Iterator

from evalconv.canonical import runs
from evalconv.canonical.errors import ReadError

from .._common import runfiles
from .fields import ENVELOPE, MULTI_FIELDS, RUN_FIELDS, SINGLE_FIELDS

HARNESS = "ragas"
PASS_AT = 0.5
SAMPLE_COLUMNS = frozenset((*SINGLE_FIELDS, *MULTI_FIELDS, *RUN_FIELDS, ENVELOPE, "reference_tool_calls"))
# Ragas' metric names (`Metric.name`) of the metrics that call no model.
PROGRAMMATIC = {"exact_match", "string_present", "non_llm_string_similarity", "bleu_score", "rouge_score",
                "chrf_score", "distance_measure", "non_llm_context_recall", "non_llm_context_precision_with_reference",
                "id_based_context_recall", "id_based_context_precision"}
TRAJECTORY = {"tool_call_accuracy", "tool_call_f1"}


def evaluator_type(name: str) -> str:
    if name in PROGRAMMATIC:
        return "exact-or-programmatic"
    if name in TRAJECTORY:
        return "trajectory-or-state-check"
    return "llm-judge"


def verdict(score: float) -> tuple[bool | None, str]:
    if not 0.0 <= score <= 1.0:
        return None, f"score {score:g} is outside [0, 1]: evalconv's pass rule for Ragas scores does not apply"
    passed = score >= PASS_AT
    return passed, f"score {score:g} {'>=' if passed else '<'} {PASS_AT:g} (evalconv's pass rule for Ragas scores)"


class RagasResults:
    name = HARNESS
    title = "Ragas evaluation results (EvaluationResult.to_pandas() saved as CSV or JSONL records)"
    files = "Ragas EvaluationResult.to_pandas() .to_csv() / .to_json(orient='records', lines=True)"

    def detect(self, path: str, head: str) -> bool:
        first = head.split("\n", 1)[0]
        if head.startswith("{"):
            try:
                keys = list(json.loads(first))
            except ValueError:
                return False
        else:
            keys = next(csv.reader([first]), [])
        return "user_input" in keys and any(k not in SAMPLE_COLUMNS for k in keys)

    def read(self, path: str) -> Iterator[runfiles.Record]:
        if runfiles.read_head_text(path, 64).startswith("{"):
            for line, row, problem in runfiles.jsonl(path):
                if problem is not None or not isinstance(row, dict):
                    yield runfiles.unreadable(path, problem or "not a JSON object (a results row)", line=line)
                else:
                    yield from _row(row, path, line)
            return
        for line, row in _csv_rows(path):
            yield from _row(row, path, line)


def _csv_rows(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        stream = open(path, encoding="utf-8", newline="")
    except FileNotFoundError:
        raise ReadError("no such file", source=path) from None
    with stream:
        try:
            reader = csv.DictReader(stream)
            for row in reader:
                yield reader.line_num, {k: (None if v == "" else v) for k, v in row.items() if k is not None}
        except UnicodeDecodeError as err:
            raise ReadError(f"not UTF-8 text ({err.reason} at byte {err.start})", source=path) from None
        except csv.Error as err:
            raise ReadError(f"not CSV ({err})", source=path, line=reader.line_num) from None


def case_link(row: dict[str, Any]) -> tuple[str | None, dict[str, str] | None]:
    envelope = row.get(ENVELOPE)
    if isinstance(envelope, str):
        try:
            envelope = json.loads(envelope)
        except ValueError:
            envelope = None
    if isinstance(envelope, dict) and isinstance(envelope.get("id"), str) and envelope["id"]:
        return envelope["id"], None
    text = row.get("user_input")
    return None, ({"kind": "input", "value": text} if isinstance(text, str) else None)


def _row(row: dict[str, Any], path: str, line: int) -> Iterator[runfiles.Record]:
    source = runfiles.where(path, line=line, entry=line - 1)
    if "user_input" not in row:
        yield runfiles.unreadable(path, f"line {line}: $.user_input: missing (not a Ragas results row)", line=line)
        return
    scores: list[tuple[str, float | None]] = []
    for name in (k for k in row if k not in SAMPLE_COLUMNS):
        score = _score(row[name])
        if isinstance(score, str):
            yield runfiles.unreadable(path, f"line {line}: $.{name}: {score}", line=line)
            return
        scores.append((name, score))
    case_id, ref = case_link(row)
    response = row.get("response")
    attempt = runs.attempt(harness=HARNESS, key=(path.rsplit("/", 1)[-1], line, row.get("user_input")),
                           case_id=case_id, case_ref=ref, system="ragas response", output=response,
                           has_output=response is not None, source=source)
    yield "attempt", attempt
    for name, score in scores:
        type_ = evaluator_type(name)
        if score is None:
            passed, status, reason = None, "error", "no score (NaN): Ragas could not compute this metric for the row"
        else:
            (passed, reason), status = verdict(score), "automated"
        if type_ == "llm-judge" and name not in _KNOWN_JUDGES:
            reason += f" (typed llm-judge as Ragas metrics are; retype with --evaluator '{name}=TYPE')"
        yield "result", runs.result(attempt_id=attempt["id"], name=name, type_=type_, type_source="inferred",
                                    score=score, passed=passed, review_status=status, reason=reason,
                                    own_id=name, source=source, typed_by=_typed_by(name, type_),
                                    pass_at=PASS_AT if score is not None else None)


def _typed_by(name: str, type_: str) -> str:
    if type_ != "llm-judge" or name in _KNOWN_JUDGES:
        return "Ragas metric name"
    return "default: llm-judge (Ragas metrics call a model unless known otherwise)"


# Ragas' model-graded metrics by name: typed llm-judge without a note.
_KNOWN_JUDGES = {"faithfulness", "answer_relevancy", "context_precision", "context_recall", "context_entity_recall",
                 "answer_correctness", "answer_similarity", "semantic_similarity", "factual_correctness",
                 "noise_sensitivity", "aspect_critic", "simple_criteria_score", "rubrics_score",
                 "instance_rubrics", "topic_adherence", "agent_goal_accuracy", "summary_score",
                 "llm_context_precision_with_reference", "llm_context_precision_without_reference",
                 "llm_context_recall", "response_relevancy", "harmfulness", "maliciousness", "coherence",
                 "correctness", "conciseness"}


def _score(value: Any) -> float | None | str:
    """The cell's score, None for an empty cell or NaN, or why it is not a score."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return f"{value[:40]!r} is not a number (a metric column holds scores)"
        return None if math.isnan(number) else number
    return f"{json.dumps(value)[:40]} is not a number (a metric column holds scores)"


RULES = {
    "verdict": "a score in [0, 1] at or above the threshold passes; outside [0, 1]: unscored; an empty cell or "
               "NaN (Ragas could not compute it): an error, unscored",
    "threshold": f"{PASS_AT} (`--threshold ragas=SCORE` or per metric `--threshold NAME=SCORE`)",
    "typing": "by metric name: " + ", ".join(f"`{n}`" for n in sorted(PROGRAMMATIC)) + ": exact-or-programmatic; "
              + ", ".join(f"`{n}`" for n in sorted(TRAJECTORY)) + ": trajectory-or-state-check; any other metric: "
              "llm-judge (Ragas metrics call a model; a name evalconv does not know says so in its reason)",
}

READER = RagasResults()

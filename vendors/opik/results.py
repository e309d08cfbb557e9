"""Opik experiment items -> attempts and results.

Reads the CLI's `opik export experiment` file (`{"experiment": {...}, "items": [...]}`, each item
`ExperimentItemContent` as `dataclasses.asdict` gives it: `id`, `dataset_item_id`, `trace_id`,
`dataset_item_data`, `evaluation_task_output`, `feedback_scores`, `assertion_results`). Each item
is an attempt; each feedback score and each test-suite assertion result is a result of it.

An item links to its case by the case id evalconv carried in the dataset item
(`dataset_item_data.metadata.case.caseId`), else by its dataset item id: evalconv's writer derives
that id from the case id (`write.item_id`), so the report spells each case id that way
(`case_refs`). Opik's metric scores are numbers: a score of 1 passes (`PASS_AT`, overridable with
`evalconv report --threshold opik=0.8`). A score whose reason starts "not checked" (what
`metrics.case_metric` logs for a case it may not check) is no verdict, never a pass. An assertion
result is the LLM judge's pass or fail.
"""
from __future__ import annotations

from typing import Any, Iterator

from evalconv.canonical import runs

from .._common import runfiles
from .metrics import NAME as CASE_METRIC, NOT_CHECKED
from .write import item_id

HARNESS = "opik"
PASS_AT = 1.0
ITEM_REF = "opik-dataset-item-id"
TYPED_BY = "Opik metric name"
# The names Opik's own metrics score under (opik.evaluation.metrics, their default `name`).
_CODE = {"equals_metric", "contains_metric", "regex_match_metric", "levenshtein_ratio_metric", "is_json_metric",
         "sentence_bleu_metric", "corpus_bleu_metric", "rouge_metric", "gleu_metric", "chrf_metric", "meteor_metric",
         "bertscore_metric", "readability_metric", "spearman_ranking_metric", CASE_METRIC}
_JUDGES = {"hallucination_metric", "answer_relevance_metric", "context_precision_metric", "context_recall_metric",
           "g_eval_metric", "moderation_metric", "usefulness_metric", "llm_judge", "structured_output_compliance",
           "trajectory_accuracy_metric", "agent_tool_correctness_judge", "agent_task_completion_judge"}


def evaluator_type(name: str) -> str | None:
    """The type of an Opik metric by the name it scores under; None for any other (ask)."""
    if name in _CODE:
        return "exact-or-programmatic"
    if name in _JUDGES:
        return "llm-judge"
    return None


def case_link(item: dict[str, Any]) -> tuple[str | None, str | None, dict[str, str] | None]:
    data = item.get("dataset_item_data")
    metadata = data.get("metadata") if isinstance(data, dict) else None
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if isinstance(case, dict) and isinstance(case.get("caseId"), str) and case["caseId"]:
        version = case.get("version")
        return case["caseId"], version if isinstance(version, str) else None, None
    ref = item.get("dataset_item_id")
    if isinstance(ref, str) and ref:
        return None, None, {"kind": ITEM_REF, "value": ref}
    return None, None, None


class OpikResults:
    name = HARNESS
    title = "Opik experiment items (the CLI's `opik export experiment` JSON)"
    files = "Opik `opik export experiment` JSON ({experiment, items: [ExperimentItemContent]})"
    # An item names its dataset item: the id the writer derived from the case id.
    case_refs = {ITEM_REF: item_id}

    def detect(self, path: str, head: str) -> bool:
        return (head.lstrip().startswith("{") and '"experiment"' in head and '"items"' in head
                and ('"dataset_item_id"' in head or '"downloaded_at"' in head))

    def read(self, path: str) -> Iterator[runfiles.Record]:
        experiment = runfiles.first_value(path, "experiment")
        experiment = experiment if isinstance(experiment, dict) else {}
        run = experiment.get("name") or experiment.get("id")
        for index, item in enumerate(runfiles.items(path, "items.item")):
            where = runfiles.where(path, entry=index)
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                yield runfiles.unreadable(path, "an Opik experiment item that is not an object with an id", entry=index)
                continue
            case_id, version, ref = case_link(item)
            output = item.get("evaluation_task_output")
            attempt = runs.attempt(
                harness=HARNESS, key=("item", item["id"]), case_id=case_id, case_ref=ref, case_version=version,
                run=run if isinstance(run, str) else None, system="opik task", output=output,
                has_output=output is not None, source=where)
            yield "attempt", attempt
            yield from _scores(item, attempt["id"], where)
            yield from _assertions(item, attempt["id"], where)


def _scores(item: dict[str, Any], attempt_id: str, source: dict[str, Any]) -> Iterator[runfiles.Record]:
    for number, score in enumerate(item.get("feedback_scores") or []):
        if not isinstance(score, dict) or not isinstance(score.get("name"), str):
            yield "ledger", runs.ledger_entry("unreadable", "a feedback score with no name", source=source)
            continue
        name, value = score["name"], runfiles.number(score.get("value"))
        why = score.get("reason") if isinstance(score.get("reason"), str) else None
        unchecked = value is None or (why or "").startswith(NOT_CHECKED)
        passed = None if unchecked else value is not None and value >= PASS_AT
        type_ = evaluator_type(name)
        rule = (f"score {value:g} {'>=' if passed else '<'} {PASS_AT:g} (evalconv's pass rule for Opik scores)"
                if passed is not None and value is not None else "no verdict")
        yield "result", runs.result(
            attempt_id=attempt_id, name=name, type_=type_, type_source="inferred", score=value, passed=passed,
            review_status="automated", reason=f"{why}; {rule}" if why else rule, own_id=(name, number),
            source=source, typed_by=TYPED_BY if type_ else "default: unknown (not an Opik metric name)",
            pass_at=PASS_AT)


def _assertions(item: dict[str, Any], attempt_id: str, source: dict[str, Any]) -> Iterator[runfiles.Record]:
    for number, result in enumerate(item.get("assertion_results") or []):
        if not isinstance(result, dict) or not isinstance(result.get("passed"), bool):
            yield "ledger", runs.ledger_entry("unreadable", "an assertion result with no passed flag", source=source)
            continue
        text = result.get("value")  # the assertion's sentence
        name = text if isinstance(text, str) else f"assertion {number + 1}"
        yield "result", runs.result(
            attempt_id=attempt_id, name=name, type_="llm-judge", type_source="inferred",
            score=1.0 if result["passed"] else 0.0, passed=result["passed"], review_status="automated",
            reason=result.get("reason") if isinstance(result.get("reason"), str) else None,
            own_id=("assertion", number), source=source, typed_by="an Opik test-suite assertion (an LLM judge)")


RULES = {
    "verdict": "a metric score at or above the threshold passes; a score with no value, or whose reason starts "
               "\"not checked\" (case_metric on a case it may not check), is no verdict; a test-suite assertion "
               "result passes or fails as the judge said",
    "threshold": f"{PASS_AT} (`--threshold opik=SCORE`, or per metric `--threshold NAME=SCORE`)",
    "typing": "by Opik metric name: " + ", ".join(f"`{n}`" for n in sorted(_CODE)) + ": exact-or-programmatic; "
              + ", ".join(f"`{n}`" for n in sorted(_JUDGES)) + ": llm-judge; assertion results: llm-judge; any "
              "other name: unknown, a warning names it and `--evaluator NAME=TYPE`",
}

READER = OpikResults()

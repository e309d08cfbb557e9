"""Canonical rows -> MLflow GenAI evaluation dataset records, one JSON record a line:

    records = [json.loads(line) for line in open("set.mlflow.jsonl")]
    mlflow.genai.datasets.create_dataset(name="golden").merge_records(records)

`dataset_record` is also what the reader compares with to tell an edit made in MLflow.
"""
from __future__ import annotations

from typing import Any, TextIO

from evalconv.canonical.format import LineWriter as BaseLineWriter
from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowRefused
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.row import Row
from evalconv.canonical.validator import review_mark
from evalconv.vendors._common import records as rec
from evalconv.vendors._common.grading import effective_evaluator, llm_judge_may_grade

from .fields import (CARRIED, CASE_TAG, CHECK_KEY, CHECKS, EXPECTATIONS_EXT, EXPECTED_KEYS, FALLBACK_KEY, GUIDELINES,
                     ID_TAG, INPUT_KEY, MLFLOW_TAG_PREFIX, NOT_IN_CODE, NULL_REASON, SHADOWED_REASON, STARTER_TAG, UNCHECKED, VENDOR)

SESSION_FIELDS = frozenset({"persona", "goal", "context", "simulation_guidelines"})  # MLflow's session inputs
MERGED = ("MLflow upserts records on their inputs: these rows have the inputs of an earlier row, and merge_records "
          "would merge each into it (its expectations and tags overwrite the earlier's); give them distinct inputs "
          "or load them into another dataset")
GRANULARITY = ("MLflow refuses a batch that mixes session records (inputs with a goal) with others: "
               "merge_records the session rows separately")


def shadowed_key(key: str) -> bool:
    """A metadata key that would be taken for evalconv's or MLflow's own tag."""
    return key in (ID_TAG, STARTER_TAG, rec.ENVELOPE) or key.startswith(MLFLOW_TAG_PREFIX)


def is_call_list(value: Any) -> bool:
    """Tool calls MLflow's FunctionCall parses: objects with a string name and object arguments."""
    return isinstance(value, list) and all(
        isinstance(c, dict) and isinstance(c.get("name"), str) and c.keys() <= {"name", "arguments"}
        and isinstance(c.get("arguments", {}), dict) for c in value)


def expected_key(row: Row) -> str:
    oracle = row.case["oracleType"]
    if oracle == "expected-tool-calls" and not is_call_list(row.expected):
        return FALLBACK_KEY
    return EXPECTED_KEYS[oracle]


def check_of(row: Row) -> str:
    """What scorers.case_scorer does with the case: a check in code, or who else must grade it."""
    evaluator = effective_evaluator(row)[0]
    if evaluator == "llm-judge":
        return "judge"
    if evaluator in ("exact-or-programmatic", "trajectory-or-state-check"):
        return CHECKS.get(row.case["oracleType"], "human")
    return "human"


def _extension(row: Row) -> dict[str, Any]:
    ext = row.case.get("extensions", {}).get(VENDOR)
    return ext if isinstance(ext, dict) else {}


def dataset_record(row: Row) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The `merge_records` dict for one row, and the (path, reason) of every field it carries."""
    carried: list[tuple[str, str]] = [("$.id", CARRIED["$.id"])]
    envelope: dict[str, Any] = {}
    if isinstance(row.input, dict):
        inputs = row.input
    else:
        inputs, envelope["wrapped"] = {INPUT_KEY: row.input}, True
    expectations: dict[str, Any] = {}
    extra = _extension(row).get(EXPECTATIONS_EXT)
    if isinstance(extra, dict):  # expectations evalconv does not map, kept from MLflow (evaluate refuses a null)
        expectations.update((k, v) for k, v in extra.items() if v is not None)
    if row.has_expected and row.expected is None:  # mlflow.genai.evaluate refuses an expectation of null
        envelope["expectedNull"] = True
        carried.append(("$.expected", NULL_REASON))
    elif row.has_expected:
        key = expected_key(row)
        expectations[key] = row.expected
        envelope["expected"] = key
        if key not in ("expected_response", "acceptable_responses", "expected_tool_calls"):
            carried.append(("$.expected", UNCHECKED.format(key=key)))
    criteria = row.case.get("evaluationCriteria")
    if criteria and llm_judge_may_grade(row):  # only a judge's guidance: never on a case a judge may not grade
        expectations[GUIDELINES] = criteria
        envelope["guidelines"] = True
    expectations[CHECK_KEY] = check_of(row)
    tags: dict[str, Any] = {ID_TAG: row.id}
    shadowed: dict[str, Any] = {}
    for key, value in row.metadata.items():
        if key == CASE_TAG:
            continue
        if shadowed_key(key):
            shadowed[key] = value
            carried.append((f"$.metadata.{key}", CARRIED["$.metadata.evalconv"] if key == rec.ENVELOPE
                            else SHADOWED_REASON))
        else:
            tags[key] = value
    mark = review_mark(row.case)
    if mark:
        tags[STARTER_TAG] = mark
    tags[CASE_TAG] = row.case
    carried += [(f"$.metadata.case.{name}", CARRIED[f"$.metadata.case.{name}"]) for name in row.case]
    if shadowed:
        envelope["shadowed"] = shadowed
    # inputs, expected and the metadata keys have no other copy: their fingerprints tell an edit
    envelope[rec.SUMS] = {"inputs": rec.fingerprint(inputs),
                          **({"expected": rec.fingerprint(row.expected)} if row.has_expected else {}),
                          "metadata": rec.metadata_sums({k: v for k, v in row.metadata.items() if k != CASE_TAG})}
    tags[rec.ENVELOPE] = envelope
    return {"inputs": inputs, "expectations": expectations, "tags": tags}, carried


def _refuse_unloadable(row: Row) -> None:
    """What merge_records would refuse, or store changed, refused before anything is noted."""
    rec.check_value(row.to_json(), row.id, "$", "MLflow")
    if isinstance(row.input, dict) and "goal" in row.input and not row.input.keys() <= SESSION_FIELDS:
        others = sorted(row.input.keys() - SESSION_FIELDS)
        raise RowRefused(row.id, "MLflow refuses inputs that mix the session field goal with other fields "
                         f"({', '.join(map(repr, others[:3]))}); move them inside 'context'", field="$.input")


class DatasetRecordWriter(BaseLineWriter):
    """One `merge_records` record a line. Remembers each row's inputs fingerprint (12 bytes a row)
    to name the rows MLflow would merge."""

    joins: tuple[str, str] | None = None  # one record a line

    def __init__(self, out: TextIO, report: LossReporter) -> None:
        super().__init__(out)  # LineWriter.write: encode, the first row's joins, keep
        self._out = out
        self._report = report
        self._inputs: set[str] = set()
        self._granularity: set[bool] = set()

    def encode(self, row: Row) -> tuple[str, tuple[str, str, bool]]:
        _refuse_unloadable(row)
        record, carried = dataset_record(row)
        self._report.carry_all(carried, row.id)
        check = record["expectations"][CHECK_KEY]
        if check in NOT_IN_CODE:
            self._report.notice_row(f"MLflow: no scorer in code checks these cases; "
                                    f"scorers.case_scorer() leaves them unscored: {NOT_IN_CODE[check]}", row.id)
        session = "goal" in record["inputs"]
        return jsonvalue.dumps(record) + "\n", (row.id, rec.fingerprint(record["inputs"]), session)

    def keep(self, kept: tuple[str, str, bool]) -> None:
        row_id, inputs, session = kept
        if inputs in self._inputs:
            self._report.notice_row(MERGED, row_id)
        self._inputs.add(inputs)
        if self._granularity and session not in self._granularity:
            self._report.notice(GRANULARITY)
        self._granularity.add(session)

    def close(self) -> None:
        pass

"""Where each canonical field goes in an MLflow GenAI evaluation dataset record, as data (the docs
table is this).

`EvaluationDataset.merge_records` takes `{inputs, expectations, tags, source}` dicts; `to_df()`
gives them back with MLflow's own columns. MLflow passes `inputs` to the predict function as
keyword arguments and `expectations` to the scorers (the system under test never sees them),
ignores a given `dataset_record_id`, does not keep the order, and upserts on the inputs: a
record whose inputs equal an earlier one's is merged into it. So the case id lives in the tag
`case_id`, and a set whose rows share inputs is named on stderr.
"""
from __future__ import annotations

from evalconv.canonical.format import FieldLoss
from evalconv.canonical.schema import CASE_FIELDS

VENDOR = "mlflow"
INPUT_KEY = "input"           # a non-object input is written as {"input": value}
ID_TAG = "case_id"            # the case id: MLflow ignores dataset_record_id
CASE_TAG = "case"             # the case profile, carried
STARTER_TAG = "starter_example"  # on rows that are not validated answers (dropped on read)
CHECK_KEY = "evalconv_check"  # expectations: the check the case admits, read by scorers.case_scorer
CASE_SCORER = "evalconv_case"  # the name scorers.case_scorer() scores under (its assessments' name)
GUIDELINES = "guidelines"     # MLflow's Guidelines / ExpectationsGuidelines judges read it
EXPECTATIONS_EXT = "expectations"  # extensions.mlflow.expectations: MLflow expectations evalconv does not map

# The expectations key that holds `expected`, by oracle type. The first three are read by MLflow's
# own scorers (Correctness / Equivalence; ToolCallCorrectness) or by scorers.case_scorer.
EXPECTED_KEYS = {
    "reference-answer": "expected_response",
    "acceptable-set": "acceptable_responses",
    "expected-tool-calls": "expected_tool_calls",
    "expected-final-state": "expected_final_state",
    "rubric": "expected",
    "expected-behavior-only": "expected",
}
FALLBACK_KEY = "expected"  # a tool-calls value MLflow's FunctionCall would not parse
RESERVED_EXPECTATIONS = ("expected_response", "expected_facts", "guidelines", "expected_retrieved_context",
                         "expected_tool_calls")
# Who checks a case, from its oracle type and evaluator: what scorers.case_scorer does.
CHECKS = {"reference-answer": "exact", "acceptable-set": "membership", "expected-tool-calls": "tool_calls",
          "expected-final-state": "state"}
NOT_IN_CODE = {  # checks no scorer in code makes: case_scorer leaves them unscored, never passed
    "judge": "needs an LLM judge: run MLflow's Correctness (reference) or ExpectationsGuidelines (rubric) on it",
    "human": "needs a person: review it in the MLflow UI",
    "state": "needs a check of the state the task left: write an @scorer for it",
}
# What MLflow adds to a record (to_df columns, the store's fields): never case data.
SYSTEM_FIELDS = {
    "outputs": "the output of a trace the record came from, not case data",
    "dataset_record_id": "set by MLflow, which ignores a given one (the case id is the case_id tag)",
    "dataset_id": "the dataset it lives in",
    "source": "where MLflow says the record came from (HUMAN, CODE, TRACE, DOCUMENT)",
    "source_type": "where MLflow says the record came from",
    "source_id": "where MLflow says the record came from",
    "created_time": "set by MLflow",
    "last_update_time": "set by MLflow",
    "created_by": "set by MLflow",
    "last_updated_by": "set by MLflow",
}
RECORD_FIELDS = {"inputs", "expectations", "tags"}
MLFLOW_TAG_PREFIX = "mlflow."  # MLflow's own tags (mlflow.user is added to every record)

_CASE_REASON = "MLflow has no case profile; carried in the tag `case` for the round trip, no scorer reads it"
UNCHECKED = ("no MLflow scorer reads it (carried in expectations.{key}); scorers.case_scorer() leaves the "
             "case unscored, never passed")
NULL_REASON = ("mlflow.genai.evaluate refuses an expectation whose value is null, so a null expected is no "
               "expectation and a mark in tags.evalconv")


def _case_entry(name: str) -> FieldLoss:
    if name == "evaluationCriteria":
        return FieldLoss("$.metadata.case.evaluationCriteria", "carried", "tags.case.evaluationCriteria; "
                         "also expectations.guidelines when an LLM judge grades the case",
                         _CASE_REASON + "; as guidelines, MLflow's ExpectationsGuidelines judge reads them")
    if name == "extensions":
        return FieldLoss("$.metadata.case.extensions", "carried", "tags.case.extensions; "
                         "extensions.mlflow.expectations also native, as expectations keys",
                         "MLflow expectations evalconv does not map (expected_facts, expected_retrieved_context, "
                         "keys added in MLflow) live here and go back in place")
    return FieldLoss(f"$.metadata.case.{name}", "carried", f"tags.case.{name}", _CASE_REASON)


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "carried", "tags.case_id", "MLflow ignores a given dataset_record_id (it sets dr-...) "
              "and does not keep the order, so the case id is a tag"),
    FieldLoss("$.input", "native", 'inputs; a value that is not an object is wrapped as {"input": value}',
              "MLflow passes inputs to the predict function as keyword arguments, and inputs must be an object"),
    FieldLoss("$.expected", "native", "expectations.expected_response (reference-answer), "
              "expectations.acceptable_responses (acceptable-set), expectations.expected_tool_calls (tool calls "
              "MLflow can parse); absent: no such key", "scorers receive expectations; MLflow's Correctness and "
              "ToolCallCorrectness and evalconv's case_scorer read these"),
    FieldLoss("$.expected", "carried", "expectations.expected_final_state, expectations.expected (rubric, "
              "behaviour-only, calls MLflow cannot parse)", UNCHECKED.format(key="<key>")),
    FieldLoss("$.expected", "carried", "tags.evalconv.expectedNull (a null expected)", NULL_REASON),
    *(_case_entry(name) for name in CASE_FIELDS),
    FieldLoss("$.metadata.evalconv", "carried", "tags.evalconv.shadowed.evalconv",
              "tags.evalconv holds evalconv's bookkeeping in MLflow"),
    FieldLoss("$.metadata.<reserved keys>", "carried", "tags.evalconv.shadowed.<key>",
              "a metadata key named case_id, starter_example or mlflow.<...> would be taken for evalconv's or "
              "MLflow's own tag"),
    FieldLoss("$.metadata.<other keys>", "native", "tags.<key>",
              "MLflow tags are free-form JSON; the UI shows them and search filters on them"),
)
CARRIED = {f.path: f.reason for f in FIELD_MAP if f.fate == "carried"}
SHADOWED_REASON = CARRIED["$.metadata.<reserved keys>"]

"""Where each canonical field goes in a pydantic-evals case, as data (the docs table is this).

A pydantic-evals `Dataset` file (YAML or JSON, as `Dataset.from_file` reads it) holds `cases`,
each `{name, inputs, metadata, expected_output, evaluators}`, and dataset-level `evaluators` and
`report_evaluators`. The task sees `inputs` only; evaluators see the whole case. So the row's
labels go to `expected_output`, `metadata` and the case's `evaluators`, never to `inputs`.
"""
from __future__ import annotations

from evalconv.canonical.format import FieldLoss
from evalconv.canonical.schema import CASE_FIELDS

VENDOR = "pydantic-evals"
CASE_KEYS = ("name", "inputs", "metadata", "expected_output", "evaluators")
DATASET_KEYS = ("$schema", "name", "cases", "evaluators", "report_evaluators")
STARTER_KEY = "starter_example"  # tells a pydantic-evals user (reports, evaluators) the row is a starter
# The case fields the evaluators evalconv writes are derived from (an edit there shows in the evaluators).
JUDGED = ("expectedBehavior", "evaluationCriteria", "unacceptableBehavior")

_CASE_REASON = ("pydantic-evals has no case profile; carried in the case's metadata for the round trip "
                "(evaluators can read it, the task never sees it)")


def _case_entry(name: str) -> FieldLoss:
    where = f"metadata.case.{name}"
    if name in ("oracleType", "evaluator"):
        return FieldLoss(f"$.metadata.case.{name}", "carried", f"{where}; it decides the case's evaluators",
                         _CASE_REASON)
    if name in JUDGED:
        return FieldLoss(f"$.metadata.case.{name}", "carried", f"{where}; also in the LLMJudge rubric when a "
                         "model judge grades the case", _CASE_REASON + "; the rubric is derived from it")
    if name == "extensions":
        return FieldLoss("$.metadata.case.extensions", "carried", f"{where}; extensions.pydantic-evals.evaluators "
                         "is written as the case's evaluators", "evaluators edited in pydantic-evals, or of a file "
                         "evalconv did not write, live here and go back in place")
    return FieldLoss(f"$.metadata.case.{name}", "carried", where, _CASE_REASON)


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "native", "name", "the case name; pydantic-evals reports cases by it and requires it unique"),
    FieldLoss("$.input", "native", "inputs", "passed to the task as it is (any JSON value)"),
    FieldLoss("$.expected", "native", "expected_output; a null is marked in metadata.evalconv.expectedNull",
              "EqualsExpected and LLMJudge (include_expected_output) read it; pydantic-evals reads a missing "
              "expected_output as null, so the mark tells the two apart"),
    *(_case_entry(name) for name in CASE_FIELDS),
    FieldLoss("$.metadata.evalconv", "carried", "metadata.evalconv.shadowed.evalconv",
              "metadata.evalconv holds evalconv's bookkeeping in pydantic-evals"),
    FieldLoss("$.metadata.<other keys>", "native", "metadata.<key>",
              "pydantic-evals hands metadata to evaluators and reports, never to the task"),
)
CARRIED = {f.path: f.reason for f in FIELD_MAP if f.fate == "carried"}

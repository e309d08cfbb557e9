"""Where each canonical field goes in a Comet Opik dataset item or test-suite item, as data (the
docs table is this).

An Opik dataset item (`opik.api_objects.dataset.dataset_item.DatasetItem`, what `Dataset.insert`
and `read_jsonl_from_file` build from a dict) declares `id` (a UUID), `trace_id`, `span_id`,
`source`, `description`, `evaluators` and `execution_policy`; every other key is free-form content
(`extra="allow"`), by convention `input` and `expected_output`. A test-suite item
(`TestSuiteItem`) wraps the content in `data` beside `assertions` (sentences an LLM judge checks),
`description` and `execution_policy`. Opik hands the task the whole item: the task reads `input`.
"""
from __future__ import annotations

from evalconv.canonical.format import FieldLoss
from evalconv.canonical.schema import CASE_FIELDS

VENDOR = "opik"
CONTENT_KEYS = ("input", "expected_output", "metadata")  # the content evalconv writes
# DatasetItem's declared fields: any other key of an item is its content.
MODEL_FIELDS = ("id", "trace_id", "span_id", "source", "description", "evaluators", "execution_policy")
SUITE_KEYS = ("id", "data", "assertions", "description", "execution_policy")  # validators._VALID_ITEM_KEYS
# Item fields that are not case data but go back to Opik: kept in extensions.opik, written natively.
NATIVE_EXTRAS = ("description", "trace_id", "span_id", "evaluators", "execution_policy", "assertions")
SYSTEM_FIELDS = {"source": "set by the Opik SDK (sdk, manual, trace, span), not case data"}
# `opik export dataset` (the CLI's JSON): the dataset's fields around its items.
EXPORT_KEYS = ("id", "name", "description", "tags", "items", "downloaded_at")
STARTER_KEY = "starter_example"  # tells an Opik user (UI, metrics) the row is a starter
# An item of a test suite that no assertion checks: the suite reads an item with no score as
# passed, so it gets a policy no run can meet (runs_passed >= pass_threshold is never true).
NEVER_PASSES = {"runs_per_item": 1, "pass_threshold": 2}
JUDGED = ("expectedBehavior", "evaluationCriteria", "unacceptableBehavior")

_CASE_REASON = ("Opik has no case profile; carried in the item's metadata (the task reads input; "
                "evalconv.vendors.opik.metrics.case_metric reads it)")


def _case_entry(name: str) -> FieldLoss:
    where = f"metadata.case.{name}"
    if name == "caseId":
        return FieldLoss("$.metadata.case.caseId", "carried", f"{where}; the item id is derived from it",
                         _CASE_REASON + "; Opik ids must be UUIDs, so the case id lives here")
    if name in JUDGED:
        return FieldLoss(f"$.metadata.case.{name}", "carried", f"{where}; also the test suite's assertions when a "
                         "model judge grades the case", _CASE_REASON + "; the assertions are derived from it")
    if name == "extensions":
        return FieldLoss("$.metadata.case.extensions", "carried", f"{where}; extensions.opik.{{description, trace_id, "
                         "span_id, evaluators, execution_policy, assertions}} also native",
                         "the Opik item fields that are not case data live here and go back in place")
    return FieldLoss(f"$.metadata.case.{name}", "carried", where, _CASE_REASON)


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "carried", "metadata.case.caseId; the item id is a UUIDv7 derived from it (a case id that "
              "is a UUID is the item id)", "Opik item ids must be UUIDs (the SDK refuses any other id; only UUIDv7 "
              "ids are kept), so the case id is carried and the item id is the same for the same case every time"),
    FieldLoss("$.input", "native", "input (test suite: data.input)",
              "the task reads it from the item Opik hands it"),
    FieldLoss("$.expected", "native", "expected_output (test suite: data.expected_output)",
              "Opik's metrics read it as reference (scoring_key_mapping) and case_metric reads it"),
    *(_case_entry(name) for name in CASE_FIELDS),
    FieldLoss("$.metadata.evalconv", "carried", "metadata.evalconv.shadowed.evalconv",
              "metadata.evalconv holds evalconv's bookkeeping in Opik"),
    FieldLoss("$.metadata.<other keys>", "native", "metadata.<key>",
              "Opik shows item content in the UI and hands it to metrics"),
)
CARRIED = {f.path: f.reason for f in FIELD_MAP if f.fate == "carried"}

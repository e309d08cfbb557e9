"""Where each canonical field goes in a Langfuse dataset item, as data (the docs table is this).

A Langfuse dataset item (`CreateDatasetItemRequest`, what `Langfuse.create_dataset_item` sends)
holds `datasetName`, `id`, `input`, `expectedOutput`, `metadata` (any JSON each), `status`
(ACTIVE / ARCHIVED), `sourceTraceId` and `sourceObservationId`. Langfuse checks nothing per item:
evaluators are functions or LLM-as-a-judge set up for a run, so the oracle lives in metadata.
"""
from __future__ import annotations

from evalconv.canonical.format import FieldLoss
from evalconv.canonical.schema import CASE_FIELDS

VENDOR = "langfuse"
MAX_ID = 255  # characters: "Id needs to be unique (project-level) ... and must be at most 255 characters"
# The item fields evalconv writes (the REST body; the SDK's keyword arguments are the snake_case names).
ITEM_FIELDS = ("id", "datasetName", "status", "input", "expectedOutput", "metadata", "sourceTraceId",
               "sourceObservationId")
SNAKE = {"dataset_name": "datasetName", "expected_output": "expectedOutput", "source_trace_id": "sourceTraceId",
         "source_observation_id": "sourceObservationId", "dataset_id": "datasetId", "created_at": "createdAt",
         "updated_at": "updatedAt", "project_id": "projectId", "media_references": "mediaReferences"}
# Fields Langfuse sets (the API's DatasetItem, the UI's JSON and CSV exports): not case data.
SYSTEM_FIELDS = {
    "datasetId": "the dataset it lives in",
    "projectId": "the project it lives in",
    "createdAt": "set by Langfuse",
    "updatedAt": "set by Langfuse",
    "version": "Langfuse's item version (get_dataset(version=...) reads a past one)",
    "htmlSourcePath": "a link into the Langfuse UI",
    "mediaReferences": "media stored in Langfuse, not in the item",
}
NATIVE_EXTRAS = ("status", "sourceTraceId", "sourceObservationId")  # kept in extensions.langfuse, written natively
CSV_COLUMNS = ("id", "datasetName", "status", "input", "expectedOutput", "metadata", "sourceTraceId",
               "sourceObservationId")
STARTER_KEY = "starter_example"  # tells a Langfuse user (UI, evaluators) the row is a starter

_CASE_REASON = ("Langfuse has no case profile and checks nothing per item; carried in the item's metadata for "
                "the round trip (run evaluators can read it)")
REASONS = {
    "numbers": "Langfuse's server reads JSON numbers as JavaScript doubles: an integral float (1.0) comes back an "
               "integer and an integer beyond 2^53 rounds; the exact value is carried in metadata.evalconv.exact",
}


def _case_entry(name: str) -> FieldLoss:
    if name == "extensions":
        return FieldLoss("$.metadata.case.extensions", "carried", "metadata.case.extensions; extensions.langfuse."
                         "{status, sourceTraceId, sourceObservationId} also native", "the Langfuse item fields that "
                         "are not case data live here and go back in place")
    return FieldLoss(f"$.metadata.case.{name}", "carried", f"metadata.case.{name}", _CASE_REASON)


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "carried", "metadata.evalconv.id; the item id is <dataset>:<id> (a digest when longer "
              "than 255 characters)", "Langfuse item ids are unique across a whole project and at most 255 "
              "characters, so they are namespaced by the dataset; the case id is carried"),
    FieldLoss("$.input", "native", "input; exact numbers JavaScript would change carried in metadata.evalconv.exact",
              "what run_experiment hands the task"),
    FieldLoss("$.expected", "native", "expectedOutput; a null is marked in metadata.evalconv.expectedNull",
              "handed to run evaluators; Langfuse stores a missing expected output as null, so the mark tells "
              "the two apart"),
    *(_case_entry(name) for name in CASE_FIELDS),
    FieldLoss("$.metadata.evalconv", "carried", "metadata.evalconv.shadowed.evalconv",
              "metadata.evalconv holds evalconv's bookkeeping in Langfuse"),
    FieldLoss("$.metadata.<other keys>", "native", "metadata.<key>",
              "Langfuse shows item metadata in the UI and hands it to run evaluators"),
)
CARRIED = {f.path: f.reason for f in FIELD_MAP if f.fate == "carried"}

"""Where each canonical field goes in a Phoenix dataset example, as data (the docs table is this).

Phoenix takes examples as `create_dataset(examples=[...])` does: `input` and `output` dicts,
`metadata` (a dict), `splits` (a name or a list), `span_id`, and `id` (the example id Phoenix
keeps). Phoenix checks nothing on an example: experiment evaluators get the example's `output`
as `expected` (alias `reference`) and its `metadata`, so evaluators.py has the evaluator that
checks what an evalconv case means.
"""
from __future__ import annotations

from evalconv.canonical.format import FieldLoss
from evalconv.canonical.schema import CASE_FIELDS

VENDOR = "phoenix"
EXAMPLE_KEYS = ("id", "input", "output", "metadata", "splits", "span_id")
# A value that is not a dict goes into a dict under this key (Phoenix takes dicts only).
INPUT_KEY = "input"
OUTPUT_KEY = "expected"
# An output of one of these keys alone, in a file evalconv did not write, is a wrapped reference.
OUTPUT_KEYS = (OUTPUT_KEY, "output", "answer", "response", "reference", "ideal")
# Phoenix's CSV export: one column per key, prefixed (`_get_content_csv`), and the example id.
CSV_PARTS = ("input", "output", "metadata")
CSV_PREFIXES = tuple(f"{part}_" for part in CSV_PARTS)
CSV_ID = "example_id"

_CASE_REASON = ("Phoenix has no case profile; carried in the example's metadata (metadata.case), which "
                "evaluators get as `metadata` (evalconv.vendors.phoenix.evaluators reads it)")

REASONS = {
    "csv.text": "Phoenix's CSV holds text cells: a number, true, false, null, an empty text or a text that "
                "reads as a Python literal is written as JSON text and carried exactly in metadata_evalconv",
}


def _case_entry(name: str) -> FieldLoss:
    if name == "extensions":
        return FieldLoss("$.metadata.case.extensions", "carried",
                         "metadata.case.extensions; extensions.phoenix.{splits, span_id} also native, "
                         "extensions.phoenix.outputKey the key a reference is wrapped under",
                         "the example fields that are not case data live here and go back in place")
    return FieldLoss(f"$.metadata.case.{name}", "carried", f"metadata.case.{name}", _CASE_REASON)


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "native", "id (create_dataset keeps it as the example id; CSV: example_id)",
              "a stable id, so a set kept in git diffs cleanly"),
    FieldLoss("$.input", "native", "input: a dict as it is (a chat is {\"messages\": [...]}); any other value "
              "as {\"input\": value}; CSV: a column input_<key> a key, a value no text cell gives back also "
              "carried in metadata_evalconv", "Phoenix takes dicts only; the task gets this dict as `input`"),
    FieldLoss("$.expected", "native", "output: a dict as it is; any other value as {\"expected\": value}; "
              "no expected value as {}; CSV: a column output_<key> a key, carried as input is",
              "evaluators get it as `expected` / `reference`; the task never sees it"),
    *(_case_entry(name) for name in CASE_FIELDS),
    FieldLoss("$.metadata.evalconv", "carried", "metadata.evalconv.shadowed.evalconv",
              "metadata.evalconv holds evalconv's bookkeeping (which values were wrapped) in Phoenix"),
    FieldLoss("$.metadata.<other keys>", "native", "metadata.<key> (CSV: a column metadata_<key>, carried as "
              "input is)",
              "evaluators get the example's metadata; the task does not"),
)
CARRIED = {f.path: f.reason for f in FIELD_MAP if f.fate == "carried"}

"""Where each canonical field goes in an OpenAI Evals file, as data (the docs table is this).

Two variants. The Evals API's JSONL data source: one `{"item": {...}}` a line, any JSON in the
item, which graders and the prompt template reach as `{{item.<field>}}`. The legacy `evals`
registry JSONL: `{"input": [chat messages], "ideal": text | [texts]}` a line, extra keys ignored
by its Match / Includes / FuzzyMatch templates. Graders (`testing_criteria`) belong to the eval,
not to the item: `--eval-definition` writes the eval beside the items (definition.py), and the
grader each case gets is decided by its oracle type (graders.py).
"""
from __future__ import annotations

from evalconv.canonical.format import FieldLoss
from evalconv.canonical.schema import CASE_FIELDS

VENDOR = "openai-evals"
# A chat message the Evals API sends as it is (EasyInputMessage: a role and a text content).
MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})
MESSAGE_KEYS = frozenset({"role", "content"})
# The item fields evalconv writes; a case's extensions.openai-evals.fields may add others.
ITEM_KEYS = ("id", "messages", "expected", "metadata")
REGISTRY_KEYS = ("input", "ideal", "id", "metadata")
# Where an item evalconv did not write keeps its reference, in this order of preference.
REFERENCE_KEYS = ("expected", "ideal", "reference", "expected_output", "ground_truth", "answer")
# The prompt the run sends: the item's messages, never a field holding a label.
PROMPT_FIELD = "messages"

_CASE_REASON = ("OpenAI has no case profile; carried in the item's metadata (item.metadata.case), which the "
                "grader evalconv writes reads (item.metadata.case.oracleType decides the check); the model "
                "never sees it")
_REGISTRY_CASE = "the registry's Match templates read only input and ideal; carried in the line's metadata key"

REASONS = {
    "input.messages": "the Evals API sends an item's messages as role + text content only: any other input is "
                      "sent as its JSON text in one user message, and the exact value is carried in "
                      "metadata.evalconv.input",
    "expected.ideal": "the registry's ideal is a text or a list of texts (Match passes an answer that starts "
                      "with one): this value is carried in metadata.evalconv.expected and the ideal is [], "
                      "which no answer matches",
    "metadata.registry": "the registry's Match templates ignore extra keys: carried in the line's metadata key",
}


def _case_entry(name: str) -> FieldLoss:
    if name == "extensions":
        return FieldLoss("$.metadata.case.extensions", "carried",
                         "item.metadata.case.extensions; extensions.openai-evals.fields are also item fields "
                         "(registry: line keys), extensions.openai-evals.sample the line's sample",
                         "item fields evalconv does not know go back in place from here")
    return FieldLoss(f"$.metadata.case.{name}", "carried", f"item.metadata.case.{name}", _CASE_REASON)


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "native", "item.id (registry: id, a key Match ignores)", "the item's own field"),
    FieldLoss("$.input", "native", "item.messages (registry: input): text as one user message, a "
              "{\"messages\": [...]} chat of role + text messages as it is; any other value as its JSON "
              "text (carried)", "the run's input_messages is the item reference item.messages: the model "
              "sees these messages and nothing else of the item"),
    FieldLoss("$.expected", "native", "item.expected (registry: ideal for a text or a list of texts, else "
              "carried with an ideal of [])", "graders read it as {{item.expected}}; it is never in the "
              "prompt the model sees"),
    *(_case_entry(name) for name in CASE_FIELDS),
    FieldLoss("$.metadata.evalconv", "carried", "item.metadata.evalconv.shadowed.evalconv",
              "metadata.evalconv holds evalconv's bookkeeping in the item"),
    FieldLoss("$.metadata.<other keys>", "native", "item.metadata.<key> (registry: metadata.<key>, carried)",
              "an item field graders can read as {{item.metadata.<key>}}; the registry's templates ignore it"),
)
CARRIED = {f.path: f.reason for f in FIELD_MAP if f.fate == "carried"}
REGISTRY_CARRIED = {**{f"$.metadata.case.{name}": _REGISTRY_CASE for name in CASE_FIELDS},
                    "$.metadata.evalconv": CARRIED["$.metadata.evalconv"]}

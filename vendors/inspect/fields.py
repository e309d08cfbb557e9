"""Where each canonical field goes in an Inspect AI sample, as data (the docs table is this).

Inspect reads samples with `json_dataset` / `csv_dataset`: `input` (text or chat messages),
`target` (text or a list of texts), `choices`, `id`, `metadata`, and the sandbox fields. Its
stock scorers compare the model's answer with the target: `match` and `includes` pass when any
target matches its test (the end of the answer; a substring), `model_graded_qa` /
`model_graded_fact` hand the target to a judge as the grading guidance, `choice` checks a
multiple-choice letter. An empty target list is a target no answer matches, so a case the stock
scorers cannot check gets one; `scorers.py` has the scorers that check what the case means.
"""
from __future__ import annotations

from evalconv.canonical.format import FieldLoss
from evalconv.canonical.schema import CASE_FIELDS

VENDOR = "inspect"
# The sample fields Inspect's FieldSpec names; the sandbox group is kept in extensions.inspect.
SAMPLE_FIELDS = ("input", "target", "choices", "id", "metadata", "sandbox", "files", "setup", "description")
EXTENSION_FIELDS = ("choices", "sandbox", "files", "setup", "description")
MESSAGE_ROLES = frozenset({"system", "user", "assistant", "tool"})
# What Inspect's read_messages keeps of a chat message; anything else it drops.
MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "function", "error"})
# Oracle types whose expected value is not a text a stock scorer can compare (carried, never a target).
CARRIED_ORACLES = frozenset({"expected-tool-calls", "expected-final-state", "expected-behavior-only"})
# The target of a case the stock scorers cannot check: no answer matches an empty target list
# (match, includes, exact and pattern loop over the targets). Inspect's CSV holds a text, so
# there it is a text no answer contains (an answer would have to quote it).
NO_TARGET: list[str] = []
NO_TARGET_CSV = ("[evalconv: no stock Inspect scorer checks this case; score it with "
                 "evalconv.vendors.inspect.scorers.case_scorer()]")

_CASE_REASON = ("Inspect has no case profile; carried in the sample's metadata for the round trip "
                "(scorers can read it, nothing in Inspect acts on it)")

REASONS = {
    "input.text": "Inspect inputs are text or chat messages: the model sees this value as JSON text; "
                  "the exact value is carried in metadata.evalconv.input",
    "expected.text": "Inspect targets are text: its scorers compare the JSON text of this value; the exact "
                     "value is carried in metadata.evalconv.expected",
    "expected.empty": "Inspect reads an empty target as no target, which every answer matches: the target is "
                      "one no answer matches and the exact value is carried in metadata.evalconv.expected",
    "expected.calls": "no stock Inspect scorer checks tool calls: the calls are carried in metadata.evalconv.expected, "
                      "the target is one no answer matches, and evalconv.vendors.inspect.scorers.tool_calls() "
                      "checks the calls in order",
    "expected.state": "no Inspect scorer inspects a final state: the check is carried in "
                      "metadata.evalconv.expected and the target is one no answer matches",
    "expected.behavior": "an expected-behavior-only case has no target in Inspect (one no answer matches); "
                         "the value is carried",
    "expected.csv": "Inspect's CSV holds one target text a sample, so the set is written as JSON text (an "
                    "answer matches it only by quoting the whole set) and carried; scorers.membership() checks the carried set; write JSONL "
                    "to keep one target per member",
    "csv.cr": "csv_dataset opens the file with universal newlines, so Inspect reads CR LF and CR inside a "
              "cell as LF; the exact text is carried in metadata.evalconv",
    "criteria.csv": "Inspect's CSV holds one target text: the criteria are joined one per line",
}


def _case_entry(name: str) -> FieldLoss:
    if name == "evaluationCriteria":
        return FieldLoss("$.metadata.case.evaluationCriteria", "carried", "metadata.case.evaluationCriteria; "
                         "a rubric case without expected also gets one target per criterion",
                         _CASE_REASON + "; as targets, model_graded_qa hands them to the judge as its guidance")
    if name == "extensions":
        return FieldLoss("$.metadata.case.extensions", "carried", "metadata.case.extensions; "
                         "extensions.inspect.{choices, sandbox, files, setup, description} also native",
                         "the Inspect sample fields that are not case data live here and go back in place")
    return FieldLoss(f"$.metadata.case.{name}", "carried", f"metadata.case.{name}", _CASE_REASON)


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "native", "id", "Inspect's sample id; an integer id read from Inspect goes back an integer"),
    FieldLoss("$.input", "native", "input: text as is; {\"messages\": [...]} as chat messages; any other "
              "value as JSON text (carried)", "what the solver sends to the model"),
    FieldLoss("$.expected", "native", "target: reference-answer text; acceptable-set as a list of targets; "
              "tool calls, final states and behaviour carried, with an empty target list (no answer matches it)",
              "the stock scorers compare the answer with each target; a case they cannot check never passes "
              "them, and evalconv.vendors.inspect.scorers checks what it means"),
    *(_case_entry(name) for name in CASE_FIELDS),
    FieldLoss("$.metadata.evalconv", "carried", "metadata.evalconv.shadowed.evalconv",
              "metadata.evalconv holds evalconv's bookkeeping in Inspect"),
    FieldLoss("$.metadata.<other keys>", "native", "metadata.<key>",
              "Inspect passes sample metadata to solvers, scorers and prompt templates"),
)
CARRIED = {f.path: f.reason for f in FIELD_MAP if f.fate == "carried"}

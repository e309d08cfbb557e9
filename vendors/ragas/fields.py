"""Where each canonical field goes in a Ragas evaluation sample, as data (the docs table is this).

Ragas evaluates samples: single-turn (`user_input` text, `reference`, `reference_contexts`,
`retrieved_contexts`, `response`, `rubrics`, ...) or multi-turn (`user_input` a list of human /
ai / tool messages, `reference`, `reference_tool_calls`, `reference_topics`, `rubrics`). A
dataset holds one kind only. Samples have no id and no metadata: what Ragas cannot hold rides in
an `evalconv` key that Ragas ignores when it loads the file (and drops if Ragas re-saves it).

Contexts in the canonical row (docs/vendors/ragas.md): `metadata.referenceContexts` (and
`metadata.referenceContextIds`) are labels, the passages a correct answer rests on, never shown
to the system under test; what a run retrieved or answered is run output, kept in
`metadata.ragas_run`, beside the case and never part of its input.
"""
from __future__ import annotations

from evalconv.canonical.format import FieldLoss
from evalconv.canonical.schema import CASE_FIELDS

VENDOR = "ragas"
ENVELOPE = "evalconv"
RUN_KEY = "ragas_run"
CONTEXTS = {"reference_contexts": "referenceContexts", "reference_context_ids": "referenceContextIds"}
RUN_FIELDS = ("response", "multi_responses", "retrieved_contexts", "retrieved_context_ids")
SINGLE_FIELDS = ("user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids",
                 "reference_context_ids", "response", "multi_responses", "reference", "rubrics",
                 "persona_name", "query_style", "query_length")
MULTI_FIELDS = ("user_input", "reference", "reference_tool_calls", "rubrics", "reference_topics")
# Sample fields that are neither input, label nor run output: kept in extensions.ragas.
EXTENSION_FIELDS = ("rubrics", "persona_name", "query_style", "query_length", "reference_topics")
ROLE_TO_TYPE = {"user": "human", "assistant": "ai", "tool": "tool"}
TYPE_TO_ROLE = {v: k for k, v in ROLE_TO_TYPE.items()}

_CARRIED = ("carried in the sample's `evalconv` key: Ragas ignores it when it loads the file, and "
            "its own to_jsonl/to_csv leave it out")
REASONS = {
    "case": "Ragas has no case profile; " + _CARRIED,
    "id": "Ragas samples have no id; " + _CARRIED,
    "metadata": "Ragas samples have no metadata; " + _CARRIED,
    "input.text": "a Ragas user_input is text (or human/ai/tool messages): the JSON text of this value "
                  "is written; the exact value is " + _CARRIED,
    "input.system": "Ragas messages have no system role (ragas 0.4.3 has HumanMessage, AIMessage and "
                    "ToolMessage only; its LangGraph converter skips system messages too): the system message "
                    "is left out of user_input; the exact input is " + _CARRIED,
    "input.content": "a Ragas message's content is text: a turn whose content is not (an evidence marker "
                     "{\"$evidence\": \"redacted\"}, a list of parts) is left out of user_input; the exact input is "
                     + _CARRIED,
    "input.order": "Ragas loads a conversation only if each tool message follows an AI message with tool "
                   "calls (and not one of system messages alone): the JSON text of this chat is written as one "
                   "human message; the exact value is " + _CARRIED,
    "expected.text": "a Ragas reference is text: the JSON text of this value is written; the exact value "
                     "is " + _CARRIED,
    "input.nul": "a CSV cell cannot hold a NUL character: the JSON text of this input is written; the exact "
                 "value is " + _CARRIED,
    "expected.nul": "a CSV cell cannot hold a NUL character: the JSON text of this reference is written; the "
                    "exact value is " + _CARRIED,
    "expected.empty": "an empty Ragas reference reads as none; the empty text is " + _CARRIED,
    "expected.set": "Ragas has no acceptable-set check (its reference is one answer); the set is "
                    + _CARRIED,
    "expected.calls": "single-turn Ragas samples hold no tool calls; the calls are " + _CARRIED,
    "expected.args": "a Ragas tool call always has args: a call without arguments reads back with "
                     "args {}; the exact calls are " + _CARRIED,
    "expected.other": "no Ragas field holds this oracle's payload; it is " + _CARRIED,
    "contexts.multi": "a multi-turn sample has no reference_contexts (ragas 0.4.3's MultiTurnSample holds "
                      "user_input, reference, reference_tool_calls, rubrics and reference_topics only); "
                      + _CARRIED,
}
# A version-2 row's context references (metadata.case.contextRefs) on a single-turn sample: each
# reference's source is written as reference_context_ids (what Ragas' ID-based context recall and
# precision compare with retrieved_context_ids); the references are carried whole either way.
FROM_REFS = "referenceContextIdsFromContextRefs"  # the envelope's mark: the ids are the references' sources
_NO_VERSION = ("a reference's snapshot (the version of the source it was written against), its span and "
               "any evidence marker have no Ragas field, so the references are " + _CARRIED)
REFS_REASONS = {
    "sources": "reference_context_ids hold each reference's source (Ragas' ID-based context recall and "
               "precision compare them with retrieved_context_ids); " + _NO_VERSION
               + "; an edit of reference_context_ids in the file is read back into the references' sources",
    "kept": "metadata.referenceContextIds fills reference_context_ids already: the references are not "
            "mapped; " + _NO_VERSION,
    "marker": "a reference whose source is an evidence marker ({\"$evidence\": ...}) has no id for "
              "reference_context_ids: the references are not mapped; " + _NO_VERSION,
    "multi": "a multi-turn sample has no reference_context_ids (ragas 0.4.3's MultiTurnSample): the "
             "references are not mapped; " + _NO_VERSION,
}
# The case fields a rubric judge reads, written as Ragas rubrics on a rubric case an LLM judge grades.
RUBRIC_FIELDS = ("expectedBehavior", "evaluationCriteria", "unacceptableBehavior")
RUBRIC_REASON = ("LLM-judged rubric cases: Ragas' rubric metrics (InstanceRubrics) read the sample's "
                 "rubrics; score1_description is the expected behaviour and every criterion (and what "
                 "must not happen), score0_description a miss")


def _case_entry(name: str) -> FieldLoss:
    if name == "extensions":
        return FieldLoss("$.metadata.case.extensions", "carried", "evalconv.metadata.case.extensions; "
                         "extensions.ragas.{rubrics, persona_name, query_style, query_length, "
                         "reference_topics} also native", "the Ragas sample fields that are not case data")
    return FieldLoss(f"$.metadata.case.{name}", "carried", f"evalconv.metadata.case.{name}", REASONS["case"])


FIELD_MAP: tuple[FieldLoss, ...] = (
    FieldLoss("$.id", "carried", "evalconv.id", REASONS["id"]),
    FieldLoss("$.input", "native", "user_input: text as is; {\"messages\": [...]} as a multi-turn "
              "sample's messages (user/assistant/tool as human/ai/tool)", "what Ragas' metrics read as the question"),
    FieldLoss("$.expected", "native", "reference (text); expected tool calls as reference_tool_calls "
              "(multi-turn); anything else carried", "Ragas' reference-based metrics read it"),
    *(_case_entry(name) for name in CASE_FIELDS if name != "contextRefs"),
    FieldLoss("$.metadata.case.contextRefs", "native", "reference_context_ids: each reference's source "
              "(single-turn samples, when metadata.referenceContextIds does not fill it)", REFS_REASONS["sources"]),
    FieldLoss("$.metadata.case.contextRefs", "carried", "evalconv.metadata.case.contextRefs", _NO_VERSION),
    *(FieldLoss(f"$.metadata.case.{name}", "native", "rubrics", RUBRIC_REASON) for name in RUBRIC_FIELDS),
    FieldLoss("$.metadata.referenceContexts", "native", "reference_contexts",
              "a label: the passages a correct answer rests on (context recall/precision read them)"),
    FieldLoss("$.metadata.referenceContextIds", "native", "reference_context_ids", "ids of those passages"),
    FieldLoss("$.metadata.referenceContexts", "carried", "evalconv.metadata.referenceContexts",
              REASONS["contexts.multi"]),
    FieldLoss("$.metadata.referenceContextIds", "carried", "evalconv.metadata.referenceContextIds",
              REASONS["contexts.multi"]),
    FieldLoss("$.metadata.ragas_run", "native", "response, multi_responses, retrieved_contexts, "
              "retrieved_context_ids", "run output read from a Ragas file, written back in place"),
    FieldLoss("$.metadata.<other keys>", "carried", "evalconv.metadata.<key>", REASONS["metadata"]),
)
CARRIED = {f.path: f.reason for f in FIELD_MAP if f.fate == "carried" and f.reason != REASONS["contexts.multi"]}
# Recorded per sample in the envelope: a short digest of each native field as written, so that a
# value only the native field holds (a text reference, reference contexts) is still known edited.
WRITTEN = "written"

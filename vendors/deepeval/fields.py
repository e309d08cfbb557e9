"""DeepEval's golden layout and evalconv's field map for it, shared by the reader and the writer.

Facts (deepeval 4.3.1): `save_as` writes every key of a single-turn golden, nulls included, in
`GOLDEN_KEYS` order; `additional_metadata` is the only free-form field, so the whole canonical
row travels there under `CARRIER` and reading evalconv's own file back is exact.
"""
from __future__ import annotations

from evalconv.canonical.format import FieldLoss
from evalconv.canonical.schema import CASE_FIELDS

GOLDEN_KEYS = ("input", "actual_output", "expected_output", "retrieval_context", "context", "name",
               "comments", "source_file", "tools_called", "expected_tools", "token_cost",
               "input_token_count", "output_token_count", "additional_metadata",
               "custom_column_key_values", "expectations")
CONVERSATIONAL_KEYS = ("scenario", "turns", "expected_outcome", "user_description", "persona",
                       "context", "name", "comments", "additional_metadata",
                       "custom_column_key_values", "expectations")
TOOL_KEYS = ("name", "type", "description", "reasoning", "output", "inputParameters")
CARRIER = "evalconv"            # additional_metadata["evalconv"] holds the whole canonical row
VENDOR_KEY = "deepeval"         # metadata.deepeval: golden fields that are case data without a canonical place
RUN_KEY = "deepeval_run"        # metadata.deepeval_run: what an app run produced (not case data)
REFERENCE_CONTEXTS = "referenceContexts"  # metadata.referenceContexts: the ground truth, DeepEval's `context`
RUN_FIELDS = ("actual_output", "tools_called", "retrieval_context", "token_cost",
              "input_token_count", "output_token_count")
# metadata.<key>.<field> the writer puts back in the golden field of the same name when it fits.
RESTORED = {VENDOR_KEY: ("comments", "source_file", "custom_column_key_values", "expected_output"),
            RUN_KEY: RUN_FIELDS}
# Text columns of the CSV, with the canonical path whose value the cell shows.
CSV_TEXT_COLUMNS = {"input": "$.input", "expected_output": "$.expected", "name": "$.id",
                    "actual_output": "$.metadata.deepeval_run.actual_output",
                    "comments": "$.metadata.deepeval.comments",
                    "source_file": "$.metadata.deepeval.source_file"}
CSV_LIST_COLUMNS = {"context": f"$.metadata.{REFERENCE_CONTEXTS}",
                    "retrieval_context": "$.metadata.deepeval_run.retrieval_context"}

_KEPT = "additional_metadata.evalconv"
_NO_PLACE = "no DeepEval field holds it; DeepEval does not act on it"

_FIELDS: dict[str, FieldLoss] = {
    "id": FieldLoss("$.id", "native", "name", "the golden's name; files keep it, but push() to Confident AI clears it"),
    "input": FieldLoss("$.input", "native", "input", "a string input is what DeepEval sends to the app"),
    "input.json": FieldLoss("$.input", "carried", f"input (JSON text), {_KEPT}",
                            "DeepEval's input is a string: a non-string input is written as its JSON text"),
    "input.chat": FieldLoss("$.input", "carried", f"input (JSON text of the messages), {_KEPT}",
                            "a chat input in a set that is not all user/assistant chats (or in CSV): DeepEval's "
                            "conversational goldens (scenario + turns) cannot share a dataset with single-turn "
                            "goldens (add_golden raises TypeError), so the row stays a single-turn golden whose "
                            "input is the JSON text of the chat"),
    "input.turns": FieldLoss("$.input", "native", "turns (a conversational golden)",
                             "a set whose every input is a user/assistant chat becomes conversational goldens "
                             "(JSON and JSONL): the messages are the turns"),
    "scenario.conversational": FieldLoss("$.metadata.case.scenario", "native", "scenario (a conversational golden)",
                                         "what the conversation is about; DeepEval requires one, so a chat row "
                                         "without a scenario gets its id there"),
    "expected": FieldLoss("$.expected", "native", "expected_output", "a string reference answer"),
    "expected.tools": FieldLoss("$.expected", "native", "expected_tools",
                                "expected tool calls, in order; arguments become inputParameters"),
    "expected.tool_keys": FieldLoss("$.expected[*].*", "carried", _KEPT,
                                    "DeepEval's ToolCall keeps only name and inputParameters of an expected call"),
    "expected.json": FieldLoss("$.expected", "carried", f"expected_output (JSON text), {_KEPT}",
                               "DeepEval's expected_output is a string: other values are written as JSON text"),
    "expected.tools.none": FieldLoss("$.expected", "carried", f"expected_tools [] (JSONL), {_KEPT}",
                                     "JSONL: DeepEval's JSONL loader reads an empty expected_tools (a case "
                                     "expecting no tool calls) as no expected tools"),
    "expected.set": FieldLoss("$.expected", "carried", _KEPT,
                              "an acceptable set: DeepEval has no membership metric, and as text in "
                              "expected_output its stock metrics would compare the output with the whole list; "
                              "grade it with the membership metric in docs/vendors/deepeval.md"),
    "expected.state": FieldLoss("$.expected", "carried", _KEPT,
                                "an expected final state is checked against the state the app leaves, not its "
                                "text output; as text in expected_output DeepEval's metrics would compare the "
                                "output with it"),
    "expected.null": FieldLoss("$.expected", "carried", _KEPT,
                               "expected null and no expected both become expected_output null"),
    "expectedBehavior": FieldLoss("$.metadata.case.expectedBehavior", "native", "expectations.must[0]",
                                  "LLM-judged cases only: DeepEval 4.3+ judges it (without surrounding spaces); "
                                  "3.x ignores expectations"),
    "evaluationCriteria": FieldLoss("$.metadata.case.evaluationCriteria", "native",
                                    "expectations.must, after the expected behaviour",
                                    "LLM-judged cases only: each criterion is a condition DeepEval 4.3+'s judge "
                                    "checks (without surrounding spaces); a rubric whose one criterion is its "
                                    "expected behaviour is written once"),
    "evaluationCriteria.not_judged": FieldLoss("$.metadata.case.evaluationCriteria", "carried", _KEPT,
                                               "the case is not graded by an LLM judge: as expectations the "
                                               "criteria would make DeepEval attach an LLM-judged metric to it"),
    "evaluationCriteria.blank": FieldLoss("$.metadata.case.evaluationCriteria[*]", "carried", _KEPT,
                                          "a blank criterion, which expectations.must rejects"),
    "referenceContexts": FieldLoss(f"$.metadata.{REFERENCE_CONTEXTS}", "native", "context",
                                   "the ground-truth passages a correct answer rests on: DeepEval's "
                                   "HallucinationMetric checks the output against context, and the expectations "
                                   "judge sees it as background (its contextual recall and precision metrics "
                                   "read retrieval_context, what the app retrieved, instead)"),
    "referenceContexts.other": FieldLoss(f"$.metadata.{REFERENCE_CONTEXTS}", "carried", _KEPT,
                                         "DeepEval's context is a list of strings: any other value is only carried"),
    "expectedBehavior.blank": FieldLoss("$.metadata.case.expectedBehavior", "carried", _KEPT,
                                        "blank text, which expectations.must rejects"),
    "unacceptableBehavior": FieldLoss("$.metadata.case.unacceptableBehavior", "native", "expectations.must_not",
                                      "LLM-judged cases only: DeepEval 4.3+ judges it (without surrounding "
                                      "spaces); 3.x ignores expectations"),
    "expectedBehavior.not_judged": FieldLoss("$.metadata.case.expectedBehavior", "carried", _KEPT,
                                             "the case is not graded by an LLM judge: expectations would make "
                                             "DeepEval attach an LLM-judged metric to it"),
    "unacceptableBehavior.not_judged": FieldLoss("$.metadata.case.unacceptableBehavior", "carried", _KEPT,
                                                 "the case is not graded by an LLM judge: expectations.must_not "
                                                 "would make DeepEval attach an LLM-judged metric to it"),
    "unacceptableBehavior.blank": FieldLoss("$.metadata.case.unacceptableBehavior[*]", "carried", _KEPT,
                                            "a blank item, which expectations.must_not rejects"),
    "scenario": FieldLoss("$.metadata.case.scenario", "carried", _KEPT,
                          "DeepEval's scenario field would make the row a conversational golden"),
    "caseId": FieldLoss("$.metadata.case.caseId", "carried", f"name (equal to id), {_KEPT}", "it equals the id"),
}
_FIELDS["contextRefs"] = FieldLoss(
    "$.metadata.case.contextRefs", "carried", _KEPT,
    "a context reference names a source and the snapshot it was written against; DeepEval's context and "
    "retrieval_context are lists of passage text (metadata.referenceContexts maps to context) and a golden has "
    "no field for a source id, its snapshot, its span or an evidence marker, so references are carried, not "
    "mapped; DeepEval does not act on them")
for _field in CASE_FIELDS:
    _FIELDS.setdefault(_field, FieldLoss(f"$.metadata.case.{_field}", "carried", _KEPT, _NO_PLACE))
for _group, _names in RESTORED.items():
    for _name in _names:
        _FIELDS[f"{_group}.{_name}"] = FieldLoss(f"$.metadata.{_group}.{_name}", "native", _name,
                                                 "a DeepEval field read from a DeepEval file, put back in place")
_FIELDS["deepeval.additional_metadata"] = FieldLoss(
    "$.metadata.deepeval.additional_metadata", "carried", "additional_metadata (beside evalconv)",
    "a DeepEval file's own metadata, put back in place; DeepEval does not act on it")
_FIELDS["metadata"] = FieldLoss("$.metadata.*", "carried", _KEPT, "user metadata; DeepEval does not act on it")
_CSV_NA = "CSV: DeepEval's loader (pandas) reads an NA-like cell (NA, N/A, null, None, nan, empty, ...) as no value"
_CSV_NUMBER = "CSV: pandas reads a column whose cells all look like numbers or booleans as numbers, which DeepEval rejects"
_CSV_NUL = "CSV: a cell cannot hold a NUL character, so the value is written as its JSON text"
for _column, _path in (CSV_TEXT_COLUMNS | CSV_LIST_COLUMNS).items():
    _where = f"{_column} (CSV), {_KEPT}"
    if _column in CSV_LIST_COLUMNS:
        _FIELDS[f"csv.pipe.{_column}"] = FieldLoss(
            f"{_path}[*]", "carried", _where, "CSV: DeepEval splits list cells on '|', so an item holding '|' comes back split")
    _FIELDS[f"csv.na.{_column}"] = FieldLoss(_path, "carried", _where, _CSV_NA)
    _FIELDS[f"csv.number.{_column}"] = FieldLoss(_path, "carried", _where, _CSV_NUMBER)
    _FIELDS[f"csv.nul.{_column}"] = FieldLoss(_path, "carried", _where, _CSV_NUL)

FIELD_MAP: tuple[FieldLoss, ...] = tuple(_FIELDS.values())


def field(key: str) -> FieldLoss:
    """The field-map line a loss-report entry repeats."""
    return _FIELDS[key]


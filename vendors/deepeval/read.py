"""DeepEval golden files (JSON array, JSONL, CSV) into canonical rows.

A golden evalconv wrote carries its row in `additional_metadata["evalconv"]`; that row is
restored exactly. Any other golden is imported: provenance `imported`, the oracle type
inferred, case data without a canonical place under `metadata.deepeval`, and what an app
run produced under `metadata.deepeval_run`.
"""
from __future__ import annotations

import ast
import copy
import csv
from itertools import chain
from typing import Any, Callable, Iterable, Iterator

from evalconv.canonical import jsonvalue, paths, schema
from evalconv.canonical.errors import ReadError, RowError
from evalconv.canonical.json_format import iter_array
from evalconv.canonical.row import Row
from evalconv.canonical.source import MAX_LINE_BYTES, Lines, SourceRow, parse_problem
from evalconv.canonical.reporting import QuietLoss, ReadReporter

from .._common.grading import llm_judge_may_grade
from .fields import CARRIER, CONVERSATIONAL_KEYS, GOLDEN_KEYS, REFERENCE_CONTEXTS, RUN_FIELDS, RUN_KEY, VENDOR_KEY
from .golden import build_conversational, build_golden, is_conversation, is_tool_calls, judged_criteria
from .write import csv_cell

csv.field_size_limit(MAX_LINE_BYTES)

_LIST_FIELDS = ("context", "retrieval_context")
_JSON_FIELDS = ("tools_called", "expected_tools", "additional_metadata", "custom_column_key_values",
                "expectations", "turns", "persona")
_NUMBER_FIELDS = ("token_cost", "input_token_count", "output_token_count")
_KNOWN = frozenset(GOLDEN_KEYS) | frozenset(CONVERSATIONAL_KEYS)


def read_goldens(lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
    numbered = _numbered(lines)
    head: list[tuple[int, str]] = []
    for number, text in numbered:
        head.append((number, text))
        if text.strip():
            break
    if not head or not head[-1][1].strip():
        return  # an empty file is an empty JSONL set
    start = head[-1][1].lstrip(" \t")
    rest = chain(head, numbered)
    if start.startswith("["):
        for index, src in enumerate(iter_array((t for _, t in rest), lines.source), 1):
            yield src if src.problems else _row(src.value, src.line, None, index, "json", report)
    elif start.startswith("{"):
        yield from _jsonl(rest, lines.source, report)
    else:
        yield from _csv(rest, lines.source, report)


def _numbered(lines: Lines) -> Iterator[tuple[int, str]]:
    for number, text in enumerate(lines, 1):
        yield number, text


def _jsonl(lines: Iterable[tuple[int, str]], source: str, report: ReadReporter) -> Iterator[SourceRow]:
    index = 0
    for number, text in lines:
        if not text.strip():
            continue  # DeepEval's loader skips blank lines too
        index += 1
        try:
            value = jsonvalue.loads(text)
        except jsonvalue.JSONValueError as err:
            if index == 1:  # most likely one pretty-printed object, which no DeepEval loader reads
                raise ReadError(f"the first line is not a JSON object ({err}); a DeepEval file is a JSON "
                                f"array of goldens, or JSONL with one golden a line", source=source,
                                line=number) from None
            yield SourceRow(None, number, problems=parse_problem(f"line is not valid JSON: {err}"))
            continue
        if not isinstance(value, dict):
            yield SourceRow(None, number, problems=parse_problem("each line must be a JSON object (a golden)"))
            continue
        yield _row(value, number, None, index, "jsonl", report)


def _csv(lines: Iterable[tuple[int, str]], source: str, report: ReadReporter) -> Iterator[SourceRow]:
    position = {"line": 0}

    def texts() -> Iterator[str]:
        for number, text in lines:
            position["line"] = number
            yield text

    reader = csv.reader(texts(), strict=True)
    start = 1
    try:
        header = next(reader)
        if len(set(header)) != len(header):
            raise ReadError("a column appears twice in the header", source=source, line=1)
        if "input" not in header and "scenario" not in header:
            raise ReadError("the header has neither an 'input' nor a 'scenario' column; is this a "
                            "DeepEval goldens CSV?", source=source, line=1)
        start = position["line"] + 1
        for record, cells in enumerate(reader, 1):
            if len(cells) != len(header):
                yield SourceRow(None, start, record, parse_problem(
                    f"record has {len(cells)} cells but the header has {len(header)}"))
            else:
                try:
                    golden = {key: decode_csv_cell(key, cell) for key, cell in zip(header, cells)}
                except RowError as err:
                    yield SourceRow.failed(err, start, record)
                else:
                    yield _row(golden, start, record, record, "csv", report)
            start = position["line"] + 1
    except csv.Error as err:
        raise ReadError(f"malformed CSV ({err})", source=source, line=start) from None


def decode_csv_cell(key: str, cell: str) -> Any:
    """A CSV cell as DeepEval's loader means it: empty is None, JSON columns are parsed.
    Text is kept as text (pandas would change NA-like and number-like cells; evalconv does not)."""
    if cell == "":
        return None
    if key in _JSON_FIELDS or key in _NUMBER_FIELDS:
        try:
            return jsonvalue.loads(cell)
        except jsonvalue.JSONValueError:
            if key in ("additional_metadata", "custom_column_key_values"):
                try:  # DeepEval also accepts a Python dict literal here
                    return ast.literal_eval(cell)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    pass
            raise RowError(f"column '{key}' is not valid JSON", f"$.{key}") from None
    return cell


def _row(golden: dict[str, Any], line: int | None, record: int | None, index: int, variant: str,
         report: ReadReporter) -> SourceRow:
    name = golden.get("name")
    try:
        golden = _normalised(golden)
        carried = golden.get("additional_metadata")
        if isinstance(carried, dict) and isinstance(carried.get(CARRIER), dict):
            return SourceRow(_take_edits(golden, carried[CARRIER], variant, report), line, record)
        return SourceRow(_import(golden, index, report), line, record)
    except RowError as err:
        return SourceRow.failed(err, line, record, partial={"id": name} if isinstance(name, str) and name else None)


def _normalised(golden: dict[str, Any]) -> dict[str, Any]:
    """Undo the text forms JSONL and CSV use: '|'-joined lists, JSON-text tools."""
    out = dict(golden)
    if out.get("additional_metadata") is None and isinstance(out.get("metadata"), dict):
        out["additional_metadata"] = out.pop("metadata")  # the name DeepEval 4.3's test cases use for it
    for key in _LIST_FIELDS:
        if isinstance(out.get(key), str):
            out[key] = out[key].split("|")
    for key in _JSON_FIELDS:
        if isinstance(out.get(key), str):
            out[key] = decode_csv_cell(key, out[key])
    return out


def _take_edits(golden: dict[str, Any], value: dict[str, Any], variant: str, report: ReadReporter) -> dict[str, Any]:
    """The carried row, with every DeepEval field edited after export taken from the file (the
    edit wins over the carried copy) and noted in the read report, which the CLI prints."""
    if not schema.is_valid(value):
        return value  # the validator reports what is wrong with the carried row

    carried_row = Row.from_json(value)
    row = copy.deepcopy(value)
    conversational = "input" not in golden and is_conversation(carried_row)
    if conversational:  # its turns, then the fields it shares with a single-turn golden
        written = build_conversational(carried_row, QuietLoss())
        turns = _turns(golden.get("turns"))  # save_as writes every turn field, null ones too
        if "turns" in golden and not jsonvalue.same(turns, value["input"]["messages"]):
            row["input"] = {"messages": turns}
            _said(report, "$.input", value["id"], "turns")
        keys: tuple[str, ...] = _CONVERSATIONAL_COMPARED
    else:
        written, keys = build_golden(carried_row, QuietLoss()), _COMPARED
    for key in keys:
        if key not in golden:
            continue
        want = written[key]
        if key == "context" and want is None:  # an export made before context held the reference contexts
            want = (value["metadata"].get(VENDOR_KEY) or {}).get("context") \
                if isinstance(value["metadata"].get(VENDOR_KEY), dict) else None
        if variant == "csv":
            want = _normalised({key: decode_csv_cell(key, csv_cell(key, want))})[key]
        if not _same(key, want, golden[key]):
            _said(report, _EDIT[key](row, golden[key], value), value["id"], key)
    for key, item in golden.items():  # a field DeepEval has no place for, added by hand
        if key not in _KNOWN and item is not None:
            where = _put(row, VENDOR_KEY, key, item)
            report.edit(where, value["id"], f"{key} is not a DeepEval golden field; added in the file, it is "
                        f"kept in {where.removeprefix('$.')}")
    return row


def _said(report: ReadReporter, path: str, row_id: str, key: str) -> None:
    report.edit(path, row_id, f"{key} was edited in the DeepEval file; the edit is kept "
                f"(it differs from the copy in additional_metadata.{CARRIER})")


# Golden fields compared with what evalconv wrote for the carried row, to notice edits made after export.
_COMPARED = ("input", "expected_output", "name", "expected_tools", "expectations", "context", "comments",
             "source_file", "custom_column_key_values", "additional_metadata", *RUN_FIELDS)
_CONVERSATIONAL_COMPARED = ("scenario", "expected_outcome", "name", "expectations", "context", "comments",
                            "custom_column_key_values", "additional_metadata", "user_description", "persona")
# DeepEval's save_as writes an empty list or mapping as null, and its CSV loader reads null as []:
# one value for DeepEval, so neither is an edit.
_EMPTY_IS_NONE = frozenset({"expected_tools", "tools_called", "context", "retrieval_context",
                            "custom_column_key_values", "additional_metadata", "turns"})
# save_as writes these null whatever the golden holds (deepeval 4.3.1, PR #3233): null there is no edit.
_SAVE_AS_NULLS = frozenset({"token_cost", "input_token_count", "output_token_count"})


def _same(key: str, want: Any, got: Any) -> bool:
    if key in _SAVE_AS_NULLS and got is None:
        return True
    if key == "additional_metadata":  # the file's own keys beside the carrier
        want, got = (_own_metadata(v) for v in (want, got))
    if key in ("expected_tools", "tools_called"):
        want, got = _tools_as_saved(want), _tools_as_saved(got)
    if key in _EMPTY_IS_NONE:
        want, got = (None if v == [] or v == {} else v for v in (want, got))
    return jsonvalue.same(want, got)


def _own_metadata(value: Any) -> Any:
    return {k: v for k, v in value.items() if k != CARRIER} if isinstance(value, dict) else value


def _tools_as_saved(tools: Any) -> Any:
    """Tool calls as DeepEval's model_dump writes them: `type` filled in, `inputParameters`."""
    if not isinstance(tools, list):
        return tools
    out = []
    for tool in tools:
        if isinstance(tool, dict):
            tool = {"type": "FUNCTION", **{("inputParameters" if k == "input_parameters" else k): v
                                           for k, v in tool.items() if v is not None}}
        out.append(tool)
    return out


def _put(row: dict[str, Any], group: str, name: str, item: Any) -> str:
    """Keep a DeepEval field's value under metadata.<group>.<name> (None or empty removes it);
    returns its path. A user's own metadata.<group> that is not an object is left alone: the
    value then goes to the case's extensions.deepeval."""
    metadata = row["metadata"]
    if group in metadata and not isinstance(metadata[group], dict):
        bucket = metadata["case"].setdefault("extensions", {}).setdefault(VENDOR_KEY, {})
        path = paths.join("$.metadata.case.extensions", VENDOR_KEY, name)
    else:
        bucket = metadata.setdefault(group, {})
        path = paths.join("$.metadata", group, name)
    if item is None or item == [] or item == {}:
        bucket.pop(name, None)
    else:
        bucket[name] = item
    if group in metadata and metadata[group] == {}:
        del metadata[group]
    return path


def _edit_in(group: str, name: str) -> Callable[[dict[str, Any], Any, dict[str, Any]], str]:
    def edit(row: dict[str, Any], item: Any, _: dict[str, Any]) -> str:
        return _put(row, group, name, item)
    return edit


def _edit_name(row: dict[str, Any], name: Any, _: Any) -> str:
    if not isinstance(name, str) or not name:
        raise RowError("'name' must be a non-empty string", "$.id")
    row["id"] = row["metadata"]["case"]["caseId"] = name
    return "$.id"


def _edit_input(row: dict[str, Any], text: Any, carried: dict[str, Any]) -> str:
    row["input"] = text if isinstance(carried["input"], str) else _json_or_text(text)
    return "$.input"


def _edit_expected_output(row: dict[str, Any], text: Any, carried: dict[str, Any]) -> str:
    old = carried.get("expected")
    oracle = carried["metadata"]["case"]["oracleType"]
    if oracle in ("acceptable-set", "expected-final-state") or (oracle == "expected-tool-calls" and is_tool_calls(old)):
        # the expected value is a set, a state or tool calls: text typed beside it is not that value
        return _put(row, VENDOR_KEY, "expected_output", text)
    if text is None:
        row.pop("expected", None)
    else:
        row["expected"] = text if old is None or isinstance(old, str) else _json_or_text(text)
    return "$.expected"


def _edit_expected_tools(row: dict[str, Any], tools: Any, carried: dict[str, Any]) -> str:
    if tools is None:
        row.pop("expected", None)
        return "$.expected"
    if not isinstance(tools, list):
        raise RowError("'expected_tools' must be a list of tool calls", "$.expected")
    old = carried.get("expected")
    old = old if isinstance(old, list) else []
    calls = []
    for i, tool in enumerate(tools):
        call = _call(tool, i)
        before = old[i] if i < len(old) and isinstance(old[i], dict) else {}
        if before.get("name") == call["name"]:  # keys DeepEval has no place for stay as carried
            call = {**{k: v for k, v in before.items() if k not in ("name", "arguments")}, **call}
        calls.append(call)
    row["expected"] = calls
    return "$.expected"


def _edit_expectations(row: dict[str, Any], expectations: Any, carried: dict[str, Any]) -> str:
    """The inverse of what the writer puts in expectations: must holds the expected behaviour
    (unless it is blank), then the criteria (a rubric's one condition is both); must_not holds
    the unacceptable behaviour. Only the parts that differ from what was written change."""
    scratch: dict[str, Any] = {}
    must = _import_expectations(expectations, scratch, {})
    case, old = row["metadata"]["case"], carried["metadata"]["case"]
    old_behavior = old["expectedBehavior"].strip()
    judged = llm_judge_may_grade(Row.from_json(carried))
    written_must = ([old_behavior] if old_behavior else []) + judged_criteria(old) if judged else []
    changed = []
    if must != written_must:
        if old_behavior or not judged:
            behavior, criteria = (must[0], must[1:]) if must else ("", [])
            if len(must) == 1 and old["oracleType"] == "rubric":
                criteria = [behavior]
            if behavior != old_behavior:
                case["expectedBehavior"] = behavior
                changed.append("$.metadata.case.expectedBehavior")
        else:
            criteria = must  # a blank expected behaviour is not written
        if criteria != [c.strip() for c in old.get("evaluationCriteria", ()) if c.strip()]:
            if criteria:
                case["evaluationCriteria"] = criteria
            else:
                case.pop("evaluationCriteria", None)
            changed.append("$.metadata.case.evaluationCriteria")
    unacceptable = scratch.get("unacceptableBehavior", [])
    if unacceptable != [i.strip() for i in old.get("unacceptableBehavior", []) if i.strip()]:
        if unacceptable:
            case["unacceptableBehavior"] = unacceptable
        else:
            case.pop("unacceptableBehavior", None)
        changed.append("$.metadata.case.unacceptableBehavior")
    return " and ".join(changed) or "$.metadata.case.expectedBehavior"


def _edit_context(row: dict[str, Any], contexts: Any, _: Any) -> str:
    if contexts is None or contexts == []:
        row["metadata"].pop(REFERENCE_CONTEXTS, None)
    else:
        row["metadata"][REFERENCE_CONTEXTS] = contexts
    return f"$.metadata.{REFERENCE_CONTEXTS}"


def _edit_scenario(row: dict[str, Any], scenario: Any, _: Any) -> str:
    case = row["metadata"]["case"]
    if isinstance(scenario, str) and scenario.strip():
        case["scenario"] = scenario
    else:
        case.pop("scenario", None)
    return "$.metadata.case.scenario"


def _edit_own_metadata(row: dict[str, Any], metadata: Any, _: Any) -> str:
    return _put(row, VENDOR_KEY, "additional_metadata", _own_metadata(metadata))


def _json_or_text(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return jsonvalue.loads(text)
    except jsonvalue.JSONValueError:
        return text


_EDIT: dict[str, Callable[[dict[str, Any], Any, dict[str, Any]], str]] = {
    "name": _edit_name, "input": _edit_input, "expected_output": _edit_expected_output,
    "expected_outcome": _edit_expected_output, "expected_tools": _edit_expected_tools,
    "expectations": _edit_expectations, "context": _edit_context, "scenario": _edit_scenario,
    "additional_metadata": _edit_own_metadata,
    **{name: _edit_in(VENDOR_KEY, name) for name in ("comments", "source_file", "custom_column_key_values",
                                                     "user_description", "persona")},
    **{name: _edit_in(RUN_KEY, name) for name in RUN_FIELDS}}


def _import(golden: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    row_id = _golden_id(golden, index, report)
    case: dict[str, Any] = {"caseId": row_id}
    row: dict[str, Any] = {"id": row_id}
    vendor: dict[str, Any] = {}
    handled = _import_input(golden, row, case, vendor)
    must = _import_expectations(golden.get("expectations"), case, vendor)
    _infer_case(golden, row, case, must, report)
    metadata: dict[str, Any] = {"case": _ordered(case)}
    run = {key: golden[key] for key in RUN_FIELDS if golden.get(key) is not None}
    for key in run:
        report.ignore(f"$.{key}", row_id, f"a run output, not case data; kept in metadata.{RUN_KEY}.{key}")
    _keep_the_rest(golden, handled, metadata, vendor, row_id, report)
    if vendor:
        metadata[VENDOR_KEY] = vendor
    if run:
        metadata[RUN_KEY] = run
    row["metadata"] = metadata
    return row


def _golden_id(golden: dict[str, Any], index: int, report: ReadReporter) -> str:
    name = golden.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise RowError("'name' must be a non-empty string", "$.id")
    row_id = name or f"golden-{index}"
    if not name:
        report.infer("$.id", row_id, "the golden has no name; the id is made from its position")
    return row_id


def _import_input(golden: dict[str, Any], row: dict[str, Any], case: dict[str, Any], vendor: dict[str, Any]) -> set[str]:
    """The golden's input and expected (a conversational golden's scenario, turns and outcome);
    the golden keys it took."""
    if golden.get("scenario"):
        row["input"] = {"messages": _turns(golden.get("turns"))}
        case["scenario"] = golden["scenario"]
        outcome = golden.get("expected_outcome")
        if outcome is not None:
            row["expected"] = outcome
        return {"scenario", "turns", "expected_outcome"}
    if golden.get("input") is None:
        raise RowError("the golden has no input (DeepEval requires one)", "$.input")
    row["input"] = golden["input"]
    _import_expected(golden, row, vendor)
    return {"input", "expected_output", "expected_tools"}


def _infer_case(golden: dict[str, Any], row: dict[str, Any], case: dict[str, Any], must: Any,
                report: ReadReporter) -> None:
    """The case fields a golden does not hold, inferred from what it does (each noted)."""
    row_id = row["id"]
    conversational = "scenario" in case
    judged = "expectedBehavior" in case  # expectations.must: DeepEval has an LLM judge grade it
    oracle = ("expected-tool-calls" if golden.get("expected_tools") and not conversational
              else "reference-answer" if "expected" in row else "rubric" if judged else "expected-behavior-only")
    case["oracleType"] = oracle
    source = "expected_outcome" if conversational and "expected" in row else _ORACLE_SOURCE[oracle]
    report.infer("$.metadata.case.oracleType", row_id, f"{oracle}: from the golden's {source}")
    if judged and oracle in ("reference-answer", "rubric"):
        case["evaluator"] = "llm-judge"
        report.infer("$.metadata.case.evaluator", row_id, "expectations.must: DeepEval grades it with an LLM judge")
        if oracle == "rubric" and len(must) == 1:
            case["evaluationCriteria"] = must  # one condition: the expected behaviour and the criterion
    if "evaluationCriteria" in case:
        report.infer("$.metadata.case.evaluationCriteria", row_id, "the expectations.must items after the "
                     "first (a rubric's only item is also its criterion)")
    if "expectedBehavior" not in case:
        case["expectedBehavior"] = row["expected"] if conversational and "expected" in row else _BEHAVIOR[oracle]
        report.infer("$.metadata.case.expectedBehavior", row_id, "no expectations.must in the golden")
    case["provenance"] = "imported"
    report.infer("$.metadata.case.provenance", row_id, "read from a DeepEval file evalconv did not write")


def _keep_the_rest(golden: dict[str, Any], handled: set[str], metadata: dict[str, Any], vendor: dict[str, Any],
                   row_id: str, report: ReadReporter) -> None:
    """The golden's other keys: its context as reference contexts, the rest kept for the vendor."""
    for key, item in golden.items():
        if key in handled or key in RUN_FIELDS or key in ("name", "expectations") or item is None:
            continue
        if key == "context" and _strings(item):
            metadata[REFERENCE_CONTEXTS] = item
            report.infer(f"$.metadata.{REFERENCE_CONTEXTS}", row_id, "the golden's context: the ground-truth "
                         "passages a correct answer rests on (a label, never input)")
            continue
        vendor[key] = item
        known = "" if key in _KNOWN else "not a DeepEval golden field; "
        report.ignore(f"$.{key}", row_id, f"{known}kept in metadata.{VENDOR_KEY}.{key}")


_ORACLE_SOURCE = {"expected-tool-calls": "expected_tools", "reference-answer": "expected_output",
                  "rubric": "expectations.must (no expected_output or expected_tools)",
                  "expected-behavior-only": "expectations (no expected_output or expected_tools)"}
_BEHAVIOR = {
    "expected-tool-calls": "Makes the tool calls in `expected`, in order.",
    "reference-answer": "Gives the answer in `expected`.",
    "rubric": "",
    "expected-behavior-only": "",
}


def _import_expected(golden: dict[str, Any], row: dict[str, Any], vendor: dict[str, Any]) -> None:
    tools, output = golden.get("expected_tools"), golden.get("expected_output")
    if tools:
        if not isinstance(tools, list):
            raise RowError("'expected_tools' must be a list of tool calls", "$.expected")
        calls = [_call(tool, i) for i, tool in enumerate(tools)]
        row["expected"] = calls
        if any(tool.keys() - {"name", "type", "inputParameters", "input_parameters"} or
               tool.get("type", "FUNCTION") != "FUNCTION" for tool in tools):
            vendor["expected_tools"] = tools  # the parts a canonical call has no place for
        if output is not None:
            vendor["expected_output"] = output
    elif output is not None:
        row["expected"] = output


def _call(tool: Any, index: int) -> dict[str, Any]:
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        raise RowError(f"expected_tools[{index}] must be an object with a string 'name'", f"$.expected[{index}]")
    params = tool.get("inputParameters", tool.get("input_parameters"))
    if params is not None and not isinstance(params, dict):
        raise RowError(f"expected_tools[{index}].inputParameters must be an object", f"$.expected[{index}].arguments")
    return {"name": tool["name"], **({"arguments": params} if params is not None else {})}


def _import_expectations(expectations: Any, case: dict[str, Any], vendor: dict[str, Any]) -> list[str]:
    """must[0] -> expectedBehavior, the other must items -> evaluationCriteria (the inverse of the
    writer), must_not -> unacceptableBehavior; returns the must items."""
    if expectations is None:
        return []
    if not isinstance(expectations, dict):
        raise RowError("'expectations' must be an object with 'must' and 'must_not'", "$.metadata.case")
    must = expectations.get("must") or []
    must_not = expectations.get("must_not", expectations.get("mustNot")) or []
    for label, items in (("must", must), ("must_not", must_not)):
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise RowError(f"expectations.{label} must be a list of strings", "$.metadata.case")
    if must:
        case["expectedBehavior"] = must[0]
    if must[1:]:
        case["evaluationCriteria"] = list(must[1:])
    if must_not:
        case["unacceptableBehavior"] = list(must_not)
    if any(expectations.get(k) is not None for k in ("model", "eval_mode")):
        vendor["expectations"] = expectations
    return list(must)


def _turns(turns: Any) -> list[Any]:
    if turns is None:
        return []
    if not isinstance(turns, list):
        raise RowError("'turns' must be a list of turns", "$.input.messages")
    return [{k: v for k, v in turn.items() if v is not None} if isinstance(turn, dict) else turn
            for turn in turns]


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _ordered(case: dict[str, Any]) -> dict[str, Any]:
    return {key: case[key] for key in schema.CASE_FIELDS if key in case}

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
from typing import Any, Iterable, Iterator

from evalconv.canonical import jsonvalue, schema
from evalconv.canonical.errors import ReadError, RowError
from evalconv.canonical.json_format import iter_array
from evalconv.canonical.row import Row
from evalconv.canonical.source import MAX_LINE_BYTES, Lines, SourceRow, parse_problem
from evalconv.canonical.reporting import QuietLoss, ReadReporter

from .fields import CARRIER, CONVERSATIONAL_KEYS, GOLDEN_KEYS, RUN_FIELDS, RUN_KEY, VENDOR_KEY
from .golden import build_golden
from .write import csv_cell

csv.field_size_limit(MAX_LINE_BYTES)

_LIST_FIELDS = ("context", "retrieval_context")
_JSON_FIELDS = ("tools_called", "expected_tools", "additional_metadata", "custom_column_key_values",
                "expectations", "turns", "persona")
_NUMBER_FIELDS = ("token_cost", "input_token_count", "output_token_count")
_KNOWN = frozenset(GOLDEN_KEYS) | frozenset(CONVERSATIONAL_KEYS)
# Fields compared between the file and the carried row, to notice edits made after export.
_COMPARED = ("input", "expected_output", "name", "expected_tools", "expectations")


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

    written = build_golden(Row.from_json(value), QuietLoss())
    row = copy.deepcopy(value)
    if "turns" in golden and "input" not in golden:  # a conversational golden: its turns and outcome
        turns = [{k: t[k] for k in ("role", "content") if k in t} if isinstance(t, dict) else t
                 for t in golden.get("turns") or []]
        if _is_messages(value["input"]) and not jsonvalue.same(turns, value["input"]["messages"]):
            row["input"] = {"messages": turns}
            report.edit("$.input", value["id"], f"turns was edited in the DeepEval file; the edit is kept "
                        f"(it differs from the copy in additional_metadata.{CARRIER})")
        golden = {**golden, "expected_output": golden.get("expected_outcome")}
    for key in _COMPARED:
        want = decode_csv_cell(key, csv_cell(key, written[key])) if variant == "csv" else written[key]
        if key in golden and not jsonvalue.same(_normalised({key: want})[key], golden[key]):
            path = _EDIT[key](row, golden[key], value)
            report.edit(path, value["id"], f"{key} was edited in the DeepEval file; the edit is kept "
                        f"(it differs from the copy in additional_metadata.{CARRIER})")
    return row


def _is_messages(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("messages"), list)


def _edit_name(row: dict[str, Any], name: Any, _: Any) -> str:
    if not isinstance(name, str) or not name:
        raise RowError("'name' must be a non-empty string", "$.id")
    row["id"] = row["metadata"]["case"]["caseId"] = name
    return "$.id"


def _edit_input(row: dict[str, Any], text: Any, carried: dict[str, Any]) -> str:
    row["input"] = text if isinstance(carried["input"], str) else _json_or_text(text)
    return "$.input"


def _edit_expected_output(row: dict[str, Any], text: Any, carried: dict[str, Any]) -> str:
    if text is None:
        row.pop("expected", None)
    else:
        old = carried.get("expected")
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
    scratch: dict[str, Any] = {}
    _import_expectations(expectations, scratch, {})
    case = row["metadata"]["case"]
    old = carried["metadata"]["case"]
    paths_changed = []
    behavior = scratch.get("expectedBehavior", "")
    if behavior != old["expectedBehavior"].strip():
        case["expectedBehavior"] = behavior
        paths_changed.append("$.metadata.case.expectedBehavior")
    unacceptable = scratch.get("unacceptableBehavior", [])
    if unacceptable != [i.strip() for i in old.get("unacceptableBehavior", []) if i.strip()]:
        if unacceptable:
            case["unacceptableBehavior"] = unacceptable
        else:
            case.pop("unacceptableBehavior", None)
        paths_changed.append("$.metadata.case.unacceptableBehavior")
    return " and ".join(paths_changed) or "$.metadata.case.expectedBehavior"


def _json_or_text(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return jsonvalue.loads(text)
    except jsonvalue.JSONValueError:
        return text


_EDIT = {"name": _edit_name, "input": _edit_input, "expected_output": _edit_expected_output,
         "expected_tools": _edit_expected_tools, "expectations": _edit_expectations}


def _import(golden: dict[str, Any], index: int, report: ReadReporter) -> dict[str, Any]:
    name = golden.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise RowError("'name' must be a non-empty string", "$.id")
    row_id = name or f"golden-{index}"
    if not name:
        report.infer("$.id", row_id, "the golden has no name; the id is made from its position")
    case: dict[str, Any] = {"caseId": row_id}
    row: dict[str, Any] = {"id": row_id}
    vendor: dict[str, Any] = {}
    if golden.get("scenario"):
        row["input"] = {"messages": _turns(golden.get("turns"))}
        case["scenario"] = golden["scenario"]
        outcome = golden.get("expected_outcome")
        if outcome is not None:
            row["expected"] = outcome
        handled = {"scenario", "turns", "expected_outcome"}
    else:
        if golden.get("input") is None:
            raise RowError("the golden has no input (DeepEval requires one)", "$.input")
        row["input"] = golden["input"]
        _import_expected(golden, row, vendor)
        handled = {"input", "expected_output", "expected_tools"}
    _import_expectations(golden.get("expectations"), case, vendor)
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
        if oracle == "rubric":
            case["evaluationCriteria"] = list(golden["expectations"]["must"])
            report.infer("$.metadata.case.evaluationCriteria", row_id, "the expectations.must items")
    if "expectedBehavior" not in case:
        case["expectedBehavior"] = row["expected"] if conversational and "expected" in row else _BEHAVIOR[oracle]
        report.infer("$.metadata.case.expectedBehavior", row_id, "no expectations.must in the golden")
    case["provenance"] = "imported"
    report.infer("$.metadata.case.provenance", row_id, "read from a DeepEval file evalconv did not write")
    metadata: dict[str, Any] = {"case": _ordered(case)}
    run = {key: golden[key] for key in RUN_FIELDS if golden.get(key) is not None}
    for key in run:
        report.ignore(f"$.{key}", row_id, f"a run output, not case data; kept in metadata.{RUN_KEY}.{key}")
    for key, item in golden.items():
        if key in handled or key in RUN_FIELDS or key in ("name", "expectations") or item is None:
            continue
        vendor[key] = item
        known = "" if key in _KNOWN else "not a DeepEval golden field; "
        report.ignore(f"$.{key}", row_id, f"{known}kept in metadata.{VENDOR_KEY}.{key}")
    if vendor:
        metadata[VENDOR_KEY] = vendor
    if run:
        metadata[RUN_KEY] = run
    row["metadata"] = metadata
    return row


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


def _import_expectations(expectations: Any, case: dict[str, Any], vendor: dict[str, Any]) -> None:
    """must -> expectedBehavior (several conditions one per line), must_not -> unacceptableBehavior."""
    if expectations is None:
        return
    if not isinstance(expectations, dict):
        raise RowError("'expectations' must be an object with 'must' and 'must_not'", "$.metadata.case")
    must = expectations.get("must") or []
    must_not = expectations.get("must_not", expectations.get("mustNot")) or []
    for label, items in (("must", must), ("must_not", must_not)):
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise RowError(f"expectations.{label} must be a list of strings", "$.metadata.case")
    if must:
        case["expectedBehavior"] = "\n".join(must)
    if must_not:
        case["unacceptableBehavior"] = list(must_not)
    if len(must) > 1 or any(expectations.get(k) is not None for k in ("model", "eval_mode")):
        vendor["expectations"] = expectations


def _turns(turns: Any) -> list[Any]:
    if turns is None:
        return []
    if not isinstance(turns, list):
        raise RowError("'turns' must be a list of turns", "$.input.messages")
    return [{k: v for k, v in turn.items() if v is not None} if isinstance(turn, dict) else turn
            for turn in turns]


def _ordered(case: dict[str, Any]) -> dict[str, Any]:
    return {key: case[key] for key in schema.CASE_FIELDS if key in case}

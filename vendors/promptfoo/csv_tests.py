"""promptfoo's CSV test files: a port of `testCaseFromCsvRow` / `assertionFromString` (src/csv.ts,
promptfoo 0.121.20), so evalconv reads a CSV cell exactly as promptfoo does, and the cells the
writer emits for one row.

Every CSV var is a string and metadata cells are strings, so the writer keeps `vars.input` and
one `__expected1` assertion native and carries everything else in `__metadata:evalconv`.
"""
from __future__ import annotations

import re
from typing import Any

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.row import Row

from .oracle import Plan, cannot_pass, plan
from .read import ENVELOPE, expected_from_assertion, input_from_vars
from .text import escape, unescape, var_text
from .write import Placement, description_for, own_assertions, same

HEADER = ("input", "__expected1", "__description", f"__metadata:{ENVELOPE}")

# BaseAssertionTypesSchema of promptfoo 0.121.20, in its order (the regex alternation depends on it).
BASE_TYPES = (
    "agent-rubric answer-relevance bleu classifier contains contains-all contains-any contains-html "
    "contains-json contains-sql contains-xml context-faithfulness context-recall context-relevance "
    "conversation-relevance cost equals factuality finish-reason g-eval gleu guardrails icontains "
    "icontains-all icontains-any is-html is-json is-refusal is-sql is-valid-function-call "
    "is-valid-openai-function-call is-valid-openai-tools-call is-xml javascript latency levenshtein "
    "llm-rubric pi meteor model-graded-closedqa model-graded-factuality moderation perplexity "
    "perplexity-score python regex rouge-n ruby similar similar:cosine similar:dot similar:euclidean "
    "starts-with tool-call-f1 skill-used trajectory:goal-success trajectory:tool-args-match "
    "trajectory:step-count trajectory:tool-sequence trajectory:tool-used trace-error-spans "
    "trace-span-count trace-span-duration search-rubric webhook word-count").split()
_ASSERTION = re.compile(r"^(not-)?(" + "|".join(map(re.escape, BASE_TYPES)) + r")(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")
_LIST_TYPES = ("contains-all", "contains-any", "icontains-all", "icontains-any")
_THRESHOLD_TYPES = ("answer-relevance", "classifier", "context-faithfulness", "context-recall",
                    "context-relevance", "cost", "latency", "levenshtein", "perplexity-score",
                    "perplexity", "rouge-n", "similar", "starts-with")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
_JS_FILE = re.compile(r"\.(?:js|cjs|mjs|ts|cts|mts)(?::[\w.]+)?\Z")
_JS_WS = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_trim(text: str) -> str:
    return text.strip(_JS_WS)


def parse_number(text: str | None) -> int | float | None:
    trimmed = js_trim(text or "")
    if not _NUMBER.match(trimmed):
        return None
    number = float(trimmed)
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def assertion_from_string(expected: str) -> dict[str, Any]:
    """promptfoo's `assertionFromString`, rule for rule."""
    for prefix in ("javascript:", "fn:", "eval:"):
        if expected.startswith(prefix):
            return {"type": "javascript", "value": js_trim(expected[len(prefix):])}
    if expected.startswith("file://") and _JS_FILE.search(expected[7:]):
        return {"type": "javascript", "value": js_trim(expected)}
    for prefix in ("grade:", "llm-rubric:"):
        if expected.startswith(prefix):
            return {"type": "llm-rubric", "value": expected[len(prefix):]}
    if expected.startswith("python:") or (expected.startswith("file://") and
                                          (expected.endswith(".py") or ".py:" in expected)):
        return {"type": "python", "value": js_trim(expected[7:])}
    match = _ASSERTION.match(expected)
    if not match:
        return {"type": "equals", "value": expected}
    negated, kind, threshold, value = match.groups()
    full = f"not-{kind}" if negated else kind
    if kind in _LIST_TYPES:
        return {"type": full, "value": split_values(value)} if value else {"type": full}
    if kind in ("contains-json", "is-json"):
        return {"type": full, "value": value} if value is not None else {"type": full}
    out: dict[str, Any] = {"type": full}
    if value is not None:
        out["value"] = js_trim(value)
    if kind in _THRESHOLD_TYPES:
        number = parse_number(threshold)
        out["threshold"] = number if number is not None else (0.8 if kind == "similar" else 0.75)
    return out


def split_values(value: str) -> list[str]:
    """promptfoo's `parseCommaSeparatedAssertionValues` (quoted fields may hold commas)."""
    out: list[str] = []
    i, n = 0, len(value)
    while True:
        while i < n and (value[i].isspace() or value[i] == ","):
            i += 1
        if i >= n:
            return out
        if value[i] != '"':
            end = value.find(",", i)
            end = n if end < 0 else end
            out.append(js_trim(value[i:end]))
            i = end
            continue
        i, text = i + 1, []
        while i < n:
            if value[i] == "\\" and i + 1 < n and value[i + 1] in '"\\' or value[i:i + 2] == '""':
                text.append(value[i + 1])
                i += 2
            elif value[i] == '"':
                break
            else:
                text.append(value[i])
                i += 1
        else:
            raise RowError("unterminated quoted field in a contains assertion value")
        out.append("".join(text))
        i += 1
        while i < n and value[i].isspace():
            i += 1
        if i < n and value[i] != ",":
            raise RowError("expected a comma after a quoted field in a contains assertion value")


def test_from_cells(cells: dict[str, str]) -> dict[str, Any]:
    """promptfoo's `testCaseFromCsvRow`: one CSV record (header -> cell) -> a TestCase."""
    vars_: dict[str, str] = {}
    asserts: list[dict[str, Any]] = []
    options: dict[str, str] = {}
    metadata: dict[str, Any] = {}
    configs: dict[int, dict[str, Any]] = {}
    test: dict[str, Any] = {}
    metric = None
    for raw_key, value in cells.items():
        key = js_trim(raw_key)
        if key.startswith("__expected"):
            if js_trim(value):
                asserts.append(assertion_from_string(js_trim(value)))
        elif key in ("__prefix", "__suffix"):
            options[key[2:]] = value
        elif key in ("__description", "__providerOutput"):
            test[key[2:]] = value
        elif key == "__metric":
            metric = value
        elif key == "__threshold":
            test["threshold"] = parse_number(value)
        elif key.startswith("__metadata:"):
            _metadata_cell(key[11:], value, metadata)
        elif key.startswith("__config:"):
            _config_cell(key, value, configs)
        elif key != "__metadata":
            vars_[key] = value
    for i, assertion in enumerate(asserts):
        if metric is not None:
            assertion["metric"] = metric
        for name, number in configs.get(i, {}).items():
            assertion[name] = metadata[name] = number
    return _test_case(vars_, asserts, options, test, metadata)


def _metadata_cell(name: str, value: str, metadata: dict[str, Any]) -> None:
    """A `__metadata:NAME` cell (`NAME[]`: a list, split at commas not escaped)."""
    if name.endswith("[]") and js_trim(value):
        parts = re.split(r"(?<!\\),", value)
        metadata[name[:-2]] = [js_trim(p).replace("\\,", ",") for p in parts]
    elif not name.endswith("[]") and js_trim(value):
        metadata[name] = value


def _test_case(vars_: dict[str, str], asserts: list[dict[str, Any]], options: dict[str, str], test: dict[str, Any],
               metadata: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"vars": vars_, "assert": asserts, "options": options}
    for name in ("description", "providerOutput"):
        if test.get(name):
            out[name] = test[name]
    if test.get("threshold") is not None:
        out["threshold"] = test["threshold"]
    if metadata:
        out["metadata"] = metadata
    return out


def _config_cell(key: str, value: str, configs: dict[int, dict[str, Any]]) -> None:
    parts = key[9:].split(":")
    if len(parts) != 2:
        return  # promptfoo warns and ignores the column
    target, name = parts
    index_match = re.fullmatch(r"__expected(\d+)", target)
    if target == "__expected":
        index = 0
    elif index_match and int(index_match.group(1)) >= 1:
        index = int(index_match.group(1)) - 1
    else:
        raise RowError(f"invalid expected key '{target}' in column '{key}'")
    if name != "threshold":
        raise RowError(f"invalid config key '{name}' in column '{key}' (only threshold)")
    number = parse_number(value)
    if number is None:
        raise RowError(f"column '{key}' needs a number, got {value!r}")
    configs.setdefault(index, {})[name] = number


def assertion_cell(assertion: Any) -> str | None:
    """The `__expected` cell for an assertion, or None when promptfoo's CSV parser would not
    give back this very assertion (its type and value)."""
    if not isinstance(assertion, dict) or set(assertion) != {"type", "value"}:
        return None
    kind, value = assertion["type"], assertion["value"]
    if kind == "tool-call-f1" and isinstance(value, list) and all(isinstance(n, str) for n in value):
        text = ",".join(value)
    elif isinstance(value, str):
        text = value
    else:
        return None
    cell = f"{kind}:{text}"
    if js_trim(cell) != cell or "\x00" in cell:
        return None
    parsed = assertion_from_string(cell)
    back = parsed.get("value")
    if kind == "tool-call-f1":
        back = [js_trim(n) for n in back.split(",")] if isinstance(back, str) else None
    return cell if parsed.get("type") == kind and same(back, value) else None


def _joined_rubric(asserts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A model-graded row's assertions as one llm-rubric (the CSV has one assertion column)."""
    parts = []
    for a in asserts:
        text = unescape(a["value"]) if isinstance(a.get("value"), str) else None
        if text is None or a["type"] not in ("factuality", "llm-rubric", "not-llm-rubric"):
            return None
        parts.append({"factuality": "Agrees with this reference answer: ", "llm-rubric": "",
                      "not-llm-rubric": "Must not: "}[a["type"]] + text)
    body = "The output passes only if all of these hold:\n" + "\n".join("- " + p for p in parts)
    return {"type": "llm-rubric", "value": escape(body)}


def csv_assertion(row: Row) -> tuple[str, Plan | None]:
    """The one `__expected1` cell: the row's own imported assertion, or the plan's assertion(s),
    or an assertion that always fails when the CSV cannot hold the checks."""
    own = own_assertions(row)
    if own is not None and len(own) == 1 and (cell := assertion_cell(own[0])):
        return cell, None
    chosen = plan(row)
    single = chosen.asserts[0] if len(chosen.asserts) == 1 else _joined_rubric(chosen.asserts)
    cell = assertion_cell(single) if single else None
    if cell is None:
        chosen = Plan([cannot_pass("promptfoo CSV cannot hold the checks of this case")], chosen.evaluator,
                      chosen.chosen, blocked="promptfoo CSV cannot hold the checks of this case")
        cell = assertion_cell(chosen.asserts[0])
    elif len(chosen.asserts) > 1:
        chosen.native_case = []
    assert cell is not None
    return cell, chosen


def place_csv(row: Row) -> tuple[list[str], Placement]:
    """The four cells of one row, and what only the envelope holds."""
    placed = Placement({})
    text_input = row.input if isinstance(row.input, str) else jsonvalue.dumps(row.input)
    input_cell, exact = var_text(text_input, {"input"})
    input_cell = input_cell.replace("\x00", "\\u0000")  # NUL has no place in a text file
    if not exact or not same(input_from_vars({"input": input_cell}), row.input):
        placed.envelope["input"] = row.input
        placed.carried.append("input")
    expected_cell, placed.plan = csv_assertion(row)
    if row.has_expected:
        found, value, _, _ = expected_from_assertion(assertion_from_string(expected_cell))
        if found and same(value, row.expected):
            placed.envelope["expectedFrom"] = 0
        else:
            placed.envelope["expected"] = row.expected
            placed.carried.append("expected")
    placed.envelope["metadata"] = row.metadata
    placed.carried.append("id")
    placed.carried.extend(f"case.{name}" for name in row.case)
    placed.carried.extend(f"meta:{key}" for key in row.metadata if key != "case")
    description = description_for(row, {}).replace("\x00", "\\u0000")
    return [input_cell, expected_cell, description, jsonvalue.dumps(placed.envelope)], placed

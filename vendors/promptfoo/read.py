"""A promptfoo TestCase (a dict, however it was stored) -> a canonical row value.

Two kinds of test arrive here. A test evalconv wrote has the case profile at `metadata.case`
and, when needed, the envelope `metadata.evalconv` (JSON text) holding what promptfoo could not
hold exactly; it reads back exactly. Any other test is imported: provenance `imported`, the
oracle inferred from the assertions, everything promptfoo-specific kept in
`metadata.case.extensions.promptfoo`, and every inference noted in the read report.
"""
from __future__ import annotations

import re
from typing import Any

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import RowError
from evalconv.canonical.reporting import ReadReporter

from .text import unescape, unescape_top

ENVELOPE = "evalconv"
NAMESPACE = "promptfoo"  # metadata.case.extensions.promptfoo
ID_KEYS = ("evalconv_id", "case_id", "caseId", "id")
CRITERIA_TYPES = ("llm-rubric", "g-eval", "model-graded-closedqa")
MEMBERSHIP_SUFFIX = ".includes(output)"
_ESCAPED_ENVELOPE = re.compile(r"~+" + ENVELOPE + r"\Z")
_MARKER = '({{pass: false, score: 0, reason: "evalconv: {reason}"}})'
_MARKER_PATTERN = re.compile(r'\A\(\{pass: false, score: 0, reason: "evalconv: ([^"\\{}]*)"\}\)\Z')
_NEEDS_PERSON = re.compile(r"this case needs (rubric-human|human-expert|pairwise-preference) grading")


def cannot_pass(reason: str) -> dict[str, Any]:
    """A javascript assertion that always fails, saying why (plain text: no quotes, no braces),
    for a test promptfoo must never count as passed."""
    return {"type": "javascript", "value": _MARKER.format(reason=reason)}


def cannot_pass_reason(assertion: Any) -> str | None:
    """The reason of a `cannot_pass` assertion, or None for any other assertion."""
    if isinstance(assertion, dict) and assertion.get("type") == "javascript" and isinstance(assertion.get("value"), str):
        match = _MARKER_PATTERN.match(assertion["value"])
        return match.group(1) if match else None
    return None


# --- the pieces the writer also uses to check its own output ---------------------------------

def input_from_vars(vars_: dict[str, Any]) -> Any:
    """`{"input": x}` is the input x; any other vars object is the input itself."""
    plain = {k: unescape_top(v) for k, v in vars_.items()}
    return plain["input"] if list(plain) == ["input"] else plain


def expected_from_assertion(assertion: Any) -> tuple[bool, Any, str, str]:
    """(found, expected, oracleType, evaluator) for an assertion that holds a reference."""
    if not isinstance(assertion, dict):
        return False, None, "", ""
    kind, value = assertion.get("type"), assertion.get("value")
    if kind == "equals" and "value" in assertion and value is not None:
        return True, unescape_top(value), "reference-answer", "exact-or-programmatic"
    if kind in ("factuality", "model-graded-factuality") and isinstance(value, str):
        return True, unescape(value), "reference-answer", "llm-judge"
    if kind == "javascript" and isinstance(value, str):
        code = unescape(value)
        if code.endswith(MEMBERSHIP_SUFFIX):
            try:
                options = jsonvalue.loads(code[: -len(MEMBERSHIP_SUFFIX)])
            except jsonvalue.JSONValueError:
                return False, None, "", ""
            if isinstance(options, list) and options and all(isinstance(o, str) for o in options):
                return True, options, "acceptable-set", "exact-or-programmatic"
    if kind == "tool-call-f1":
        names = value.split(",") if isinstance(value, str) else value
        if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
            calls = [{"name": n.strip() if isinstance(value, str) else n} for n in names]
            return True, calls, "expected-tool-calls", "exact-or-programmatic"
    return False, None, "", ""


def parse_envelope(metadata: dict[str, Any]) -> dict[str, Any]:
    raw = metadata.get(ENVELOPE)
    if raw is None:
        return {}
    if not isinstance(raw, str):
        raise RowError("the evalconv envelope must be JSON text", f"$.metadata.{ENVELOPE}")
    try:
        envelope = jsonvalue.loads(raw)
    except jsonvalue.JSONValueError as err:
        raise RowError(f"the evalconv envelope is not valid JSON: {err}", f"$.metadata.{ENVELOPE}") from None
    if not isinstance(envelope, dict):
        raise RowError("the evalconv envelope must be a JSON object", f"$.metadata.{ENVELOPE}")
    return envelope


def is_evalconv_test(metadata: dict[str, Any]) -> bool:
    case = metadata.get("case")
    return (isinstance(case, dict) and "caseId" in case) or ENVELOPE in metadata


def escape_user_key(key: str) -> str:
    """A user's own `evalconv` metadata key gains a `~` so it never meets the envelope."""
    return "~" + key if key == ENVELOPE or _ESCAPED_ENVELOPE.match(key) else key


def unescape_user_key(key: str) -> str:
    return key[1:] if _ESCAPED_ENVELOPE.match(key) else key


# --- tests evalconv wrote ---------------------------------------------------------------------

def evalconv_row(test: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    envelope = parse_envelope(metadata)
    if "metadata" in envelope:
        canonical_meta = envelope["metadata"]
    else:
        canonical_meta = {unescape_user_key(k): v for k, v in metadata.items() if k != ENVELOPE}
    if not isinstance(canonical_meta, dict):
        raise RowError("metadata must be an object", "$.metadata")
    case = canonical_meta.get("case")
    row_id = case.get("caseId") if isinstance(case, dict) else None
    value: dict[str, Any] = {"id": row_id}
    if "input" in envelope:
        value["input"] = envelope["input"]
    else:
        vars_ = test.get("vars", {})
        if not isinstance(vars_, dict):
            raise RowError("vars must be an object", "$.vars")
        value["input"] = input_from_vars(vars_)
    if "expected" in envelope:
        value["expected"] = envelope["expected"]
    elif "expectedFrom" in envelope:
        index, asserts = envelope["expectedFrom"], test.get("assert")
        if not isinstance(index, int) or isinstance(index, bool):
            raise RowError("the envelope's expectedFrom does not name an assertion", "$.assert")
        held = asserts[index] if isinstance(asserts, list) and 0 <= index < len(asserts) else None
        found, expected, _, _ = expected_from_assertion(held)
        if found:
            value["expected"] = expected
        elif isinstance(held, dict) and held.get("value") is not None:
            value["expected"] = unescape_top(held["value"])  # its check was edited (equals -> contains): the value stays
        # else the assertions were emptied or cut: the row has no reference now (the read report says so)
    value["metadata"] = canonical_meta
    return value


# --- tests written by hand --------------------------------------------------------------------

def imported_row(test: dict[str, Any], number: int, taken_ids: set[str], report: ReadReporter) -> dict[str, Any]:
    metadata = dict(test.get("metadata") or {})
    row_id, id_reason = _import_id(test, metadata, number, taken_ids)
    note = lambda path, why: report.infer(path, row_id, why)  # noqa: E731
    note("$.id", id_reason)
    vars_ = test.get("vars", {})
    if not isinstance(vars_, dict):
        raise RowError("vars must be an object (a vars file reference cannot be followed)", "$.vars")
    value: dict[str, Any] = {"id": row_id, "input": input_from_vars(vars_)}
    note("$.input", "the test's vars (a lone `input` var is the input itself)")

    asserts = test.get("assert") or []
    if not isinstance(asserts, list):
        raise RowError("assert must be a list", "$.assert")
    case: dict[str, Any] = {"caseId": row_id}
    oracle = next((expected_from_assertion(a) for a in asserts if expected_from_assertion(a)[0]), None)
    criteria = _texts(asserts, CRITERIA_TYPES)
    unacceptable = _texts(asserts, ("not-llm-rubric",))
    if oracle:
        _, value["expected"], case["oracleType"], case["evaluator"] = oracle
        note("$.expected", f"the first {_ORACLE_WORDS} assertion's value")
    elif criteria:
        case["oracleType"], case["evaluator"] = "rubric", "llm-judge"
    else:
        case["oracleType"] = "expected-behavior-only"
        if any(_NEEDS_PERSON.search(cannot_pass_reason(a) or "") for a in asserts):
            case["evaluator"] = "human-expert"  # the only evaluator this oracle admits
    note("$.metadata.case.oracleType", _oracle_reason(case["oracleType"], bool(asserts)))
    if "evaluator" in case:
        note("$.metadata.case.evaluator", "the kind of assertion that grades it (an evalconv assertion "
             "that always fails: a person grades it)" if not oracle and not criteria else
             "the kind of assertion that grades it")
    case["expectedBehavior"] = summarize(asserts)
    note("$.metadata.case.expectedBehavior", "a summary of the test's assertions")
    case["provenance"] = "imported"
    note("$.metadata.case.provenance", "read from a promptfoo file evalconv did not write")
    if criteria:
        case["evaluationCriteria"] = criteria
        note("$.metadata.case.evaluationCriteria", "the llm-rubric / g-eval / model-graded-closedqa texts")
    if unacceptable:
        case["unacceptableBehavior"] = unacceptable
        note("$.metadata.case.unacceptableBehavior", "the not-llm-rubric texts")
    if isinstance(test.get("description"), str) and test["description"].strip():
        case["scenario"] = test["description"]
        note("$.metadata.case.scenario", "the test's description")

    kept = {k: v for k, v in test.items() if k not in ("vars", "metadata")}
    if "case" in metadata:
        kept["metadata.case"] = metadata.pop("case")
        report.ignore("$.metadata.case", row_id, "a promptfoo metadata key named `case` is kept in "
                      "metadata.case.extensions.promptfoo['metadata.case']")
    if kept:
        case["extensions"] = {NAMESPACE: kept}
        for key in kept:
            report.ignore(f"$.{key}", row_id, "promptfoo-only field, kept in metadata.case.extensions.promptfoo")
    value["metadata"] = {"case": case, **metadata}
    return value


_ORACLE_WORDS = "equals / factuality / javascript `[...].includes(output)` / tool-call-f1"


def _oracle_reason(oracle: str, has_asserts: bool) -> str:
    return {
        "reference-answer": "an equals or factuality assertion holds the reference answer",
        "acceptable-set": "a javascript `[...].includes(output)` assertion holds the acceptable set",
        "expected-tool-calls": "a tool-call-f1 assertion names the expected tools",
        "rubric": "model-graded assertions (llm-rubric, g-eval, model-graded-closedqa) state the criteria",
    }.get(oracle, "the assertions are programmatic checks with no reference answer"
          if has_asserts else "the test has no assertions")


def _import_id(test: dict[str, Any], metadata: dict[str, Any], number: int,
               taken: set[str]) -> tuple[str, str]:
    for key in ID_KEYS:
        if isinstance(metadata.get(key), str) and metadata[key]:
            taken.add(metadata[key])
            return metadata[key], f"metadata.{key} (promptfoo has no id field)"
    description = test.get("description")
    base = _slug(description) if isinstance(description, str) else ""
    reason = "a slug of the description (no id in metadata)" if base else "the test's position (no id or description)"
    base = base or f"row-{number}"
    row_id, n = base, 2
    while row_id in taken:
        row_id, n = f"{base}-{n}", n + 1
    taken.add(row_id)
    return row_id, reason


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].rstrip("-")


def _texts(asserts: list[Any], kinds: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for a in asserts:
        if isinstance(a, dict) and a.get("type") in kinds:
            value = a.get("value")
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str):
                    out.append(unescape(text))
    return out


def summarize(asserts: list[Any], width: int = 160) -> str:
    """`promptfoo checks: icontains "60 days"; llm-rubric "Confirms ..."`."""
    parts = []
    for a in asserts:
        if not isinstance(a, dict):
            continue
        value = a.get("value")
        text = value if isinstance(value, str) else ("" if value is None else jsonvalue.dumps(value))
        text = " ".join(text.split())
        text = text if len(text) <= width else text[: width - 1] + "…"
        parts.append(f"{a.get('type')} {jsonvalue.dumps(text)}" if text else str(a.get("type")))
    return "promptfoo checks: " + "; ".join(parts) if parts else "no promptfoo assertions (none in the test)"

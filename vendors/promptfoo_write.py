"""A canonical row -> a promptfoo TestCase, and which fields stayed native or were only carried.

The writer proves each native placement by reading it back with the reader's own functions;
whatever does not come back identical goes into the envelope `metadata.evalconv` (JSON text),
so the file always reads back to the original row.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row

from .promptfoo_read import (ENVELOPE, MEMBERSHIP_SUFFIX, NAMESPACE, escape_user_key,
                             expected_from_assertion, input_from_vars)
from .promptfoo_text import (FILE_PREFIX, escape, has_ref_key, loads_at_load_time, needs_escape,
                             unescape, var_text)

# Test fields restored from metadata.case.extensions.promptfoo (a test evalconv imported).
PASSTHROUGH = ("description", "threshold", "options", "provider", "providers", "prompts",
               "providerOutput", "assertScoringFunction")
HUMAN_EVALUATORS = ("rubric-human", "human-expert", "pairwise-preference")


@dataclass
class Placement:
    """What the writer did with one row: the test, and the fields promptfoo does not act on."""

    test: dict[str, Any]
    envelope: dict[str, Any] = field(default_factory=dict)
    carried: list[str] = field(default_factory=list)  # field-map keys


def same(a: Any, b: Any) -> bool:
    return jsonvalue.same(a, b)


def vars_for(value: Any) -> tuple[dict[str, Any] | None, bool]:
    """(the input as vars, whether promptfoo sees exactly the input); None when promptfoo
    cannot hold it at all (a null var, a `$ref` key, a file:// list item)."""
    items = value if isinstance(value, dict) and list(value) != ["input"] else {"input": value}
    out: dict[str, Any] = {}
    exact = True
    for key, item in items.items():
        if item is None or has_ref_key(item):
            return None, False
        if isinstance(item, str):
            item, renders_back = var_text(item, set(items))
            exact = exact and renders_back
        elif isinstance(item, list) and any(isinstance(x, str) and x.startswith(FILE_PREFIX) for x in item):
            return None, False
        out[key] = item
    return out, exact


def oracle_assertion(row: Row) -> dict[str, Any] | None:
    """The assertion promptfoo grades the reference with, or None (a person grades, or no fit)."""
    if not row.has_expected:
        return None
    oracle, evaluator, expected = row.case["oracleType"], row.case.get("evaluator"), row.expected
    if evaluator in HUMAN_EVALUATORS:
        return None
    if oracle == "reference-answer" and isinstance(expected, str):
        return {"type": "factuality" if evaluator == "llm-judge" else "equals", "value": escape(expected)}
    if oracle == "reference-answer" and isinstance(expected, dict) and not loads_at_load_time(expected):
        return {"type": "equals", "value": expected}
    if oracle == "acceptable-set" and isinstance(expected, list) and expected \
            and all(isinstance(x, str) for x in expected):
        return {"type": "javascript", "value": escape(jsonvalue.dumps(expected) + MEMBERSHIP_SUFFIX)}
    if oracle == "expected-tool-calls" and isinstance(expected, list) and expected \
            and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in expected):
        names = [c["name"] for c in expected]
        if not any(needs_escape(n) for n in names):
            return {"type": "tool-call-f1", "value": names}
    return None


def judged_assertions(row: Row) -> tuple[list[dict[str, Any]], list[str]]:
    """llm-rubric per criterion, not-llm-rubric per unacceptable behaviour, for llm-judge rows.
    Returns the assertions and the case fields they express exactly."""
    if row.case.get("evaluator") != "llm-judge":
        return [], []
    out, native = [], []
    for name, kind in (("evaluationCriteria", "llm-rubric"), ("unacceptableBehavior", "not-llm-rubric")):
        texts = row.case.get(name) or []
        made = [{"type": kind, "value": escape(t)} for t in texts]
        if texts and all(unescape(a["value"]) == t for a, t in zip(made, texts)):
            out.extend(made)
            native.append(name)
    return out, native


def _extension(row: Row) -> dict[str, Any]:
    ext = (row.case.get("extensions") or {}).get(NAMESPACE)
    return ext if isinstance(ext, dict) else {}


def description_for(row: Row, ext: dict[str, Any]) -> str:
    if isinstance(ext.get("description"), str):
        return ext["description"]
    scenario = row.case.get("scenario")
    text = f"{row.id}: {scenario}" if isinstance(scenario, str) and scenario.strip() else row.id
    return "case " + text if text.startswith(FILE_PREFIX) else text


def place(row: Row) -> Placement:
    """Build the test; note every field promptfoo only carries."""
    ext = _extension(row)
    test: dict[str, Any] = {k: ext[k] for k in PASSTHROUGH if k in ext}
    test["description"] = description_for(row, ext)
    placed = Placement(test)

    vars_, exact = vars_for(row.input)
    if vars_ is None or not exact or not same(input_from_vars(vars_), row.input):
        placed.envelope["input"] = row.input
        placed.carried.append("input")
        vars_ = vars_ or {}
    test["vars"] = vars_
    if any(isinstance(v, list) for v in vars_.values()):
        options = test.get("options")
        test["options"] = {**(options if isinstance(options, dict) else {}), "disableVarExpansion": True}

    judged, native_case = judged_assertions(row)
    if isinstance(ext.get("assert"), list):
        asserts, native_case = list(ext["assert"]), []
    else:
        oracle = oracle_assertion(row)
        asserts = ([oracle] if oracle else []) + judged
    if asserts:
        test["assert"] = asserts
    if row.has_expected:
        index = _expected_index(asserts, row.expected)
        if index is None:
            placed.envelope["expected"] = row.expected
            placed.carried.append("expected")
        else:
            placed.envelope["expectedFrom"] = index
    placed.carried.append("id")
    placed.carried.extend(f"case.{name}" for name in row.case if name not in native_case)
    placed.carried.extend(f"meta:{key}" for key in row.metadata if key != "case")
    return placed


def _expected_index(asserts: list[Any], expected: Any) -> int | None:
    for i, assertion in enumerate(asserts):
        found, value, _, _ = expected_from_assertion(assertion)
        if found:
            return i if same(value, expected) else None
    return None


def attach_metadata(placed: Placement, row: Row, *, verbatim: bool) -> None:
    """Canonical metadata as promptfoo metadata, or inside the envelope when it cannot be."""
    test, envelope = placed.test, placed.envelope
    if verbatim and not loads_at_load_time(row.metadata):
        test["metadata"] = {escape_user_key(k): v for k, v in row.metadata.items()}
    else:
        envelope["metadata"] = row.metadata
        test["metadata"] = {}
    if envelope:
        test["metadata"][ENVELOPE] = jsonvalue.dumps(envelope)

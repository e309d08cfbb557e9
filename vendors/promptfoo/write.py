"""A canonical row -> a promptfoo TestCase, and which fields stayed native or were only carried.

The writer proves each native placement by reading it back with the reader's own functions;
whatever does not come back identical goes into the envelope `metadata.evalconv` (JSON text),
so the file always reads back to the original row.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evalconv.canonical import jsonvalue
from evalconv.canonical.review import is_placeholder
from evalconv.canonical.row import Row
from evalconv.canonical.vocabulary import is_starter

from .oracle import Plan, plan
from .read import (
    ENVELOPE,
    NAMESPACE,
    escape_user_key,
    expected_from_assertion,
    input_from_vars,
)
from .text import FILE_PREFIX, has_ref_key, loads_at_load_time, var_text

# Test fields restored from metadata.case.extensions.promptfoo (a test evalconv imported).
PASSTHROUGH = ("description", "threshold", "options", "provider", "providers", "prompts",
               "providerOutput", "assertScoringFunction")
STARTER_NOTE = "[starter example, not a validated answer] "
PLACEHOLDER_NOTE = "[placeholder expected behaviour, not a reviewed answer] "


@dataclass
class Placement:
    """What the writer did with one row: the test, and the fields promptfoo does not act on."""

    test: dict[str, Any]
    envelope: dict[str, Any] = field(default_factory=dict)
    carried: list[str] = field(default_factory=list)  # field-map keys
    plan: Plan | None = None  # None: the row's own imported assertions


def same(a: Any, b: Any) -> bool:
    return jsonvalue.same(a, b)


def vars_for(value: Any) -> tuple[dict[str, Any] | None, bool]:
    """(the input as vars, whether promptfoo sees exactly the input); None when promptfoo
    cannot pass it as vars unchanged (a null var, a `$ref` key, a file:// list item, a number
    JavaScript would change)."""
    items = value if isinstance(value, dict) and list(value) != ["input"] else {"input": value}
    out: dict[str, Any] = {}
    exact = True
    for key, item in items.items():
        if item is None or has_ref_key(item):
            return None, False
        if isinstance(item, str):
            item, renders_back = var_text(item, set(items))
            exact = exact and renders_back
        elif loads_at_load_time(item) or not js_exact(item):  # loaded, dereferenced, or renumbered
            return None, False
        out[key] = item
    return out, exact


def js_exact(value: Any) -> bool:
    """Does JavaScript hold every number in `value` so that `dump` writes the canonical JSON text?
    An integral float (25.0 -> 25), a float written with an exponent (the two languages choose
    exponents differently) and an integer past 2^53 (rounded) do not."""
    kind = type(value)
    if kind is float:
        return not value.is_integer() and "e" not in jsonvalue.dumps(value)
    if kind is int:
        return abs(value) <= 2**53
    if kind is dict:
        return all(js_exact(v) for v in value.values())
    if kind is list:
        return all(js_exact(v) for v in value)
    return True


def json_text_vars(value: Any) -> dict[str, Any]:
    """An input promptfoo cannot pass as vars, as the one var `input` holding the exact JSON text
    the prompt would show for it (a chat: its messages; an object: itself), spelled so promptfoo
    renders it unchanged."""
    shown = value["messages"] if isinstance(value, dict) and list(value) == ["messages"] else \
        value["input"] if isinstance(value, dict) and list(value) == ["input"] else value
    return {"input": var_text(jsonvalue.dumps(shown), {"input"})[0]}


def _extension(row: Row) -> dict[str, Any]:
    ext = (row.case.get("extensions") or {}).get(NAMESPACE)
    return ext if isinstance(ext, dict) else {}


def description_for(row: Row, ext: dict[str, Any]) -> str:
    """The id and scenario (or an imported test's own description); starter rows say they are
    examples. The reader never reads it back: the id and scenario are in metadata.case."""
    if isinstance(ext.get("description"), str):
        text = ext["description"]
    else:
        scenario = row.case.get("scenario")
        text = f"{row.id}: {scenario}" if isinstance(scenario, str) and scenario.strip() else row.id
    if is_starter(row.case):
        return STARTER_NOTE + text
    if is_placeholder(row.case):
        return PLACEHOLDER_NOTE + text
    return "case " + text if text.startswith(FILE_PREFIX) else text


def own_assertions(row: Row) -> list[Any] | None:
    """An imported test's own assertions (a non-empty list), written back as they came."""
    asserts = _extension(row).get("assert")
    return list(asserts) if isinstance(asserts, list) and asserts else None


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
        vars_ = json_text_vars(row.input) if vars_ is None else vars_
    test["vars"] = vars_
    if any(isinstance(v, list) for v in vars_.values()):
        options = test.get("options")
        test["options"] = {**(options if isinstance(options, dict) else {}), "disableVarExpansion": True}

    asserts = own_assertions(row)
    native_case: list[str] = []
    if asserts is None:
        placed.plan = plan(row)
        asserts, native_case = placed.plan.asserts, placed.plan.native_case
        if placed.plan.blocked:
            test.pop("threshold", None)  # a threshold of 0 would pass a failing test
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

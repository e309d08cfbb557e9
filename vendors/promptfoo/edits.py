"""Edits made in a promptfoo file after evalconv wrote it: a native value wins over its copy.

The envelope (`metadata.evalconv`) carries what promptfoo could not hold exactly, and
`metadata.case` carries the criteria the llm-rubric assertions also hold. When a test's vars or
assertions are no longer what evalconv writes for the carried row, they were edited: the edit is
what the row holds, and the read report lists it (the CLI prints it on stderr).
"""
from __future__ import annotations

import copy
from typing import Any

from evalconv.canonical import jsonvalue, schema
from evalconv.canonical.reporting import ReadReporter
from evalconv.canonical.row import Row

from .read import NAMESPACE, expected_from_assertion, input_from_vars, parse_envelope
from .text import unescape

_WHY = "edited in the promptfoo file; the edit is kept (it differs from the copy evalconv carried in {where})"


def take_edits(test: dict[str, Any], value: dict[str, Any], report: ReadReporter) -> dict[str, Any]:
    if not schema.is_valid(value):
        return value  # the validator reports what is wrong with the carried row
    from .csv_tests import HEADER, place_csv, test_from_cells  # the writer's modules import the reader's
    from .write import place
    row = Row.from_json(value)
    placed = place(row)
    cells, _ = place_csv(row)
    written = [placed.test, test_from_cells(dict(zip(HEADER, cells)))]
    envelope = parse_envelope(test.get("metadata") or {})
    out = copy.deepcopy(value)
    row_id = value["id"]
    vars_ = test.get("vars", {})
    if "input" in envelope and isinstance(vars_, dict) and not any(_same(vars_, w.get("vars", {})) for w in written):
        out["input"] = input_from_vars(vars_)
        report.edit("$.input", row_id, "vars: " + _WHY.format(where="metadata.evalconv"))
    _keep_threshold(test, placed.test, out, report)
    asserts = test.get("assert")
    if asserts is None:
        asserts = []
    if not isinstance(asserts, list) or any(_same(asserts, w.get("assert")) for w in written):
        return out
    found = next((a for a in map(expected_from_assertion, asserts) if a[0]), None)
    if "expectedFrom" in envelope and not _holds_expected(asserts, envelope["expectedFrom"]):
        # the assertion that held the reference was changed (equals -> contains) or removed
        report.edit("$.expected", row_id, "the assertion that held the reference was edited in the promptfoo "
                    "file: " + ("its value is kept as the reference" if "expected" in out else
                                "no assertion holds a reference now, so the row has none"))
    if "expected" in envelope and found is not None:
        was = [next((a for a in map(expected_from_assertion, w.get("assert") or []) if a[0]), None) for w in written]
        if not any(w is not None and _same(w[1], found[1]) for w in was):
            out["expected"] = _with_carried_arguments(found[1], envelope["expected"])
            report.edit("$.expected", row_id, "the assertion holding the reference: " + _WHY.format(where="metadata.evalconv"))
    case = out["metadata"]["case"]
    for name, kinds in (("evaluationCriteria", ("llm-rubric",)), ("unacceptableBehavior", ("not-llm-rubric",))):
        if name not in (placed.plan.native_case if placed.plan else []):
            continue
        extra = [t for t in _texts(placed.test["assert"], kinds) if t not in row.case_fields[name]]
        texts = [t for t in _texts(asserts, kinds) if t not in extra]
        if texts != row.case_fields[name]:
            case[name] = texts
            report.edit(f"$.metadata.case.{name}", row_id, f"the {kinds[0]} assertions: " +
                        _WHY.format(where=f"metadata.case.{name}"))
            if not texts:
                del case[name]
    _keep_assertions(asserts, out, written, report)
    return out


def _holds_expected(asserts: list[Any], index: Any) -> bool:
    return isinstance(index, int) and 0 <= index < len(asserts) and expected_from_assertion(asserts[index])[0]


def _keep_threshold(test: dict[str, Any], placed: dict[str, Any], out: dict[str, Any], report: ReadReporter) -> None:
    if "threshold" in test and not _same(test.get("threshold"), placed.get("threshold")):
        _extension(out)["threshold"] = test["threshold"]
        report.edit("$.metadata.case.extensions.promptfoo.threshold", out["id"], "a threshold was added or "
                    "changed in the promptfoo file: kept in metadata.case.extensions.promptfoo and written back")


def _keep_assertions(asserts: list[Any], out: dict[str, Any], written: list[dict[str, Any]],
                     report: ReadReporter) -> None:
    """Assertions a person added or changed are user data: when the edited row would not be written
    with exactly them, they are kept as the row's own (metadata.case.extensions.promptfoo.assert),
    and evalconv writes them back instead of generating its own."""
    from .csv_tests import HEADER, place_csv, test_from_cells
    from .write import place
    if asserts and schema.is_valid(out):
        row = Row.from_json(out)
        again = [place(row).test, test_from_cells(dict(zip(HEADER, place_csv(row)[0])))]
        if any(_same(asserts, w.get("assert")) for w in again):
            return  # the native edits above explain them
    if not asserts and not any(w.get("assert") for w in written):
        return
    _extension(out)["assert"] = copy.deepcopy(asserts)
    report.edit("$.metadata.case.extensions.promptfoo.assert", out["id"],
                "the assertions were edited in the promptfoo file (added, changed or removed): kept as the "
                "row's own in metadata.case.extensions.promptfoo and written back as they are"
                if asserts else "every assertion was removed in the promptfoo file: kept as an empty list in "
                "metadata.case.extensions.promptfoo; evalconv writes its own checks again for this row")


def _extension(out: dict[str, Any]) -> dict[str, Any]:
    extensions = out["metadata"]["case"].setdefault("extensions", {})
    return extensions.setdefault(NAMESPACE, {})


def _same(a: Any, b: Any) -> bool:
    return jsonvalue.same(a, b)


def _texts(asserts: list[Any], kinds: tuple[str, ...]) -> list[str]:
    return [unescape(a["value"]) for a in asserts
            if isinstance(a, dict) and a.get("type") in kinds and isinstance(a.get("value"), str)]


def _with_carried_arguments(calls: Any, carried: Any) -> Any:
    """Tool names edited in tool-call-f1: a call that keeps its name keeps its carried arguments."""
    if not (isinstance(calls, list) and isinstance(carried, list)):
        return calls
    out = []
    for i, call in enumerate(calls):
        before = carried[i] if i < len(carried) and isinstance(carried[i], dict) else {}
        out.append({**before, **call} if isinstance(call, dict) and before.get("name") == call.get("name") else call)
    return out

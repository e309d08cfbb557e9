"""A team's sheet cells as schema version 2's evidence fields (`evalconv import`).

- `case.contextRefs`: references in one cell, `doc-7@v3` (source `doc-7` at snapshot `v3`),
  several split as list cells are (`a@1|b@2`, or a line each), or JSON (a list of references or
  `source@snapshot` strings, or one reference object);
- `case.contextRefs.source` / `.snapshot` / `.span`: a reference's parts in columns of their own
  (one reference a row, added after those of a `case.contextRefs` column);
- `case.permission` (a JSON object) or `case.permission.callerRole` / `.resourceScope`;
- `case.targetTurn`, `case.schemaVersion`: a whole number.

In an evidence cell (a reference's part, `@` and what follows it, a permission field) the text
`(absent)`, `(redacted)` or `(irrelevant)` is the evidence marker `{"$evidence": ...}`: a sheet
cannot hold the object, and an empty cell already means "no value". (A canonical CSV never reads
markers from plain cells: its cells are verbatim, docs/csv-spec.md.) A cell that cannot be read
so is the row's `parse` finding, naming the column.
"""
from __future__ import annotations

import re
from typing import Any

from ..canonical import jsonvalue
from ..canonical.errors import RowError
from ..canonical.evidence import MARKER_KEY, MARKERS, PERMISSION_FIELDS
from . import list_cells

REFS = "$.metadata.case.contextRefs"
REF_PARTS = ("source", "snapshot", "span")
PERMISSION = "$.metadata.case.permission"
INTEGERS = ("$.metadata.case.targetTurn", "$.metadata.case.schemaVersion")
# Field paths one level inside a case field that a column may fill.
PART_TARGETS = frozenset((*(f"{REFS}.{p}" for p in REF_PARTS), *(f"{PERMISSION}.{p}" for p in PERMISSION_FIELDS)))
TARGETS = frozenset((REFS, PERMISSION, *INTEGERS, *PART_TARGETS))
V2_FIELDS = ("contextRefs", "targetTurn", "permission")
_MARKER_CELL = re.compile(r"\(\s*(" + "|".join(MARKERS) + r")\s*\)\Z", re.IGNORECASE)
_WHOLE = re.compile(r"[+-]?\d+\Z")


def is_evidence(target: str) -> bool:
    return target in TARGETS


def cell(value: Any, target: str, column: str, sep: str | None = None) -> Any:
    """The value a cell gives its evidence field; None for a blank cell (left out)."""
    if value is None or isinstance(value, str) and not value.strip():
        return None
    if target in INTEGERS:
        return _whole(value, target, column)
    if target == REFS:
        return references(value, column, sep)
    if target == PERMISSION:
        block = _json(value, column, target, "a JSON object {\"callerRole\": ..., \"resourceScope\": ...}") \
            if isinstance(value, str) else value
        if not isinstance(block, dict):
            raise RowError(f"column '{column}': a permission is a JSON object {{\"callerRole\": ..., "
                           f"\"resourceScope\": ...}}, not {_kind(block)}", target)
        return block
    if target == f"{REFS}.span" and isinstance(value, str) and value.strip().startswith("{"):
        return _json(value, column, target, "a span object {\"start\": ..., \"end\": ...}")
    return text(value) if isinstance(value, str) else value


def text(cell: str) -> Any:
    """An evidence text cell: the marker it spells, or its text, trimmed."""
    found = _MARKER_CELL.match(cell.strip())
    return {MARKER_KEY: found.group(1).lower()} if found else cell.strip()


def references(value: Any, column: str, sep: str | None = None) -> list[Any]:
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("[", "{"):
            value = _json(stripped, column, REFS, "a JSON list of references or a reference object")
        else:
            return [reference(item, column) for item in list_cells.split(stripped, sep)]
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        raise RowError(f"column '{column}': context references are source@snapshot text or a JSON list, "
                       f"not {_kind(value)}", REFS)
    return [reference(item, column) if isinstance(item, str) else item for item in value]


def reference(item: str, column: str) -> dict[str, Any]:
    """`source@snapshot` (the last `@` splits them) or a bare `source`, which names no snapshot
    (the validator's evidence-without-snapshot)."""
    source, at, snapshot = item.strip().rpartition("@") if "@" in item else (item.strip(), "", "")
    if not source.strip():
        raise RowError(f"column '{column}': the reference '{item}' names no source before '@' "
                       f"(write source@snapshot, e.g. doc-7@v3)", REFS)
    if at and not snapshot.strip():
        raise RowError(f"column '{column}': the reference '{item}' has nothing after '@': write its snapshot, "
                       f"or (absent) / (redacted) after the '@'", REFS)
    ref: dict[str, Any] = {"source": text(source)}
    if at:
        ref["snapshot"] = text(snapshot)
    return ref


def assemble(case: dict[str, Any], parts: dict[str, dict[str, Any]], columns: dict[str, str]) -> None:
    """A row's part columns into its case: one reference (after any from a `case.contextRefs`
    column) and the permission fields. `columns`: part path -> the sheet column, for messages."""
    ref = parts.get("contextRefs")
    if ref:
        if "source" not in ref:
            named = ", ".join(columns[f"{REFS}.{k}"] for k in ref)
            raise RowError(f"column '{columns.get(f'{REFS}.source', 'source')}': a reference needs its source "
                           f"({named} {'is' if len(ref) == 1 else 'are'} filled in this row)", f"{REFS}.source")
        refs = case.get("contextRefs")
        case["contextRefs"] = [*(refs if isinstance(refs, list) else []), {k: ref[k] for k in REF_PARTS if k in ref}]
    given = parts.get("permission")
    if given:
        block = case.get("permission")
        if isinstance(block, dict):
            both = sorted(set(block) & set(given))
            if both:
                raise RowError(f"column '{columns[f'{PERMISSION}.{both[0]}']}': permission.{both[0]} is also in the "
                               f"permission column; fill one", f"{PERMISSION}.{both[0]}")
            given = {**block, **given}
        case["permission"] = given


def uses_version_2(case: dict[str, Any]) -> bool:
    return any(name in case for name in V2_FIELDS)


def _whole(value: Any, target: str, column: str) -> Any:
    if isinstance(value, str):
        if not _WHOLE.match(value.strip()):
            what = "a message index (0 for the first message)" if target.endswith("targetTurn") else "2 or 1"
            raise RowError(f"column '{column}': '{value.strip()[:40]}' is not a whole number: write {what}", target)
        return int(value.strip())
    return value  # a JSON sheet's number (or not: the schema says what is wrong with it)


def _json(cell: str, column: str, target: str, what: str) -> Any:
    try:
        return jsonvalue.loads(cell)
    except jsonvalue.JSONValueError as err:
        raise RowError(f"column '{column}': not valid JSON ({err}): write {what}", target) from None


def _kind(value: Any) -> str:
    return "null" if value is None else {bool: "a boolean", int: "a number", float: "a number", str: "text",
                                         list: "a list", dict: "an object"}.get(type(value), type(value).__name__)

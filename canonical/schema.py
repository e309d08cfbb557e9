"""The published JSON Schemas, one a case-profile version, each compiled twice from its file.

`jsonschema-rs` (compiled Rust) answers "is this row valid?" in about a microsecond;
`jsonschema` explains the rows that are not. Both read the same file (`schema/row.schema.json`
for version 1, `schema/row.v2.schema.json` for version 2), so they cannot drift apart, and a
property test holds them to the same answers.

A row says its version in `metadata.case.schemaVersion` (absent means 1) and is checked against
that version's schema, never another: a version-1 row that uses a version-2 field is told so, and
a version evalconv does not know is an error. Version 2 adds only optional fields, so every
version-1 row has exactly one version-2 form (`schemaVersion: 2`, nothing else changed).
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from importlib import resources
from typing import Any, Iterator

import jsonschema_rs

from . import jsonvalue, paths
from .admissibility import OMITTED_FIELDS
from .suggest import did_you_mean

SCHEMA_FILES = {1: "row.schema.json", 2: "row.v2.schema.json"}
VERSIONS: tuple[int, ...] = tuple(SCHEMA_FILES)
LATEST = VERSIONS[-1]
VERSION_FIELD = "schemaVersion"
VERSION_PATH = "$.metadata.case.schemaVersion"


@lru_cache(maxsize=None)
def row_schema(version: int = LATEST) -> dict[str, Any]:
    """The published row schema of a case-profile version (the latest by default)."""
    if version not in SCHEMA_FILES:
        raise ValueError(f"no schema version {version!r}: the versions are {', '.join(map(str, VERSIONS))}")
    text = resources.files(__package__).joinpath("schema", SCHEMA_FILES[version]).read_text("utf-8")
    return json.loads(text)


def case_profile_schema(version: int = LATEST) -> dict[str, Any]:
    """The case profile on its own, as a standalone schema."""
    full = row_schema(version)
    out = copy.deepcopy(full["definitions"]["caseProfile"])
    out["$schema"] = full["$schema"]
    out["$id"] = full["$id"].replace("row.schema.json", "case-profile.schema.json")
    out["definitions"] = {k: v for k, v in copy.deepcopy(full["definitions"]).items() if k != "caseProfile"}
    return out


def enum(name: str) -> tuple[str, ...]:
    return tuple(row_schema()["definitions"][name]["enum"])


def case_fields(version: int = LATEST) -> tuple[str, ...]:
    return tuple(row_schema(version)["definitions"]["caseProfile"]["properties"])


# Every case-profile field of any version, in the latest schema's order (the formats' columns).
CASE_FIELDS: tuple[str, ...] = case_fields()
REQUIRED_CASE_FIELDS: tuple[str, ...] = tuple(row_schema(1)["definitions"]["caseProfile"]["required"])
# The fields each version added: {2: ("schemaVersion", "contextRefs", ...)}
ADDED_IN: dict[int, tuple[str, ...]] = {
    v: tuple(f for f in case_fields(v) if f not in case_fields(VERSIONS[i - 1])) for i, v in enumerate(VERSIONS) if i
}


def added_in(name: str) -> int:
    """The version that introduced a case-profile field (1 for the original fields)."""
    return next((v for v, names in ADDED_IN.items() if name in names), 1)


def _field_kind(spec: dict[str, Any]) -> str:
    """How a format holds a field: "string", "list" (of strings), "integer", or "object" (a JSON
    value held as JSON text: extensions, and version 2's contextRefs and permission)."""
    ref = spec.get("$ref", "")
    if ref.endswith("/stringList"):
        return "list"
    if ref:
        spec = row_schema()["definitions"][ref.split("/")[-1]]
    if spec.get("type") == "integer":
        return "integer"
    if spec.get("type") in ("object", "array"):
        return "object"
    return "string"


CASE_FIELD_KINDS: dict[str, str] = {
    name: _field_kind(spec)
    for name, spec in row_schema()["definitions"]["caseProfile"]["properties"].items()
}


_FAST: dict[int, Any] = {}


def fast_check(version: int = 1) -> Any:
    checker = _FAST.get(version)
    if checker is None:
        checker = _FAST[version] = jsonschema_rs.Draft7Validator(row_schema(version))
    return checker


def declared_version(value: Any) -> Any:
    """`metadata.case.schemaVersion` as the row writes it: 1 when absent (or when the row has no
    case profile to say it), else the value, whatever it is."""
    metadata = value.get("metadata") if isinstance(value, dict) else None
    case = metadata.get("case") if isinstance(metadata, dict) else None
    return case.get(VERSION_FIELD, 1) if isinstance(case, dict) else 1


def known_version(declared: Any) -> int | None:
    return declared if type(declared) is int and declared in SCHEMA_FILES else None


def version_of(value: Any) -> int | None:
    """The schema version a row follows, or None when it names none evalconv knows."""
    return known_version(declared_version(value))


def _as_checked(value: Any, version: int) -> Any:
    """Version 1's schema has no schemaVersion field: a row that says 1 is checked without it."""
    if version != 1:
        return value
    case = value["metadata"]["case"] if isinstance(value, dict) and isinstance(value.get("metadata"), dict) \
        and isinstance(value["metadata"].get("case"), dict) else None
    if case is None or VERSION_FIELD not in case:
        return value
    return {**value, "metadata": {**value["metadata"], "case": {k: v for k, v in case.items() if k != VERSION_FIELD}}}


def is_valid(value: Any) -> bool:
    return valid_at(value, version_of(value))


def valid_at(value: Any, version: int | None, says_version: bool = True) -> bool:
    """Is the row valid at `version` (its own: `version_of`)? `says_version=False` tells that the
    row has no schemaVersion key (the validator knows), which spares a look."""
    if version is None:
        return False
    if version == 1 and says_version:
        value = _as_checked(value, 1)
    try:
        return fast_check(version).is_valid(value)
    except (ValueError, OverflowError):  # a value it cannot take (a non-string key): ask the reference
        return _reference(version).is_valid(value)


@lru_cache(maxsize=None)
def _reference(version: int = 1) -> Any:
    import jsonschema  # only rows that fail need explaining; most runs never import it

    return jsonschema.Draft7Validator(row_schema(version))


_KIND = {"string": "a string", "object": "an object", "array": "an array", "number": "a number",
         "integer": "an integer", "boolean": "a boolean", "null": "null"}


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    names: dict[type, str] = {str: "string", dict: "object", list: "array"}
    return _KIND.get(names[type(value)], "a value")


def explain(value: Any) -> Iterator[tuple[str, str]]:
    """(path, message) for every way `value` breaks the schema of its version, in document order."""
    version = version_of(value)
    if version is None:
        yield VERSION_PATH, unknown_version_message(declared_version(value))
        return
    value = _as_checked(value, version)
    errors = sorted(_reference(version).iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    for err in errors:
        where = list(err.absolute_path)
        yield from _messages(err, where, version)


def unknown_version_message(given: Any) -> str:
    known = ", ".join(map(str, VERSIONS))
    if type(given) is int:
        return (f"schema version {given} is not one this evalconv knows ({known}): a newer evalconv may "
                f"read it; rows are never read as another version")
    return (f"schemaVersion must be an integer ({known}), got {jsonvalue.dumps(given)}: rows are never "
            f"read as another version")


def _messages(err: Any, where: list[str | int], version: int = 1) -> Iterator[tuple[str, str]]:
    at = paths.to_path(where)
    kind = err.validator
    if kind == "required":
        missing = err.message.split("'")[1] if "'" in err.message else "?"
        same = " (same as id)" if missing == "caseId" else ""
        yield paths.join(at, missing), f"missing required field '{missing}'{same}"
    elif kind == "additionalProperties":
        allowed = set(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in allowed]
        for key in extra:
            yield paths.join(at, key), _unknown_key_message(where, key, version)
    elif kind == "type":
        wanted = err.validator_value
        wanted = " or ".join(_KIND[w] for w in wanted) if isinstance(wanted, list) else _KIND[wanted]
        yield at, f"expected {wanted}, got {_kind_of(err.instance)}"
    elif kind == "enum":
        choices = ", ".join(err.validator_value)
        field = where[-1] if where else "value"
        hint = did_you_mean(err.instance, err.validator_value) if isinstance(err.instance, str) else ""
        yield at, (f"{json.dumps(err.instance, ensure_ascii=False)} is not a valid {field}{hint}; "
                   f"expected one of: {choices}")
    elif kind == "minLength":
        yield at, "must not be empty"
    elif kind == "anyOf" and isinstance(err.instance, dict) and "$evidence" in err.instance:
        yield at, (f"{jsonvalue.dumps(err.instance)} is not an evidence marker: a marker is exactly "
                   f"{{\"$evidence\": \"absent\" | \"redacted\" | \"irrelevant\"}}")
    elif kind == "anyOf":
        shapes = "a string, {\"start\": int, \"end\": int}" if where and where[-1] == "span" else "a string"
        yield at, (f"expected {shapes} or an evidence marker {{\"$evidence\": \"absent\" | \"redacted\" | "
                   f"\"irrelevant\"}}, got {_kind_of(err.instance)}")
    else:
        yield at, err.message


def _unknown_key_message(where: list[str | int], key: str, version: int = 1) -> str:
    if where == ["metadata", "case"] and added_in(key) > version:
        return (f"'{key}' is a field of schema version {added_in(key)}, and this row follows version {version} "
                f"({'it has no' if version == 1 else 'its'} metadata.case.schemaVersion{'' if version == 1 else ' says so'}): "
                f"set schemaVersion to {added_in(key)} (`evalconv migrate SET --to {added_in(key)}` does it for a set)")
    if key in OMITTED_FIELDS and where in ([], ["metadata", "case"]):
        return f"'{key}' is deliberately not a field of a case: {OMITTED_FIELDS[key]}"
    if not where:
        return f"unknown top-level key '{key}': move it under metadata"
    if where == ["metadata", "case"]:
        return (f"unknown case-profile field '{key}': put it under metadata.case.extensions "
                f"(a namespace object) or elsewhere in metadata")
    return f"unknown key '{key}'"


def enum_fields() -> dict[str, tuple[str, ...]]:
    """Case-profile fields whose values come from a fixed list, with the list (schema order)."""
    definitions = row_schema()["definitions"]
    out = {}
    for name, spec in definitions["caseProfile"]["properties"].items():
        spec = definitions.get(spec.get("$ref", "").split("/")[-1], spec)
        if "enum" in spec:
            out[name] = tuple(spec["enum"])
    return out


ALLOWED_VALUES_BEGIN = "<!-- allowed values: generated from the schema by evalconv.canonical.schema.allowed_values_markdown() -->"
ALLOWED_VALUES_END = "<!-- end of allowed values -->"


def allowed_values_markdown() -> str:
    """The allowed-values table of docs/csv-spec.md (tests/test_docs.py keeps it in sync)."""
    lines = [ALLOWED_VALUES_BEGIN, "", "| column | allowed values |", "|--------|----------------|"]
    lines += [f"| `case.{name}` | {', '.join(f'`{v}`' for v in values)} |" for name, values in enum_fields().items()]
    return "\n".join(lines + ["", ALLOWED_VALUES_END])

"""The published JSON Schema, compiled twice from the same file.

`jsonschema-rs` (compiled Rust) answers "is this row valid?" in about a microsecond;
`jsonschema` explains the rows that are not. Both read `schema/row.schema.json`, so they
cannot drift apart, and a property test holds them to the same answers.
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from importlib import resources
from typing import Any, Iterator

import jsonschema_rs

from . import paths
from .admissibility import OMITTED_FIELDS
from .suggest import did_you_mean

SCHEMA_FILE = "row.schema.json"


@lru_cache(maxsize=None)
def row_schema() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("schema", SCHEMA_FILE).read_text("utf-8")
    return json.loads(text)


def case_profile_schema() -> dict[str, Any]:
    """The case profile on its own, as a standalone schema."""
    full = row_schema()
    out = copy.deepcopy(full["definitions"]["caseProfile"])
    out["$schema"] = full["$schema"]
    out["$id"] = full["$id"].replace("row.schema.json", "case-profile.schema.json")
    out["definitions"] = {k: v for k, v in copy.deepcopy(full["definitions"]).items() if k != "caseProfile"}
    return out


def enum(name: str) -> tuple[str, ...]:
    return tuple(row_schema()["definitions"][name]["enum"])


CASE_FIELDS: tuple[str, ...] = tuple(row_schema()["definitions"]["caseProfile"]["properties"])
REQUIRED_CASE_FIELDS: tuple[str, ...] = tuple(row_schema()["definitions"]["caseProfile"]["required"])


def _field_kind(spec: dict[str, Any]) -> str:
    ref = spec.get("$ref", "")
    if ref.endswith("/stringList"):
        return "list"
    if spec.get("type") == "object":
        return "object"
    return "string"


CASE_FIELD_KINDS: dict[str, str] = {
    name: _field_kind(spec)
    for name, spec in row_schema()["definitions"]["caseProfile"]["properties"].items()
}


@lru_cache(maxsize=None)
def fast_check() -> Any:
    return jsonschema_rs.Draft7Validator(row_schema())


def is_valid(value: Any) -> bool:
    try:
        return fast_check().is_valid(value)
    except (ValueError, OverflowError):  # a value it cannot take (a non-string key): ask the reference
        return _reference().is_valid(value)


@lru_cache(maxsize=None)
def _reference() -> Any:
    import jsonschema  # only rows that fail need explaining; most runs never import it

    return jsonschema.Draft7Validator(row_schema())


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
    """(path, message) for every way `value` breaks the schema, in document order."""
    errors = sorted(_reference().iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    for err in errors:
        where = list(err.absolute_path)
        yield from _messages(err, where)


def _messages(err: Any, where: list[str | int]) -> Iterator[tuple[str, str]]:
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
            yield paths.join(at, key), _unknown_key_message(where, key)
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
    else:
        yield at, err.message


def _unknown_key_message(where: list[str | int], key: str) -> str:
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

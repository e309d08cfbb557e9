"""Attempts and results: the run records that sit beside cases, never inside them.

An attempt is one run of one system on one case version (immutable); a result is one
evaluator's judgement of one attempt (rescoring adds a result). Both have published JSON Schemas
(`schema/attempt.schema.json`, `schema/result.schema.json`, version 1) and stable ids derived
from the harness's own identifiers, so importing the same run twice gives the same records.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import resources
from typing import Any, Iterator

import jsonschema_rs

from .vocabulary import HUMAN_TYPES as HUMAN_TYPES, severity_rank as severity_rank  # used as runs.X

SCHEMA_VERSION = 1
ATTEMPT_SCHEMA = "attempt.schema.json"
RESULT_SCHEMA = "result.schema.json"


@lru_cache(maxsize=None)
def schema(name: str) -> dict[str, Any]:
    text = resources.files(__package__).joinpath("schema", name).read_text("utf-8")
    return json.loads(text)


def attempt_schema() -> dict[str, Any]:
    return schema(ATTEMPT_SCHEMA)


def result_schema() -> dict[str, Any]:
    return schema(RESULT_SCHEMA)


@lru_cache(maxsize=None)
def _checker(name: str) -> Any:
    return jsonschema_rs.Draft7Validator(schema(name))


def problems(record: dict[str, Any], name: str) -> Iterator[str]:
    """Why `record` breaks its schema, one message per problem ('$.path: message')."""
    checker = _checker(name)
    if checker.is_valid(record):
        return
    import jsonschema  # only failing records need explaining

    for err in jsonschema.Draft7Validator(schema(name)).iter_errors(record):
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        yield f"{where}: {err.message}"


def stable_id(prefix: str, *parts: Any) -> str:
    """`att-` / `res-` and 20 hex digits of a digest of the parts (JSON, so types count)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return f"{prefix}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:20]}"


def input_key(value: Any) -> str | None:
    """The key a run row that carries only the case's input text links by (Ragas results), or None
    for an input that is not text. Two cases with the same input text share it: neither links."""
    return stable_id("in", value) if isinstance(value, str) else None


def attempt_id(harness: str, *key: Any) -> str:
    return stable_id("att", harness, *key)


def attempt(*, harness: str, key: tuple[Any, ...], case_id: str | None, system: str,
            status: str = "completed", run: str | None = None, harness_version: str | None = None,
            case_ref: dict[str, str] | None = None, case_version: str | None = None,
            system_version: str | None = None, started_at: str | None = None,
            duration_ms: float | None = None, error: str | None = None, output: Any = None,
            has_output: bool = False, output_ref: str | None = None,
            tool_trace: list[dict[str, Any]] | None = None,
            source: dict[str, Any] | None = None) -> dict[str, Any]:
    """An attempt record; `key` is what makes it unique within the harness (its own ids)."""
    record: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION, "id": attempt_id(harness, *key), "caseId": case_id,
        "caseRef": case_ref, "caseVersion": case_version,
        "harness": {"name": harness, "version": harness_version, "run": run},
        "system": {"name": system, "version": system_version},
        "startedAt": started_at, "durationMs": duration_ms, "status": status, "error": error,
    }
    if has_output:
        record["output"] = output
    record.update(outputRef=output_ref, toolTrace=tool_trace, source=source)
    return record


def result(*, attempt_id: str, name: str, type_: str | None, type_source: str, score: float | None,
           passed: bool | None, review_status: str, reason: str | None = None,
           version: str | None = None, model: str | None = None, recorded_at: str | None = None,
           own_id: Any = None, source: dict[str, Any] | None = None, typed_by: str | None = None,
           role: str | None = None, pass_at: float | None = None) -> dict[str, Any]:
    """A result record. Its id comes from the harness's own id for the judgement when there is
    one (`own_id`), else from everything the judgement says. `typed_by`, `role` and `pass_at`
    appear only when given (records written before them stay byte for byte)."""
    key = own_id if own_id is not None else (name, version, model, score, passed, reason, review_status, recorded_at)
    evaluator: dict[str, Any] = {"type": type_, "typeSource": type_source if type_ else "unknown", "name": name,
                                 "version": version, "model": model}
    if typed_by is not None:
        evaluator["typedBy"] = typed_by
    record: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION, "id": stable_id("res", attempt_id, key), "attemptId": attempt_id,
        "evaluator": evaluator, "score": score, "passed": passed, "reason": reason, "reviewStatus": review_status,
        "recordedAt": recorded_at, "source": source,
    }
    if role is not None:
        record["role"] = role
    if pass_at is not None:
        record["passAt"] = pass_at
    return record


def ledger_entry(kind: str, reason: str, *, id: str | None = None, ref: Any = None,
                 source: dict[str, Any] | None = None) -> dict[str, Any]:
    """An error-ledger entry: a record that could not be linked or read, and why."""
    return {"kind": kind, "id": id, "ref": ref, "reason": reason, "source": source}


def first_line(text: Any, limit: int = 300) -> str | None:
    """The first line of an error message (stack traces stay in the harness's own files)."""
    if not isinstance(text, str) or not text.strip():
        return None
    line = text.strip().splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"

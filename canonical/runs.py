"""Attempts and results: the run records that sit beside cases, never inside them.

An attempt is one run of one system on one case version (immutable); a result is one
evaluator's judgement of one attempt (rescoring adds a result). Both have published JSON Schemas
(`schema/attempt.schema.json`, `schema/result.schema.json`, version 1) and stable ids derived
from the harness's own identifiers, so importing the same run twice gives the same records.
A ledger entry says what could not be linked or read, and why. All three are typed records
(`Attempt`, `Result`, `LedgerEntry`), their kinds in one table (`KINDS`), made only here.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import resources
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, NotRequired, TypedDict

import jsonschema_rs

from .vocabulary import HUMAN_TYPES as HUMAN_TYPES, severity_rank as severity_rank  # used as runs.X

SCHEMA_VERSION = 1
ATTEMPT_SCHEMA = "attempt.schema.json"
RESULT_SCHEMA = "result.schema.json"

# The records, as typed dicts: JSON as it is stored, key for key in the order written. The
# published schemas say the same, and their enums the values (`status`, `reviewStatus`, ...): a
# record the constructors make from a harness's odd value breaks its schema and is not stored.
# tests/runs/test_run_records.py compares the types and the schemas.


class Harness(TypedDict):
    name: str
    version: str | None
    run: str | None


class System(TypedDict):
    name: str
    version: str | None


class _Ran(TypedDict):
    """An attempt's keys before its output."""

    schemaVersion: int
    id: str
    caseId: str | None
    caseRef: dict[str, str] | None          # {"kind": ..., "value": ...}
    caseVersion: str | None
    harness: Harness
    system: System
    startedAt: str | None
    durationMs: float | None
    status: str                              # completed, error, timeout, cancelled
    error: str | None


class _Kept(TypedDict):
    """An attempt's keys after its output."""

    outputRef: str | None
    toolTrace: list[dict[str, Any]] | None
    source: dict[str, Any] | None            # {"file", "line", "entry"}


class Attempt(_Ran, _Kept):
    """One run of one system on one case version (`attempt.schema.json`): the keys of `_Ran`, the
    output (absent when only outputRef is kept), the keys of `_Kept`, stored in that order."""

    output: NotRequired[Any]


class Evaluator(TypedDict):
    type: str | None
    typeSource: str                          # declared, inferred, unknown
    name: str
    version: str | None
    model: str | None
    typedBy: NotRequired[str | None]


class Result(TypedDict):
    """One evaluator's judgement of one attempt (`result.schema.json`)."""

    schemaVersion: int
    id: str
    attemptId: str
    evaluator: Evaluator
    score: float | None
    passed: bool | None
    reason: str | None
    reviewStatus: str                        # automated, reviewed, pending, error
    recordedAt: str | None
    source: dict[str, Any] | None
    role: NotRequired[str]                   # verdict, override
    passAt: NotRequired[float | None]       # absent unless given; the schema also takes null


class LedgerEntry(TypedDict):
    """A record that could not be linked or read, and why (its `kind`: LEDGER_KINDS)."""

    kind: str
    id: str | None
    ref: Any
    reason: str
    source: dict[str, Any] | None


# What a harness reader yields: a kind of KINDS and its record, made by `attempt`, `result` or
# `ledger_entry` (a record read back from a store is the same JSON, not yet checked: a Mapping).
Record = tuple[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Kind:
    """One kind of run record: its type, its schema (None: not published), and its store file."""

    type: type
    schema: str | None
    plural: str       # the store's word for many, and its file's name (`attempts.jsonl`)


# Every kind of run record, in the order a store holds them (attempts before their results).
KINDS: dict[str, Kind] = {
    "attempt": Kind(Attempt, ATTEMPT_SCHEMA, "attempts"),
    "result": Kind(Result, RESULT_SCHEMA, "results"),
    "ledger": Kind(LedgerEntry, None, "ledger"),
}

# Every ledger entry's kind and what it means. docs/runs.md's list is generated from this table
# (`ledger_kinds_markdown`); an entry of a kind not in it cannot be made.
LEDGER_KINDS: dict[str, str] = {
    "unreadable": "a line or entry of a harness's output or of the run store that cannot be read (not UTF-8, "
                  "not JSON, not an object, or not what the harness writes there)",
    "invalid-record": "an attempt or result that breaks its schema: never stored",
    "invalid-case": "a case of the set that is not valid: its runs cannot be counted against it",
    "duplicate-case": "a second case with an id already read: the first counts",
    "attempt-without-case": "an attempt whose case is not in the set, or that does not say which case it is",
    "result-without-attempt": "a result whose attempt is not in the runs given",
}


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


def problems(record: Mapping[str, Any], name: str) -> Iterator[str]:
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
            source: dict[str, Any] | None = None) -> Attempt:
    """An attempt record; `key` is what makes it unique within the harness (its own ids)."""
    ran = _Ran(schemaVersion=SCHEMA_VERSION, id=attempt_id(harness, *key), caseId=case_id, caseRef=case_ref,
               caseVersion=case_version, harness=Harness(name=harness, version=harness_version, run=run),
               system=System(name=system, version=system_version), startedAt=started_at, durationMs=duration_ms,
               status=status, error=error)
    kept = _Kept(outputRef=output_ref, toolTrace=tool_trace, source=source)
    return {**ran, "output": output, **kept} if has_output else {**ran, **kept}


def result(*, attempt_id: str, name: str, type_: str | None, type_source: str, score: float | None,
           passed: bool | None, review_status: str, reason: str | None = None,
           version: str | None = None, model: str | None = None, recorded_at: str | None = None,
           own_id: Any = None, source: dict[str, Any] | None = None, typed_by: str | None = None,
           role: str | None = None, pass_at: float | None = None) -> Result:
    """A result record. Its id comes from the harness's own id for the judgement when there is
    one (`own_id`), else from everything the judgement says. `typed_by`, `role` and `pass_at`
    appear only when given (records written before them stay byte for byte)."""
    key = own_id if own_id is not None else (name, version, model, score, passed, reason, review_status, recorded_at)
    evaluator = Evaluator(type=type_, typeSource=type_source if type_ else "unknown",
                          name=name, version=version, model=model)
    if typed_by is not None:
        evaluator["typedBy"] = typed_by
    record = Result(schemaVersion=SCHEMA_VERSION, id=stable_id("res", attempt_id, key), attemptId=attempt_id,
                    evaluator=evaluator, score=score, passed=passed, reason=reason,
                    reviewStatus=review_status, recordedAt=recorded_at, source=source)
    if role is not None:
        record["role"] = role
    if pass_at is not None:
        record["passAt"] = pass_at
    return record


def ledger_entry(kind: str, reason: str, *, id: str | None = None, ref: Any = None,
                 source: dict[str, Any] | None = None) -> LedgerEntry:
    """An error-ledger entry: a record that could not be linked or read, and why."""
    if kind not in LEDGER_KINDS:
        raise ValueError(f"unknown ledger entry kind {kind!r}: add it to canonical.runs.LEDGER_KINDS")
    return LedgerEntry(kind=kind, id=id, ref=ref, reason=reason, source=source)


def ledger_kinds_markdown() -> str:
    """The list of ledger entry kinds in docs/runs.md, generated from LEDGER_KINDS."""
    lines = ["| kind | meaning |", "|------|---------|"]
    lines += [f"| `{kind}` | {summary} |" for kind, summary in LEDGER_KINDS.items()]
    return "\n".join(lines) + "\n"


def first_line(text: Any, limit: int = 300) -> str | None:
    """The first line of an error message (stack traces stay in the harness's own files)."""
    if not isinstance(text, str) or not text.strip():
        return None
    line = text.strip().splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"

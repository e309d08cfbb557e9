"""Attempts, results and ledger entries are typed records (`canonical/runs.py`), their kinds in one
table (issue 27): the types agree with the published schemas, the constructors write the same bytes
as the untyped dicts did (a store written before stays the store), and a ledger entry's kind is a
row of `LEDGER_KINDS`, as a finding's code is a row of `CODES`."""
from __future__ import annotations

import ast
import json
import types
import typing

import pytest

from conftest import ROOT
from evalconv.canonical import runs


def _nullable(hint: typing.Any) -> bool:
    return isinstance(hint, types.UnionType | typing._UnionGenericAlias) and type(None) in typing.get_args(hint)  # type: ignore[attr-defined]


def _typed_dict(hint: typing.Any) -> typing.Any:
    """The TypedDict in `hint` (`Harness`, `Harness | None`), or None."""
    for kind in (hint, *typing.get_args(hint)):
        if typing.is_typeddict(kind):
            return kind
    return None


def _schema_allows_null(prop: dict) -> bool | None:
    """Does the schema property take null? None: it says nothing (any JSON value)."""
    if "enum" in prop:
        return None in prop["enum"]
    if "const" in prop:
        return prop["const"] is None
    if "type" not in prop:
        return None
    kinds = prop["type"]
    return "null" in (kinds if isinstance(kinds, list) else [kinds])


def disagreements(typed: typing.Any, schema: dict, where: str = "$") -> list[str]:
    """Where a TypedDict and a JSON Schema object disagree: the keys, which are required, which
    take null, and the same for every nested object typed as a TypedDict."""
    hints = typing.get_type_hints(typed)
    props, required = schema.get("properties", {}), set(schema.get("required", ()))
    out = [f"{where}.{k}: in the type, not the schema" for k in sorted(set(hints) - set(props))]
    out += [f"{where}.{k}: in the schema, not the type" for k in sorted(set(props) - set(hints))]
    out += [f"{where}.{k}: required by the schema, optional in the type"
            for k in sorted(required - typed.__required_keys__)]
    for key in sorted(set(hints) & set(props)):
        takes_null = _schema_allows_null(props[key])
        if takes_null is not None and takes_null != _nullable(hints[key]):
            out.append(f"{where}.{key}: the schema {'takes' if takes_null else 'refuses'} null, the type "
                       f"{'does not' if takes_null else 'does'}")
        nested = _typed_dict(hints[key])
        if nested is not None:
            out += disagreements(nested, props[key], f"{where}.{key}")
    return out


@pytest.mark.parametrize("kind", ["attempt", "result"])
def test_the_typed_records_agree_with_the_published_schemas(kind):
    what = runs.KINDS[kind]
    assert what.schema is not None
    assert disagreements(what.type, runs.schema(what.schema)) == []


class _Harness(typing.TypedDict):
    name: str
    version: str  # the schema takes null


class _Wrong(typing.TypedDict):
    id: str
    harness: _Harness
    extra: int


def test_the_schema_check_can_fail():
    schema = runs.attempt_schema()
    found = disagreements(_Wrong, schema)
    assert "$.extra: in the type, not the schema" in found
    assert "$.caseId: in the schema, not the type" in found
    assert "$.harness.version: the schema takes null, the type does not" in found
    assert "$.harness.run: in the schema, not the type" in found


# The untyped dicts wrote exactly these lines (made with the constructors before they were typed).
OLD_LINES = [
    ("attempt", dict(harness="promptfoo", key=("r1", 3), case_id="c-1", system="gpt", run="ev-1", harness_version="0.1",
                     case_ref={"kind": "name", "value": "x"}, started_at="2026-01-01", duration_ms=12.5, status="error",
                     error="boom", output={"a": [1, "é"]}, has_output=True, output_ref="f.json#3",
                     tool_trace=[{"name": "t"}], source={"file": "f.json", "line": None, "entry": 3}),
     '{"schemaVersion": 1, "id": "att-95aea49459386cb13fbf", "caseId": "c-1", "caseRef": {"kind": "name", "value": "x"}, '
     '"caseVersion": null, "harness": {"name": "promptfoo", "version": "0.1", "run": "ev-1"}, "system": {"name": "gpt", '
     '"version": null}, "startedAt": "2026-01-01", "durationMs": 12.5, "status": "error", "error": "boom", "output": '
     '{"a": [1, "é"]}, "outputRef": "f.json#3", "toolTrace": [{"name": "t"}], "source": {"file": "f.json", "line": null, '
     '"entry": 3}}'),
    ("attempt", dict(harness="ragas", key=("f.csv", 2), case_id=None, system="s"),
     '{"schemaVersion": 1, "id": "att-807edfed04a569f114fa", "caseId": null, "caseRef": null, "caseVersion": null, '
     '"harness": {"name": "ragas", "version": null, "run": null}, "system": {"name": "s", "version": null}, '
     '"startedAt": null, "durationMs": null, "status": "completed", "error": null, "outputRef": null, "toolTrace": null, '
     '"source": null}'),
    ("result", dict(attempt_id="att-0123456789abcdef0123", name="equals", type_="exact-or-programmatic",
                    type_source="declared", score=1.0, passed=True, review_status="automated", reason="ok", version="1",
                    model=None, recorded_at="t", own_id="fb-1", source={"file": "f", "line": 1, "entry": None},
                    typed_by="promptfoo assertion type", role="verdict", pass_at=0.5),
     '{"schemaVersion": 1, "id": "res-36089e00b2b39b882314", "attemptId": "att-0123456789abcdef0123", "evaluator": '
     '{"type": "exact-or-programmatic", "typeSource": "declared", "name": "equals", "version": "1", "model": null, '
     '"typedBy": "promptfoo assertion type"}, "score": 1.0, "passed": true, "reason": "ok", "reviewStatus": "automated", '
     '"recordedAt": "t", "source": {"file": "f", "line": 1, "entry": null}, "role": "verdict", "passAt": 0.5}'),
    ("result", dict(attempt_id="att-0123456789abcdef0123", name="judge", type_=None, type_source="inferred", score=None,
                    passed=None, review_status="pending"),
     '{"schemaVersion": 1, "id": "res-2f64c5de3fa468afb956", "attemptId": "att-0123456789abcdef0123", "evaluator": '
     '{"type": null, "typeSource": "unknown", "name": "judge", "version": null, "model": null}, "score": null, '
     '"passed": null, "reason": null, "reviewStatus": "pending", "recordedAt": null, "source": null}'),
]


@pytest.mark.parametrize("kind, given, line", OLD_LINES)
def test_typed_records_are_stored_byte_for_byte_as_before(kind, given, line):
    made = runs.attempt(**given) if kind == "attempt" else runs.result(**given)
    assert json.dumps(made, ensure_ascii=False) == line
    assert list(runs.problems(made, runs.KINDS[kind].schema)) == []
    entry = runs.ledger_entry("unreadable", "why", id="x", ref=1)
    assert json.dumps(entry) == '{"kind": "unreadable", "id": "x", "ref": 1, "reason": "why", "source": null}'


def test_the_store_files_and_the_index_numbers_come_from_the_table():
    from evalconv.runs import index, store
    assert store.FILES == {"attempt": "attempts.jsonl", "result": "results.jsonl", "ledger": "ledger.jsonl"}
    assert index.KINDS == {"attempt": 0, "result": 1, "ledger": 2}  # stored in the index: never renumbered


def test_every_ledger_kind_in_the_source_is_in_the_table():
    """A mistyped kind fails here for every call site, not only the ones a test happens to reach."""
    used = set()
    for folder in ("canonical", "converters", "vendors"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and "ledger_entry" in (getattr(node.func, "id", None),
                                                                     getattr(node.func, "attr", None)) \
                        and node.args and isinstance(node.args[0], ast.Constant):
                    used.add((node.args[0].value, path.name))
    assert {kind for kind, _ in used} >= {"unreadable", "invalid-record", "attempt-without-case"}
    assert not {(kind, where) for kind, where in used if kind not in runs.LEDGER_KINDS}


def test_a_ledger_entry_of_an_unknown_kind_cannot_be_made():
    with pytest.raises(ValueError, match="unknown ledger entry kind 'unreadble'"):
        runs.ledger_entry("unreadble", "x")


def test_the_ledger_kinds_in_runs_md_are_generated_from_the_table():
    page = (ROOT / "docs" / "runs.md").read_text(encoding="utf-8")
    assert runs.ledger_kinds_markdown() in page, \
        "regenerate the ledger kinds in docs/runs.md from canonical.runs.ledger_kinds_markdown()"


def test_regression_the_attempt_schema_names_every_harness_reader_and_case_ref_kind():
    # Opik's reader landed without its name in the schema: `runs import` put every Opik attempt in
    # the ledger as an invalid record, while `report` on the file itself counted them.
    from evalconv.runs.readers import RESULTS_REGISTRY, case_refs

    properties = runs.attempt_schema()["properties"]
    assert set(properties["harness"]["properties"]["name"]["enum"]) == set(RESULTS_REGISTRY.readers) | {"evalconv"}
    kinds = {kind for reader in RESULTS_REGISTRY.readers.values() for kind in case_refs(reader)}
    assert set(properties["caseRef"]["properties"]["kind"]["enum"]) == kinds | {"name", "input"}

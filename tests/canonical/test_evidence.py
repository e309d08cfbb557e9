"""Version 2's evidence rules (issue 28 §4), through the CLI, in every canonical format, on one
core and on two."""
from __future__ import annotations

import itertools
import json

import pytest

import evalconv
from conftest import row
from evalconv.canonical.contexts import load_contexts
from evalconv.canonical.findings import CODES
from versioned_sets import CANONICAL, REDACTED, findings, refs, run, v2, write_set

EVIDENCE_CODES = ("evidence-without-snapshot", "evidence-unresolvable", "conversation-unordered",
                  "conversation-without-target-turn", "permission-without-scope", "ambiguous-empty")
_NUMBERS = itertools.count()


def chat(*roles: str, **case) -> dict:
    value = v2(f"chat-{'-'.join(roles)}-{next(_NUMBERS)}", **case)
    value["input"] = {"messages": [{"role": r, "content": f"turn {i}"} for i, r in enumerate(roles)]}
    return value


# (row, the (code, path) findings it must give): every rule and its edges
CASES = [
    (refs("ok-refs", {"source": "kb/refunds", "snapshot": "2024-05-01", "span": {"start": 0, "end": 4}}), []),
    (refs("no-snapshot", {"source": "kb/refunds"}),
     [("evidence-without-snapshot", "$.metadata.case.contextRefs[0].snapshot")]),
    (refs("empty-snapshot", {"source": "kb/refunds", "snapshot": ""}),
     [("evidence-without-snapshot", "$.metadata.case.contextRefs[0].snapshot")]),
    (refs("absent-snapshot", {"source": "kb/refunds", "snapshot": {"$evidence": "absent"}}),
     [("evidence-without-snapshot", "$.metadata.case.contextRefs[0].snapshot")]),
    (refs("redacted-snapshot", {"source": "kb/refunds", "snapshot": REDACTED}), []),
    (refs("empty-source", {"source": "", "snapshot": "1"}, {"source": "kb/x", "snapshot": "1", "span": ""}),
     [("ambiguous-empty", "$.metadata.case.contextRefs[0].source"),
      ("ambiguous-empty", "$.metadata.case.contextRefs[1].span")]),
    (chat("system", "user", "assistant", "user", targetTurn=4), []),
    (chat("user"), []),  # one turn: the reply to produce is the turn under test
    (chat("assistant", "user", targetTurn=2), [("conversation-unordered", "$.input.messages[0].role")]),
    (chat("system", "assistant", "user", targetTurn=3), []),  # a system turn sets the assistant's opening up
    (chat("user", "system", "user", targetTurn=3), [("conversation-unordered", "$.input.messages[1].role")]),
    (chat("user", "tool", targetTurn=2), [("conversation-unordered", "$.input.messages[1].role")]),
    (chat("user", "narrator", targetTurn=2), [("conversation-unordered", "$.input.messages[1].role")]),
    (chat("user", "assistant", "user"), [("conversation-without-target-turn", "$.metadata.case.targetTurn")]),
    (chat("user", "assistant", "user", targetTurn=9), [("conversation-without-target-turn", "$.metadata.case.targetTurn")]),
    (chat("user", "assistant", "user", targetTurn=0), [("conversation-without-target-turn", "$.metadata.case.targetTurn")]),
    (chat("user", "assistant", "user", targetTurn=1), []),  # judges an assistant turn inside the history
    (v2("perm-ok", linkedConcerns=["permission"], permission={"callerRole": "guest", "resourceScope": REDACTED}), []),
    (v2("perm-concern", linkedConcerns=["permission"]), [("permission-without-scope", "$.metadata.case.permission")]),
    (v2("perm-block", permission={"callerRole": "admin"}),
     [("permission-without-scope", "$.metadata.case.permission.resourceScope")]),
    (v2("perm-absent", permission={"callerRole": {"$evidence": "absent"}, "resourceScope": ""}),
     [("permission-without-scope", "$.metadata.case.permission.callerRole"),
      ("ambiguous-empty", "$.metadata.case.permission.resourceScope")]),
]
EMPTY_TURN = chat("user", "assistant", "user", targetTurn=3)
EMPTY_TURN["id"] = EMPTY_TURN["metadata"]["case"]["caseId"] = "empty-turn"
EMPTY_TURN["input"]["messages"][1]["content"] = ""
CASES.append((EMPTY_TURN, [("ambiguous-empty", "$.input.messages[1].content")]))
TOOL_CALL = chat("user", "assistant", "tool", targetTurn=3)
TOOL_CALL["id"] = TOOL_CALL["metadata"]["case"]["caseId"] = "tool-call"
TOOL_CALL["input"]["messages"][1].update(content="", tool_calls=[{"id": "c1", "function": {"name": "lookup"}}])
CASES.append((TOOL_CALL, []))  # an assistant turn that only calls a tool has no content to mark


def _found(path, *extra) -> set[tuple[str, str, str]]:
    return {(f["id"], f["code"], f["path"]) for f in findings(path, *extra)}


@pytest.mark.parametrize("fmt", CANONICAL)
def test_every_evidence_rule_through_the_cli_in_every_canonical_format(tmp_path, fmt):
    path = write_set([value for value, _ in CASES], tmp_path / f"set.{fmt}")
    expected = {(value["id"], code, at) for value, want in CASES for code, at in want}
    assert _found(path) == expected
    result = run("validate", path)
    assert result.exit_code == 1


def test_each_rule_has_a_code_in_the_one_table_and_the_right_severity():
    for code in EVIDENCE_CODES:
        assert code in CODES
    assert CODES["ambiguous-empty"][0] == "warning"
    assert {CODES[c][0] for c in EVIDENCE_CODES if c != "ambiguous-empty"} == {"error"}


def test_version_1_rows_are_not_held_to_version_2s_rules(write_jsonl):
    old = chat("assistant", "user", "assistant")
    del old["metadata"]["case"]["schemaVersion"]
    concern = row("perm-v1", linkedConcerns=["permission"])
    assert findings(write_jsonl([old, concern])) == []


@pytest.mark.parametrize("manifest", ["jsonl", "csv"])
@pytest.mark.parametrize("fmt", CANONICAL)
def test_a_reference_that_does_not_resolve_in_the_manifest_is_an_error(tmp_path, fmt, manifest):
    rows = [refs("resolves", {"source": "kb/refunds", "snapshot": "2024-05-01"}),
            refs("other-snapshot", {"source": "kb/refunds", "snapshot": "2023-01-01"}),
            refs("unknown-source", {"source": "kb/refund", "snapshot": "2024-05-01"}),
            refs("redacted-known", {"source": "kb/shipping", "snapshot": REDACTED}),
            refs("redacted-unknown", {"source": "kb/nothing", "snapshot": REDACTED})]
    path = write_set(rows, tmp_path / f"set.{fmt}")
    listing = tmp_path / f"sources.{manifest}"
    if manifest == "jsonl":
        listing.write_text('{"source": "kb/refunds", "snapshot": "2024-05-01", "title": "Refunds"}\n\n'
                           '{"source": "kb/shipping", "version": "7"}\n', encoding="utf-8")
    else:
        listing.write_text("source,version,title\r\nkb/refunds,2024-05-01,Refunds\r\nkb/shipping,7,Shipping\r\n",
                           encoding="utf-8")
    assert _found(path) == set()  # without a manifest nothing is resolved
    found = findings(path, "--contexts", listing)
    assert {(f["id"], f["code"]) for f in found} == {("other-snapshot", "evidence-unresolvable"),
                                                     ("unknown-source", "evidence-unresolvable"),
                                                     ("redacted-unknown", "evidence-unresolvable")}
    messages = {f["id"]: f["message"] for f in found}
    assert "which lists it at 2024-05-01" in messages["other-snapshot"]
    assert "did you mean 'kb/refunds'?" in messages["unknown-source"]


@pytest.mark.parametrize("text, words", [
    ('{"source": "kb"}\n', "sources.jsonl:1: snapshot: the entry for 'kb' needs its snapshot"),
    ('{"snapshot": "1"}\n{"source": \n', "sources.jsonl:1: source: a manifest entry needs a non-empty source"),
    ('{"source": "kb", "snapshot": "1"}\n[1]\n', "sources.jsonl:2: each line must be an object"),
    ("source,title\nkb,x\n", "sources.jsonl:1: a CSV contexts manifest needs the columns source and snapshot"),
])
def test_regression_a_bad_manifest_is_one_line_naming_file_line_and_field(tmp_path, write_jsonl, text, words):
    listing = tmp_path / "sources.jsonl"
    listing.write_text(text, encoding="utf-8")
    result = run("validate", write_jsonl([v2("a")]), "--contexts", listing)
    assert result.exit_code == 2 and words in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_marker_that_is_not_one_of_the_three_is_a_schema_error(write_jsonl):
    bad = refs("bad-marker", {"source": "kb", "snapshot": {"$evidence": "unknown"}})
    (found,) = findings(write_jsonl([bad]))
    assert found["code"] == "schema" and "is not an evidence marker" in found["message"]


def test_the_rules_run_on_two_cores_as_on_one(tmp_path, small_chunks):
    """Flat memory, a row at a time: the workers apply them, with the manifest, as one core does."""
    values = []
    for i in range(400):
        value, _ = CASES[i % len(CASES)]
        value = json.loads(json.dumps(value))
        value["id"] = value["metadata"]["case"]["caseId"] = f"{value['id']}-{i}"
        values.append(value)
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    listing = tmp_path / "sources.jsonl"
    listing.write_text('{"source": "kb/refunds", "snapshot": "2024-05-01"}\n', encoding="utf-8")
    contexts = load_contexts(str(listing))
    one = evalconv.validate([str(path)], jobs=1, contexts=contexts).to_json()
    two = evalconv.validate([str(path)], jobs=2, contexts=contexts).to_json()
    assert one == two
    codes = {f["code"] for f in one["files"][0]["errors"] + one["files"][0]["warnings"]}
    assert codes == set(EVIDENCE_CODES)
    assert one["files"][0]["schema_versions"] == {"2": 400}

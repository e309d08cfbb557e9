"""promptfoo itself (CLI 0.121.20, offline `echo` provider) loads what evalconv writes: `validate`
passes, the tests it builds are the ones evalconv reads back, and escaped text renders to the
original (an `equals` against the echoed input passes)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

import evalconv
from evalconv.canonical.row import Row
from evalconv.canonical.source import Lines
from evalconv.vendors.promptfoo import files as promptfoo_files
from evalconv.vendors.promptfoo.read import cannot_pass_reason

from interop import require_promptfoo, vendor_fixtures

pytestmark = pytest.mark.interop

FIXTURES, _ = vendor_fixtures("promptfoo")
TRICKY = ["plain", "Hi {{ name }}", "{% if x %}y{% endif %}", "{# note #}", "a {{ b", "file://answer.txt",
          "  padded  ", "line1\nline2", "crlf\r\nend", 'quote " and , comma', "é 日本 🙂", "|a|b|", "007", "",
          "contains:not a type", "equals:x", "=1+1", "tab\there", "100%", "}} stray"]


def _row(i: int, text: str, **case) -> Row:
    """Expected equals input, so promptfoo's own equals passes against the echo provider."""
    case = {"caseId": f"r{i}", "oracleType": "reference-answer", "expectedBehavior": "echo",
            "provenance": "synthetic-perturbation", **case}
    return Row.from_json({"id": f"r{i}", "input": text, "expected": text,
                          "metadata": {"case": case, "tags": ["t", "{{ x }}"], "n": 1.5, "doc": {"k": [1, None]}}})


ROWS = [_row(i, t) for i, t in enumerate(TRICKY)] + [
    Row.from_json({"id": "set", "input": "b", "expected": ["a", "b", "{{ c }}"], "metadata": {"case": {
        "caseId": "set", "oracleType": "acceptable-set", "expectedBehavior": "one of", "provenance": "expert-authored"}}}),
    Row.from_json({"id": "obj", "input": {"question": "q {{ z }}", "ctx": ["a", "b"]}, "metadata": {"case": {
        "caseId": "obj", "oracleType": "expected-behavior-only", "expectedBehavior": "x", "provenance": "expert-authored",
        "evaluator": "human-expert", "reviewerExpertise": "x"}, "ref": "file://x.md"}}),
]


def _run(binary: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(cwd / ".promptfoo"), "NO_COLOR": "1"}
    return subprocess.run([binary, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _evaluate(binary: str, tmp_path: Path, tests_file: str) -> list[dict]:
    prompt = "{% if input is defined %}{{ input }}{% else %}{{ question }}{% endif %}"
    (tmp_path / "wrapper.yaml").write_text(yaml.safe_dump(
        {"prompts": [prompt], "providers": ["echo"], "tests": [f"file://{tests_file}"]}))
    checked = _run(binary, ["validate", "-c", "wrapper.yaml"], tmp_path)
    assert checked.returncode == 0 and "Configuration is valid" in checked.stdout + checked.stderr, checked.stderr[-2000:]
    _run(binary, ["eval", "-c", "wrapper.yaml", "--no-cache", "--no-share", "--no-table",
                  "--no-progress-bar", "-o", "out.json"], tmp_path)
    results = json.loads((tmp_path / "out.json").read_text("utf-8"))["results"]["results"]
    return sorted(results, key=lambda r: r["testIdx"])


def _evalconv_tests(path: Path, kind: str) -> list[dict]:
    """The TestCase dicts evalconv's reader builds before mapping them to rows."""
    with open(path, "rb") as stream:
        lines = Lines(stream, source=str(path), path=str(path))
        reader = {"yaml": promptfoo_files._yaml_tests, "json": promptfoo_files._json_tests,
                  "jsonl": promptfoo_files._jsonl_tests, "csv": promptfoo_files._csv_tests}[kind]
        return [test for test, _, _ in reader(lines, evalconv.reports.ReadReport("promptfoo"))]


@pytest.mark.parametrize("kind", ["yaml", "json", "jsonl", "csv"])
def test_promptfoo_loads_what_evalconv_writes(tmp_path, kind):
    binary = require_promptfoo()
    out = tmp_path / f"tests.{kind}"
    evalconv.write(ROWS, str(out), "promptfoo")
    results = _evaluate(binary, tmp_path, out.name)
    ours = _evalconv_tests(out, kind)
    assert len(results) == len(ours) == len(ROWS)
    for result, test, row in zip(results, ours, ROWS):
        loaded = result["testCase"]
        assert loaded["vars"] == test["vars"], row.id
        assert loaded.get("assert", []) == test.get("assert", []), row.id
        assert loaded.get("metadata", {}) == test.get("metadata", {}), row.id
        if any(cannot_pass_reason(a) for a in test.get("assert", [])):
            assert not result["success"], row.id  # e.g. CSV trims "  padded  ": no cell can check it
        elif row.has_expected and isinstance(row.input, str):
            assert result["response"]["output"] == row.input, row.id
            assert result["success"], (row.id, result.get("error"))
    assert evalconv.read(str(out)).rows == ROWS


@pytest.mark.parametrize("wrapper", sorted(p.name for p in FIXTURES.glob("*.wrapper.yaml")))
def test_fixture_wrappers_still_validate(tmp_path, wrapper):
    binary = require_promptfoo()
    for name in (wrapper, wrapper.removesuffix(".wrapper.yaml")):
        (tmp_path / name).write_bytes((FIXTURES / name).read_bytes())
    assert _run(binary, ["validate", "-c", wrapper], tmp_path).returncode == 0


# --- the exported assertions mean what the oracle means (the config evalconv writes, as written) ---

def _case(row_id: str, input_: str, expected, oracle: str = "reference-answer", **case) -> Row:
    profile = {"caseId": row_id, "oracleType": oracle, "expectedBehavior": "x", "provenance": "expert-authored", **case}
    value = {"id": row_id, "input": input_, "metadata": {"case": profile}}
    if expected is not None:
        value["expected"] = expected
    return Row.from_json(value)


# (row, must promptfoo pass it?) The echo provider answers with the input itself.
MEANING = [
    (_case("exact-right", "Paris", "Paris"), True),
    (_case("exact-wrong", "Paris is the capital", "Paris"), False),
    (_case("exact-case", "paris", "Paris"), False),
    (_case("template-right", "Total {{ 7*7 }}", "Total {{ 7*7 }}"), True),
    (_case("template-wrong", "Total 49", "Total {{ 7*7 }}"), False),
    (_case("file-right", "file://answer.txt", "file://answer.txt"), True),
    (_case("set-member", "b", ["a", "b", "{{ c }}"], "acceptable-set"), True),
    (_case("set-template-member", "{{ c }}", ["a", "{{ c }}"], "acceptable-set"), True),
    (_case("set-contains-only", "it is b, surely", ["a", "b"], "acceptable-set"), False),
    (_case("json-right", '{"total": 2.0, "items": [1, "x"]}', {"items": [1, "x"], "total": 2}), True),
    (_case("json-wrong", '{"total": 3}', {"total": 2}), False),
    (_case("tools-none", "no tool call", [{"name": "lookup_order"}], "expected-tool-calls"), False),
    (_case("human-right", "Paris", "Paris", evaluator="human-expert", reviewerExpertise="geo"), False),
    (_case("rubric-human", "Paris", None, "rubric", evaluator="rubric-human", evaluationCriteria=["Paris"]), False),
    (_case("behavior-only", "Paris", None, "expected-behavior-only"), False),
    (_case("final-state", "Paris", {"state": "Paris"}, "expected-final-state"), False),
]


@pytest.mark.parametrize("kind", ["yaml", "csv"])
def test_exported_assertions_mean_what_the_oracle_means(tmp_path, kind):
    binary = require_promptfoo()
    rows = [r for r, _ in MEANING]
    # A CSV cell is text: an object reference cannot be written there, so that test cannot pass.
    must = {row.id: must_pass and not (kind == "csv" and row.id == "json-right") for row, must_pass in MEANING}
    report = evalconv.write(rows, str(tmp_path / f"cases.{kind}"), "promptfoo", config=str(tmp_path / "promptfooconfig.yaml"))
    checked = _run(binary, ["validate", "-c", "promptfooconfig.yaml"], tmp_path)
    assert checked.returncode == 0 and "Configuration is valid" in checked.stdout + checked.stderr, checked.stderr[-2000:]
    _run(binary, ["eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-share", "--no-table",
                  "--no-progress-bar", "-o", "out.json"], tmp_path)
    results = sorted(json.loads((tmp_path / "out.json").read_text("utf-8"))["results"]["results"],
                     key=lambda r: r["testIdx"])
    assert len(results) == len(MEANING)
    outcome = {row.id: result["success"] for (row, _), result in zip(MEANING, results)}
    assert outcome == must
    for (row, _), result in zip(MEANING, results):
        if row.id == "tools-none" and kind == "yaml":  # the order check needs a trace; without one it errs
            assert "No trace data available" in result["error"], row.id
            continue
        assert result["response"]["output"] == row.input, row.id  # the prompt is {{input}}, rendered literally
        if row.id in ("human-right", "rubric-human", "behavior-only"):
            assert "evalconv: this case needs" in result["gradingResult"]["reason"], row.id
        if kind == "csv":  # promptfoo's CSV loader keeps the envelope cell verbatim
            envelope = json.loads(result["testCase"]["metadata"]["evalconv"])
            assert envelope["metadata"] == row.metadata, row.id
    assert any("always fails" in note for note in report.notes)
    assert evalconv.read(str(tmp_path / f"cases.{kind}")).rows == rows


def test_regression_tool_call_checks_load_and_never_pass_without_a_trace(tmp_path):
    """Issue 14: promptfoo 0.121.20 accepts the order and absence checks evalconv writes
    (`validate`), and without tracing (the echo provider emits no spans) they fail, never pass."""
    binary = require_promptfoo()
    def tools_row(row_id: str, calls: list) -> Row:
        return Row.from_json({"id": row_id, "input": "Refund order 7", "expected": calls, "metadata": {"case": {
            "caseId": row_id, "oracleType": "expected-tool-calls", "expectedBehavior": "Calls the tools in order.",
            "provenance": "expert-authored"}}})
    rows = [tools_row("ordered", [{"name": "lookup_order"}, {"name": "refund", "arguments": {"id": 7}}]),
            tools_row("none", [])]
    evalconv.write(rows, str(tmp_path / "tests.yaml"), "promptfoo")
    results = _evaluate(binary, tmp_path, "tests.yaml")
    assert [r["success"] for r in results] == [False, False]
    assert "No trace data available for trajectory:tool-sequence" in results[0]["error"]
    assert "No trace data available for trajectory:tool-used" in results[1]["error"]
    assert [a["type"] for a in results[1]["testCase"]["assert"]] == ["not-trajectory:tool-used"]

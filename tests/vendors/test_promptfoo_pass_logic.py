"""Issue 24 §1: what a pack row's `passLogic` says is what the promptfoo export checks, for every
starter row of every shipped pack, under every evaluator its family offers. The words are held to
the assertion kinds the writer chooses, and the checks promptfoo can run offline are run with
promptfoo itself (`echo`: the output is the input), on outputs the pass logic passes and fails."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import evalconv
from evalconv.canonical.pack import builtin_packs
from evalconv.canonical.row import Row
from evalconv.vendors.promptfoo.oracle import plan
from evalconv.vendors.promptfoo.read import cannot_pass_reason
from interop import require_promptfoo

PACKS = builtin_packs().all()
# What each kind of check promptfoo runs must be stated as in the pass logic.
STATES = {
    "equals": re.compile(r"\bequals\b"),
    "member": re.compile(r"\bone (member )?of the expected\b"),
    "judged-reference": re.compile(r"\bstates the expected (fact|value) and agrees with it\b"),
    "criteria": re.compile(r"\b(all criteria|every criterion) met\b"),
    "calls-in-order": re.compile(r"\bexactly these calls in this order\b"),
}
# Promises no promptfoo check the writer emits keeps: a pass logic saying them would pass
# replies promptfoo fails, or the reverse.
PROMISES = re.compile(r"contains the expected|case-insensitiv|normalis|\bat least \d|calls between them are allowed")


def _starter_rows() -> list[tuple[str, Row]]:
    out = []
    for pack in PACKS:
        for fam in pack.case_families:
            for evaluator in (fam.evaluator, *fam.alternatives):
                for value in pack.rows([fam], evaluator):
                    out.append((f"{pack.id}/{fam.id}/{evaluator}/{value['id']}", Row.from_json(value)))
    return out


ROWS = _starter_rows()


def _kind(row: Row) -> str:
    """The check promptfoo runs for a row, in the words above ('person' when none can pass)."""
    asserts = plan(row).asserts
    types = [a["type"] for a in asserts]
    if any(cannot_pass_reason(a) for a in asserts):
        return "person"
    if types[0] == "equals":
        return "equals"
    if types[0] == "javascript":
        return "member"
    if types[0] == "factuality":
        return "judged-reference"
    if types[0] == "llm-rubric":
        return "criteria"
    if types[:2] == ["tool-call-f1", "trajectory:tool-sequence"] or types == ["not-trajectory:tool-used"]:
        return "calls-in-order"
    raise AssertionError(f"no pass-logic wording for {types}")


@pytest.mark.parametrize("where,row", ROWS, ids=[w for w, _ in ROWS])
def test_every_pack_starter_row_pass_logic_states_what_promptfoo_checks(where, row):
    logic = row.case.get("passLogic")
    kind = _kind(row)
    if kind == "person":  # promptfoo writes the check that always fails: a person or a state check grades it
        return
    assert isinstance(logic, str), where
    assert STATES[kind].search(logic), (where, kind, logic)
    assert not PROMISES.search(logic), (where, logic)


def _as_output(expected) -> str:
    return expected if isinstance(expected, str) else json.dumps(expected)


def _outputs(row: Row) -> list[tuple[str, bool]]:
    """(an output, must promptfoo pass it?) for the checks promptfoo runs without a model."""
    kind = _kind(row)
    if kind == "equals":
        exact = _as_output(row.expected)
        return [(exact, True), (f"The answer is {exact}.", False), (exact.swapcase(), exact.swapcase() == exact)]
    if kind == "member":
        return [*((m, True) for m in row.expected), (f"It is {row.expected[0]}.", False),
                (row.expected[0].upper(), row.expected[0].upper() in row.expected)]
    if kind == "person":
        return [(_as_output(row.expected) if row.has_expected else "a reply", False)]
    return []  # model-graded or traced: needs a grader or a trace, checked by test_promptfoo_oracle


@pytest.mark.interop
def test_starter_rows_pass_and_fail_in_promptfoo_as_their_pass_logic_says(tmp_path):
    binary = require_promptfoo()
    cases, must = [], []
    for where, row in ROWS:
        for output, passes in _outputs(row):
            value = row.to_json()
            value["id"] = value["metadata"]["case"]["caseId"] = f"{row.id}-{len(cases)}"
            value["input"] = output  # the echo provider answers with the input
            cases.append(Row.from_json(value))
            must.append((where, output, passes))
    assert any(p for _, _, p in must) and not all(p for _, _, p in must)
    evalconv.write(cases, str(tmp_path / "tests.yaml"), "promptfoo", config=str(tmp_path / "promptfooconfig.yaml"))
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"}
    done = subprocess.run([binary, "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-share", "--no-table",
                           "--no-progress-bar", "-o", "out.json"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    out = Path(tmp_path / "out.json")
    assert out.exists(), done.stderr[-3000:]
    results = sorted(json.loads(out.read_text("utf-8"))["results"]["results"], key=lambda r: r["testIdx"])
    assert len(results) == len(must)
    wrong = [(where, output, passes) for (where, output, passes), r in zip(must, results) if r["success"] != passes]
    assert not wrong

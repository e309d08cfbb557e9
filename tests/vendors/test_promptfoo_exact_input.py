"""What reaches the model is exactly the canonical input (issue 14), proved with promptfoo 0.121.20
itself: the `--config` evalconv writes, the offline `echo` provider (its output is the rendered
prompt), and hostile strings batched into one promptfoo run per hypothesis example."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

import evalconv
from evalconv.canonical.row import Row
from interop import require_promptfoo

pytestmark = pytest.mark.interop

FRAGMENTS = ["{{", "}}", "{%", "%}", "{#", "#}", "{{ input }}", "{{ policyholder }}", "{{ letter }}",
             "{% raw %}", "{% endraw %}", "{%- endraw -%}", "{{ \"{{\" }}", "{% if x %}", "{{ env.HOME }}",
             "file://", "package:", "\n", "\r\n", " ", "\t", "\"", "\\", "|", "-", "é", "🙂", "$1,000"]
HOSTILE = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.characters(min_codepoint=32, max_codepoint=126)),
                   min_size=1, max_size=12).map("".join)
KNOWN = ["Dear {{ policyholder }}, your claim is {{ status }}.", "ends with a newline\n", "two\n\n",
         "{% raw %}{{ x }}{% endraw %}", "{{ \"{{\" }} policyholder }}", "file://letter.txt", "{{{", "}}"]


def _rows(texts: list[str]) -> list[Row]:
    def row(row_id: str, value, oracle: str = "expected-behavior-only") -> Row:
        return Row.from_json({"id": row_id, "input": value, "metadata": {"case": {
            "caseId": row_id, "oracleType": oracle, "expectedBehavior": "x", "provenance": "synthetic-perturbation",
            "evaluator": "human-expert", "reviewerExpertise": "x"}}})
    rows = []
    for i, text in enumerate(texts):
        rows.append(row(f"text-{i}", text))
        rows.append(row(f"object-{i}", {"letter": text, "policyholder": "Dana Ortiz"}))
        rows.append(row(f"chat-{i}", {"messages": [{"role": "system", "content": text},
                                                   {"role": "user", "content": "Hello " + text}]}))
    return rows


def _nested_file_reference(value, depth: int = 0) -> bool:
    """promptfoo loads a `file://` string inside a var's list or object at load time (a top-level
    var it only renders): such an input is carried, not passed."""
    if isinstance(value, str):
        return depth >= 2 and value.startswith("file://")
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return any(_nested_file_reference(v, depth + 1) for v in children)


def _seen(binary: str, tmp: Path, rows: list[Row]) -> list[str]:
    """The prompt promptfoo renders for each row, in order; the rows whose input is carried
    (promptfoo cannot hold it) are left out of the run, and the report must say so."""
    cannot = {row.id for row in rows if _nested_file_reference(row.input)}
    report = evalconv.write(rows, str(tmp / "all.yaml"), "promptfoo")
    assert {i for (path, _), ids in report.carried.entries.items() if path == "$.input" for i in ids} == cannot
    rows[:] = [row for row in rows if row.id not in cannot]
    evalconv.write(rows, str(tmp / "tests.yaml"), "promptfoo", config=str(tmp / "promptfooconfig.yaml"))
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(tmp / ".promptfoo"), "NO_COLOR": "1"}
    done = subprocess.run([binary, "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-share", "--no-table",
                           "--no-progress-bar", "-o", "out.json"], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=300)
    assert (tmp / "out.json").exists(), done.stderr[-3000:]
    results = json.loads((tmp / "out.json").read_text("utf-8"))["results"]["results"]
    assert len(results) == len(rows), done.stderr[-3000:]
    return [r["response"]["output"] for r in sorted(results, key=lambda r: r["testIdx"])]


# A few examples, each one promptfoo run over many strings, and no shrinking (each step would be a
# promptfoo run): a failure prints the whole batch, and the explicit example pins known cases.
@settings(max_examples=2, deadline=None, phases=[Phase.explicit, Phase.generate])
@given(texts=st.lists(HOSTILE, min_size=1, max_size=15))
@example(texts=KNOWN)
def test_the_model_sees_exactly_the_input_in_a_mixed_set(tmp_path_factory, texts):
    binary = require_promptfoo()
    tmp = tmp_path_factory.mktemp("exact")
    rows = _rows(texts)
    for row, seen in zip(rows, _seen(binary, tmp, rows)):
        if isinstance(row.input, str):
            assert seen == row.input, (row.id, row.input, seen)
        elif "messages" in row.input:  # a chat provider parses this JSON list as the role messages
            assert json.loads(seen) == row.input["messages"], (row.id, seen)
        else:
            assert json.loads(seen) == row.input, (row.id, seen)

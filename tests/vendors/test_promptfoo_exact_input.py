"""What reaches the model is exactly the canonical input (issue 14), proved with promptfoo 0.121.20
itself: the `--config` evalconv writes, the offline `echo` provider (its output is the rendered
prompt), and hostile strings batched into one promptfoo run per hypothesis example."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

import evalconv
from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from interop import require_promptfoo

pytestmark = pytest.mark.interop

FRAGMENTS = ["{{", "}}", "{%", "%}", "{#", "#}", "{{ input }}", "{{ policyholder }}", "{{ letter }}",
             "{% raw %}", "{% endraw %}", "{%- endraw -%}", "{{ \"{{\" }}", "{% if x %}", "{{ env.HOME }}",
             "file://", "package:", "\n", "\r\n", " ", "\t", "\"", "\\", "|", "-", "é", "🙂", "$1,000",
             # JSON-looking text (issue 24): promptfoo's stored results re-serialise it; the prompt must not
             '{"amount": 25.0, "account": 12345678901234567890}', "[ 1.50, 2.0 ]", '{"a": 1, "a": 2}', "$ref",
             '{"$ref": "#/x"}', "{{ 7*7 }}", "{% raw %}{% endraw %}"]
HOSTILE = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.characters(min_codepoint=32, max_codepoint=126)),
                   min_size=1, max_size=12).map("".join)
KNOWN = ["Dear {{ policyholder }}, your claim is {{ status }}.", "ends with a newline\n", "two\n\n",
         "{% raw %}{{ x }}{% endraw %}", "{{ \"{{\" }} policyholder }}", "file://letter.txt", "{{{", "}}",
         '{"amount": 25.0, "account": 12345678901234567890}', "[ 1.50, 2.0 ]", '{"a": 1, "a": 2}',
         "{% endraw %}{{ 7*7 }}", "{% raw %}{% endraw %}{{ 7*7 }}", "$ref"]


def _case(row_id: str, value, expected=(), oracle: str = "expected-behavior-only", **extra) -> Row:
    case = {"caseId": row_id, "oracleType": oracle, "expectedBehavior": "x", "provenance": "synthetic-perturbation",
            **({"evaluator": "human-expert", "reviewerExpertise": "x"} if oracle == "expected-behavior-only" else {}),
            **extra}
    out = {"id": row_id, "input": value, "metadata": {"case": case}}
    if expected != ():
        out["expected"] = expected
    return Row.from_json(out)


def _rows(texts: list[str]) -> list[Row]:
    rows = []
    for i, text in enumerate(texts):
        rows.append(_case(f"text-{i}", text))
        rows.append(_case(f"object-{i}", {"letter": text, "policyholder": "Dana Ortiz"}))
        rows.append(_case(f"chat-{i}", {"messages": [{"role": "system", "content": text},
                                                     {"role": "user", "content": "Hello " + text}]}))
        # values promptfoo would change as vars: numbers JavaScript rounds, a $ref key, a file:// item, a null
        rows.append(_case(f"value-{i}", {"letter": text, "amount": 25.0, "account": 12345678901234567890,
                                         "doc": {"$ref": text}, "files": ["file://" + text], "none": None}))
        # the assertion value renders to itself: equals against the echoed input passes
        rows.append(_case(f"ref-{i}", text, text, "reference-answer", evaluator="exact-or-programmatic"))
        rows.append(_case(f"set-{i}", text, ["other", text], "acceptable-set", evaluator="exact-or-programmatic"))
        rows.append(_case(f"null-{i}", text, None, "reference-answer", evaluator="llm-judge"))
    return rows


def _nested_file_reference(value, depth: int = 0) -> bool:
    """promptfoo loads a `file://` string inside a var's list or object when it reads the tests
    (a top-level var it only renders)."""
    if isinstance(value, str):
        return depth >= 2 and value.startswith("file://")
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return any(_nested_file_reference(v, depth + 1) for v in children)


def _compact(value) -> str:
    """JSON.stringify's text (what Nunjucks' `dump` writes) for values JavaScript holds exactly."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _shown(value):
    return value["messages"] if isinstance(value, dict) and list(value) == ["messages"] else value


def _run(binary: str, tmp: Path, rows: list[Row]) -> tuple[list[dict], list[dict], evalconv.reports.LossReport]:
    """promptfoo's results, in order, for the rows written with `--config`, and the tests written."""
    report = evalconv.write(rows, str(tmp / "tests.yaml"), "promptfoo", config=str(tmp / "promptfooconfig.yaml"))
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(tmp / ".promptfoo"), "NO_COLOR": "1"}
    checked = subprocess.run([binary, "validate", "-c", "promptfooconfig.yaml"], cwd=tmp, env=env,
                             capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    done = subprocess.run([binary, "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-share", "--no-table",
                           "--no-progress-bar", "-o", "out.json"], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=300)
    assert (tmp / "out.json").exists(), done.stderr[-3000:]
    results = json.loads((tmp / "out.json").read_text("utf-8"))["results"]["results"]
    assert len(results) == len(rows), done.stderr[-3000:]
    tests = yaml.safe_load((tmp / "tests.yaml").read_text("utf-8"))
    return sorted(results, key=lambda r: r["testIdx"]), tests, report


# A few examples, each one promptfoo run over many strings, and no shrinking (each step would be a
# promptfoo run): a failure prints the whole batch, and the explicit example pins known cases.
@settings(max_examples=2, deadline=None, phases=[Phase.explicit, Phase.generate])
@given(texts=st.lists(HOSTILE, min_size=1, max_size=15))
@example(texts=KNOWN)
def test_the_model_sees_exactly_the_input_in_a_mixed_set(tmp_path_factory, texts):
    """The echo provider answers with the rendered prompt: it is compared byte for byte (not parsed,
    not through an assertion, which promptfoo renders and compares its own way)."""
    binary = require_promptfoo()
    tmp = tmp_path_factory.mktemp("exact")
    rows = _rows(texts)
    results, tests, report = _run(binary, tmp, rows)
    carried = {i for (path, _), ids in report.carried.entries.items() if path == "$.input" for i in ids}
    for row, result, test in zip(rows, results, tests):
        seen = result["response"]["output"]
        if isinstance(row.input, str):
            assert seen == row.input, (row.id, row.input, seen)
        elif row.id.startswith("value-") or _nested_file_reference(row.input):
            # passed as its exact JSON text; the value travels in the envelope
            assert row.id in carried and list(test["vars"]) == ["input"], row.id
            assert seen == jsonvalue.dumps(_shown(row.input)), (row.id, seen)
        else:
            assert row.id not in carried, row.id
            assert seen == _compact(_shown(row.input)), (row.id, seen)
        if row.id.startswith(("ref-", "set-")):  # the assertion value rendered to itself
            assert result["success"], (row.id, row.expected, result["gradingResult"]["reason"])
        elif row.id.startswith("null-"):
            assert not result["success"] and "expected is null" in result["gradingResult"]["reason"], row.id
    assert evalconv.read(str(tmp / "tests.yaml")).rows == rows

"""Format detection: --from, then the extension (longest suffix first), then the content."""
from __future__ import annotations

import pytest

import evalconv
from conftest import ROOT, row
from evalconv.api import detect
from evalconv.canonical import jsonvalue
from evalconv.registry import REGISTRY

CANONICAL_LINE = (jsonvalue.dumps(row("a")) + "\n").encode()


@pytest.mark.parametrize("name,head,expected", [
    ("set.jsonl", CANONICAL_LINE, "jsonl"),
    ("set.json", b"[" + CANONICAL_LINE + b"]", "json"),
    ("set.csv", (ROOT / "golden_roundtrips" / "support-agent.csv").read_bytes()[:8192], "csv"),
    ("set.txt", CANONICAL_LINE, "jsonl"),
    ("set.txt", b"  [\n", "json"),
    ("set.langsmith.jsonl", b"", "langsmith"),
    ("set.braintrust.jsonl", b"", "braintrust"),
    ("set.deepeval.json", b"", "deepeval"),
])
def test_detection(name, head, expected):
    if expected not in REGISTRY.names():
        pytest.skip(f"{expected} is not registered")
    assert detect(name, head).name == expected


def test_from_wins_over_everything():
    assert detect("set.csv", CANONICAL_LINE, from_="jsonl").name == "jsonl"


def test_undetectable_content_needs_from():
    with pytest.raises(evalconv.UsageError) as err:
        detect("notes.txt", b"just some words\n")
    assert "--from" in str(err.value)


def test_writing_nan_built_in_code_is_a_clear_error(tmp_path):
    bad = evalconv.Row.from_json(row(expected=(float("nan"),)))
    with pytest.raises(evalconv.WriteError) as err:
        evalconv.write([bad], str(tmp_path / "o.jsonl"), "jsonl")
    assert "row 'cs-1'" in str(err.value) and not (tmp_path / "o.jsonl").exists()

"""Issue 26 item 6: a row `evalconv import` gave a placeholder expected behaviour is a validator
warning, a `stats` gap and a mark in every written format, like a starter row; reading back drops
the mark."""
from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

import evalconv
from evalconv.canonical.review import PLACEHOLDER_MARK
from evalconv.cli import cli

SHEET = "question,answer\r\nWhat is the refund window?,30 days\r\nCan you ship to Mars?,\r\n"
MARKED = ["promptfoo", "deepeval", "langsmith", "braintrust", "inspect", "hf"]
EXT = {"promptfoo": ".yaml", "deepeval": ".deepeval.json", "langsmith": ".langsmith.jsonl",
       "braintrust": ".braintrust.jsonl", "inspect": ".inspect.jsonl", "hf": "-hf"}


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def imported(tmp_path):
    sheet = tmp_path / "team.csv"
    sheet.write_text(SHEET, encoding="utf-8")
    out = tmp_path / "set.csv"
    result = run("import", sheet, "-o", out)
    assert result.exit_code == 0, result.output
    assert "2 placeholder expected behaviours for a reviewer to write" in result.stderr
    return out


def test_placeholder_behavior_is_a_validate_warning(imported):
    result = run("validate", imported, "--format", "json")
    assert result.exit_code == 0
    findings = json.loads(result.stdout)["files"][0]["warnings"] if "files" in json.loads(result.stdout) \
        else json.loads(result.stdout)["warnings"]
    assert [f["code"] for f in findings] == ["placeholder-behavior", "placeholder-behavior"]
    assert {f["path"] for f in findings} == {"$.metadata.case.expectedBehavior"}
    text = run("validate", imported)
    assert "2 warnings, 2 placeholder expected behaviours to write: ok" in text.output


def test_placeholder_behavior_is_a_stats_gap(imported):
    data = json.loads(run("stats", imported, "--format", "json").stdout)
    gap = next(g for g in data["gaps"] if g["code"] == "placeholder-behavior")
    assert gap["count"] == 2 and len(gap["ids"]) == 2
    assert run("stats", imported, "--fail-on", "placeholder-behavior").exit_code == 1


def test_a_reviewed_behavior_is_neither_warned_nor_marked(imported, tmp_path):
    text = imported.read_text(encoding="utf-8")
    reviewed = tmp_path / "reviewed.csv"
    first = text.splitlines()[1].split(",")[5]
    reviewed.write_text(text.replace(first, "Say the refund window is 30 days.", 1), encoding="utf-8")
    findings = json.loads(run("validate", reviewed, "--format", "json").stdout)
    assert json.dumps(findings).count("placeholder-behavior") == 1
    out = tmp_path / "out.braintrust.jsonl"
    assert run(reviewed, "--to", "braintrust", "-o", out).exit_code == 0
    tags = [json.loads(line)["tags"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert ["placeholder-behavior" in t for t in tags] == [False, True]


def _marks(to: str, out) -> list[bool]:
    """Per row: does the written file carry the placeholder mark where the tool's user sees it?"""
    if to == "promptfoo":
        loaded = yaml.safe_load(out.read_text(encoding="utf-8"))
        tests = loaded["tests"] if isinstance(loaded, dict) else loaded
        return [t["description"].startswith("[placeholder expected behaviour, not a reviewed answer] ") for t in tests]
    if to == "deepeval":
        return [g["comments"] == PLACEHOLDER_MARK for g in json.loads(out.read_text(encoding="utf-8"))]
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if to != "hf" else []
    if to in ("langsmith", "inspect"):
        return [line["metadata"]["starter_example"] == PLACEHOLDER_MARK for line in lines]
    if to == "braintrust":
        return ["placeholder-behavior" in line["tags"] for line in lines]
    card = (out / "README.md").read_text(encoding="utf-8")
    return [card.count("`evalconv import` wrote**") == 1] * 2


@pytest.mark.parametrize("to", MARKED)
def test_every_written_format_marks_the_placeholder_and_reading_back_drops_it(imported, tmp_path, to):
    out = tmp_path / f"out{EXT[to]}"
    result = run(imported, "--to", to, "-o", out)
    assert result.exit_code == 0, result.output
    assert _marks(to, out) == [True, True]
    back = tmp_path / "back.csv"
    assert run(out, "--from", to, "--to", "csv", "-o", back).exit_code == 0
    assert back.read_bytes() == imported.read_bytes()
    assert [r.to_json() for r in evalconv.read(str(out), from_=to).rows] == \
        [r.to_json() for r in evalconv.read(str(imported)).rows]


def test_promptfoo_report_notes_the_placeholder_rows(imported, tmp_path):
    report = tmp_path / "report.json"
    assert run(imported, "--to", "promptfoo", "-o", tmp_path / "out.yaml", "--report", report).exit_code == 0
    assert "placeholder expected behaviour evalconv import wrote" in report.read_text(encoding="utf-8")


@pytest.mark.interop
def test_deepeval_and_inspect_loaders_show_the_placeholder_mark(imported, tmp_path, monkeypatch):
    monkeypatch.setenv("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
    monkeypatch.setenv("DEEPEVAL_DISABLE_DOTENV", "1")
    from interop import require_module
    deepeval, inspect = require_module("deepeval.dataset"), require_module("inspect_ai.dataset")
    golden_file, sample_file = tmp_path / "out.deepeval.json", tmp_path / "out.inspect.jsonl"
    assert run(imported, "--to", "deepeval", "-o", golden_file).exit_code == 0
    assert run(imported, "--to", "inspect", "-o", sample_file).exit_code == 0
    monkeypatch.chdir(tmp_path)  # DeepEval writes into the working directory
    dataset = deepeval.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(golden_file))
    assert [g.comments for g in dataset.goldens] == [PLACEHOLDER_MARK] * 2
    samples = inspect.json_dataset(str(sample_file))
    assert [s.metadata["starter_example"] for s in samples] == [PLACEHOLDER_MARK] * 2

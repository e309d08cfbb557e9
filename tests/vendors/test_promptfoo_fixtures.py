"""The hand-written promptfoo files of the public fixture set read into valid canonical rows that
keep the facts promptfoo itself made of them (MANIFEST.json, from `promptfoo eval` with echo)."""
from __future__ import annotations

from pathlib import Path

import pytest

import evalconv
from interop import vendor_fixtures

FIXTURES, MANIFEST = vendor_fixtures("promptfoo")
FILES = [f for f in MANIFEST["files"] if f["rows"]]


def _local(manifest_path: str) -> Path:
    return FIXTURES / manifest_path.removeprefix("promptfoo/")


@pytest.mark.parametrize("entry", FILES, ids=[f["path"] for f in FILES])
def test_fixture_reads_into_valid_rows_with_the_manifest_facts(entry):
    result = evalconv.read(str(_local(entry["path"])))
    assert result.format == "promptfoo"
    assert result.log.error_count == 0, [e.to_json() for e in result.log.errors]
    assert len(result.rows) == entry["rows"]
    for fact in entry["facts"]:
        row = result.rows[fact["row"]]
        case = row.case
        assert row.id == fact["id"]["value"] and fact["id"]["field"] == "metadata.case_id"
        assert case["provenance"] == "imported"
        assert case["scenario"] == fact["locator"]["description"]
        vars_ = fact["input"]["value"]
        assert row.input == (vars_["input"] if list(vars_) == ["input"] else vars_)
        promptfoo = case["extensions"]["promptfoo"]
        assert promptfoo["assert"] == fact["expected"]["value"]  # defaultTest already merged in
        assert promptfoo.get("threshold") == fact.get("threshold")
        assert {k: v for k, v in row.metadata.items() if k != "case"} == fact["metadata"]


def test_inferred_oracles_of_tests_yaml():
    rows = {r.id: r for r in evalconv.read(str(FIXTURES / "tests.yaml")).rows}
    catalog, tools, privacy = rows["ts-catalog-003"], rows["ts-tools-004"], rows["ts-privacy-006"]
    assert catalog.expected == "BC65-SLT" and catalog.case["oracleType"] == "reference-answer"
    assert tools.expected == [{"name": "lookup_order"}] and tools.case["oracleType"] == "expected-tool-calls"
    assert privacy.case["oracleType"] == "rubric" and privacy.case["evaluator"] == "llm-judge"
    assert privacy.case["evaluationCriteria"][0].startswith("Declines to disclose")
    assert rows["ts-extract-005"].case["oracleType"] == "expected-behavior-only"
    assert not rows["ts-extract-005"].has_expected


def test_csv_lists_and_thresholds():
    row = evalconv.read(str(FIXTURES / "tests.csv")).rows[1]
    assert row.metadata["tags"] == ["returns"]
    assert row.case["extensions"]["promptfoo"]["assert"][0] == {"type": "contains-any", "value": ["exchange", "store credit"]}
    assert row.case["extensions"]["promptfoo"]["threshold"] == 1


def test_config_notes_what_it_does_not_read():
    report = evalconv.read(str(FIXTURES / "project" / "promptfooconfig.yaml")).report
    assert any("prompts" in note for note in report.notes)
    assert any("escalations.yaml" in note for note in report.notes)


@pytest.mark.parametrize("entry", FILES, ids=[f["path"] for f in FILES])
def test_fixture_survives_canonical_and_back(tmp_path, entry):
    rows = evalconv.read(str(_local(entry["path"]))).rows
    out = tmp_path / "again.yaml"
    report = evalconv.write(rows, str(out), "promptfoo")
    again = evalconv.read(str(out))
    assert not report.lossy and again.rows == rows

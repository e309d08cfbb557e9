"""The round-trip gate fails on an unreported loss and passes on an exactly reported one."""
from __future__ import annotations

import json

from click.testing import CliRunner

from fake_formats import GOLDEN, SCENARIO

from evalconv.cli import cli


def gate(*args):
    return CliRunner().invoke(cli, ["roundtrip", *map(str, args)], catch_exceptions=False)


def test_unreported_loss_fails_naming_file_row_path_and_route(broken_formats):
    result = gate(GOLDEN, "--via", "dishonest")
    assert result.exit_code == 1
    assert f"{GOLDEN}: via dishonest: cs-warranty-judgement {SCENARIO}: changed, but the loss report does not say so" in result.stderr
    assert "fail" in result.stdout


def test_exactly_reported_loss_passes_and_strict_fails_it(broken_formats):
    result = gate(GOLDEN, "--via", "honest")
    assert result.exit_code == 0 and "lossy" in result.stdout
    strict = gate(GOLDEN, "--via", "honest", "--strict")
    assert strict.exit_code == 1 and "lossy!" in strict.stdout


def test_reporting_a_loss_that_did_not_happen_fails(broken_formats):
    result = gate(GOLDEN, "--via", "boastful")
    assert result.exit_code == 1 and "reported as dropped, but came back unchanged" in result.stderr


def test_canonical_routes_pass_and_json_output_equals_the_library():
    from evalconv import roundtrip
    result = gate(GOLDEN, "--via", "csv", "--via", "json", "--via", "jsonl", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == roundtrip.check([str(GOLDEN)], via=["csv", "json", "jsonl"]).to_json()


def test_junit_has_a_case_per_row_and_route_with_failures_named(broken_formats, tmp_path):
    from xml.etree import ElementTree as ET
    junit = tmp_path / "rt.xml"
    gate(GOLDEN, "--via", "jsonl", "--via", "dishonest", "--junit", junit)
    cases = ET.parse(junit).getroot().iter("testcase")
    by_name = {c.get("name"): c for c in cases}
    assert len(by_name) == 20
    assert by_name["jsonl: cs-warranty-judgement"].find("failure") is None
    failure = by_name["dishonest: cs-warranty-judgement"].find("failure")
    assert failure is not None and SCENARIO in failure.get("message")


def test_an_invalid_set_fails_the_gate(write_jsonl):
    from conftest import row
    path = write_jsonl([row("a"), row("a")])
    result = gate(path, "--via", "jsonl")
    assert result.exit_code == 1 and "the set itself is invalid" in result.stderr


def test_unreadable_set_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[", encoding="utf-8")
    result = gate(bad, "--via", "jsonl")
    assert result.exit_code == 2 and "bad.json" in result.stderr


def test_a_route_that_cannot_read_is_refused():
    result = gate(GOLDEN, "--via", "nope")
    assert result.exit_code == 2 and "unknown format 'nope'" in result.stderr


def test_a_gate_that_finds_no_sets_does_not_pass(tmp_path):
    empty = tmp_path / "sets"
    empty.mkdir()
    assert gate(empty).exit_code == 2 and "no set files found" in gate(empty).stderr
    validate = CliRunner().invoke(cli, ["validate", str(empty)])
    assert validate.exit_code == 2 and "no set files found" in validate.stderr

"""The contract every registered format keeps, checked for each one the registry finds (no list
here: a new format package is picked up as it lands). This is the checklist in CONTRIBUTING.md."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import evalconv
from conftest import ROOT
from evalconv.cli import cli
from evalconv.registry import REGISTRY
from evalconv.roundtrip import route

GOLDEN = ROOT / "golden_roundtrips"
FORMATS = [f.name for f in REGISTRY.all()]
ROUND_TRIPS = [(f.name, suffix) for f in REGISTRY.all() if f.can_read and f.can_write
               for suffix in ([s for v in f.variants for s in v.suffixes[:1]] or [f.output_suffix])]
READERS = [f.name for f in REGISTRY.all() if f.can_read]

# Heads that no format should choke on: every golden file whole and cut short, and junk.
HEADS = [""] + ["\ufeff", "\x00\x01\x02binary", "[", "{", '[{"input": "q", "expected', "- vars: [", 'a,"b\n',
                "\r\n\r\n", "id\n", "{\"a\": {\"b\": [1, 2, {\"c\": \"\\\"", "]]]}}}"]
for _path in sorted(GOLDEN.glob("support-agent.*")):
    _text = _path.read_text(encoding="utf-8")[:8192]
    HEADS += [_text] + [_text[:cut] for cut in range(1, min(len(_text), 2000), 97)]

MALFORMED = {"truncated.json": '[{"id": "a", "input": "q", "expected',
             "garbage.jsonl": "not json at all\n\x7f\x01\n",
             "quote.csv": 'id,input\na,"b\n',
             "broken.yaml": "- vars: [unclosed\n  assert: {\n"}


def test_the_registry_finds_every_format_and_none_is_broken():
    assert {"csv", "json", "jsonl", "promptfoo", "deepeval", "langsmith", "braintrust"} <= set(FORMATS)
    assert REGISTRY.broken == {}


@pytest.mark.parametrize("name, suffix", ROUND_TRIPS)
def test_round_trip_is_exact_up_to_the_loss_report(name, suffix):
    rows = evalconv.read(str(GOLDEN / "support-agent.jsonl")).rows
    result = route(rows, name, "support-agent.jsonl", suffix)
    assert result.problems == [], [p.to_json() for p in result.problems]
    assert result.status in ("ok", "lossy") and result.rows == len(rows)
    assert (result.status == "ok") or not REGISTRY.get(name).lossless


@pytest.mark.parametrize("name", FORMATS)
def test_detection_never_raises_and_answers_a_confidence(name):
    fmt = REGISTRY.get(name)
    for head in HEADS:
        confidence = fmt.detect(head)
        assert isinstance(confidence, (int, float)) and 0 <= confidence <= 1, (name, head[:80])


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize("file", sorted(MALFORMED))
def test_malformed_input_is_one_line_per_problem_never_a_traceback(tmp_path, name, file):
    path = tmp_path / file
    path.write_text(MALFORMED[file], encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(path), "--from", name])
    assert result.exit_code in (0, 1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output + result.stderr
    for line in result.stderr.splitlines():
        assert line.startswith((str(path), "evalconv:")), line
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1 and str(path) in result.stderr


@pytest.mark.parametrize("name", FORMATS)
def test_the_declarations_hold_together(name):
    fmt = REGISTRY.get(name)
    assert fmt.name == name and fmt.title and fmt.extensions
    assert fmt.can_read or fmt.can_write
    if fmt.can_write:
        assert fmt.matches_path("set" + fmt.output_suffix)
        for variant in fmt.variants:
            for suffix in variant.suffixes:
                assert fmt.make_options("set" + suffix).variant == variant.name
    paths = {f.path for f in fmt.field_map}
    assert all(p.startswith("$") for p in paths)
    assert all(f.fate in ("native", "carried", "dropped") for f in fmt.field_map)

"""golden_roundtrips/: each derived file is re-derived byte for byte, and each comes back."""
from __future__ import annotations

import tomllib

import pytest
from click.testing import CliRunner

import evalconv
from conftest import ROOT
from evalconv.canonical.diff import diff_paths, unexplained

GOLDEN_DIR = ROOT / "golden_roundtrips"
TARGETS = tomllib.loads((GOLDEN_DIR / "targets.toml").read_text(encoding="utf-8"))["target"]


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t["file"])
def test_rederived_byte_for_byte(tmp_path, target):
    out = tmp_path / target["file"]
    result = evalconv.convert(str(GOLDEN_DIR / target["source"]), str(out), to=target["format"])
    assert result.exit_code == 0
    assert out.read_bytes() == (GOLDEN_DIR / target["file"]).read_bytes(), \
        f"regenerate with: evalconv golden_roundtrips/{target['source']} --to {target['format']} -o golden_roundtrips/{target['file']}"


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t["file"])
def test_golden_comes_back_as_reported(tmp_path, target):
    original = evalconv.read(str(GOLDEN_DIR / target["source"])).rows
    out = tmp_path / target["file"]
    loss = evalconv.convert(str(GOLDEN_DIR / target["source"]), str(out), to=target["format"]).loss
    back = evalconv.read(str(out), from_=target["format"])
    assert back.log.errors == []
    assert [r.id for r in back.rows] == [r.id for r in original]
    for before, after in zip(original, back.rows):
        differences = diff_paths(before.to_json(), after.to_json())
        assert unexplained(differences, loss.dropped_paths(before.id)) == ([], []), before.id


def test_every_registered_format_has_a_golden_file():
    derived = {t["format"] for t in TARGETS}
    assert derived | {"jsonl"} >= set(evalconv.REGISTRY.names())


def test_the_roundtrip_gate_passes_on_golden_roundtrips_through_every_format():
    from evalconv.cli import cli
    result = CliRunner().invoke(cli, ["roundtrip", str(GOLDEN_DIR), "--format", "json"])
    assert result.exit_code == 0, result.output
    import json
    report = json.loads(result.stdout)
    routes = {r["via"] for r in report["results"]}
    assert routes == {f.name for f in evalconv.REGISTRY.all() if f.can_read and f.can_write}

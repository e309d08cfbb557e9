"""golden_roundtrips/: each derived file is re-derived byte for byte, and each comes back."""
from __future__ import annotations

import tomllib

import pytest
from click.testing import CliRunner

import evalconv
from conftest import ROOT
from evalconv.canonical.diff import diff_paths, unexplained
from evalconv.atomic import MANIFEST

GOLDEN_DIR = ROOT / "golden_roundtrips"
TARGETS = tomllib.loads((GOLDEN_DIR / "targets.toml").read_text(encoding="utf-8"))["target"]


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t["file"])
def test_rederived_byte_for_byte(tmp_path, target):
    out = tmp_path / target["file"]
    result = evalconv.convert(str(GOLDEN_DIR / target["source"]), str(out), to=target["format"])
    assert result.exit_code == 0
    golden = GOLDEN_DIR / target["file"]
    hint = f"regenerate with: evalconv golden_roundtrips/{target['source']} --to {target['format']} -o golden_roundtrips/{target['file']}"
    if golden.is_dir():  # a folder format (hf): the same files, each the same
        files = sorted(p.relative_to(golden) for p in golden.rglob("*") if p.is_file())
        assert sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()) == files, hint
        for name in files:
            if name.name == MANIFEST and not all(map(_same_parquet_writer, golden.rglob("*.parquet"))):
                _assert_manifest_is_true(out, golden / name)  # its digests follow the Parquet bytes
            else:
                _assert_same_file(out / name, golden / name, hint)
    else:
        _assert_same_file(out, golden, hint)


def _assert_same_file(new, golden, hint: str) -> None:
    if golden.suffix == ".parquet" and not _same_parquet_writer(golden):
        _assert_same_parquet(new, golden)  # another pyarrow writes other bytes for the same data
        return
    assert new.read_bytes() == golden.read_bytes(), hint


def _assert_manifest_is_true(out, golden_manifest) -> None:
    import hashlib
    import json
    listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    golden = json.loads(golden_manifest.read_text(encoding="utf-8"))["files"]
    assert [f["path"] for f in listed] == [f["path"] for f in golden]
    for entry in listed:
        assert hashlib.sha256((out / entry["path"]).read_bytes()).hexdigest() == entry["sha256"]


def _same_parquet_writer(golden) -> bool:
    """The golden Parquet file is compared byte for byte when the pyarrow that wrote it (its
    footer's created_by) is the one installed; the writer options are pinned, so the bytes are."""
    import pyarrow
    import pyarrow.parquet as pq
    return pq.ParquetFile(golden).metadata.created_by == f"parquet-cpp-arrow version {pyarrow.__version__}"


def _assert_same_parquet(out, golden) -> None:
    import pyarrow.parquet as pq
    new, old = pq.ParquetFile(out), pq.ParquetFile(golden)
    assert new.schema_arrow.equals(old.schema_arrow, check_metadata=True)
    assert new.metadata.num_row_groups == old.metadata.num_row_groups
    assert new.read().equals(old.read())


def test_parquet_bytes_are_deterministic(tmp_path):
    source = str(GOLDEN_DIR / "support-agent.jsonl")
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    evalconv.convert(source, str(a), to="parquet")
    evalconv.convert(source, str(b), to="parquet")
    assert a.read_bytes() == b.read_bytes()


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

"""`--engine dask`: validate, stats and convert of Parquet on a two-process Dask cluster give the
default engine's `--format json`, bytes and loss report; a missing extra is one line, exit 2."""
from __future__ import annotations

import json
import shutil
import sys

import pytest
from click.testing import CliRunner

from evalconv.cli import cli
from partition_samples import messy_parquet

distributed = pytest.importorskip("distributed")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def scheduler():
    """One local two-process cluster for the module, reached with --scheduler ADDRESS."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    yield cluster.scheduler_address
    cluster.close()


def _same_json(args, address):
    default, dask = run(*args), run(*args, "--engine", "dask", "--scheduler", address)
    assert (default.exit_code, default.stdout) == (dask.exit_code, dask.stdout), (default.stderr, dask.stderr)
    return json.loads(default.stdout)


def test_validate_json_is_the_default_engines_on_a_local_two_process_cluster():
    default = run("validate", messy_parquet(), "--format", "json")
    dask = run("validate", messy_parquet(), "--format", "json", "--engine", "dask")
    assert dask.exit_code == default.exit_code == 1
    assert dask.stdout == default.stdout
    found = {f["code"] for f in json.loads(dask.stdout)["files"][0]["errors"]}
    assert {"duplicate-id", "case-family-conflict", "id-mismatch"} <= found  # the set rules, reduced


def test_validate_a_folder_of_parquet_files_and_require(tmp_path, scheduler):
    for name in ("a.parquet", "b.parquet"):
        shutil.copy(messy_parquet(), tmp_path / name)
    data = _same_json(["validate", tmp_path, "--format", "json", "--require", "metadata.reason"], scheduler)
    assert len(data["files"]) == 2


@pytest.mark.parametrize("by", [(), ("--by", "metadata.severity", "--min", "metadata.severity=harmful:70"),
                                ("--by", "case.oracleType,metadata.severity", "--samples", "3")])
def test_stats_json_is_the_default_engines(by, scheduler):
    data = _same_json(["stats", messy_parquet(), "--format", "json", *by], scheduler)
    assert data["rows"] == 239


@pytest.mark.parametrize("to,name", [("jsonl", "out.jsonl"), ("csv", "out.csv"), ("parquet", "out.parquet"),
                                     ("promptfoo", "out.yaml"), ("langsmith", "out.jsonl"), ("inspect", "out.json")])
def test_convert_writes_the_default_engines_bytes_report_and_ledger(tmp_path, to, name, scheduler):
    outputs = {}
    for engine in ("default", "dask"):
        folder = tmp_path / engine
        folder.mkdir()
        extra = ["--engine", "dask", "--scheduler", scheduler] if engine == "dask" else []
        result = run(messy_parquet(), "--to", to, "-o", folder / name, "--keep-going", "--report", folder / "loss.json",
                     *extra)
        outputs[engine] = (result.exit_code, {p.name: p.read_bytes().replace(bytes(folder), b"D")
                                              for p in sorted(folder.iterdir())},
                           result.stderr.replace(str(folder), "D"))
    assert outputs["default"] == outputs["dask"]
    assert "out.rejected.jsonl" in {n.replace(name, "out") for n in outputs["dask"][1]} or \
        f"{name}.rejected.jsonl" in outputs["dask"][1]


def test_a_missing_extra_is_one_line_naming_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    result = run("validate", messy_parquet(), "--engine", "dask")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["evalconv: error: --engine dask needs Dask: pip install 'evalconv[dask]'"]


def test_the_engine_reads_parquet_only(tmp_path, scheduler):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"id": "a"}) + "\n")
    result = run("stats", path, "--engine", "dask", "--scheduler", scheduler)
    assert result.exit_code == 2 and "--engine dask reads evalconv's Parquet files; this is jsonl" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_target_that_needs_the_whole_set_is_refused(tmp_path, scheduler):
    result = run(messy_parquet(), "--to", "ragas", "-o", tmp_path / "out.jsonl", "--engine", "dask",
                 "--scheduler", scheduler)
    assert result.exit_code == 2 and "needs the whole set: leave out --engine dask" in result.stderr


@pytest.mark.parametrize("args,message", [
    (["--scheduler", "tcp://127.0.0.1:9"], "--scheduler goes with --engine dask"),
    (["--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"], "no Dask scheduler answers there"),
    (["--engine", "dask", "-j", "2"], "-j goes with the default engine"),
])
def test_engine_flags_misused_are_one_line_usage_errors(tmp_path, args, message):
    command = ["validate", messy_parquet()] if "-j" not in args else [messy_parquet(), "-o", tmp_path / "o.jsonl"]
    result = run(*command, *args)
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["not-parquet.parquet", "truncated.parquet", "wrong-schema.parquet", "wrong-type.parquet",
                                  "bad-json-cell.parquet"])
def test_a_malformed_file_is_the_default_engines_one_line(name, scheduler):
    from conftest import ROOT

    _same_json(["validate", ROOT / "tests" / "malformed" / name, "--format", "json"], scheduler)


def test_a_damaged_row_group_is_one_line_naming_the_file_exit_2(tmp_path, scheduler):
    """Regression: a worker's read error came back as a traceback (pyarrow's, unwrapped)."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(messy_parquet()).metadata
    at = meta.row_group(2).column(3).data_page_offset
    data = bytearray(open(messy_parquet(), "rb").read())
    data[at + 5:at + 60] = bytes(b ^ 0xFF for b in data[at + 5:at + 60])
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(bytes(data))
    result = run("validate", damaged, "--format", "json", "--engine", "dask", "--scheduler", scheduler)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    unreadable = json.loads(result.stdout)["files"][0]["unreadable"]
    assert unreadable.startswith(f"{damaged}: the Parquet data cannot be read after row 128, damaged?")


def test_a_folder_of_parquet_files_converts_as_the_default_engine_does(tmp_path, scheduler):
    source = tmp_path / "sets"
    source.mkdir()
    for name in ("a.parquet", "b.parquet"):
        shutil.copy(messy_parquet(), source / name)
    seen = {}
    for engine in ("default", "dask"):
        extra = ["--engine", "dask", "--scheduler", scheduler] if engine == "dask" else []
        result = run(source, "--to", "jsonl", "-o", tmp_path / engine, "--keep-going", "--summary",
                     tmp_path / f"{engine}.json", *extra)
        files = {p.relative_to(tmp_path / engine).as_posix(): p.read_bytes() for p in sorted((tmp_path / engine).rglob("*"))
                 if p.is_file()}
        summary = (tmp_path / f"{engine}.json").read_text().replace(str(tmp_path / engine), "OUT")
        seen[engine] = (result.exit_code, files, summary, result.stdout)
    assert seen["default"] == seen["dask"]
    assert set(seen["dask"][1]) >= {"a.jsonl", "b.jsonl"}


def _every_target():
    from evalconv.registry import REGISTRY

    for name in REGISTRY.names():
        fmt = REGISTRY.get(name)
        if fmt.can_write:
            for out in (["outdir"] if fmt.folder else dict.fromkeys("out" + e for e in fmt.extensions)):
                yield name, out


@pytest.mark.parametrize("to,name", list(_every_target()))
def test_every_target_is_the_default_engines_or_refused_in_one_line(tmp_path, to, name, scheduler):
    """No silent difference: each writer either writes the default engine's bytes, loss report and
    ledger on the cluster, or (a writer that needs the whole set) is refused in one line, exit 2."""
    from evalconv.registry import REGISTRY

    seen = {}
    for engine in ("default", "dask"):
        folder = tmp_path / engine
        folder.mkdir()
        extra = ["--engine", "dask", "--scheduler", scheduler] if engine == "dask" else []
        result = run(messy_parquet(), "--to", to, "-o", folder / name, "--keep-going", "--report", folder / "loss.json",
                     *extra)
        files = {p.relative_to(folder).as_posix(): p.read_bytes().replace(bytes(folder), b"D")
                 for p in sorted(folder.rglob("*")) if p.is_file()}
        seen[engine] = (result.exit_code, files, result.stderr.replace(str(folder), "D"))
    if REGISTRY.get(to).write_shape == "document":
        code, files, stderr = seen["dask"]
        assert code == 2 and not files and len(stderr.strip().splitlines()) == 1
        assert f"{to} needs the whole set: leave out --engine dask" in stderr
    else:
        assert seen["default"] == seen["dask"]  # a name the writer refuses is refused alike (exit 2)
        assert seen["dask"][0] == 2 or seen["dask"][1]


@pytest.mark.parametrize("flag", ["--pack", "--contexts"])
def test_a_pack_or_contexts_is_refused_before_the_cluster_starts(tmp_path, flag):
    """--pack and --contexts are checked in one process (the workers know the built-in packs and
    no manifest): one line, exit 2, before any scheduler is reached (this one answers nowhere)."""
    given = tmp_path / "given.yaml"
    given.write_text("{}\n")
    result = run("validate", messy_parquet(), flag, given, "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"{flag} is checked in one process: leave out --engine dask" in result.stderr

"""docs/scale.md: its Python blocks run (the Dask recipe on a local two-process cluster, the set
rules in DuckDB SQL, the run store views), each asserting it equals one process."""
from __future__ import annotations

import os
import shutil

import pytest

import evalconv
from conftest import ROOT
from doc_snippets import snippets
from partition_samples import whole_set_values

pytest.importorskip("distributed")
pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

PAGE = ROOT / "docs" / "scale.md"
RUNS = ROOT / "tests" / "fixtures" / "runs"
BLOCKS = snippets(PAGE)


def _folder(tmp_path):
    """set.parquet (rows that break row rules and set rules), valid.parquet (only set rules
    broken), a run store and its cases: what the page's blocks name."""
    from evalconv.canonical.row import Row
    from evalconv.runs.readers import RESULTS_REGISTRY
    from evalconv.runs.store import import_runs

    values = whole_set_values()
    pq.write_table(pa.Table.from_batches([evalconv.rows_to_arrow(Row.from_json(v) for v in values)]),
                   tmp_path / "set.parquet", row_group_size=64)
    accepted = [r for r in evalconv.validate_batch(pq.read_table(tmp_path / "set.parquet")).rows if r is not None]
    pq.write_table(pa.Table.from_batches([evalconv.rows_to_arrow(accepted)]), tmp_path / "valid.parquet",
                   row_group_size=50)
    (tmp_path / "sets" / "more").mkdir(parents=True)  # a folder of sets: what row_groups("sets") walks
    shutil.copy(tmp_path / "set.parquet", tmp_path / "sets" / "a.parquet")
    shutil.copy(tmp_path / "valid.parquet", tmp_path / "sets" / "more" / "b.parquet")
    shutil.copy(RUNS / "cases.jsonl", tmp_path / "cases.jsonl")
    paths = [RUNS / "promptfoo" / "results.json", RUNS / "promptfoo" / "rerun.jsonl",
             *sorted((RUNS / "deepeval").glob("test_run_*.json"))]
    import_runs(str(tmp_path / "store"), ((str(p), RESULTS_REGISTRY.read(str(p))) for p in paths))


def _run(code: str, folder) -> dict:
    namespace: dict = {"__name__": "__doc_snippet__"}
    here = os.getcwd()
    os.chdir(folder)
    try:
        exec(compile(code, str(PAGE), "exec"), namespace)
    finally:
        os.chdir(here)
    return namespace


def test_the_page_has_its_blocks_and_the_untested_ones_say_why():
    assert len([b for b in BLOCKS if b.not_run is None]) >= 3
    assert {b.not_run for b in BLOCKS if b.not_run} == {"Ray is not a dependency of evalconv or its CI",
                                                         "Spark needs a JVM; not a dependency of evalconv or its CI"}


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.not_run is None], ids=lambda b: b.name)
def test_every_python_block_runs_and_equals_one_process(block, tmp_path):
    _folder(tmp_path)
    namespace = _run(block.code, tmp_path)
    if "client" in block.code:  # the Dask recipe: its output is one process's, byte for byte
        one = tmp_path / "one.jsonl"
        rows = [r for r in evalconv.validate_batch(pq.read_table(tmp_path / "set.parquet")).rows if r is not None]
        evalconv.write(rows, str(one), to="jsonl")
        assert (tmp_path / "out.jsonl").read_bytes() == one.read_bytes()
        assert namespace["validation"].log.error_count
        assert [f["path"] for f in namespace["report"].to_json()["files"]] == [os.path.join("sets", "a.parquet"),
                                                                            os.path.join("sets", "more", "b.parquet")]
    if "sql.register" in block.code:
        assert namespace["newly"] is not None


def test_the_ray_and_spark_recipes_use_the_functions_the_dask_recipe_runs():
    """From a folder to a job without glue: the untested recipes call only what the Dask block runs."""
    dask_block = next(b for b in BLOCKS if "client.map" in b.code)
    for name in ("partitions.row_groups(\"sets\")", "partitions.validate_group", "partitions.reduce_files"):
        assert name in dask_block.code
        for block in BLOCKS:
            if block.not_run:
                assert name in block.code

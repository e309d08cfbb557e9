"""Canonical Parquet (issue 19): lossless, natural typed columns, streamed by row groups."""
from __future__ import annotations

import io
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from parquet_samples import DISTINCTIONS, sample_row
from click.testing import CliRunner
from hypothesis import given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical import parquet_format
from evalconv.canonical.jsonvalue import same
from evalconv.cli import cli
from roundtrip_helpers import read_text, roundtrip, write_text
from strategies import row_sets
from roundtrip_helpers import assert_identical

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def test_every_distinction_comes_back_identical():
    data, _ = write_text("parquet", DISTINCTIONS)
    checked, _ = read_text("parquet", data)
    assert_identical(DISTINCTIONS, checked)


@settings(max_examples=150)
@given(rows=row_sets())
def test_roundtrip_property_across_many_row_groups(rows):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parquet_format, "ROW_GROUP_ROWS", 2)
        patch.setattr(parquet_format, "READ_BATCH_ROWS", 3)
        data, checked = roundtrip("parquet", rows)
    assert_identical(rows, checked)
    if len(rows) > 2:
        assert pq.ParquetFile(io.BytesIO(data)).metadata.num_row_groups == (len(rows) + 1) // 2


def test_columns_are_natural_for_other_tools():
    data, _ = write_text("parquet", DISTINCTIONS)
    table = pq.read_table(io.BytesIO(data))
    schema = table.schema
    assert schema.field("input").type == pa.string() and schema.field("case.oracleType").type == pa.string()
    assert schema.field("case.linkedConcerns").type == pa.list_(pa.string())
    assert not schema.field("id").nullable and schema.metadata[b"evalconv"] == parquet_format.METADATA_VALUE
    by_id = {r["id"]: r for r in table.to_pylist()}
    assert by_id["absent"]["input"] == "q" and by_id["absent"]["input:json"] is None  # plain text stays plain
    assert by_id["absent"]["expected"] is None and by_id["absent"]["expected:json"] is None
    assert by_id["null"]["expected:json"] == "null"
    assert by_id["empty"]["expected"] == "" and by_id["empty"]["expected:json"] is None
    assert by_id["lists"]["case.unacceptableBehavior"] == [] and by_id["lists"]["case.evaluationCriteria"] == [""]
    assert by_id["numbers"]["input:json"] == "1" and by_id["numbers"]["expected:json"] == "1.0"


def test_an_empty_set_writes_a_file_with_the_schema(tmp_path):
    out = tmp_path / "empty.parquet"
    evalconv.write([], str(out), "parquet")
    assert pq.read_schema(out).names == [name for name, _ in parquet_format.COLUMNS]
    assert evalconv.read(str(out)).rows == []


def test_the_reader_is_lazy_row_group_by_row_group(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet_format, "ROW_GROUP_ROWS", 100)
    monkeypatch.setattr(parquet_format, "READ_BATCH_ROWS", 100)
    out = tmp_path / "set.parquet"
    evalconv.write([sample_row(f"r-{i}") for i in range(1000)], str(out), "parquet")
    assert pq.ParquetFile(out).metadata.num_row_groups == 10
    batches = []
    real = pq.ParquetFile.iter_batches

    def counted(self, *args, **kwargs):
        for batch in real(self, *args, **kwargs):
            batches.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counted)
    with evalconv.reading(str(out)) as (_, rows, _report):
        first = next(rows)
        assert first.value["id"] == "r-0" and batches == [100]  # one row group decoded, not ten
        assert sum(1 for _ in rows) == 999


def test_standard_input_is_read_and_written(tmp_path):
    data, _ = write_text("parquet", DISTINCTIONS)
    result = CliRunner().invoke(cli, ["convert", "-", "--from", "parquet", "--to", "parquet"], input=data)
    assert result.exit_code == 0, result.stderr
    back, _ = read_text("parquet", result.stdout_bytes)
    assert_identical(DISTINCTIONS, back)


def test_detected_by_content_without_the_extension(tmp_path):
    path = tmp_path / "set.bin"
    path.write_bytes(write_text("parquet", DISTINCTIONS)[0])
    assert evalconv.read(str(path)).format == "parquet"


def test_a_file_pandas_wrote_from_to_dataframe_reads_back(tmp_path):
    """df.to_parquet of a to_dataframe() frame: metadata.<key> columns, pandas' own string types."""
    rows = evalconv.read(str(GOLDEN)).rows + DISTINCTIONS
    path = tmp_path / "pandas.parquet"
    evalconv.to_dataframe(rows).to_parquet(path)
    back = evalconv.read(str(path))
    assert back.log.errors == [] and [r.to_json() for r in back.rows] == [r.to_json() for r in rows]
    assert all(same(a.to_json(), b.to_json()) for a, b in zip(rows, back.rows))


def test_a_non_canonical_file_says_which_columns_it_needs(tmp_path):
    path = tmp_path / "hub.parquet"
    pq.write_table(pa.table({"id": ["a"], "input": ["q"], "case.caseId": ["a"]}), path)
    result = CliRunner().invoke(cli, ["convert", str(path), "--to", "jsonl"])
    assert result.exit_code == 2
    assert "no column for required field(s) case.oracleType, case.expectedBehavior, case.provenance" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_regression_a_failed_conversion_leaves_no_half_written_parquet(tmp_path):
    """A read that fails after the writer opened used to make pyarrow finish the discarded file
    when it was collected ("write to closed file" on stderr)."""
    bad = ROOT / "tests" / "malformed" / "wrong-type.parquet"
    out = tmp_path / "out.parquet"
    result = CliRunner().invoke(cli, ["convert", str(bad), "--to", "parquet", "-o", str(out)])
    import gc
    gc.collect()
    assert result.exit_code == 2 and list(tmp_path.iterdir()) == []
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [["--to", "parquet"], ["--to", "hf", "-o", "{tmp}/ds"]])
def test_without_pyarrow_the_cli_says_what_to_install_in_one_line(tmp_path, args):
    import subprocess
    import sys
    code = ("import sys; sys.modules['pyarrow'] = None; sys.modules['pyarrow.parquet'] = None\n"
            "from evalconv.cli import main; sys.argv = ['evalconv', *sys.argv[1:]]; main()")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    done = subprocess.run([sys.executable, "-c", code, "convert", str(GOLDEN), *argv],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "evalconv: error: Parquet needs pyarrow, which is not installed (pip install 'evalconv[parquet]')")
    assert "Traceback" not in done.stderr and os.listdir(tmp_path) == []

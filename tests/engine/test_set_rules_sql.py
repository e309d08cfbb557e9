"""The set rules as a reduce in DuckDB SQL (evalconv.partitions.set_findings_sql over the keys
the map leaves): on random sets cut into random partitions, the findings one process gives."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import evalconv
from conftest import row
from evalconv import partitions
from evalconv.canonical.row import Row
from partition_samples import messy_parquet

duckdb = pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

SET_CODES = ("duplicate-id", "case-family-conflict")
# (oracle, expected, evaluators it admits or bars): a family set up two ways, barred evaluators
# (a row rule rejects the row, its keys still count), no evaluator at all
SETUPS = [("reference-answer", ("Yes",), [None, "exact-or-programmatic", "llm-judge", "rubric-human"]),
          ("acceptable-set", (["a", "b"],), [None, "exact-or-programmatic"]),
          ("expected-final-state", ("done",), [None, "trajectory-or-state-check", "exact-or-programmatic"])]


@st.composite
def case_sets(draw):
    """Rows with ids from a small pool (duplicates), families from a small pool (one a built-in
    pack declares), caseId != id now and then, a row the schema refuses now and then."""
    values = []
    for i in range(draw(st.integers(min_value=1, max_value=60))):
        row_id = f"id-{draw(st.integers(min_value=0, max_value=25))}"
        oracle, expected, evaluators = SETUPS[draw(st.integers(min_value=0, max_value=len(SETUPS) - 1))]
        extra = {}
        family = draw(st.sampled_from([None, "fam-a", "fam-b", "fam-c", "failing-test-fixed"]))
        if family:
            extra["caseFamily"] = family
        evaluator = draw(st.sampled_from(evaluators))
        if evaluator:
            extra["evaluator"] = evaluator
        value = row(row_id, oracle=oracle, expected=expected, **extra)
        kind = draw(st.sampled_from(["ok"] * 6 + ["mismatch", "blank-case-id", "bad-oracle"]))
        if kind == "mismatch":
            value["metadata"]["case"]["caseId"] = f"other-{i}"
        elif kind == "blank-case-id":
            value["metadata"]["case"]["caseId"] = draw(st.sampled_from(["", " "]))
        elif kind == "bad-oracle":
            value["metadata"]["case"]["oracleType"] = "not-an-oracle"
        values.append(value)
    return values


def _parquet(values, folder) -> str:
    path = folder / "set.parquet"
    pq.write_table(pa.Table.from_batches([evalconv.rows_to_arrow(Row.from_json(v) for v in values)]), path)
    return str(path)


def _split(table, cuts):
    points = sorted({c for c in cuts if 0 < c < table.num_rows})
    out, start = [], 0
    for stop in [*points, table.num_rows]:
        out.append((table.slice(start, stop - start), start))
        start = stop
    return out


def _one_process(path):
    """The set rules' findings of `evalconv validate` (a pack's case family, checked row by row,
    is a row rule with the same code: its message names the pack)."""
    return [(f.row, f.code, f.id, f.message) for f in evalconv.validate_file(path).log.errors
            if f.code == "duplicate-id" or (f.code == "case-family-conflict" and "was set up by row" in f.message)]


def _sql(parts, relation_of):
    con = duckdb.connect()
    relation = relation_of(con, partitions.keys_table(parts))
    found = partitions.set_findings_sql(con, relation)
    ids = {r: i for part in parts for r, i in zip(range(part.first_record + 1, part.first_record + part.count + 1),
                                                  part.keys.ids)}
    return [(r, f.code, ids[r], f.message) for r in sorted(found) for f in found[r]]


def _registered(con, table):
    con.register("keys", table)
    return "keys"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=case_sets(), cuts=st.lists(st.integers(min_value=1, max_value=59), max_size=5))
def test_the_sql_reduce_of_any_split_is_one_processes_set_findings(values, cuts, tmp_path_factory):
    path = _parquet(values, tmp_path_factory.mktemp("sql"))
    parts = [evalconv.validate_batch(batch, source=path, first_record=first)
             for batch, first in _split(pq.read_table(path), cuts)]
    assert _sql(parts, _registered) == _one_process(path)
    mismatches = duckdb.connect().execute(partitions.ID_MISMATCHES_SQL.format(path=path)).fetchall()
    assert [(r, i) for r, i, _ in mismatches] == [
        (f.row, f.id) for f in evalconv.validate_file(path).log.errors if f.code == "id-mismatch"]


def test_the_keys_written_as_parquet_reduce_the_same(tmp_path):
    """The keys of each partition written beside the data (as a Spark or Ray job would) and
    reduced by DuckDB reading those files: the findings one process gives."""
    table = pq.read_table(messy_parquet())
    parts = [evalconv.validate_batch(batch, source=messy_parquet(), first_record=first)
             for batch, first in _split(table, [50, 64, 170])]
    for n, part in enumerate(parts):
        pq.write_table(pa.Table.from_batches([partitions.keys_to_arrow(part)]), tmp_path / f"keys-{n}.parquet")
    found = _sql(parts, lambda con, _: f"read_parquet('{tmp_path}/keys-*.parquet')")
    assert found == _one_process(messy_parquet())
    assert {code for _, code, _, _ in found} == set(SET_CODES)


def test_no_partitions_no_findings():
    con = duckdb.connect()
    con.register("keys", partitions.keys_table([]))
    assert partitions.set_findings_sql(con, "keys") == {}

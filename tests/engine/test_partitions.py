"""evalconv.partitions: the per-partition functions an engine calls, and the reduce that makes
the partitions' answers one process's answer, byte for byte in `--format json`."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from partition_samples import messy_parquet
from hypothesis import given, settings, strategies as st

import evalconv
from evalconv import partitions
from evalconv.canonical import jsonvalue
from evalconv.reports import FindingLog

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _table():
    return pq.read_table(messy_parquet())


def _split(table, cuts: list[int]):
    """The table cut at `cuts` into record batches, each with the rows before it."""
    points = sorted({c for c in cuts if 0 < c < table.num_rows})
    out, start = [], 0
    for stop in [*points, table.num_rows]:
        out.append((table.slice(start, stop - start).combine_chunks().to_batches()[0], start))
        start = stop
    return out


cuts = st.lists(st.integers(min_value=1, max_value=239), max_size=6)


def test_a_batch_is_read_and_checked_as_the_parquet_reader_and_validator_do():
    table = _table()
    batch = table.slice(0, 50).combine_chunks().to_batches()[0]
    checked = evalconv.validate_batch(batch, source="set.parquet")
    whole = evalconv.read(messy_parquet())
    assert checked.count == 50
    assert [r.to_json() for r in checked.valid] == [r.to_json() for r in whole.rows[:len(checked.valid)]]
    assert len(checked.valid) == 48
    assert checked.rows[40] is None and checked.rows[41] is None  # caseId != id; a barred evaluator
    assert {f.code for f in checked.findings[40]} == {"id-mismatch"}
    assert checked.findings[41][0].row == 42 and checked.findings[41][0].record == 42
    # a partition later in the set numbers its rows after the rows before it
    later = evalconv.validate_batch(table.slice(80, 20).combine_chunks().to_batches()[0], first_record=80)
    assert later.findings[10][0].row == 91 and later.findings[10][0].source == "<arrow>"


def test_a_batch_that_is_not_a_canonical_set_names_the_missing_column():
    with pytest.raises(evalconv.ReadError, match="no column for required field"):
        evalconv.validate_batch(pa.record_batch({"question": ["a"]}))


def test_rows_to_arrow_is_the_batch_parquet_holds():
    rows = evalconv.read(messy_parquet()).rows[:30]
    batch = evalconv.rows_to_arrow(rows)
    from evalconv.canonical import parquet_format

    assert batch.schema.equals(parquet_format.arrow_schema(), check_metadata=True)
    assert [r.to_json() for r in evalconv.validate_batch(batch).valid] == [r.to_json() for r in rows]


def test_no_state_is_kept_between_calls():
    table = _table()
    batch = table.slice(100, 60).combine_chunks().to_batches()[0]
    first = evalconv.validate_batch(batch, first_record=100)
    evalconv.validate_batch(table.slice(0, 100).combine_chunks().to_batches()[0])  # anything in between
    again = evalconv.validate_batch(batch, first_record=100)
    assert [f.to_json() for fs in first.findings.values() for f in fs] == \
        [f.to_json() for fs in again.findings.values() for f in fs]
    assert first.keys.ids == again.keys.ids


@settings(max_examples=25)
@given(cuts)
def test_the_reduce_of_any_split_is_validate_byte_for_byte(points):
    one = evalconv.validate_file(messy_parquet())
    parts = [evalconv.validate_batch(b, source=one.path, first_record=first) for b, first in _split(_table(), points)]
    merged = evalconv.reduce_validation(parts, source=one.path)
    assert jsonvalue.dumps(merged.to_json()) == jsonvalue.dumps(one.to_json())
    assert {"duplicate-id", "case-family-conflict", "id-mismatch", "schema"} <= set(one.log.by_code)


def test_partitions_in_any_order_give_the_same_partial_answers():
    pieces = _split(_table(), [64, 128, 192])
    forward = [evalconv.validate_batch(b, first_record=f) for b, f in pieces]
    backward = [evalconv.validate_batch(b, first_record=f) for b, f in reversed(pieces)][::-1]
    assert [p.findings.keys() for p in forward] == [p.findings.keys() for p in backward]
    assert jsonvalue.dumps(evalconv.reduce_validation(forward).to_json()) == \
        jsonvalue.dumps(evalconv.reduce_validation(backward).to_json())


def _log(findings) -> FindingLog:
    log = FindingLog()
    log.add(findings)
    return log


@given(st.lists(st.sampled_from(["duplicate-id", "starter-example", "schema", "off-vocabulary"]), max_size=30),
       st.integers(0, 30), st.integers(0, 30))
def test_finding_logs_merge_associatively_and_as_one_log(codes, i, j):
    from evalconv.canonical.findings import Finding

    findings = [Finding(code, "m", "$").locate(row=n, id=None, line=None, record=n, source="s") for n, code in enumerate(codes)]
    i, j = sorted((min(i, len(codes)), min(j, len(codes))))
    a, b, c = _log(findings[:i]), _log(findings[i:j]), _log(findings[j:])
    left = partitions.merge_logs(partitions.merge_logs(a, b), c)
    right = partitions.merge_logs(a, partitions.merge_logs(b, c))
    assert left == right == _log(findings)


def test_read_reports_merge_as_one_read():
    from evalconv.reports import ReadReport

    whole, a, b = ReadReport("x", "s"), ReadReport("x", "s"), ReadReport("x", "s")
    for n, report in ((0, a), (1, a), (2, b), (3, b)):
        for target in (report, whole):
            target.infer("$.metadata.case.oracleType", f"r{n}", "from the assertion")
            target.rows += 1
    assert partitions.merge_read_reports(a, b).to_json() == whole.to_json()


SPLIT_FORMATS = [("jsonl", "out.jsonl"), ("csv", "out.csv"), ("parquet", "out.parquet"), ("promptfoo", "out.yaml"),
                 ("promptfoo", "out.jsonl"), ("deepeval", "out.json"), ("langsmith", "out.jsonl"),
                 ("braintrust", "out.jsonl"), ("inspect", "out.json")]


def _valid_parquet(tmp_path) -> str:
    path = tmp_path / "valid.parquet"
    evalconv.convert(messy_parquet(), str(path), to="parquet", keep_going=True, ledger=str(tmp_path / "rejected.jsonl"))
    return str(path)


def _written_parts(path: str, to: str, output: str, points: list[int], **options):
    table = pq.read_table(path)
    out = []
    for batch, first in _split(table, points):
        checked = evalconv.validate_batch(batch, first_record=first)
        out.append(evalconv.write_rows(checked.rows, to, path=output, **options))
    return out


@pytest.mark.parametrize("to,name", SPLIT_FORMATS)
def test_assembled_parts_are_the_bytes_and_loss_report_of_one_process(tmp_path, to, name):
    path = _valid_parquet(tmp_path)
    (tmp_path / "one").mkdir()
    (tmp_path / "parts").mkdir()
    options = lambda folder: {"config": str(tmp_path / folder / "config.yaml")} if to == "promptfoo" and name.endswith(".yaml") else {}
    one = evalconv.convert(path, str(tmp_path / "one" / name), to=to, **options("one"))
    parts = _written_parts(path, to, str(tmp_path / "parts" / name), [33, 100, 101, 170], **options("parts"))
    loss = evalconv.assemble(parts, str(tmp_path / "parts" / name))
    assert (tmp_path / "parts" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
    shown = lambda report: jsonvalue.dumps(report.to_json()).replace(str(tmp_path / "parts"), "D").replace(str(tmp_path / "one"), "D")
    assert shown(loss) == shown(one.loss)
    # the same report without writing the file (so without the note that a config was written beside it)
    unwritten = evalconv.loss_report(parts, str(tmp_path / "parts" / name))
    one.loss.notes = [n for n in one.loss.notes if not n.startswith("promptfoo config written")]
    assert shown(unwritten) == shown(one.loss)
    if to == "promptfoo" and name.endswith(".yaml"):  # the config beside it too
        assert (tmp_path / "parts" / "config.yaml").read_text().replace(str(tmp_path / "parts"), "D") == \
            (tmp_path / "one" / "config.yaml").read_text().replace(str(tmp_path / "one"), "D")


@pytest.mark.parametrize("to,name", [("jsonl", "out.jsonl"), ("langsmith", "out.jsonl"), ("braintrust", "out.jsonl")])
def test_parts_of_a_format_without_header_concatenate_to_the_file(tmp_path, to, name):
    path = _valid_parquet(tmp_path)
    one = tmp_path / name
    evalconv.convert(path, str(one), to=to)
    parts = _written_parts(path, to, str(one), [10, 11, 120])
    assert b"".join(part.to_bytes() for part in parts) == one.read_bytes()


@settings(max_examples=10)
@given(cuts)
def test_loss_reports_of_any_split_merge_to_one_process_report(points):
    with tempfile.TemporaryDirectory() as folder:
        path = _valid_parquet(Path(folder))
        for to, name in (("deepeval", "out.json"), ("langsmith", "out.jsonl"), ("csv", "out.csv")):
            one = evalconv.convert(path, str(Path(folder) / name), to=to, report=str(Path(folder) / "r.json"))
            reports = [part.loss(str(Path(folder) / name)) for part in _written_parts(path, to, str(Path(folder) / name), points)]
            merged = reports[0]
            for report in reports[1:]:
                merged = partitions.merge_loss_reports(merged, report)
            assert jsonvalue.dumps(merged.to_json()) == jsonvalue.dumps(one.loss.to_json()), to
            if len(reports) >= 3:
                left = partitions.merge_loss_reports(partitions.merge_loss_reports(reports[0], reports[1]), reports[2])
                right = partitions.merge_loss_reports(reports[0], partitions.merge_loss_reports(reports[1], reports[2]))
                assert left.to_json() == right.to_json()


@settings(max_examples=15)
@given(cuts, st.sampled_from([(), ("metadata.severity",), ("case.oracleType,metadata.severity",)]))
def test_stats_of_any_split_are_one_pass_byte_for_byte(points, by):
    minimums = ("metadata.severity=harmful:70",)
    one = evalconv_stats(messy_parquet(), by, minimums)
    label = one.files[0].path
    parts = [partitions.count_batch(b, by=by, minimums=minimums, source=label, first_record=first)
             for b, first in _split(_table(), points)]
    for part in parts:
        part.files[0].format = "parquet"
    merged = evalconv.stats_from_parts(parts)
    assert jsonvalue.dumps(merged.to_json()) == jsonvalue.dumps(one.to_json())
    if len(parts) >= 3:
        left = partitions.merge_stats_parts(partitions.merge_stats_parts(parts[0], parts[1]), parts[2])
        right = partitions.merge_stats_parts(parts[0], partitions.merge_stats_parts(parts[1], parts[2]))
        rest = parts[3:]
        assert jsonvalue.dumps(evalconv.stats_from_parts([left, *rest]).to_json()) == \
            jsonvalue.dumps(evalconv.stats_from_parts([right, *rest]).to_json())


def evalconv_stats(path, by, minimums):
    from evalconv.coverage.stats import stats

    return stats([path], by=by, minimums=minimums)


def test_a_folder_of_sets_maps_and_reduces_as_evalconv_validate_does(tmp_path):
    """row_groups -> validate_group (any order) -> reduce_files is evalconv.validate(folder),
    a file without rows included."""
    import shutil

    folder = tmp_path / "sets"
    (folder / "deeper").mkdir(parents=True)
    shutil.copy(messy_parquet(), folder / "a.parquet")
    shutil.copy(messy_parquet(), folder / "deeper" / "b.parquet")
    evalconv.write([], str(folder / "empty.parquet"), to="parquet")
    pq.ParquetWriter(folder / "no-groups.parquet", _table().schema).close()  # a footer, no row group
    groups = partitions.row_groups(str(folder))
    assert [g.index for g in groups if g.path.endswith("no-groups.parquet")] == [-1]  # one empty item
    assert {g.path for g in groups} == {str(p) for p in folder.rglob("*.parquet")}
    parts = {g: partitions.validate_group(g) for g in reversed(groups)}  # the map in any order
    report = partitions.reduce_files(parts[g] for g in groups)
    assert report.to_json() == evalconv.validate([str(folder)]).to_json()
    assert report.exit_code == 1


def test_a_folder_with_a_file_that_is_not_parquet_is_one_line_naming_it(tmp_path):
    import json
    import shutil

    from conftest import row
    from evalconv.canonical.errors import UsageError

    shutil.copy(messy_parquet(), tmp_path / "a.parquet")
    (tmp_path / "b.jsonl").write_text(json.dumps(row("x")) + "\n")
    with pytest.raises(UsageError) as caught:
        partitions.row_groups(str(tmp_path))
    assert str(tmp_path / "b.jsonl") in caught.value.render() and "--to parquet" in caught.value.render()

"""Two cores give exactly what one gives: the same findings, rows, lines, output bytes and ledger."""
from __future__ import annotations

import json
import threading

import pytest

import evalconv
from conftest import ROOT, row
from evalconv.engine import parallel, pools, split_writers

REAL_START_METHOD = pools.start_method
GOLDEN = [json.loads(line) for line in (ROOT / "golden_roundtrips" / "support-agent.jsonl").read_text().splitlines()]


@pytest.fixture(autouse=True)
def every_test_in_small_chunks(small_chunks):
    """Every test runs with workers forked and with workers from a fork server (conftest)."""


def test_a_threaded_caller_gets_a_fork_server_not_fork():
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        assert REAL_START_METHOD() in ("forkserver", None)
    finally:
        stop.set()
        helper.join()


def messy_set(tmp_path, *, tail: bytes = b"") -> str:
    lines = []
    for i in range(300):
        value = json.loads(json.dumps(GOLDEN[i % len(GOLDEN)]))
        value["id"] = value["metadata"]["case"]["caseId"] = f"{value['id']}-{i}"
        value["metadata"]["case"].pop("caseFamily", None)
        lines.append(json.dumps(value))
    lines[7] = json.dumps(row("dup"))
    lines[250] = json.dumps(row("dup"))                       # duplicate across chunks
    lines[20] = json.dumps(row("fam-a", caseFamily="f"))
    lines[280] = json.dumps(row("fam-b", oracle="acceptable-set", expected=(["x"],), caseFamily="f"))
    lines[100] = '{"id": "broken", '                           # a line that is not JSON
    lines[101] = "[1, 2]"                                       # not an object
    lines[150] = json.dumps({**row("schema-bad"), "extra": 1})
    lines[151] = ""                                             # blank lines are skipped
    text = "\ufeff" + "\n".join(lines[:200]) + "\r\n" + "\n".join(lines[200:]) + "\n"
    path = tmp_path / "set.jsonl"
    path.write_bytes(text.encode("utf-8") + tail)
    return str(path)


def test_validate_is_the_same_with_two_workers(tmp_path):
    path = messy_set(tmp_path)
    one, two = evalconv.validate([path], jobs=1), evalconv.validate([path], jobs=2)
    assert one.to_json() == two.to_json()
    codes = {f["code"] for f in one.to_json()["files"][0]["errors"]}
    assert codes == {"duplicate-id", "case-family-conflict", "parse", "schema"}


@pytest.mark.parametrize("to", ["csv", "jsonl", "parquet"])
def test_keep_going_conversion_is_byte_identical(tmp_path, to):
    path = messy_set(tmp_path)
    results = {}
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}.{to}"
        result = evalconv.convert(path, str(out), to=to, keep_going=True, jobs=jobs)
        results[jobs] = (result, out.read_bytes(), (tmp_path / f"out{jobs}.{to}.rejected.jsonl").read_bytes())
    (one, out1, ledger1), (two, out2, ledger2) = results[1], results[2]
    assert out1 == out2 and ledger1 == ledger2
    def comparable(result):
        out = {k: v for k, v in result.to_json().items() if k not in ("output", "ledger")}
        out["loss"] = {k: v for k, v in out["loss"].items() if k != "output"}
        return out
    assert comparable(one) == comparable(two)
    duplicate = [json.loads(line) for line in ledger2.splitlines() if b'"duplicate-id"' in line]
    assert duplicate[0]["value"]["id"] == "dup" and duplicate[0]["line"] == 251


def test_default_mode_writes_nothing_with_either(tmp_path):
    path = messy_set(tmp_path)
    for jobs in (1, 2):
        out = tmp_path / f"o{jobs}.csv"
        result = evalconv.convert(path, str(out), to="csv", jobs=jobs)
        assert result.exit_code == 1 and not out.exists()


def test_a_bad_byte_late_in_the_file_names_the_same_line(tmp_path):
    path = messy_set(tmp_path, tail=b'{"id": "\xff"}\n')
    errors = []
    for jobs in (1, 2):
        with pytest.raises(evalconv.ReadError) as err:
            evalconv.convert(path, str(tmp_path / f"x{jobs}.csv"), to="csv", jobs=jobs)
        errors.append(err.value.render())
    assert errors[0] == errors[1] and ":301:" in errors[0]
    assert not list(tmp_path.glob("x*.csv"))


@pytest.mark.parametrize("to", ["parquet", "hf"])
def test_row_groups_cut_across_the_workers_batches_give_the_same_bytes(tmp_path, monkeypatch, to):
    """The workers build a record batch per chunk; the parent cuts row groups across them (and
    across the single rows that carry findings) where one core would."""
    import pyarrow.parquet as pq

    from evalconv.canonical import parquet_format

    monkeypatch.setattr(parquet_format, "ROW_GROUP_ROWS", 8)
    path = messy_set(tmp_path)
    outs = {}
    for jobs in (1, 2):
        out = tmp_path / f"rg{jobs}" / "set"
        out.parent.mkdir()
        result = evalconv.convert(path, str(out), to=to, keep_going=True, jobs=jobs,
                                  ledger=str(tmp_path / f"rej{jobs}.jsonl"))
        assert result.rows_written == 294
        outs[jobs] = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} if to == "hf" \
            else {"": out.read_bytes()}
    assert outs[1] == outs[2]
    data = next(tmp_path.joinpath("rg2", "set").rglob("*.parquet")) if to == "hf" else tmp_path / "rg2" / "set"
    groups = pq.ParquetFile(data).metadata
    assert groups.num_rows == 294 and groups.num_row_groups == 37
    assert [groups.row_group(i).num_rows for i in range(37)] == [8] * 36 + [6]


def test_clean_golden_rows_convert_identically(tmp_path):
    path = tmp_path / "clean.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in GOLDEN) * 1, encoding="utf-8")
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"c{jobs}.csv"
        assert evalconv.convert(str(path), str(out), to="csv", jobs=jobs).exit_code == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_a_dataset_folder_is_the_same_with_two_workers(tmp_path):
    """hf (like parquet) takes rows the workers checked and encoded, decoded again by the parent."""
    lines = []
    for i in range(30):
        for r in GOLDEN:
            value = json.loads(json.dumps(r))
            value["id"] = value["metadata"]["case"]["caseId"] = f"{r['id']}-{i}"
            value["metadata"]["case"].pop("caseFamily", None)
            lines.append(json.dumps(value) + "\n")
    path = tmp_path / "clean.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    folders = []
    for jobs in (1, 2):
        (tmp_path / f"j{jobs}").mkdir()
        out = tmp_path / f"j{jobs}" / "ds"  # the folder's name is the card's title
        result = evalconv.convert(str(path), str(out), to="hf", jobs=jobs)
        assert result.exit_code == 0 and result.rows_written == 300
        folders.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    assert folders[0] == folders[1]


def _options(to: str, name: str):
    from evalconv.registry import REGISTRY

    fmt = REGISTRY.get(to)
    return fmt.make_options(name)


def test_only_line_per_row_targets_and_plain_files_go_parallel(tmp_path):
    path = messy_set(tmp_path)
    assert parallel.eligible(path, "jsonl", "csv", None, 2)
    assert parallel.eligible(path, "jsonl", None, None, 2)
    assert parallel.eligible(path, "jsonl", "parquet", None, 2)  # rows decoded by the parent
    assert not parallel.eligible(path, "jsonl", "json", None, 2)
    for to, name in SPLIT_TARGETS:
        assert parallel.eligible(path, "jsonl", to, None, 2, _options(to, name)), (to, name)
    # a writer whose rows depend on the whole set (Ragas: one kind of sample) stays on one core
    for to, name in [("ragas", "o.ragas.jsonl")]:
        assert not parallel.eligible(path, "jsonl", to, None, 2, _options(to, name)), (to, name)
    assert not parallel.eligible(path, "csv", "jsonl", None, 2)
    assert not parallel.eligible(path, "jsonl", "csv", "cp1252", 2)
    assert not parallel.eligible(path, "jsonl", "csv", None, 1)
    assert not parallel.eligible("-", "jsonl", "csv", None, 2)


def test_regression_a_list_evaluator_in_a_case_family_crashed_the_workers(tmp_path):
    """An invalid row whose evaluator is a list, in a case family: the workers could not index
    it and the run ended in a traceback; it is a schema finding, as on one core."""
    rows = [row(f"r{i}", caseFamily="f") for i in range(40)]
    rows[5]["metadata"]["case"]["evaluator"] = ["llm-judge"]
    rows[9]["metadata"]["case"]["evaluator"] = True
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    one, two = evalconv.validate([str(path)], jobs=1), evalconv.validate([str(path)], jobs=2)
    assert one.to_json() == two.to_json()
    assert {f["code"] for f in two.to_json()["files"][0]["errors"]} == {"schema", "case-family-conflict"}


def test_a_worker_told_to_stop_drops_every_task_after():
    ran = []
    try:
        pools._on_interrupt(2, None)  # Ctrl-C between two tasks
        assert pools._interruptible(ran.append, 1) is pools.INTERRUPTED and ran == []
    finally:
        pools._interrupted = False


def test_no_processes_to_be_had_means_one_core_not_a_failure(tmp_path, monkeypatch):
    path = messy_set(tmp_path)

    def no_fork(*args, **kwargs):
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(parallel, "Workers", no_fork)
    one = evalconv.validate([path], jobs=1)
    assert evalconv.validate([path], jobs=2).to_json() == one.to_json()


def test_csv_columns_first_used_in_later_chunks_are_byte_identical(tmp_path):
    """Issue 12: the CSV header holds only the columns used, and workers see only their chunk.
    Keys first seen in different chunks, in different orders, and a typed column only the last
    row needs give the same header and bytes as one core, and read back exactly."""
    rows = []
    for i in range(400):
        value = row(f"r{i}", scenario="x" * (i % 40))
        if i % 97 == 5:
            value["metadata"][f"k{i % 4}"] = f"v{i}"
        if i in (150, 151):
            value["metadata"].update({"late": "b", "later": "a"} if i == 150 else {"later": "c", "late": ""})
        rows.append(value)
    rows[-1]["expected"] = 1
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    outs = {}
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}.csv"
        assert evalconv.convert(str(path), str(out), to="csv", jobs=jobs).exit_code == 0
        outs[jobs] = out.read_bytes()
    assert outs[1] == outs[2]
    assert outs[1].split(b"\r\n", 1)[0].endswith(b"case:json,metadata.k1,metadata.k2,metadata.late,"
                                                 b"metadata.later,metadata.k3,metadata.k0,metadata:json")
    assert [r.to_json() for r in evalconv.read(str(tmp_path / "out2.csv")).rows] == rows


def _split_targets() -> list[tuple[str, str]]:
    """Every vendor (format, output name) whose writer writes in the workers (a "line-per-row"
    `write_shape`, not lossless): what the registry finds, so a new format is checked here as it lands."""
    from evalconv.registry import REGISTRY

    found = []
    for fmt in REGISTRY.all():
        if not fmt.can_write or fmt.write_shape != "line-per-row" or fmt.lossless:
            continue
        for suffix in [v.suffixes[0] for v in fmt.variants] or [fmt.output_suffix]:
            found.append((fmt.name, "out" + suffix))
    return found


SPLIT_TARGETS = _split_targets()


def test_the_vendor_writers_that_split_are_found():
    assert {name for name, _ in SPLIT_TARGETS} >= {"promptfoo", "langsmith", "braintrust", "inspect"}
    assert len([t for t in SPLIT_TARGETS if t[0] == "promptfoo"]) == 4  # YAML, JSON, JSONL, CSV
    assert {t for t in SPLIT_TARGETS if t[0] == "deepeval"} == {("deepeval", "out.json"), ("deepeval", "out.jsonl"),
                                                               ("deepeval", "out.csv")}


def _starters_and_golden(tmp_path) -> str:
    """The messy set, with the golden rows (tool calls, person-graded rows, a starter row) and
    rows naming no evaluator spread across the chunks."""
    path = messy_set(tmp_path)
    extra = []
    for i in range(40):
        value = json.loads(json.dumps(GOLDEN[i % len(GOLDEN)]))
        value["id"] = value["metadata"]["case"]["caseId"] = f"g{i}-{value['id']}"
        value["metadata"]["case"].pop("caseFamily", None)
        extra.append(json.dumps(value) + "\n")
    with open(path, "a", encoding="utf-8") as f:
        f.writelines(extra)
    return path


@pytest.mark.parametrize("to,name", SPLIT_TARGETS)
def test_vendor_writers_on_two_cores_give_the_same_file_report_config_and_ledger(tmp_path, monkeypatch, to, name):
    path = _starters_and_golden(tmp_path)
    replayed = []
    real_write = split_writers.ReplayWriter.write
    monkeypatch.setattr(split_writers.ReplayWriter, "write", lambda self, rows: (replayed.append(1), real_write(self, rows)))
    results = {}
    for jobs in (1, 2):
        folder = tmp_path / f"j{jobs}"
        folder.mkdir()
        options = {"config": str(folder / "promptfooconfig.yaml")} if to == "promptfoo" and not name.endswith(".csv") else {}
        result = evalconv.convert(path, str(folder / name), to=to, keep_going=True, jobs=jobs,
                                  ledger=str(folder / "rejected.jsonl"), report=str(folder / "report.json"), **options)
        files = {p.name: p.read_bytes() for p in folder.iterdir()}
        report = json.loads(files.pop("report.json").decode().replace(str(folder), "DIR"))  # the config's note names it
        report.pop("output")
        results[jobs] = (result, files, report)
        if jobs == 1:
            assert not replayed
    assert replayed, "the rows were not written through the workers"
    (one, files1, report1), (two, files2, report2) = results[1], results[2]
    assert files1 == files2
    assert report1 == report2 and report1["carried"]
    def comparable(result, folder):
        out = {k: v for k, v in result.to_json().items() if k not in ("output", "ledger", "report")}
        out["loss"] = {k: v for k, v in out["loss"].items() if k != "output"}
        return json.loads(json.dumps(out).replace(str(folder), "DIR"))
    assert comparable(one, tmp_path / "j1") == comparable(two, tmp_path / "j2")
    assert one.rows_written == 334
    if to == "promptfoo":
        notes = " ".join(report2["notes"])  # every kind of note, counted across the chunks
        assert "always fails" in notes and "starter rows" in notes and "name no evaluator" in notes
        assert "tracing" in notes or name.endswith(".csv")  # CSV holds no trajectory assertion
        # CSV: no tracing notice, but the golden set's formula-looking cells, which it cannot guard
        assert len(report2["notices"]) == 4  # and the grading chosen for rows that name no evaluator
        assert name.endswith(".csv") == any("run as formulas" in n for n in report2["notices"])


def test_an_error_a_writer_raises_in_a_worker_stops_the_run_as_on_one_core(tmp_path, monkeypatch, small_chunks):
    """An error a writer raises that is not the refusal of one row (tests/formats/test_refused_rows.py)
    stops the run where the serial writer stops it: the same error, nothing written."""
    if small_chunks != "fork":
        pytest.skip("the patched writer reaches the workers only when they are forked")
    from evalconv.canonical.errors import WriteError
    from evalconv.vendors.langsmith.format import LangSmithWriter

    real_encode = LangSmithWriter.encode

    def failing(self, row):
        if row.id.endswith("-230"):
            raise WriteError(f"row '{row.id}': failed", field="$.metadata.x")
        return real_encode(self, row)

    monkeypatch.setattr(LangSmithWriter, "encode", failing)
    lines = [json.dumps(row(f"r-{i}")) for i in range(300)]
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(lines) + "\n")
    errors = []
    for jobs in (1, 2):
        out = tmp_path / f"r{jobs}.jsonl"
        with pytest.raises(WriteError) as err:
            evalconv.convert(str(path), str(out), to="langsmith", jobs=jobs, keep_going=True)
        errors.append(err.value.render())
        assert not out.exists()
    assert errors[0] == errors[1] == "$.metadata.x: row 'r-230': failed"


@pytest.mark.parametrize("to,name", [("promptfoo", "out.json"), ("inspect", "out.inspect.json")])
@pytest.mark.parametrize("valid_from", [120, 300])  # the first valid row in a later chunk; none at all
def test_a_json_array_opens_at_the_first_row_written_whichever_chunk_holds_it(tmp_path, to, name, valid_from):
    lines = ["{" if i < valid_from else json.dumps(row(f"r-{i}")) for i in range(300)]
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(lines) + "\n")
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}-{name}"
        evalconv.convert(str(path), str(out), to=to, keep_going=True, jobs=jobs, ledger=str(tmp_path / f"l{jobs}"))
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert len(json.loads(outs[1])) == 300 - valid_from


@pytest.mark.parametrize("name", ["out.json", "out.jsonl"])
@pytest.mark.parametrize("layout", ["chats first", "all chats", "chats between"])
def test_deepeval_holds_chats_until_the_set_decides_on_two_cores_as_on_one(tmp_path, name, layout):
    """A set of user/assistant chats only is conversational goldens; one other row makes every
    golden single-turn. The workers write single-turn goldens and leave chats to the parent's
    writer, which holds them until the set decides, as one core does."""
    def chat(i):
        value = row(f"c-{i}", expected=(f"answer {i}",))
        value["input"] = {"messages": [{"role": "user", "content": f"question {i}?"},
                                       {"role": "assistant", "content": "a"}, {"role": "user", "content": "and?"}]}
        return value
    values = [chat(i) for i in range(200)]
    if layout == "chats first":
        values[150] = row("plain-150")
    elif layout == "chats between":
        values = [row(f"p-{i}") if i % 50 == 0 else v for i, v in enumerate(values)]
    one, two = _deepeval_on_one_and_two_cores(tmp_path, values, name)
    assert one[:2] == two[:2]
    assert ('"turns"' in two[0].decode()) == (layout == "all chats") and two[2].rows_written == 200


def _deepeval_on_one_and_two_cores(tmp_path, values, name):
    """(the file's bytes, the loss report, the result) of `values` written to DeepEval `name`
    with one worker and with two."""
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in values))
    results = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}-{name}"
        result = evalconv.convert(str(path), str(out), to="deepeval", jobs=jobs, report=str(tmp_path / f"r{jobs}.json"))
        report = json.loads((tmp_path / f"r{jobs}.json").read_text())
        report.pop("output")
        results.append((out.read_bytes(), report, result))
    return results


@pytest.mark.parametrize("text_row", [None, 170])  # every expected cell a number; one text cell late
def test_deepeval_csv_column_types_are_followed_across_the_chunks(tmp_path, text_row):
    """pandas types a CSV column by all its cells: the workers say how each cell looks, the
    parent follows the columns a row at a time and reports at the end, as one core does."""
    values = [row(f"n-{i}", expected=(str(i),)) for i in range(200)]
    values[40]["input"] = "N/A"  # a cell pandas reads as no value: a notice, on one core or two
    if text_row is not None:
        values[text_row]["expected"] = "forty"
    one, two = _deepeval_on_one_and_two_cores(tmp_path, values, "out.csv")
    assert one[:2] == two[:2] and one[2].loss.notices == two[2].loss.notices
    numbered = [e for e in two[1]["carried"] if e["path"] == "$.expected" and "number" in e["reason"]]
    assert (len(numbered[0]["ids"]) == 200) if text_row is None else not numbered


@pytest.mark.parametrize("excel_safe", [False, True])
def test_regression_formula_looking_rows_are_noted_as_on_one_core(tmp_path, excel_safe):
    """Issue 27 (speed): the parent found the CSV's formula-looking rows again by searching the
    workers' bytes, and an empty last cell (`,\\r\\n`) looked like a CR cell, so it re-parsed
    half the lines. The workers now record the notice as they encode each row and the parent
    notes it for the rows it writes: the same rows, in the same order, as one core (a row whose
    first cell alone looks like a formula, on a row that brings a new column, included; a
    duplicate the set rules reject is written by neither, and noted by neither)."""
    rows = []
    for i in range(300):
        value = row(f"r{i}", scenario="x" * (i % 40))
        if i in (4, 120, 260):
            value["input"] = f"=SUM(A{i})"
        if i in (9, 140):  # only its first cell looks like a formula, and it brings a new column
            value["metadata"][f"k{i}"] = "v"
            value["id"] = value["metadata"]["case"]["caseId"] = f"-r{i}"
        if i == 2:
            value["metadata"]["note"] = "@ mention"
        rows.append(value)
    rows[150] = json.loads(json.dumps(rows[4]))  # a duplicate of a formula-looking row
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    seen = {}
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}.csv"
        result = evalconv.convert(str(path), str(out), to="csv", jobs=jobs, keep_going=True, excel_safe=excel_safe)
        loss = {k: v for k, v in result.to_json()["loss"].items() if k != "output"}
        seen[jobs] = (out.read_bytes(), loss)
    assert seen[1] == seen[2]
    named = [n for n in seen[2][1].get("notices", []) if "run as formulas" in n]
    assert bool(named) is not excel_safe  # --excel-safe guards them: nothing to say
    if named:
        assert "(6 rows: 'r2', 'r4', '-r9', 'r120', '-r140', 'r260')" in named[0]


def test_regression_stretches_are_written_a_mib_at_a_time_not_one_write_each():
    """A row with a finding ends a stretch of clean rows, so at 100k rows the parent made 36,000
    writes (and 36,000 looks per carried key). Stretches are now gathered: the same bytes, in
    order, in a few writes, and nothing written or noted until `finish` for what is pending."""
    from evalconv.engine.payloads import CleanRows
    from evalconv.engine.split_writers import WRITE_BYTES, ReplayWriter
    from evalconv.reports import ChunkLosses, LossReport

    class Out:
        def __init__(self):
            self.writes = []

        def write_encoded(self, data):
            self.writes.append(data)

    class Keeper:
        joins = None

        def keep(self, kept):
            pass

    out, losses = Out(), ChunkLosses()
    for i in range(3000):
        losses.add(i, (f"r{i}", (("$.metadata.case.caseId", "carried"),), (), ()))
    writer = ReplayWriter(out, Keeper(), LossReport("x"))
    stretches = [(bytes([65 + i % 26]) * 1000, i) for i in range(3000)]  # ~3 MB in 1 kB stretches
    for data, i in stretches:
        writer.write(CleanRows(1, data, parts=[(None, None)], losses=(losses, i, i + 1)))
    assert len(out.writes) == 2 and all(len(w) >= WRITE_BYTES for w in out.writes)
    assert writer._report.carried.to_json() == []  # the run is still open
    writer.finish()
    assert b"".join(out.writes) == b"".join(data for data, _ in stretches) and len(out.writes) == 3
    (carried,) = writer._report.carried.to_json()
    assert carried["ids"] == [f"r{i}" for i in range(3000)]


def test_encoded_stretches_keep_their_runs_when_gathered(tmp_path):
    """The CSV writer's runs (the columns each stretch was encoded under) shift with the bytes
    gathered before them: the sheet is the one a write per stretch gives."""
    import io

    from evalconv.canonical.csv_format import CSVWriter
    from evalconv.engine.parallel import EncodedWriter
    from evalconv.engine.payloads import CleanRows
    from evalconv.reports import LossReport

    inputs, notes = ("id", "input"), ("id", "metadata.note")  # a cell's column is its run's
    stretches = [(b"a,1\r\nb,2\r\n", [(0, inputs)]), (b"c,x\r\n", [(0, notes)]),
                 (b"d,4\r\ne,y\r\n", [(0, inputs), (5, notes)])]

    def sheet(gathered: bool) -> str:
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
        csv_writer = CSVWriter(out)
        if gathered:
            encoded = EncodedWriter(csv_writer, LossReport("csv"))
            for data, runs in stretches:
                encoded.write(CleanRows(1, data, runs=runs))
            encoded.finish()
        else:
            for data, runs in stretches:
                csv_writer.write_lines(data, runs)
        csv_writer.close()
        out.flush()
        return out.buffer.getvalue().decode("utf-8")

    gathered = sheet(True)
    assert gathered == sheet(False)
    header, *lines = gathered.split("\r\n")
    column = header.split(",").index
    cells = [line.split(",") for line in lines[:5]]
    assert [(c[column("input")], c[column("metadata.note")]) for c in cells] == \
        [("1", ""), ("2", ""), ("", "x"), ("4", ""), ("", "y")]

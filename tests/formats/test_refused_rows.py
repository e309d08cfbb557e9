"""A row a writer refuses (`RowRefused`: Inspect refuses an empty input) is a rejected row, not
the end of the set: without --keep-going exit 1 naming it, nothing written; with it the rest is
written, the row goes to the rejected file and the summary counts it; on one core and on two."""
from __future__ import annotations

import json

import pytest

import evalconv
from conftest import row, run_cli
from evalconv.engine import split_writers
from interop import require_module

# (target, output name, what the row holds that the target refuses, the finding's path)
REFUSALS = [
    ("inspect", "out.inspect.jsonl", {"input": ""}, "$.input"),
    ("inspect", "out.inspect.json", {"input": ""}, "$.input"),
    ("inspect", "out.inspect.csv", {"input": ""}, "$.input"),
    ("inspect", "out.inspect.csv", {"id": "bad\x00id"}, "$.id"),
]


def _set(tmp_path, refused: dict, rows: int = 300, at: int = 230) -> tuple[str, str]:
    """A JSONL set (large enough for two cores under `small_chunks`) whose row `at` is refused."""
    lines = [row(f"r-{i}") for i in range(rows)]
    bad = lines[at]
    bad.update(refused)
    bad["metadata"]["case"]["caseId"] = bad["id"]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(value) + "\n" for value in lines), encoding="utf-8")
    return str(path), bad["id"]


def _load_in_inspect(path):
    dataset = require_module("inspect_ai.dataset")
    return list(dataset.csv_dataset(str(path)) if str(path).endswith(".csv") else dataset.json_dataset(str(path)))


@pytest.mark.parametrize("to,name,refused,field", REFUSALS)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_row_the_writer_refuses_is_rejected_not_the_whole_set(tmp_path, capsys, small_chunks, to, name, refused,
                                                              field, jobs):
    source, bad_id = _set(tmp_path, refused)
    out = tmp_path / name
    code, err = run_cli(["convert", source, "--to", to, "-o", str(out), "-j", jobs], capsys)
    assert code == 1 and not out.exists(), err
    shown = bad_id.replace("\x00", "\\x00")
    assert f"set.jsonl:231: row 231 ({shown}) {field}: error[refused-by-target]: " in err
    assert "Traceback" not in err
    assert "nothing written: 1 of 300 rows rejected, 1 refused by inspect (1 error)" in err

    code, err = run_cli(["convert", source, "--to", to, "-o", str(out), "-j", jobs, "--keep-going",
                         "--report", str(tmp_path / "report.json")], capsys)
    assert code == 1 and out.exists(), err
    assert f"299 rows written, 1 rejected to {out}.rejected.jsonl" in err
    (entry,) = [json.loads(line) for line in (tmp_path / f"{name}.rejected.jsonl").read_text().splitlines()]
    assert (entry["row"], entry["line"], entry["id"]) == (231, 231, bad_id)
    assert [(f["code"], f["path"]) for f in entry["findings"]] == [("refused-by-target", field)]
    assert entry["value"]["id"] == bad_id
    assert json.loads((tmp_path / "report.json").read_text())["rows"] == 299
    samples = _load_in_inspect(out)  # Inspect's own loader takes what was written
    assert [str(s.id) for s in samples] == [f"r-{i}" for i in range(300) if i != 230]


def test_a_refused_row_is_reported_the_same_on_one_and_two_cores(tmp_path, monkeypatch, small_chunks):
    """The result, the ledger and the output bytes match whatever else the set holds: a row the
    set rules reject before the writer sees it (a duplicate id) is not refused as well."""
    replayed = []
    real_write = split_writers.ReplayWriter.write
    monkeypatch.setattr(split_writers.ReplayWriter, "write", lambda self, rows: (replayed.append(1), real_write(self, rows)))
    source, _ = _set(tmp_path, {"input": ""})
    lines = open(source, encoding="utf-8").read().splitlines()
    lines[240] = lines[230]  # the refused row again: a duplicate, rejected by the set rules
    lines[10] = "{"          # and a line that is not JSON
    with open(source, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    results = {}
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}.inspect.jsonl"
        result = evalconv.convert(source, str(out), to="inspect", keep_going=True, jobs=jobs)
        ledger = (tmp_path / f"j{jobs}.inspect.jsonl.rejected.jsonl").read_text()
        data = result.to_json()
        for key in ("output", "ledger"):
            data.pop(key)
        data["loss"].pop("output")
        results[jobs] = (data, out.read_bytes(), ledger)
    assert replayed, "the rows were not written through the workers"
    assert results[1] == results[2]
    data, _, ledger = results[1]
    assert data["rejected"] == 3 and data["written"] == 297
    codes = [[f["code"] for f in json.loads(line)["findings"]] for line in ledger.splitlines()]
    assert codes == [["parse"], ["refused-by-target"], ["duplicate-id"]]


def test_every_row_a_writer_refuses_is_named_on_one_and_two_cores(tmp_path, monkeypatch, small_chunks):
    """Any writer's `RowRefused` (here LangSmith's, patched in): each refused row is named, even
    after an earlier row is invalid, and --keep-going writes the rest; the same on two cores."""
    if small_chunks != "fork":
        pytest.skip("the patched writer reaches the workers only when they are forked")
    from evalconv.canonical.errors import RowRefused
    from evalconv.vendors.langsmith.format import LangSmithWriter

    real_encode = LangSmithWriter.encode

    def refusing(self, r):
        if r.id in ("r-20", "r-230"):
            raise RowRefused(r.id, "refused", field="$.metadata.x")
        return real_encode(self, r)

    monkeypatch.setattr(LangSmithWriter, "encode", refusing)
    lines = [json.dumps(row(f"r-{i}")) for i in range(300)]
    lines[10] = "{"
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(lines) + "\n")
    for jobs in (1, 2):
        out = tmp_path / f"r{jobs}.jsonl"
        result = evalconv.convert(str(path), str(out), to="langsmith", jobs=jobs)
        assert result.exit_code == 1 and not out.exists()
        assert [(f.code, f.row, f.id) for f in result.log.errors] == \
            [("parse", 11, None), ("refused-by-target", 21, "r-20"), ("refused-by-target", 231, "r-230")]
        result = evalconv.convert(str(path), str(out), to="langsmith", jobs=jobs, keep_going=True)
        assert result.rows_written == 297 and result.rejected == 3
        assert [r.id for r in evalconv.read(str(out), from_="langsmith").rows] == \
            [f"r-{i}" for i in range(300) if i not in (10, 20, 230)]

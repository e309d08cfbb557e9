"""Hugging Face dataset folders (issue 19): the card, the folder output, reading folders back."""
from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

import evalconv
from conftest import ROOT
from evalconv.cli import cli
from evalconv.vendors.hf import card
from parquet_samples import DISTINCTIONS, sample_row

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def _header(folder) -> dict:
    return card.read_header((folder / "README.md").read_text(encoding="utf-8"))


def test_the_folder_has_the_data_file_and_a_card_the_hub_reads(tmp_path):
    out = tmp_path / "support"
    result = evalconv.convert(str(GOLDEN), str(out), to="hf")
    assert result.exit_code == 0
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        ".evalconv-manifest.json", "README.md", "data/test-00000-of-00001.parquet"]
    header = _header(out)
    assert header["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*"}]}]
    assert header["dataset_info"]["splits"] == [{"name": "test", "num_bytes": 6102, "num_examples": 10}]
    names = [f["name"] for f in header["dataset_info"]["features"]]
    assert names == pq.read_schema(out / "data" / "test-00000-of-00001.parquet").names
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "| `case.oracleType` | string |" in text and "`rubric`" in text  # columns described, enums named
    assert "**1 of the 10 rows is a starter example**" in text and "`cs-starter-greeting`" in text
    assert "## Carried as JSON text" in text and "- `input:json`: 3 row(s)" in text


def test_the_loss_report_says_what_is_carried_and_nothing_is_dropped(tmp_path):
    result = evalconv.convert(str(GOLDEN), str(tmp_path / "ds"), to="hf")
    loss = result.loss.to_json()
    assert loss["lossy"] is False and loss["dropped"] == []
    carried = {c["path"] for c in loss["carried"]}
    assert {"$.input", "$.expected", "$.metadata.case.extensions", "$.metadata.reason"} <= carried


def test_no_starter_section_and_no_carried_section_when_there_is_none(tmp_path):
    evalconv.write([sample_row("plain")], str(tmp_path / "ds"), "hf")
    text = (tmp_path / "ds" / "README.md").read_text(encoding="utf-8")
    assert "Starter rows" not in text and "Carried as JSON text" not in text


def test_the_folder_reads_back_identical_through_the_cli(tmp_path):
    out = tmp_path / "ds"
    evalconv.write(DISTINCTIONS, str(out), "hf")
    result = CliRunner().invoke(cli, ["convert", str(out), "--to", "jsonl", "-o", str(tmp_path / "back.jsonl")])
    assert result.exit_code == 0, result.stderr
    assert evalconv.read(str(tmp_path / "back.jsonl")).rows == DISTINCTIONS


def test_writing_again_replaces_the_folder_it_wrote_but_never_a_foreign_one(tmp_path):
    out = tmp_path / "ds"
    evalconv.write(DISTINCTIONS, str(out), "hf")
    evalconv.write(DISTINCTIONS[:2], str(out), "hf")
    assert _header(out)["dataset_info"]["splits"][0]["num_examples"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]  # no temporary folder left
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(cli, ["convert", str(GOLDEN), "--to", "hf", "-o", str(foreign)])
    assert result.exit_code == 2 and "holds files evalconv did not write (notes.txt)" in result.stderr
    assert os.listdir(foreign) == ["notes.txt"]


def test_standard_output_is_refused_for_a_folder_format():
    result = CliRunner().invoke(cli, ["convert", str(GOLDEN), "--to", "hf"])
    assert result.exit_code == 2 and "writes a folder; name it with -o DIR" in result.stderr


def test_invalid_rows_write_no_folder(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "input": "q", "metadata": {"case": {}}}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["convert", str(bad), "--to", "hf", "-o", str(tmp_path / "ds")])
    assert result.exit_code == 1 and sorted(os.listdir(tmp_path)) == ["bad.jsonl"]


def test_a_jsonl_dataset_folder_with_a_card_reads(tmp_path):
    folder = tmp_path / "hub-jsonl"
    (folder / "data").mkdir(parents=True)
    evalconv.write(DISTINCTIONS[:4], str(folder / "data" / "test.jsonl"), "jsonl")
    evalconv.write(DISTINCTIONS[4:], str(folder / "data" / "train.jsonl"), "jsonl")
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n"
                                      "  - split: train\n    path: data/train.jsonl\n"
                                      "  - split: test\n    path: data/test.jsonl\n---\n# A set\n", encoding="utf-8")
    result = evalconv.read(str(folder))
    assert result.format == "hf" and result.log.errors == []
    assert [r.id for r in result.rows] == [r.id for r in DISTINCTIONS[4:] + DISTINCTIONS[:4]]
    assert "split(s) test, train" in result.report.notes[0]


def test_a_folder_without_a_card_reads_with_from_hf(tmp_path):
    folder = tmp_path / "bare"
    (folder / "data").mkdir(parents=True)
    evalconv.write(DISTINCTIONS, str(folder / "data" / "test-00000-of-00001.parquet"), "parquet")
    assert evalconv.read(str(folder), from_="hf").rows == DISTINCTIONS


def test_a_non_canonical_dataset_says_which_columns_it_needs_and_the_import_command(tmp_path):
    folder = tmp_path / "qa"
    (folder / "data").mkdir(parents=True)
    pq.write_table(pa.table({"question": ["2+2?"], "answer": ["4"]}), folder / "data" / "train-0.parquet")
    (folder / "README.md").write_text("---\ndataset_info:\n  features:\n  - name: question\n    dtype: string\n---\n",
                                      encoding="utf-8")
    result = CliRunner().invoke(cli, ["convert", str(folder), "--to", "jsonl"])
    assert result.exit_code == 2
    line, = result.stderr.strip().splitlines()
    assert "no column for required field(s) id, input, case.caseId" in line and "data/train-0.parquet" in line
    assert "(its columns: question, answer)" in line and f"run: evalconv import {folder} -o set.jsonl" in line


def test_a_canonical_file_with_a_stray_column_still_names_that_column(tmp_path):
    rows = evalconv.read(str(GOLDEN)).rows
    evalconv.write(rows, str(tmp_path / "set.parquet"), "parquet")
    table = pq.read_table(tmp_path / "set.parquet")
    pq.write_table(table.append_column("note", pa.array(["x"] * table.num_rows)), tmp_path / "stray.parquet")
    result = CliRunner().invoke(cli, ["convert", str(tmp_path / "stray.parquet"), "--to", "jsonl"])
    assert result.exit_code == 2 and "unknown column 'note'" in result.stderr and "evalconv import" not in result.stderr


def test_a_non_canonical_jsonl_data_file_names_the_import_command(tmp_path):
    folder = tmp_path / "qa"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "train.jsonl").write_text('{"question": "2+2?", "answer": "4"}\n', encoding="utf-8")
    (folder / "README.md").write_text(CARD_JSONL, encoding="utf-8")
    result = CliRunner().invoke(cli, ["convert", str(folder), "--to", "csv"])
    assert result.exit_code == 2
    line, = result.stderr.strip().splitlines()
    assert "(its columns: question, answer)" in line and f"run: evalconv import {folder} -o set.jsonl" in line


CARD_JSONL = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/*.jsonl\n---\n"


def test_a_card_pointing_outside_its_folder_is_refused(tmp_path):
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files: ../*.parquet\n---\n",
                                      encoding="utf-8")
    with pytest.raises(evalconv.ReadError, match="leaves the folder"):
        evalconv.read(str(folder))


def test_a_folder_of_sets_is_still_converted_file_by_file(tmp_path):
    """Only a folder with a dataset card (or --from hf) is one set."""
    src = tmp_path / "sets"
    src.mkdir()
    evalconv.write(DISTINCTIONS[:2], str(src / "a.jsonl"), "jsonl")
    evalconv.write(DISTINCTIONS[2:4], str(src / "b.jsonl"), "jsonl")
    result = CliRunner().invoke(cli, ["convert", str(src), "--to", "hf", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "out")) == ["a", "b"]
    assert [r.id for r in evalconv.read(str(tmp_path / "out" / "b")).rows] == [r.id for r in DISTINCTIONS[2:4]]


def test_the_card_yaml_is_plain_yaml():
    text = card.render("t", "test", "data/test-00000-of-00001.parquet", card.CardStats(rows=3))
    header = yaml.safe_load(text.split("---")[1])
    assert json.loads(json.dumps(header)) == header


def test_regression_formats_showed_a_blank_extension_for_the_folder_format():
    """`evalconv formats` left hf's extension column empty: it is a folder, and says so."""
    listed = {f["name"]: f for f in json.loads(CliRunner().invoke(cli, ["formats", "--format", "json"]).stdout)}
    assert listed["hf"]["folder"] is True and listed["hf"]["layout"].startswith("DIR/")
    assert listed["csv"]["folder"] is False and listed["csv"]["layout"] is None
    text = CliRunner().invoke(cli, ["formats"]).stdout
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("hf "))
    block = " ".join(lines[at:at + 3])  # a long cell wraps inside its column
    assert "DIR/ (README.md" in lines[at] and "data/*.parquet)" in block
    markdown = CliRunner().invoke(cli, ["formats", "--format", "markdown"]).stdout
    assert "| `hf` | yes | yes | `DIR/ (README.md card, data/*.parquet)` |" in markdown


def test_a_folder_format_must_declare_its_layout():
    from evalconv.canonical.format import Format
    with pytest.raises(TypeError, match="layout"):
        type("NoLayout", (Format,), {"name": "x", "folder": True})


def test_a_folder_with_some_other_state_json_is_still_a_folder_of_sets(tmp_path):
    folder = tmp_path / "sets"
    folder.mkdir()
    (folder / "state.json").write_text('{"step": 3}', encoding="utf-8")
    (folder / "a.jsonl").write_bytes(GOLDEN.read_bytes())
    assert not evalconv.REGISTRY.get("hf").matches_path(str(folder))
    (folder / "state.json").write_text('{"_data_files": [{"filename": "a.arrow"}]}', encoding="utf-8")
    assert evalconv.REGISTRY.get("hf").matches_path(str(folder))  # what save_to_disk writes

"""A dataset that is not canonical (a Hub QA set, a prompt/completion set) goes through `evalconv
import`, with the sheet's column matching, --map, --suggest-map and stable ids; the reader of a
canonical dataset points such a dataset there with the exact command. The datasets are written
offline by the real `datasets` library."""
from __future__ import annotations

import json
import shlex

import pytest
from click.testing import CliRunner

import evalconv
from conftest import ROOT
from evalconv.cli import cli
from interop import require_module

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
pytestmark = pytest.mark.interop
CARD = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*\n---\n# QA\n"


@pytest.fixture
def datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    return require_module("datasets")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def hub_folder(datasets, path, data):
    """What `push_to_hub` puts on the Hub, made offline: data/train-*.parquet and a card."""
    (path / "data").mkdir(parents=True)
    datasets.Dataset.from_dict(data).to_parquet(str(path / "data" / "train-00000-of-00001.parquet"))
    (path / "README.md").write_text(CARD, encoding="utf-8")
    assert datasets.load_dataset(str(path))["train"].num_rows == len(next(iter(data.values())))
    return path


def jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_prompt_completion_dataset_folder_imports_with_its_integer_ids(tmp_path, datasets):
    folder = hub_folder(datasets, tmp_path / "sft", {"id": [7, 8], "prompt": ["Say hi", "Add 2 and 3"],
                                                      "completion": ["hi", "5"], "lang": ["en", "en"]})
    out = tmp_path / "set.jsonl"
    result = run("import", folder, "-o", out)
    assert result.exit_code == 0, result.output
    assert "matched: id -> id, prompt -> input, completion -> expected" in result.stderr
    rows = jsonl(out)
    assert [(r["id"], r["input"], r["expected"], r["metadata"]["lang"]) for r in rows] == [
        ("7", "Say hi", "hi", "en"), ("8", "Add 2 and 3", "5", "en")]
    assert rows[0]["metadata"]["case"]["oracleType"] == "reference-answer"
    assert evalconv.validate([str(out)]).exit_code == 0


def test_a_qa_dataset_saved_to_disk_imports_with_stable_ids_and_its_splits(tmp_path, datasets):
    qa = datasets.Dataset.from_dict({"question": ["What is 2+2?", "Capital of France?"], "answer": ["4", "Paris"],
                                     "score": [1.5, 2]})
    datasets.DatasetDict({"train": qa, "test": qa.select([1])}).save_to_disk(str(tmp_path / "qa"))
    outs = []
    for name in ("a.jsonl", "b.jsonl"):
        result = run("import", tmp_path / "qa", "-o", tmp_path / name)
        assert result.exit_code == 0, result.output
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]  # the same dataset gives the same ids
    rows = jsonl(tmp_path / "a.jsonl")
    assert [r["metadata"]["split"] for r in rows] == ["train", "train", "test"]
    assert [r["input"] for r in rows] == ["What is 2+2?", "Capital of France?", "Capital of France?"]
    assert rows[1]["id"] != rows[2]["id"] and rows[2]["id"].startswith(rows[1]["id"])
    assert rows[0]["metadata"]["score"] == 1.5 and rows[0]["id"].startswith("what-is-2-2-")


def test_suggest_map_and_map_work_on_a_parquet_file_from_the_hub(tmp_path, datasets):
    path = tmp_path / "train.parquet"
    datasets.Dataset.from_dict({"query": ["Where is my order?"], "gold": ["It ships today."],
                                "topic_name": ["shipping"]}).to_parquet(str(path))
    suggested = run("import", path, "--suggest-map")
    assert suggested.exit_code == 0
    assert suggested.stdout.splitlines()[1:] == ["query: input  # matched by name",
                                                 "gold: expected  # matched by name",
                                                 "topic_name: metadata.topic_name  # no match: kept as user metadata"]
    mapping = tmp_path / "map.yaml"
    mapping.write_text(suggested.stdout.replace("metadata.topic_name", "case.scenario"), encoding="utf-8")
    result = run("import", path, "--map", mapping, "-o", tmp_path / "set.jsonl")
    assert result.exit_code == 0, result.output
    assert jsonl(tmp_path / "set.jsonl")[0]["metadata"]["case"]["scenario"] == "shipping"


@pytest.mark.parametrize("layout", ["hub folder", "parquet file", "saved to disk"])
def test_reading_a_dataset_that_is_not_canonical_names_the_import_command(tmp_path, datasets, layout):
    data = {"question": ["What is 2+2?"], "answer": ["4"]}
    if layout == "hub folder":
        path = hub_folder(datasets, tmp_path / "my qa", data)
    elif layout == "parquet file":
        path = tmp_path / "my qa.parquet"
        datasets.Dataset.from_dict(data).to_parquet(str(path))
    else:
        path = tmp_path / "my qa"
        datasets.Dataset.from_dict(data).save_to_disk(str(path))
    out = tmp_path / "out.jsonl"
    result = run(path, "--to", "jsonl", "-o", out)
    assert result.exit_code == 2 and not out.exists()
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert "not a canonical set" in message and "(its columns: question, answer)" in message
    command = f"evalconv import {shlex.quote(str(path))} -o set.jsonl"
    assert command in message
    # and the command it names works
    args = shlex.split(command)[1:]
    args[args.index("set.jsonl")] = str(tmp_path / "set.jsonl")
    done = run(*args)
    assert done.exit_code == 0, done.output
    assert jsonl(tmp_path / "set.jsonl")[0]["expected"] == "4"


def test_a_canonical_set_saved_to_disk_by_datasets_reads_back_identically(tmp_path, datasets):
    rows = evalconv.read(str(GOLDEN)).rows
    evalconv.write(rows, str(tmp_path / "set.parquet"), "parquet")
    datasets.Dataset.from_parquet(str(tmp_path / "set.parquet")).save_to_disk(str(tmp_path / "saved"))
    back = evalconv.read(str(tmp_path / "saved"))
    assert back.log.error_count == 0
    assert [r.to_json() for r in back.rows] == [r.to_json() for r in rows]


def test_a_binary_column_is_one_line_naming_it(tmp_path, datasets):
    path = tmp_path / "img.parquet"
    datasets.Dataset.from_dict({"question": ["q"], "blob": [b"\x89PNG"]}).to_parquet(str(path))
    result = run("import", path, "-o", tmp_path / "set.jsonl")
    assert result.exit_code == 2 and not (tmp_path / "set.jsonl").exists()
    assert "column 'blob' holds binary data (row 1)" in result.stderr and "Traceback" not in result.output

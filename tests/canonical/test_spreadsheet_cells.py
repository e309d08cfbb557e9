"""Cells a spreadsheet would run as formulas (`=`, `+`, `-`, `@`, tab, CR first). Canonical CSV
guards them under --excel-safe with a leading ' its reader takes off, and names the rows without
the flag. No vendor's CSV loader takes such a ' off (promptfoo's csv-parse, DeepEval's and
datasets' pandas.read_csv, Inspect's csv.DictReader: proved below with each tool's own code),
so a vendor CSV is never guarded; --excel-safe is accepted there and the rows are named instead."""
from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

import evalconv
from conftest import row, run_cli
from interop import require_module, require_promptfoo

FORMULAS = ["=1+1", "+33 6 12", "-5 degrees", "@SUM(A1)", "\tindented", '=HYPERLINK("http://x","y")']
VENDOR_CSVS = [("promptfoo", "set.promptfoo.csv", "promptfoo"), ("deepeval", "set.deepeval.csv", "DeepEval"),
               ("ragas", "set.ragas.csv", "Ragas"), ("inspect", "set.inspect.csv", "Inspect")]


def _formula_set(tmp_path, count: int = 0) -> str:
    """Rows f0.. whose input and expected start like formulas, and a plain row between them;
    `count` plain rows more after them (a file large enough for two cores)."""
    rows = []
    for i, text in enumerate(FORMULAS):
        rows.append(row(f"f{i}", expected=(text,)) | {"input": text})
        rows.append(row(f"plain{i}"))
    rows += [row(f"more{i}") for i in range(count)]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _named(err: str) -> str:
    named = "'f0', 'f1', 'f2', 'f3', 'f4', 'f5'"
    assert f"({len(FORMULAS)} rows: {named})" in err, err
    return err


@pytest.mark.parametrize("excel_safe", [False, True])
@pytest.mark.parametrize("to,name,tool", VENDOR_CSVS)
def test_vendor_csv_names_the_formula_rows_it_cannot_guard(tmp_path, capsys, to, name, tool, excel_safe):
    source = _formula_set(tmp_path)
    out = tmp_path / name
    code, err = run_cli(["convert", source, "--to", to, "-o", str(out), *(["--excel-safe"] if excel_safe else [])],
                        capsys)
    assert code == 0, err
    _named(err)
    assert f"{tool}'s CSV loader" in err and "cannot guard them" in err and "plain" not in err.split("note:")[1]
    assert "'=1+1" not in out.read_text(encoding="utf-8")  # nothing guarded: the tool would keep the '


@pytest.mark.parametrize("to,name", [("deepeval", "set.deepeval.json"), ("inspect", "set.inspect.jsonl"),
                                     ("promptfoo", "set.promptfoo.yaml"), ("ragas", "set.ragas.jsonl")])
def test_excel_safe_is_refused_for_a_vendor_output_that_is_not_csv(tmp_path, capsys, to, name):
    code, err = run_cli(["convert", _formula_set(tmp_path), "--to", to, "-o", str(tmp_path / name), "--excel-safe"],
                        capsys)
    assert code == 2 and "--excel-safe guards CSV cells; it goes with a CSV output" in err
    assert not (tmp_path / name).exists()


def test_canonical_csv_without_excel_safe_names_the_formula_rows(tmp_path, capsys):
    source = _formula_set(tmp_path)
    code, err = run_cli(["convert", source, "--to", "csv", "-o", str(tmp_path / "out.csv")], capsys)
    assert code == 0 and "write with --excel-safe to guard them" in _named(err)
    code, err = run_cli(["convert", source, "--to", "csv", "-o", str(tmp_path / "safe.csv"), "--excel-safe"], capsys)
    assert code == 0 and "formulas" not in err
    assert [r.to_json() for r in evalconv.read(str(tmp_path / "safe.csv")).rows] == \
        [r.to_json() for r in evalconv.read(source).rows]


@pytest.mark.parametrize("to,name", [("csv", "out.csv"), ("inspect", "out.inspect.csv"),
                                     ("promptfoo", "out.promptfoo.csv"), ("deepeval", "out.deepeval.csv")])
def test_formula_rows_are_named_the_same_on_one_and_two_cores(tmp_path, small_chunks, to, name):
    source = _formula_set(tmp_path, count=200)
    notices = [evalconv.convert(source, str(tmp_path / f"j{jobs}-{name}"), to=to, jobs=jobs).loss.notices
               for jobs in (1, 2)]
    assert notices[0] == notices[1]
    assert any(f"({len(FORMULAS)} rows: 'f0'" in n for n in notices[0])


# --- each tool's own CSV loader reads the original values, and would keep a guard -------------

def _guarded_copy(path, tmp_path):
    """The same file with a ' before every formula-looking cell, as --excel-safe would guard it."""
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    guarded = [[("'" + c if c.startswith(("=", "+", "-", "@", "\t", "\r")) else c) for c in r] for r in rows]
    out = tmp_path / ("guarded-" + path.name)
    with open(out, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(guarded)
    return out


def _export(tmp_path, to, name):
    out = tmp_path / name
    assert evalconv.convert(_formula_set(tmp_path), str(out), to=to).exit_code == 0
    return out


@pytest.mark.interop
def test_inspect_csv_dataset_reads_formula_cells_as_written_and_would_keep_a_guard(tmp_path):
    dataset = require_module("inspect_ai.dataset")
    out = _export(tmp_path, "inspect", "set.inspect.csv")
    samples = {str(s.id): s for s in dataset.csv_dataset(str(out))}
    for i, text in enumerate(FORMULAS):
        assert (samples[f"f{i}"].input, samples[f"f{i}"].target) == (text, text)
    guarded = {str(s.id): s for s in dataset.csv_dataset(str(_guarded_copy(out, tmp_path)))}
    assert guarded["f0"].input == "'=1+1"


@pytest.mark.interop
def test_deepeval_csv_loader_reads_formula_cells_as_written_and_would_keep_a_guard(tmp_path):
    require_module("pandas")
    deepeval = require_module("deepeval.dataset")
    out = _export(tmp_path, "deepeval", "set.deepeval.csv")

    def load(path):
        data = deepeval.EvaluationDataset()
        cwd = os.getcwd()
        os.chdir(tmp_path)  # DeepEval writes into the working directory
        try:
            data.add_goldens_from_csv_file(str(path), input_col_name="input",
                                           expected_output_col_name="expected_output")
        finally:
            os.chdir(cwd)
        return [(g.input, g.expected_output) for g in data.goldens]

    assert [pair for pair in load(out) if pair[0] in FORMULAS] == [(t, t) for t in FORMULAS]
    assert ("'=1+1", "'=1+1") in load(_guarded_copy(out, tmp_path))


@pytest.mark.interop
def test_ragas_csv_as_datasets_loads_it_reads_formula_cells_as_written_and_would_keep_a_guard(tmp_path):
    datasets = require_module("datasets")
    ragas = require_module("ragas")
    out = _export(tmp_path, "ragas", "set.ragas.csv")

    def load(path):
        hf = datasets.load_dataset("csv", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache"))
        hf = hf.remove_columns([c for c in hf.column_names if c not in ("user_input", "reference")])
        return [(s.user_input, s.reference) for s in ragas.EvaluationDataset.from_hf_dataset(hf).samples]

    assert [pair for pair in load(out) if pair[0] in FORMULAS] == [(t, t) for t in FORMULAS]
    assert ("'=1+1", "'=1+1") in load(_guarded_copy(out, tmp_path))


@pytest.mark.interop
def test_promptfoo_csv_loader_reads_formula_cells_as_written_and_would_keep_a_guard(tmp_path):
    binary = require_promptfoo()
    out = _export(tmp_path, "promptfoo", "set.promptfoo.csv")
    guarded = _guarded_copy(out, tmp_path)
    (tmp_path / "wrapper.yaml").write_text(yaml.safe_dump(
        {"prompts": ["{{ input }}"], "providers": ["echo"], "tests": [f"file://{out.name}", f"file://{guarded.name}"]}))
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"}
    subprocess.run([binary, "eval", "-c", "wrapper.yaml", "--no-cache", "--no-share", "--no-table", "--no-progress-bar",
                    "-o", "out.json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    results = sorted(json.loads((tmp_path / "out.json").read_text("utf-8"))["results"]["results"],
                     key=lambda r: r["testIdx"])
    read = [r["vars"]["input"] for r in results]
    half = len(read) // 2
    assert [v for v in read[:half] if v in FORMULAS] == FORMULAS  # the export: the original values
    assert "'=1+1" in read[half:]  # a guard would be part of the value promptfoo uses

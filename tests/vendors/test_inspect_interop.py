"""Inspect AI's own loaders read every export as meant; evalconv reads what Inspect made."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical import jsonvalue
from interop import vendor_fixtures, vendor_module
from roundtrip_helpers import read_text, write_text
from strategies import inspect_rows

pytestmark = pytest.mark.interop
FIXTURES, MANIFEST = vendor_fixtures("inspect")
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


dataset = vendor_module("inspect_ai.dataset", name="dataset")


def load(dataset, path):
    return dataset.csv_dataset(str(path)) if str(path).endswith(".csv") else dataset.json_dataset(str(path))


@pytest.mark.parametrize("variant", ["jsonl", "json", "csv"])
def test_inspect_loads_the_golden_export_with_labels_in_target(dataset, tmp_path, variant):
    out = tmp_path / f"set.inspect.{variant}"
    assert evalconv.convert(str(GOLDEN), str(out), to="inspect").exit_code == 0
    samples = list(load(dataset, out))
    rows = evalconv.read(str(GOLDEN)).rows
    assert [str(s.id) for s in samples] == [r.id for r in rows]
    for sample, row in zip(samples, rows):
        assert sample.metadata["case"] == row.case
        oracle = row.case["oracleType"]
        if oracle == "reference-answer" and isinstance(row.expected, str) and row.expected:
            assert sample.target == row.expected
        if oracle == "acceptable-set" and variant != "csv":
            assert sample.target == row.expected  # match/includes pass on any member
        if isinstance(row.input, str):  # Inspect's CSV reader turns CR LF into LF (reported)
            assert sample.input == (row.input.replace("\r\n", "\n") if variant == "csv" else row.input)
        labels = [row.case["expectedBehavior"], *row.case.get("evaluationCriteria", [])]
        shown = sample.input if isinstance(sample.input, str) else " ".join(m.text for m in sample.input)
        assert not any(label and label in shown and label not in json.dumps(row.input) for label in labels)


@settings(max_examples=25, deadline=None)
@given(rows=inspect_rows())
def test_inspect_loads_every_jsonl_export(dataset, tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("i") / "x.inspect.jsonl"
    evalconv.write(rows, str(path), "inspect")
    text = path.read_text(encoding="utf-8")
    samples = list(dataset.json_dataset(str(path)))
    assert [str(s.id) for s in samples] == [r.id for r in rows]
    for sample, record in zip(samples, map(jsonvalue.loads, text.split("\n")[:-1])):
        if isinstance(record["input"], str):
            assert sample.input == record["input"]
        else:
            assert [m.role for m in sample.input] == [m["role"] for m in record["input"]]
            assert [m.content for m in sample.input] == [m["content"] for m in record["input"]]


def test_fixtures_made_by_inspect_read_as_the_manifest_says(dataset):
    entry = next(f for f in MANIFEST["files"] if f["path"] == "samples.jsonl")
    samples = list(dataset.json_dataset(str(FIXTURES / "samples.jsonl")))
    checked, _ = read_text("inspect", (FIXTURES / "samples.jsonl").read_text(encoding="utf-8"))
    rows = [c.row for c in checked]
    assert [r.id for r in rows] == entry["recover"]["ids"] == [str(s.id) for s in samples]
    assert [r.expected for r in rows] == entry["recover"]["targets"]
    assert [r.case["oracleType"] for r in rows] == entry["recover"]["oracleTypes"]
    for row_id, ext in entry["recover"]["extensions"].items():
        assert next(r for r in rows if r.id == row_id).case["extensions"]["inspect"] == ext


def test_shipped_examples_read_and_go_back_to_inspect_the_same(dataset, tmp_path):
    source = FIXTURES / "theory_of_mind.jsonl"
    checked, _ = read_text("inspect", source.read_text(encoding="utf-8"))
    rows = [c.row for c in checked]
    assert len(rows) == 12 and all(r.case["oracleType"] == "reference-answer" for r in rows)
    text, _ = write_text("inspect", rows, path="x.inspect.jsonl")
    (tmp_path / "x.jsonl").write_text(text, encoding="utf-8")
    again = list(dataset.json_dataset(str(tmp_path / "x.jsonl")))
    original = list(dataset.json_dataset(str(source)))
    assert [(s.input[0].text, s.target) for s in again] == [(s.input[0].text, s.target) for s in original]


def test_field_spec_reads_biology_qa_as_inspect_does(dataset):
    from evalconv.vendors.inspect.read import FieldSpec, read_samples
    import io
    from evalconv.canonical.source import Lines
    from evalconv.reports import ReadReport
    spec = FieldSpec.from_mapping({"id": "id", "input": "question", "target": "answer"}, "spec")
    text = (FIXTURES / "biology_qa.jsonl").read_bytes()
    got = [s.value for s in read_samples(Lines(io.BytesIO(text), source="b"), ReadReport("inspect"), spec)]
    theirs = list(dataset.json_dataset(str(FIXTURES / "biology_qa.jsonl"),
                                       dataset.FieldSpec(id="id", input="question", target="answer")))
    assert [(g["id"], g["input"], g["expected"]) for g in got] == [(s.id, s.input, s.target) for s in theirs]

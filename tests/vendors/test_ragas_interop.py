"""Ragas' EvaluationDataset loads every export; evalconv reads what Ragas wrote."""
from __future__ import annotations


import pytest
from hypothesis import given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical import jsonvalue
from interop import vendor_fixtures, vendor_module
from roundtrip_helpers import read_text, write_text
from strategies import ragas_rows

pytestmark = pytest.mark.interop
FIXTURES, MANIFEST = vendor_fixtures("ragas")
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


ragas = vendor_module("ragas", name="ragas")


def test_ragas_loads_the_golden_export(ragas, tmp_path):
    out = tmp_path / "set.ragas.jsonl"
    assert evalconv.convert(str(GOLDEN), str(out), to="ragas").exit_code == 0
    data = ragas.EvaluationDataset.from_jsonl(str(out))
    assert len(data) == len(evalconv.read(str(GOLDEN)).rows)
    assert type(data.samples[0]).__name__ == "MultiTurnSample"  # the set has chat inputs


@settings(max_examples=25, deadline=None)
@given(rows=ragas_rows())
def test_ragas_loads_every_export_with_references_in_place(ragas, tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("r") / "x.ragas.jsonl"
    evalconv.write(rows, str(path), "ragas")
    text = path.read_text(encoding="utf-8")
    data = ragas.EvaluationDataset.from_jsonl(str(path))
    assert len(data) == len(rows)
    for sample, record in zip(data.samples, map(jsonvalue.loads, text.split("\n")[:-1])):
        assert getattr(sample, "reference", None) == record.get("reference")
        if isinstance(record["user_input"], str):
            assert sample.user_input == record["user_input"]
            assert sample.reference_contexts == record.get("reference_contexts")
        else:
            assert [m.content for m in sample.user_input] == [m["content"] for m in record["user_input"]]


def test_files_ragas_wrote_read_as_the_manifest_says(ragas):
    entry = next(f for f in MANIFEST["files"] if f["path"] == "single_turn.jsonl")
    checked, _ = read_text("ragas", (FIXTURES / "single_turn.jsonl").read_text(encoding="utf-8"))
    rows = {c.row.id: c.row for c in checked}
    want = entry["recover"]
    assert list(rows) == want["ids"]
    assert [r.expected if r.has_expected else None for r in rows.values()] == want["expected"]
    for row_id, contexts in want["referenceContexts"].items():
        assert rows[row_id].metadata["referenceContexts"] == contexts
    for row_id, keys in want["ragas_run"].items():
        assert sorted(rows[row_id].metadata["ragas_run"]) == keys
    for row_id, rubrics in want["rubrics"].items():
        assert rows[row_id].case["extensions"]["ragas"]["rubrics"] == rubrics
    csv_rows, _ = read_text("ragas", (FIXTURES / "single_turn.csv").read_text(encoding="utf-8"))
    assert csv_rows[0].row == checked[0].row
    multi, _ = read_text("ragas", (FIXTURES / "multi_turn.jsonl").read_text(encoding="utf-8"))
    row = multi[0].row
    assert len(row.input["messages"]) == 4 and row.input["messages"][1]["tool_calls"]
    assert row.expected == [{"name": "lookup_order", "arguments": {"order_id": "1042"}}]


def test_what_evalconv_reads_from_ragas_goes_back_to_ragas_unchanged(ragas, tmp_path):
    for name in ("single_turn.jsonl", "multi_turn.jsonl"):
        checked, _ = read_text("ragas", (FIXTURES / name).read_text(encoding="utf-8"))
        text, _ = write_text("ragas", [c.row for c in checked], path="x.ragas.jsonl")
        (tmp_path / name).write_text(text, encoding="utf-8")
        ours = ragas.EvaluationDataset.from_jsonl(str(tmp_path / name)).to_list()
        theirs = ragas.EvaluationDataset.from_jsonl(str(FIXTURES / name)).to_list()
        assert ours == theirs


def test_dataset_objects_in_and_out_with_what_an_object_cannot_hold_reported(ragas):
    rows = evalconv.read(str(GOLDEN)).rows
    dataset, loss = evalconv.to_ragas_dataset(rows)
    assert isinstance(dataset, ragas.EvaluationDataset) and len(dataset) == len(rows)
    assert loss.lossy and "$.id" in {p for p, _ in loss.dropped.entries}
    assert not any("evalconv" in sample.model_dump() for sample in dataset.samples)
    back, log, report = evalconv.from_ragas_dataset(dataset)
    assert log.errors == [] and len(back) == len(rows)
    assert [r.id for r in back] == [f"ragas-{i}" for i in range(1, len(rows) + 1)]
    for before, after in zip(rows, back):
        if before.case["oracleType"] == "reference-answer" and isinstance(before.expected, str) and before.expected:
            assert after.expected == before.expected

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


# --- issue 24: what Ragas' rubric metric reads; edits made with `datasets` -----------------------

def _rubric_rows():
    from evalconv.canonical.row import Row

    def row(row_id, text, **case):
        return Row.from_json({"id": row_id, "input": text, "metadata": {"case": {
            "caseId": row_id, "oracleType": "rubric", "expectedBehavior": "Apologises and offers the credit.",
            "provenance": "expert-authored", **case}, "referenceContexts": ["Late deliveries earn a $15 credit."]}})
    return [row("judged", "My tent came late.", evaluator="llm-judge",
                evaluationCriteria=["Apologises once", "Offers the $15 credit"], unacceptableBehavior=["Blames the carrier"]),
            row("human", "My boots came late.", evaluator="rubric-human", evaluationCriteria=["Polite"])]


def test_regression_ragas_rubric_metric_reads_the_case_criteria(ragas, tmp_path):
    """Issue 24: rubric criteria were not written as Ragas rubrics, so InstanceRubrics had nothing
    to read. Its own prompt input, built from the sample Ragas loaded (no LLM), holds the expected
    behaviour, every criterion and what must not happen; a human-graded rubric gives it no rubric."""
    from ragas.metrics._instance_specific_rubrics import InstanceRubrics, SingleTurnInputWithRubric
    path = tmp_path / "set.ragas.jsonl"
    evalconv.write(_rubric_rows(), str(path), "ragas")
    judged, human = ragas.EvaluationDataset.from_jsonl(str(path)).samples
    metric = InstanceRubrics()
    assert metric.required_columns["SINGLE_TURN"] >= {"rubrics"}
    sample = judged.to_dict()
    prompt = metric.single_turn_prompt.to_string(SingleTurnInputWithRubric(
        user_input=sample["user_input"], response="Sorry! Here is $15.", reference=sample.get("reference"),
        rubrics=sample["rubrics"]))
    for text in ("Apologises and offers the credit.", "Apologises once", "Offers the $15 credit", "Blames the carrier"):
        assert text in prompt
    assert judged.reference_contexts == ["Late deliveries earn a $15 credit."]
    assert human.rubrics is None  # InstanceRubrics refuses it ("Rubrics are not set") instead of scoring it


@pytest.mark.parametrize("suffix", ["jsonl", "json"])
def test_regression_edits_made_with_datasets_map_are_kept_and_named(ragas, tmp_path, suffix, capsys):
    """Issue 24: edits made in the Ragas file vanished or were listed only as inferred. Every native
    field a user touches, changed with `datasets` `.map()` and saved by `datasets`, comes back and is
    named on stderr with the row and the path."""
    import datasets

    from conftest import run_cli
    path = tmp_path / f"set.ragas.{suffix}"
    evalconv.write(_rubric_rows(), str(path), "ragas")
    loaded = datasets.load_dataset("json", data_files=str(path), split="train")

    def edit(sample, index):
        if index == 0:
            sample["user_input"] = "My tent came a week late."
            sample["reference_contexts"] = ["Late deliveries earn a $20 credit."]
            sample["rubrics"] = {**sample["rubrics"], "score1_description": "Apologises; offers $20."}
        return sample
    edited = loaded.map(edit, with_indices=True)
    out = tmp_path / "edited.jsonl"
    edited.to_json(str(out), lines=True, force_ascii=False)
    lines = [{k: v for k, v in jsonvalue.loads(line).items() if v is not None}  # datasets fills absent keys with null
             for line in out.read_text("utf-8").splitlines()]
    for line in lines:  # and a nested dict gains the keys of every other row's
        line["rubrics"] = {k: v for k, v in line.get("rubrics", {}).items() if v is not None} or None
        if line["rubrics"] is None:
            del line["rubrics"]
    out.write_text("".join(jsonvalue.dumps(line) + "\n" for line in lines), "utf-8")
    code, err = run_cli([str(out), "--from", "ragas", "--to", "jsonl", "-o", str(tmp_path / "back.jsonl")], capsys)
    assert code == 0, err
    back = [jsonvalue.loads(line) for line in (tmp_path / "back.jsonl").read_text("utf-8").splitlines()]
    assert back[0]["input"] == "My tent came a week late."
    assert back[0]["metadata"]["referenceContexts"] == ["Late deliveries earn a $20 credit."]
    assert back[0]["metadata"]["case"]["extensions"]["ragas"]["rubrics"]["score1_description"] == "Apologises; offers $20."
    for where in ("$.input", "$.metadata.referenceContexts", "$.metadata.case.extensions.ragas.rubrics"):
        assert f"row 'judged' {where}: " in err, (where, err)
    assert "row 'human'" not in err

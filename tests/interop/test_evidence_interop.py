"""Version-2 rows in the tools' own loaders (offline): Ragas and DeepEval load the exports, the
evidence fields and markers they cannot hold are carried and said so, and reading back gives the
rows exactly."""
from __future__ import annotations

import copy
import os
import tempfile
from contextlib import contextmanager

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")

import pytest

import evalconv
from evalconv.canonical.row import Row
from interop import require_module, vendor_module
from versioned_sets import EVIDENCE_ROW, v2

pytestmark = pytest.mark.interop


@contextmanager
def scratch():
    """DeepEval writes into the working directory: a temporary one."""
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(cwd)

ragas = vendor_module("ragas", name="ragas")

MARKED_CHAT = copy.deepcopy(EVIDENCE_ROW)
MARKED_CHAT["id"] = MARKED_CHAT["metadata"]["case"]["caseId"] = "marked-chat"
MARKED_CHAT["input"]["messages"].pop(0)  # user, assistant (redacted): no system turn
MARKED_CHAT["metadata"]["case"]["targetTurn"] = 2
ROWS = [Row.from_json(EVIDENCE_ROW), Row.from_json(MARKED_CHAT),
        Row.from_json(v2("refs-only", contextRefs=[{"source": "kb", "snapshot": "3"}]))]


def carried(report) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for entry in report.to_json()["carried"]:
        out.setdefault(entry["path"], set()).add(entry["reason"])
    return out


def test_ragas_loads_a_version_2_export_and_the_report_says_what_it_cannot_hold(ragas, tmp_path):
    path = tmp_path / "set.ragas.jsonl"
    report = evalconv.write(ROWS, str(path), "ragas")
    data = ragas.EvaluationDataset.from_jsonl(str(path))
    assert len(data) == len(ROWS)
    # the redacted assistant turn is not a Ragas message: it is left out, and the report says why
    assert [m.content for m in data.samples[1].user_input] == ["Hi"]
    reasons = carried(report)
    assert any("evidence marker" in r for r in reasons["$.input"])
    assert any("snapshot" in r for r in reasons["$.metadata.case.contextRefs"])
    assert {"$.metadata.case.schemaVersion", "$.metadata.case.targetTurn", "$.metadata.case.permission"} <= set(reasons)
    assert evalconv.read(str(path)).rows == ROWS


def test_deepeval_loads_a_version_2_export_and_the_report_says_what_it_cannot_hold(tmp_path):
    deepeval = require_module("deepeval.dataset")
    path = tmp_path / "set.deepeval.json"
    report = evalconv.write(ROWS, str(path), "deepeval")
    dataset = deepeval.EvaluationDataset()
    with scratch():
        dataset.add_goldens_from_json_file(str(path))
    assert [g.name for g in dataset.goldens] == [r.id for r in ROWS]
    reasons = carried(report)
    assert any("snapshot" in r for r in reasons["$.metadata.case.contextRefs"])
    assert evalconv.read(str(path)).rows == ROWS


# ------------------------------------------------------------------ contextRefs <-> reference_context_ids

SINGLE = [Row.from_json(v2("refs-a", contextRefs=[{"source": "kb/refunds", "snapshot": "2024-05-01", "span": "§2"},
                                                  {"source": "kb/x", "snapshot": {"$evidence": "redacted"}}])),
          Row.from_json(v2("refs-marker", contextRefs=[{"source": {"$evidence": "redacted"}, "snapshot": "1"}])),
          Row.from_json(v2("refs-and-ids", contextRefs=[{"source": "kb/y", "snapshot": "4"}])),
          Row.from_json(v2("no-refs"))]
SINGLE[2] = Row.from_json({**SINGLE[2].to_json(), "metadata": {**SINGLE[2].metadata, "referenceContextIds": ["p-9"]}})
RAGAS_FILES = ("set.ragas.jsonl", "set.ragas.json", "set.ragas.csv")


@pytest.mark.parametrize("name", RAGAS_FILES)
def test_context_refs_sources_are_ragas_reference_context_ids_and_ragas_scores_them(ragas, tmp_path, name):
    path = tmp_path / name
    report = evalconv.write(SINGLE, str(path), "ragas")
    if name.endswith(".jsonl"):
        import asyncio

        data = ragas.EvaluationDataset.from_jsonl(str(path))
        assert [s.reference_context_ids for s in data.samples] == [["kb/refunds", "kb/x"], None, ["p-9"], None]
        import warnings

        with warnings.catch_warnings():  # 0.4.3 moves the metric; the old import still works offline
            warnings.simplefilter("ignore", DeprecationWarning)
            from ragas.metrics import IDBasedContextRecall
        sample = data.samples[0]
        sample.retrieved_context_ids = ["kb/refunds", "kb/elsewhere"]
        # Ragas' own (non-LLM) metric reads the references' sources: one of two retrieved
        assert asyncio.run(IDBasedContextRecall().single_turn_ascore(sample)) == 0.5
    carried_reasons = carried(report)["$.metadata.case.contextRefs"]
    assert any(r.startswith("reference_context_ids hold each reference's source") for r in carried_reasons)
    assert any(r.startswith("a reference whose source is an evidence marker") for r in carried_reasons)
    assert any(r.startswith("metadata.referenceContextIds fills reference_context_ids already") for r in carried_reasons)
    assert all("snapshot" in r and "span" in r and "evidence marker" in r for r in carried_reasons)
    back = evalconv.read(str(path))
    assert back.rows == SINGLE and not back.report.to_json().get("edited")


@pytest.mark.parametrize("edit, refs", [
    (["kb/x", "kb/new"], [{"source": "kb/x", "snapshot": {"$evidence": "redacted"}}, {"source": "kb/new"}]),
    (["kb/refunds"], [{"source": "kb/refunds", "snapshot": "2024-05-01", "span": "§2"}]),
    (None, None),
])
def test_an_edit_of_reference_context_ids_in_the_ragas_file_is_read_into_the_references(tmp_path, edit, refs):
    import json

    path = tmp_path / "set.ragas.jsonl"
    evalconv.write(SINGLE[:1], str(path), "ragas")
    sample = json.loads(path.read_text("utf-8"))
    if edit is None:
        del sample["reference_context_ids"]
    else:
        sample["reference_context_ids"] = edit
    path.write_text(json.dumps(sample) + "\n", encoding="utf-8")
    back = evalconv.read(str(path))
    case = (back.rows[0] if back.rows else None)
    if refs is not None and any("snapshot" not in r for r in refs):
        # a new source names no snapshot: the validator asks for it (and the row is left out of read())
        (finding,) = [f for f in back.log.errors]
        assert finding.code == "evidence-without-snapshot" and "'kb/new'" in finding.message
        return
    assert case is not None
    assert case.case.get("contextRefs") == refs
    assert "referenceContextIds" not in case.metadata
    edited = back.report.to_json()["edited"]
    assert any(e["path"] == "$.metadata.case.contextRefs" for e in edited), edited

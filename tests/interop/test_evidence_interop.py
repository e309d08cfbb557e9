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

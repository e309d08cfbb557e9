"""A set with what only the whole set can catch, as a Parquet file of many row groups."""
from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import pytest

import evalconv
from conftest import ROOT, row
from evalconv.canonical.row import Row

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

GOLDEN = [json.loads(line) for line in (ROOT / "golden_roundtrips" / "support-agent.jsonl").read_text().splitlines()]


def whole_set_values() -> list[dict]:
    """The golden rows many times over, with what only the whole set can catch (a duplicate id,
    a case family set up two ways, far apart) and what a row alone fails (caseId != id, a barred
    evaluator, a bad oracle type), warnings (starter rows, off-vocabulary reasons) and sliced values."""
    out = []
    for i in range(240):
        value = json.loads(json.dumps(GOLDEN[i % len(GOLDEN)]))
        value["id"] = value["metadata"]["case"]["caseId"] = f"{value['id']}-{i}"
        value["metadata"]["case"].pop("caseFamily", None)
        value["metadata"]["severity"] = ["harmful", "cosmetic", "wrong-answer"][i % 3]
        out.append(value)
    out[5] = row("dup")
    out[200] = row("dup")
    out[9] = row("fam-a", caseFamily="f")
    out[230] = row("fam-b", oracle="acceptable-set", expected=(["x"],), caseFamily="f")
    out[40] = {**row("mismatch"), "metadata": {"case": {**row("mismatch")["metadata"]["case"], "caseId": "other"}}}
    out[41] = row("barred", oracle="rubric", evaluator="exact-or-programmatic", evaluationCriteria="tone")
    bad = row("bad-oracle")
    bad["metadata"]["case"]["oracleType"] = "not-an-oracle"
    out[90] = bad
    out[120] = {**row("vocab"), "metadata": {**row("vocab")["metadata"], "severity": "Harmful"}}
    return out


@functools.lru_cache(maxsize=None)
def messy_parquet() -> str:
    """The set as one evalconv Parquet file of several row groups (built once)."""
    folder = Path(tempfile.mkdtemp(prefix="evalconv-partitions-"))
    batch = evalconv.rows_to_arrow(Row.from_json(v) for v in whole_set_values())
    path = folder / "set.parquet"
    pq.write_table(pa.Table.from_batches([batch]), path, row_group_size=64)
    return str(path)

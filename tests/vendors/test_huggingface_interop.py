"""The real `datasets` and `pandas` load what evalconv writes, and evalconv reads what they write
(offline). Missing libraries fail in CI (EVALCONV_REQUIRE_INTEROP=1), skip locally."""
from __future__ import annotations

import json
import os

import pytest

import evalconv
from conftest import ROOT
from interop import require_module
from parquet_samples import DISTINCTIONS, sample_row

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
pytestmark = pytest.mark.interop


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    return require_module("datasets")


def test_load_dataset_loads_the_folder_as_is(tmp_path, datasets):
    rows = evalconv.read(str(GOLDEN)).rows
    out = tmp_path / "support-agent"
    evalconv.write(rows, str(out), "hf")
    loaded = datasets.load_dataset(str(out))
    assert list(loaded) == ["test"]
    ds = loaded["test"]
    assert ds.num_rows == len(rows) and ds["id"] == [r.id for r in rows]
    assert str(ds.features["case.linkedConcerns"]) == str(datasets.List(datasets.Value("string")))
    assert ds.features["case.oracleType"] == datasets.Value("string")
    first = ds[0]
    assert first["input"] == rows[0].input and first["case.linkedConcerns"] == rows[0].case["linkedConcerns"]
    structured = next(i for i, r in enumerate(rows) if not isinstance(r.input, str))
    assert json.loads(ds[structured]["input:json"]) == rows[structured].input


def test_the_card_header_matches_what_datasets_infers(tmp_path, datasets):
    out = tmp_path / "ds"
    evalconv.write(DISTINCTIONS, str(out), "hf")
    from evalconv.vendors.hf import card
    declared = card.read_header((out / "README.md").read_text(encoding="utf-8"))["dataset_info"]["features"]
    inferred = datasets.load_dataset(str(out), split="test").features
    assert datasets.Features._from_yaml_list(declared) == inferred


def test_distinctions_survive_datasets_and_come_back(tmp_path, datasets):
    """Loaded by datasets, written by datasets to Parquet (as the Hub serves it), read by evalconv."""
    out = tmp_path / "ds"
    evalconv.write(DISTINCTIONS, str(out), "hf")
    ds = datasets.load_dataset(str(out), split="test")
    hub_file = tmp_path / "0000.parquet"
    ds.to_parquet(str(hub_file))
    back = evalconv.read(str(hub_file))
    assert back.log.errors == [] and back.rows == DISTINCTIONS


def test_a_dataset_datasets_built_from_a_dataframe_reads(tmp_path, datasets):
    frame = evalconv.to_dataframe(DISTINCTIONS)
    ds = datasets.Dataset.from_pandas(frame, preserve_index=False)
    folder = tmp_path / "from-pandas"
    (folder / "data").mkdir(parents=True)
    ds.to_parquet(str(folder / "data" / "train-00000-of-00001.parquet"))
    assert evalconv.read(str(folder), from_="hf").rows == DISTINCTIONS


def test_pandas_reads_the_parquet_evalconv_writes(tmp_path):
    pd = require_module("pandas")
    path = tmp_path / "set.parquet"
    evalconv.write(DISTINCTIONS, str(path), "parquet")
    df = pd.read_parquet(path).set_index("id")
    assert df.loc["text-that-looks-typed", "input"] == "007" and df.loc["empty", "expected"] == ""
    assert df.loc["absent", "expected"] is None or pd.isna(df.loc["absent", "expected"])
    assert list(df.loc["lists", "case.evaluationCriteria"]) == [""]
    assert evalconv.from_dataframe(df.reset_index()).rows == DISTINCTIONS
    assert os.path.getsize(path) > 0


def test_hf_card_splits_load_without_a_malformed_splits_warning(tmp_path, datasets):
    """Issue 24 §5: `datasets` 5.2 ignores a card split without `num_bytes` ("the `splits` field
    in YAML is malformed"). The card's splits are what `datasets` itself writes, num_bytes as it
    counts them, over more than one row group; loading logs no warning."""
    import logging
    import warnings

    from evalconv.canonical.parquet_format import ROW_GROUP_ROWS
    from evalconv.vendors.hf import card
    rows = [sample_row(f"case-{i}", input=f"question {i}" * (i % 7)) for i in range(ROW_GROUP_ROWS + 7)]
    out = tmp_path / "ds"
    evalconv.write(rows, str(out), "hf")
    info = card.read_header((out / "README.md").read_text(encoding="utf-8"))["dataset_info"]
    parsed = datasets.DatasetInfo._from_yaml_dict(dict(info))
    assert parsed._to_yaml_dict()["splits"] == info["splits"]  # every field datasets writes, nothing else
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("datasets")  # datasets' loggers do not propagate to the root
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ds = datasets.load_dataset(str(out), split="test")
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in records] == [] and [str(w.message) for w in caught] == []
    assert info["splits"] == [{"name": "test", "num_bytes": ds.info.splits["test"].num_bytes,
                               "num_examples": len(rows)}]

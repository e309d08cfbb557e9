"""Braintrust round trips are exact up to the loss report, in the file and through the SDK's insert."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from evalconv.canonical import jsonvalue
from evalconv.canonical.diff import diff_paths, unexplained
from evalconv.vendors.braintrust import FIELD_MAP
from interop import require_module
from roundtrip_helpers import read_text, write_text
from strategies import row_sets

CARRIED = {f.path for f in FIELD_MAP if f.fate == "carried"}
BT_KEYS = {"id", "input", "expected", "metadata", "tags", "origin"}  # `bt` DATASET_RECORD_FIELDS


def assert_exact(rows, checked, loss):
    assert [c.findings for c in checked if c.row is None] == []
    assert [c.row.id for c in checked] == [r.id for r in rows]
    for row, back in zip(rows, checked):
        differences = diff_paths(row.to_json(), back.row.to_json())
        assert unexplained(differences, loss.dropped_paths(row.id)) == ([], [])
        assert row == back.row


def records(text: str) -> list[dict]:
    return [jsonvalue.loads(line) for line in text.split("\n")[:-1]]


@settings(max_examples=300)
@given(rows=row_sets())
def test_file_roundtrip_is_exact(rows):
    text, loss = write_text("braintrust", rows)
    checked, _ = read_text("braintrust", text)
    assert_exact(rows, checked, loss)
    assert not loss.lossy
    for (path, reason), _ids in loss.carried.entries.items():
        assert path in CARRIED, path
        assert reason in {f.reason for f in FIELD_MAP if f.path == path and f.fate == "carried"}


@settings(max_examples=300)
@given(rows=row_sets())
def test_records_keep_to_the_bt_record_shape(rows):
    text, _ = write_text("braintrust", rows)
    for row, record in zip(rows, records(text)):
        assert set(record) <= BT_KEYS - {"origin"}
        assert record["id"] == row.id and isinstance(record["id"], str) and record["id"]
        assert isinstance(record["metadata"], dict)
        assert len(record["tags"]) == len(set(record["tags"])) and record["tags"]


def insert_offline(record: dict) -> dict:
    """The event `Dataset.insert(**record)` hands Braintrust's background logger (no login, no HTTP)."""
    logger = require_module("braintrust.logger")
    util = require_module("braintrust.util")
    meta = logger.ProjectDatasetMetadata(logger.ObjectMetadata("p", "offline", {}),
                                         logger.ObjectMetadata("d", "offline", {}))
    with logger._internal_with_memory_background_logger() as bgl:
        logger.Dataset(lazy_metadata=util.LazyValue(lambda: meta, use_mutex=False)).insert(**record)
        [logged] = bgl.pop()
    return logged


def fetched(logged: dict) -> dict:
    """A `fetch()` row: the logged event plus the fields the server assigns."""
    return {"id": logged["id"], "_xact_id": "1000106728890390501", "created": logged["created"],
            "_pagination_key": "p1", "project_id": "p", "dataset_id": logged["dataset_id"],
            "input": logged.get("input"), "expected": logged.get("expected"),
            "metadata": logged.get("metadata"), "tags": logged.get("tags"),
            "span_id": "s", "root_span_id": "s", "is_root": True}


@pytest.mark.interop
@settings(max_examples=200)
@given(rows=row_sets())
def test_insert_keeps_every_value_and_fetch_reads_back_exactly(rows):
    text, loss = write_text("braintrust", rows)
    dumps = []
    for record in records(text):
        logged = insert_offline(record)
        for key in ("input", "expected", "metadata", "tags"):
            if key in record:
                assert jsonvalue.same(logged.get(key), record[key]), key  # no coercion
        dumps.append(fetched(logged))
    checked, report = read_text("braintrust", "".join(jsonvalue.dumps(d) + "\n" for d in dumps))
    assert_exact(rows, checked, loss)

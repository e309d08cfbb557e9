"""Braintrust round trips are exact up to the loss report (through the SDK: test_braintrust_interop)."""
from __future__ import annotations

from hypothesis import given, settings

from evalconv.canonical import jsonvalue
from evalconv.vendors.braintrust.format import FIELD_MAP
from roundtrip_helpers import assert_exact, read_text, write_text
from strategies import row_sets, row_sets_with_metadata_keys

CARRIED = {f.path for f in FIELD_MAP if f.fate == "carried"}
BT_KEYS = {"id", "input", "expected", "metadata", "tags", "origin"}  # `bt` DATASET_RECORD_FIELDS




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

RESERVED = ["tags", "evalconv", "model", "dataset_split"]  # metadata keys the braintrust writer treats specially




@settings(max_examples=200)
@given(rows=row_sets_with_metadata_keys(RESERVED))
def test_file_roundtrip_is_exact_with_reserved_metadata_keys(rows):
    text, loss = write_text("braintrust", rows)
    checked, _ = read_text("braintrust", text)
    assert_exact(rows, checked, loss)


@settings(max_examples=300)
@given(rows=row_sets())
def test_records_keep_to_the_bt_record_shape(rows):
    text, _ = write_text("braintrust", rows)
    for row, record in zip(rows, records(text)):
        assert set(record) <= BT_KEYS - {"origin"}
        assert record["id"] == row.id and isinstance(record["id"], str) and record["id"]
        assert isinstance(record["metadata"], dict)
        assert len(record["tags"]) == len(set(record["tags"])) and record["tags"]

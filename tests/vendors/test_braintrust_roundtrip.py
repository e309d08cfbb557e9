"""Braintrust records keep to the SDK's record shape, and the loss report's reasons are the field
map's (the round trip itself: tests/formats/test_every_format.py; through the SDK: test_braintrust_interop)."""
from __future__ import annotations

from hypothesis import given, settings

from evalconv.canonical import jsonvalue
from evalconv.vendors.braintrust.format import FIELD_MAP
from roundtrip_helpers import write_text
from strategies import row_sets_with_metadata_keys

CARRIED = {f.path for f in FIELD_MAP if f.fate == "carried"}
BT_KEYS = {"id", "input", "expected", "metadata", "tags", "origin"}  # `bt` DATASET_RECORD_FIELDS
RESERVED = ["tags", "evalconv", "model", "dataset_split"]  # metadata keys the braintrust writer treats specially


def records(text: str) -> list[dict]:
    return [jsonvalue.loads(line) for line in text.split("\n")[:-1]]


@settings(max_examples=300)
@given(rows=row_sets_with_metadata_keys(RESERVED))
def test_records_keep_to_the_bt_record_shape_and_carry_what_the_field_map_says(rows):
    text, loss = write_text("braintrust", rows)
    for row, record in zip(rows, records(text)):
        assert set(record) <= BT_KEYS - {"origin"}
        assert record["id"] == row.id and isinstance(record["id"], str) and record["id"]
        assert isinstance(record["metadata"], dict)
        assert len(record["tags"]) == len(set(record["tags"])) and record["tags"]
    assert not loss.lossy
    for (path, reason), _ids in loss.carried.entries.items():
        assert path in CARRIED, path
        assert reason in {f.reason for f in FIELD_MAP if f.path == path and f.fate == "carried"}

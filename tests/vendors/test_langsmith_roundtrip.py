"""LangSmith records are valid examples, and round trips through LangSmith's own models are exact up
to the loss report (the file round trip: tests/formats/test_every_format.py)."""
from __future__ import annotations

import uuid
import warnings

import pytest
from hypothesis import given, settings

from conftest import row
from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from evalconv.vendors.langsmith.format import FIELD_MAP
from interop import require_module
from roundtrip_helpers import assert_exact, read_text, write_text
from strategies import row_sets, row_sets_with_metadata_keys

CARRIED = {f.path for f in FIELD_MAP if f.fate == "carried"}
RESERVED = ["dataset_split", "evalconv", "case_family", "oracle_type", "tags"]  # metadata keys the langsmith writer treats specially


@settings(max_examples=300)
@given(rows=row_sets_with_metadata_keys(RESERVED))
def test_every_record_is_a_valid_example_and_carries_what_the_field_map_says(rows):
    text, loss = write_text("langsmith", rows)
    assert not loss.lossy
    for path, reason in loss.carried.entries:
        assert path in CARRIED, path
        assert reason in {f.reason for f in FIELD_MAP if f.path == path and f.fate == "carried"}
    for line in text.split("\n")[:-1]:
        record = jsonvalue.loads(line)
        assert set(record) <= {"id", "inputs", "outputs", "metadata", "split"}
        assert str(uuid.UUID(record["id"])) == record["id"]
        assert isinstance(record["inputs"], dict)
        assert isinstance(record.get("outputs", {}), dict)
        assert "dataset_split" not in record["metadata"]


def served(record: dict, schemas) -> dict:
    """What `list_examples()` gives back for an uploaded record, built with LangSmith's own models:
    ExampleCreate parses the upload, the server keeps the split as metadata.dataset_split
    (default ["base"]), and Example.model_dump(mode="json") is the dump users save."""
    data = dict(record)
    data["reference_outputs"] = data.pop("outputs", None)
    created = schemas.ExampleCreate(**data)
    split = created.split if created.split is not None else "base"
    metadata = {**(created.metadata or {}), "dataset_split": [split] if isinstance(split, str) else split}
    example = schemas.Example(id=created.id, dataset_id=uuid.UUID(int=7), inputs=created.inputs,
                              outputs=created.reference_outputs, metadata=metadata,
                              created_at=created.created_at, modified_at=created.created_at)
    return example.model_dump(mode="json")


@pytest.mark.interop
@settings(max_examples=200)
@given(rows=row_sets())
def test_roundtrip_through_langsmith_models_is_exact(rows):
    schemas = require_module("langsmith.schemas")
    text, loss = write_text("langsmith", rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecated or silently dropped key would warn
        dumps = [served(jsonvalue.loads(line), schemas) for line in text.split("\n")[:-1]]
    checked, report = read_text("langsmith", "".join(jsonvalue.dumps(d) + "\n" for d in dumps))
    assert_exact(rows, checked, loss)
    ignored = {path for path, _ in report.ignored.entries}
    assert ignored <= {"$.dataset_id", "$.created_at", "$.modified_at", "$.split"}


@pytest.mark.interop
@pytest.mark.parametrize("split", [None, "smoke", ["base", "tools"], [], {"not": "a split"}])
def test_splits_survive_langsmith_storing_them_as_metadata_dataset_split(split):
    schemas = require_module("langsmith.schemas")
    value = row("cs-split", caseFamily="f")
    if split is not None:
        value["metadata"]["dataset_split"] = split
    rows = [Row.from_json(value)]
    text, loss = write_text("langsmith", rows)
    dump = served(jsonvalue.loads(text), schemas)
    assert isinstance(dump["metadata"]["dataset_split"], list)
    checked, _ = read_text("langsmith", jsonvalue.dumps(dump) + "\n")
    assert_exact(rows, checked, loss)


@pytest.mark.interop
@settings(max_examples=200)
@given(rows=row_sets_with_metadata_keys(RESERVED))
def test_roundtrip_through_langsmith_models_with_reserved_metadata_keys(rows):
    schemas = require_module("langsmith.schemas")
    text, loss = write_text("langsmith", rows)
    dumps = [served(jsonvalue.loads(line), schemas) for line in text.split("\n")[:-1]]
    checked, _ = read_text("langsmith", "".join(jsonvalue.dumps(d) + "\n" for d in dumps))
    assert_exact(rows, checked, loss)

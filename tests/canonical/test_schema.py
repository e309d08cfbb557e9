"""One schema, two checkers: the compiled one and the explaining one must agree."""
from __future__ import annotations

import copy

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import row
from evalconv.canonical import schema
from strategies import json_values

PATHS = [("id",), ("input",), ("metadata",), ("metadata", "case"), ("metadata", "case", "oracleType"),
         ("metadata", "case", "caseId"), ("metadata", "case", "unacceptableBehavior"),
         ("metadata", "case", "extensions"), ("metadata", "case", "reversibility"), ("extra",),
         ("metadata", "case", "difficulty")]


@settings(max_examples=400)
@given(edits=st.lists(st.tuples(st.sampled_from(PATHS), st.one_of(json_values, st.just(None))), max_size=3),
       deletions=st.lists(st.sampled_from(PATHS), max_size=2))
def test_fast_and_reference_checkers_agree(edits, deletions):
    value = row(unacceptableBehavior=["x"])
    for path, new in edits:
        node = value
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[path[-1]] = copy.deepcopy(new)
    for path in deletions:
        node = value
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(path[-1], None)
    explained = list(schema.explain(value))
    assert schema.is_valid(value) == (explained == [])


@pytest.mark.parametrize("version", schema.VERSIONS)
def test_the_published_schema_is_valid_draft_07(version):
    jsonschema.Draft7Validator.check_schema(schema.row_schema(version))
    jsonschema.Draft7Validator.check_schema(schema.case_profile_schema(version))


@pytest.mark.parametrize("version", schema.VERSIONS)
def test_case_profile_schema_validates_a_profile_on_its_own(version):
    validator = jsonschema.Draft7Validator(schema.case_profile_schema(version))
    case = row()["metadata"]["case"]
    if version > 1:
        case["schemaVersion"] = version
    assert validator.is_valid(case)
    assert not validator.is_valid({"caseId": "x"})

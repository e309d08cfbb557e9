"""Every validator rule, by its exact code, with row, line and path."""
from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import row
from evalconv.canonical.admissibility import ADMISSIBILITY, OMITTED_FIELDS
from evalconv.canonical.schema import enum
from evalconv.canonical.source import SourceRow
from evalconv.canonical.findings import CODES, Finding
from evalconv.canonical.validator import Validator
from evalconv.engine.set_keys import SetKeys


def check(*values, lines=None):
    validator = Validator(source="set.jsonl")
    return [validator.check(SourceRow(v, (lines or {}).get(i, i + 1))) for i, v in enumerate(values)]


def codes(checked) -> list[str]:
    return [f.code for f in checked.findings]


def test_valid_row_has_no_findings():
    [result] = check(row(evaluator="exact-or-programmatic"))
    assert result.findings == [] and result.row is not None and result.row.id == "cs-1"


def test_finding_carries_row_id_line_path_and_source():
    value = row("cs-9", evaluator="pairwise-preference")
    [_, result] = check(row("cs-1"), value, lines={1: 17})
    [finding] = result.findings
    assert (finding.code, finding.row, finding.id, finding.line, finding.path, finding.source) == (
        "inadmissible-evaluator", 2, "cs-9", 17, "$.metadata.case.evaluator", "set.jsonl")
    assert finding.severity == "error" and result.row is None


@pytest.mark.parametrize("missing", ["caseId", "oracleType", "expectedBehavior", "provenance"])
def test_required_case_fields(missing):
    value = row()
    del value["metadata"]["case"][missing]
    [result] = check(value)
    assert ("schema", f"$.metadata.case.{missing}") in [(f.code, f.path) for f in result.findings]
    assert any(f"missing required field '{missing}'" in f.message for f in result.findings)


@pytest.mark.parametrize("missing", ["id", "input", "metadata"])
def test_required_row_fields(missing):
    value = row()
    del value[missing]
    [result] = check(value)
    assert f"$.{missing}" in [f.path for f in result.findings if f.code == "schema"]


def test_unknown_top_level_key_says_move_it_under_metadata():
    [result] = check({**row(), "reason": "x"})
    [finding] = result.findings
    assert finding.code == "schema" and finding.path == "$.reason" and "move it under metadata" in finding.message


@pytest.mark.parametrize("name", sorted(OMITTED_FIELDS))
def test_omitted_fields_refused_by_name_with_reason(name):
    value = row()
    value["metadata"]["case"][name] = 3
    [result] = check(value)
    [finding] = result.findings
    assert finding.code == "schema" and finding.path == f"$.metadata.case.{name}"
    assert f"'{name}' is deliberately not a field" in finding.message and OMITTED_FIELDS[name] in finding.message


def test_user_metadata_keys_named_like_omitted_fields_are_kept():
    value = row()
    value["metadata"]["score"] = 0.5
    assert check(value)[0].findings == []


@pytest.mark.parametrize("field,bad,fragment", [
    ("oracleType", "exact", "is not a valid oracleType"),
    ("provenance", "vibes", "is not a valid provenance"),
    ("evaluator", "gpt", "is not a valid evaluator"),
    ("reversibility", "R4", "is not a valid reversibility"),
    ("blastRadius", "B9", "is not a valid blastRadius"),
    ("unacceptableBehavior", "one string", "expected an array, got a string"),
    ("linkedConcerns", ["ok", 3], "expected a string, got a number"),
    ("scenario", None, "expected a string, got null"),
    ("extensions", {"ns": 1}, "expected an object, got a number"),
])
def test_schema_types_and_enums(field, bad, fragment):
    value = row()
    value["metadata"]["case"][field] = bad
    [result] = check(value)
    assert any(f.code == "schema" and fragment in f.message for f in result.findings), result.findings


def test_empty_id_is_refused():
    value = row()
    value["id"] = ""
    [result] = check(value)
    assert ("schema", "$.id") in [(f.code, f.path) for f in result.findings]


def test_id_mismatch():
    value = row("cs-1")
    value["metadata"]["case"]["caseId"] = "cs-2"
    [result] = check(value)
    assert codes(result) == ["id-mismatch"] and result.findings[0].path == "$.metadata.case.caseId"


def test_duplicate_id_names_the_first_row():
    results = check(row("a"), row("b"), row("a"))
    assert codes(results[2]) == ["duplicate-id"] and "row 1" in results[2].findings[0].message
    assert results[0].row is not None and results[2].row is None


def test_case_family_conflict_on_oracle_type_and_on_evaluator():
    results = check(row("a", caseFamily="f", evaluator="exact-or-programmatic"),
                    row("b", caseFamily="f", evaluator="exact-or-programmatic"),
                    row("c", caseFamily="f", evaluator="human-expert", reviewerExpertise="x"),
                    row("d", oracle="acceptable-set", expected=(["x"],), caseFamily="f",
                        evaluator="exact-or-programmatic"),
                    row("e", caseFamily="g"))
    assert [codes(r) for r in results] == [[], [], ["case-family-conflict"], ["case-family-conflict"], []]
    assert "row 1" in results[2].findings[0].message


ADMISSIBILITY_CASES = [(o, e, v) for o, evals in ADMISSIBILITY.items() for e, (v, _) in evals.items()]


@pytest.mark.parametrize("oracle,evaluator,verdict", ADMISSIBILITY_CASES)
def test_admissibility_map(oracle, evaluator, verdict):
    expected = {"reference-answer": ("x",), "acceptable-set": (["x"],), "expected-tool-calls": ([{"name": "t"}],),
                "expected-final-state": ({"s": 1},)}.get(oracle, ())
    [result] = check(row(oracle=oracle, evaluator=evaluator, expected=expected, evaluationCriteria=["c"],
                         reviewerExpertise="domain"))
    if verdict == "barred":
        [finding] = result.findings
        assert finding.code == "inadmissible-evaluator"
        assert ADMISSIBILITY[oracle][evaluator][1] in finding.message
    elif verdict == "cond":
        assert codes(result) == ["judge-needs-validation"]
        assert "validated against human labels" in result.findings[0].message
    else:
        assert codes(result) == []


def test_admissibility_map_covers_every_oracle_and_evaluator_in_the_schema():
    assert set(ADMISSIBILITY) == set(enum("oracleType"))
    assert all(set(evals) == set(enum("evaluator")) for evals in ADMISSIBILITY.values())


@pytest.mark.parametrize("provenance", ["starter-example", "overlay-starter-needs-expert-validation"])
def test_starter_example_warning(provenance):
    [result] = check(row(provenance=provenance))
    assert codes(result) == ["starter-example"] and result.row is not None


def test_rubric_without_criteria():
    [result] = check(row(oracle="rubric", expected=()))
    assert codes(result) == ["rubric-without-criteria"]
    [result] = check(row(oracle="rubric", expected=(), evaluationCriteria=[]))
    assert codes(result) == ["rubric-without-criteria"]
    [result] = check(row(oracle="rubric", expected=(), evaluationCriteria=["x"]))
    assert codes(result) == []


def test_expert_without_expertise():
    [result] = check(row(evaluator="human-expert"))
    assert codes(result) == ["expert-without-expertise"]
    [result] = check(row(evaluator="human-expert", reviewerExpertise="  "))
    assert codes(result) == ["expert-without-expertise"]


def test_expected_on_behavior_only():
    [result] = check(row(oracle="expected-behavior-only", expected=(None,)))
    assert codes(result) == ["expected-on-behavior-only"] and result.findings[0].path == "$.expected"
    [result] = check(row(oracle="expected-behavior-only", expected=()))
    assert codes(result) == []


@pytest.mark.parametrize("oracle,expected,path", [
    ("reference-answer", (), "$.expected"),
    ("acceptable-set", ("60 days",), "$.expected"),
    ("acceptable-set", ([],), "$.expected"),
    ("expected-tool-calls", ({"name": "x"},), "$.expected"),
    ("expected-tool-calls", ([{"arguments": {}}],), "$.expected[0].name"),
    ("expected-tool-calls", ([{"name": "x", "arguments": "a=1"}],), "$.expected[0].arguments"),
    ("expected-tool-calls", (["lookup"],), "$.expected[0]"),
    ("expected-final-state", (), "$.expected"),
])
def test_expected_shape(oracle, expected, path):
    [result] = check(row(oracle=oracle, expected=expected))
    assert [(f.code, f.path) for f in result.findings] == [("expected-shape", path)]


def test_parse_problem_from_reader_is_an_error_and_skips_schema():
    from evalconv.canonical.source import parse_problem
    validator = Validator()
    result = validator.check(SourceRow(None, 4, problems=parse_problem("line is not valid JSON")))
    assert codes(result) == ["parse"] and result.findings[0].line == 4 and result.row is None


def test_non_object_row_is_a_schema_error():
    [result] = check(["not", "a", "row"])
    assert codes(result) == ["schema"] and "expected an object" in result.findings[0].message


@pytest.mark.parametrize("bad", [[], {}, ["rubric"], 3, None])
def test_non_string_oracle_type_is_a_schema_error_not_a_crash(bad):
    value = row(caseFamily="f")
    value["metadata"]["case"]["oracleType"] = bad
    [result] = check(value)
    assert {f.code for f in result.findings} == {"schema"}


SET_KEYS = st.one_of(st.none(), st.tuples(st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"])),
                                          st.one_of(st.none(), st.sampled_from(["f", "g"])),
                                          st.sampled_from(["rubric", "reference-answer"]),
                                          st.sampled_from([None, "llm-judge", 1, 1.0, True, ["llm-judge"],
                                                           {"a": 1}])))


@settings(max_examples=300)
@given(st.lists(SET_KEYS, max_size=40), st.integers(min_value=1, max_value=9))
def test_set_rules_a_chunk_at_a_time_agree_with_a_row_at_a_time(keys, chunk):
    keys = [None if k is None else (k[0], k[1], k[2] if k[1] else None, k[3] if k[1] else None) for k in keys]
    one_by_one, chunked = Validator(), Validator()
    expected = {i: [f.to_json() for f in one_by_one.set_findings(k, i + 1)] for i, k in enumerate(keys) if k}
    got = {}
    for start in range(0, len(keys), chunk):
        batch = SetKeys()
        for key in keys[start:start + chunk]:
            batch.add(key)
        batch = pickle.loads(pickle.dumps(batch))  # as it crosses from a worker
        for i, found in chunked.set_findings_many(batch, start + 1).items():
            got[start + i] = [f.to_json() for f in found]
    assert got == {i: found for i, found in expected.items() if found}


@given(st.sampled_from(sorted(CODES)), st.text(max_size=30), st.text(max_size=10),
       st.none() | st.integers(1, 10**9), st.none() | st.text(max_size=8), st.none() | st.integers(1, 10**9),
       st.none() | st.integers(1, 10**9), st.none() | st.text(max_size=8))
def test_a_finding_crosses_between_processes_unchanged(code, message, path, row, row_id, line, record, source):
    """Findings are pickled as their arguments (`Finding.__reduce__`, for the workers' speed)."""
    finding = Finding(code, message, path, row, row_id, line, record, source)
    back = pickle.loads(pickle.dumps(finding, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == finding and type(back) is Finding and back.severity == finding.severity

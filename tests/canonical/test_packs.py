"""Task-family packs, `evalconv new`, `evalconv explain`, and the pack-aware case-family rule."""
from __future__ import annotations

import json

import evalconv
import pytest
from click.testing import CliRunner
from conftest import row
from evalconv.canonical.admissibility import ADMISSIBILITY
from evalconv.canonical.pack import STARTER_NOTE, builtin_packs
from evalconv.canonical.source import SourceRow
from evalconv.canonical.validator import STARTER_MARK, Validator
from evalconv.cli import cli

PACKS = builtin_packs().all()
FAMILIES = [p.id for p in PACKS]
VENDORS = ["promptfoo", "deepeval", "langsmith", "braintrust"]
# Every format that reads and writes, with its first (most specific) extension.
EXT = {f.name: f.output_suffix for f in evalconv.REGISTRY.all() if f.can_read and f.can_write}


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


# ---------------------------------------------------------------- the shipped packs

def test_the_shipped_packs_cover_six_families_and_every_oracle_type():
    assert len(PACKS) >= 6
    assert {f.oracle_type for p in PACKS for f in p.case_families} == set(ADMISSIBILITY)
    for pack in PACKS:
        assert len(pack.case_families) >= 3, pack.id
        for fam in pack.case_families:
            assert len(fam.rows) >= 2, (pack.id, fam.id)
            assert fam.why.strip() and fam.linked_concerns


def test_every_starter_row_says_it_is_an_example_and_names_its_family():
    for pack in PACKS:
        for value in pack.rows():
            case = value["metadata"]["case"]
            assert case["provenance"] == "starter-example"
            assert case["expectedBehavior"].startswith(STARTER_NOTE)
            assert case["caseFamily"] in {f.id for f in pack.case_families}
            assert value["metadata"]["reason"].strip()


def test_starter_rows_are_specific_not_filler():
    text = json.dumps([p.rows() for p in PACKS]).lower()
    assert "lorem" not in text and "todo" not in text
    tool_calls = [v["expected"] for p in PACKS for v in p.rows()
                  if v["metadata"]["case"]["oracleType"] == "expected-tool-calls" and v["expected"]]
    assert tool_calls and all(call.get("arguments") for calls in tool_calls for call in calls)
    rubrics = [v for p in PACKS for v in p.rows() if v["metadata"]["case"]["oracleType"] == "rubric"]
    assert all(len(v["metadata"]["case"]["evaluationCriteria"]) >= 3 for v in rubrics)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_starter_set_builds_validates_and_survives_every_format(tmp_path, family):
    out = tmp_path / f"{family}.jsonl"
    result = run("new", family, "-o", out)
    assert result.exit_code == 0, result.output
    report = evalconv.validate([str(out)])
    assert report.valid and report.files[0].log.error_count == 0
    gate = run("roundtrip", out, "--format", "json")
    assert gate.exit_code == 0, gate.output
    data = json.loads(gate.stdout)
    routes = {r["via"]: r["status"] for r in data["results"]}
    assert data["ok"] and set(routes) == set(EXT) and set(routes.values()) == {"ok"}, routes


# ---------------------------------------------------------------- new

def test_new_list_json_has_the_documented_shape():
    result = run("new", "--list", "--format", "json")
    assert result.exit_code == 0
    listing = json.loads(result.stdout)
    assert [f["id"] for f in listing["families"]] == FAMILIES
    first = listing["families"][0]
    assert set(first) == {"id", "title", "caseFamilies"}
    assert set(first["caseFamilies"][0]) == {"id", "oracleType", "evaluator", "reversibility", "blastRadius"}
    assert list(listing["legend"]["reversibility"]) == ["R0", "R1", "R2", "R3"]
    assert list(listing["legend"]["blastRadius"]) == ["B0", "B1", "B2", "B3"]


def test_new_list_text_names_every_family():
    out = run("new", "--list").stdout
    assert all(f in out for f in FAMILIES) and "expected-tool-calls" in out


@pytest.mark.parametrize("to", list(EXT))
def test_new_writes_every_format_and_counts_the_starters(tmp_path, to):
    out = tmp_path / f"set{EXT[to]}"
    result = run("new", "tool-using-agent", "-o", out, "--to", to)
    assert result.exit_code == 0, result.output
    assert "6 rows written (3 case families), 6 starter examples to replace before use" in result.stderr
    back = evalconv.read(str(out), from_=to)
    assert back.log.error_count == 0 and len(back.rows) == 6


def test_new_format_comes_from_the_extension(tmp_path):
    out = tmp_path / "set.csv"
    assert run("new", "rag-qa", "-o", out).exit_code == 0
    assert out.read_text(encoding="utf-8").startswith("id,")


def test_new_to_stdout_is_jsonl():
    result = run("new", "writing", "--case-family", "meeting-summary")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["metadata"]["case"]["caseFamily"] for r in rows] == ["meeting-summary"] * 2


def test_new_unknown_family_suggests_the_close_one():
    result = run("new", "customer-suport")
    assert result.exit_code == 2 and "did you mean 'customer-support'" in result.stderr


def test_new_unknown_case_family_is_a_usage_error():
    result = run("new", "rag-qa", "--case-family", "grounded-facts")
    assert result.exit_code == 2 and "did you mean 'grounded-fact'" in result.stderr


@pytest.mark.parametrize("family, evaluator, reason", [
    ("writing", "pairwise-preference", "a preference is not a rubric score"),
    ("writing", "exact-or-programmatic", "a string comparison cannot read a criterion"),
    ("tool-using-agent", "llm-judge", "the calls are recorded, so the check is a comparison against a record"),
    ("code-change", "rubric-human", "the world after the run is checkable by execution"),
])
def test_new_refuses_a_barred_evaluator_with_the_seeds_reason(tmp_path, family, evaluator, reason):
    out = tmp_path / "set.jsonl"
    result = run("new", family, "--evaluator", evaluator, "-o", out)
    assert result.exit_code == 2
    assert reason in result.stderr and "refused" in result.stderr
    assert not out.exists()


def test_new_refuses_an_admissible_evaluator_the_family_does_not_offer():
    result = run("new", "customer-support", "--case-family", "ticket-routing", "--evaluator", "llm-judge")
    assert result.exit_code == 2 and "does not offer it" in result.stderr


def test_new_takes_an_evaluator_the_family_offers(tmp_path):
    out = tmp_path / "set.jsonl"
    result = run("new", "writing", "--case-family", "meeting-summary", "--evaluator", "llm-judge", "-o", out)
    assert result.exit_code == 0, result.output
    assert {r.case["evaluator"] for r in evalconv.read(str(out)).rows} == {"llm-judge"}
    assert run("validate", out).exit_code == 0


def test_new_to_a_missing_folder_writes_nothing(tmp_path):
    result = run("new", "rag-qa", "-o", tmp_path / "nope" / "set.jsonl")
    assert result.exit_code == 2 and "does not exist" in result.stderr


# ---------------------------------------------------------------- user packs

GOOD_PACK = """\
id: billing-bot
title: Billing assistant
description: Answers invoice questions.
caseFamilies:
  - id: invoice-total
    title: States an invoice total
    oracleType: reference-answer
    evaluator: exact-or-programmatic
    severity: {level: wrong-answer, gate: release}
    linkedConcerns: [wrong-amount]
    why: The total is written on the invoice.
    rows:
      - id: bill-total-march
        input: What was my March invoice total?
        expected: "EUR 120.00"
        expectedBehavior: States EUR 120.00 from the March invoice.
        reason: "Coverage: the most asked billing question."
      - id: bill-total-april
        input: And April?
        expected: "EUR 95.50"
        expectedBehavior: States EUR 95.50.
        reason: "Coverage: follow-up questions."
"""


def test_a_user_pack_builds_and_lists(tmp_path):
    pack = tmp_path / "billing.yaml"
    pack.write_text(GOOD_PACK, encoding="utf-8")
    listing = json.loads(run("new", "--list", "--format", "json", "--pack", pack).stdout)
    assert "billing-bot" in [f["id"] for f in listing["families"]]
    out = tmp_path / "set.jsonl"
    result = run("new", "billing-bot", "--pack", pack, "-o", out)
    assert result.exit_code == 0, result.output
    assert [r.id for r in evalconv.read(str(out)).rows] == ["bill-total-march", "bill-total-april"]
    assert run("validate", out, "--pack", pack).exit_code == 0


@pytest.mark.parametrize("edit, line, field, fragment", [
    (("oracleType: reference-answer", "oracleType: reference"), 7, "$.caseFamilies[0].oracleType",
     "is not one of"),
    (("evaluator: exact-or-programmatic", "evaluator: pairwise-preference"), 8, "$.caseFamilies[0].evaluator",
     "a preference between two outputs answers a different question"),
    (("      - id: bill-total-april", "      - id: bill-total-march"), 18, "$.caseFamilies[0].rows[1].id",
     "already used"),
    (("        expectedBehavior: States EUR 95.50.\n", ""), 18, "$.caseFamilies[0].rows[1].expectedBehavior",
     "missing required field 'expectedBehavior'"),
    (("    why: The total", "    difficulty: 3\n    why: The total"), 11, "$.caseFamilies[0].difficulty",
     "unknown key 'difficulty'"),
    (("  - id: invoice-total", "  - id: Invoice Total"), 5, "$.caseFamilies[0].id", "kebab-case"),
    (('expected: "EUR 120.00"', "expected: EUR 120.00\n        oops: [unclosed"), 17, "", "not valid YAML"),
])
def test_a_broken_pack_gets_a_located_error(tmp_path, edit, line, field, fragment):
    pack = tmp_path / "billing.yaml"
    pack.write_text(GOOD_PACK.replace(*edit), encoding="utf-8")
    result = run("new", "billing-bot", "--pack", pack, "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 2
    first = result.stderr.strip().splitlines()[0]
    assert first.startswith(f"evalconv: error: {pack}:{line}: {field}".rstrip(": ")), first
    assert fragment in first
    assert "Traceback" not in result.output and not (tmp_path / "out.jsonl").exists()


def test_a_starter_row_that_makes_an_invalid_row_is_located(tmp_path):
    pack = tmp_path / "billing.yaml"
    pack.write_text(GOOD_PACK.replace("oracleType: reference-answer", "oracleType: acceptable-set"), encoding="utf-8")
    result = run("new", "--list", "--pack", pack)
    assert result.exit_code == 0  # acceptable-set with a string expected is a warning, not an error
    pack.write_text(GOOD_PACK.replace("id: bill-total-march", "id: bill-total-march\n        input2: x"),
                    encoding="utf-8")
    result = run("new", "--list", "--pack", pack)
    assert result.exit_code == 2 and ":14: $.caseFamilies[0].rows[0].input2: unknown key" in result.stderr


def test_a_missing_pack_file_is_exit_2(tmp_path):
    result = run("new", "--list", "--pack", tmp_path / "none.yaml")
    assert result.exit_code == 2 and "cannot read the pack" in result.stderr


# ---------------------------------------------------------------- the validator knows the packs

def _check(*values, packs=None):
    validator = Validator(packs=packs)
    return [f for v in values for f in validator.check(SourceRow(v)).findings]


def test_a_row_of_a_known_family_with_another_oracle_type_is_a_conflict_naming_the_pack():
    value = row("x", oracle="rubric", expected=(), caseFamily="grounded-fact",
                evaluationCriteria=["cites the passage"])
    codes = {f.code: f for f in _check(value)}
    assert "case-family-conflict" in codes
    assert "pack 'rag-qa' (built-in)" in codes["case-family-conflict"].message


def test_a_row_of_a_known_family_with_an_evaluator_the_pack_does_not_allow_is_a_conflict():
    value = row("x", caseFamily="grounded-fact", evaluator="human-expert", reviewerExpertise="support lead")
    assert "case-family-conflict" in {f.code for f in _check(value)}


def test_rows_that_agree_with_the_pack_are_fine_and_the_conflicting_one_does_not_set_up_the_family():
    bad = row("a", oracle="rubric", expected=(), caseFamily="grounded-fact", evaluationCriteria=["x"])
    good = row("b", caseFamily="grounded-fact", evaluator="llm-judge")
    findings = _check(bad, good)
    assert [(f.code, f.id) for f in findings if f.severity == "error"] == [("case-family-conflict", "a")]


def test_a_family_the_named_pack_lacks_is_a_warning_with_a_suggestion():
    value = row("x", caseFamily="grounded-facts", extensions={"blueprint": {"pack": "rag-qa"}})
    findings = _check(value)
    assert [f.code for f in findings] == ["unknown-case-family"]
    assert "did you mean 'grounded-fact'" in findings[0].message


def test_a_row_built_from_a_pack_that_is_not_loaded_is_a_warning():
    value = row("x", caseFamily="f", extensions={"blueprint": {"pack": "acme"}})
    assert [f.code for f in _check(value)] == ["unknown-case-family"]


def test_a_family_no_pack_declares_is_checked_within_the_set_only():
    assert _check(row("a", caseFamily="my-own"), row("b", caseFamily="my-own")) == []


def test_validate_with_a_user_pack_checks_its_families(tmp_path, write_jsonl):
    pack = tmp_path / "billing.yaml"
    pack.write_text(GOOD_PACK, encoding="utf-8")
    path = write_jsonl([row("x", oracle="rubric", expected=(), caseFamily="invoice-total",
                            evaluationCriteria=["x"])])
    assert run("validate", path).exit_code == 0
    result = run("validate", path, "--pack", pack)
    assert result.exit_code == 1 and "pack 'billing-bot'" in result.stderr


# ---------------------------------------------------------------- explain

def test_explain_prints_every_pairing_with_reasons_and_conditions():
    result = run("explain", "rubric", "--format", "json")
    data = json.loads(result.stdout)
    verdicts = {p["evaluator"]: p for p in data["pairings"]}
    assert verdicts["exact-or-programmatic"]["verdict"] == "barred"
    assert verdicts["exact-or-programmatic"]["reason"] == "a string comparison cannot read a criterion"
    assert verdicts["llm-judge"]["verdict"] == "cond" and len(verdicts["llm-judge"]["conditions"]) >= 2
    assert "the rubric goes in the judge prompt" in verdicts["llm-judge"]["conditions"]
    assert all(p["reason"] for p in data["pairings"])


def test_explain_one_pairing_in_text():
    result = run("explain", "expected-tool-calls", "llm-judge")
    assert result.exit_code == 0
    assert "llm-judge" in result.stdout and "barred" in result.stdout and "rubric-human" not in result.stdout


def test_explain_unknown_oracle_type_is_exit_2_with_a_suggestion():
    result = run("explain", "rubrik")
    assert result.exit_code == 2 and "did you mean 'rubric'" in result.stderr


# ---------------------------------------------------------------- starter marks in every format

def test_every_written_format_says_a_starter_row_is_an_example(tmp_path):
    src = tmp_path / "set.jsonl"
    run("new", "customer-support", "--case-family", "policy-answer", "-o", src)
    seen = {}
    for to in VENDORS:
        out = tmp_path / f"out{EXT[to]}"
        result = run(src, "--to", to, "-o", out)
        assert "2 starter examples to replace before use" in result.stderr
        seen[to] = out.read_text(encoding="utf-8")
        back = evalconv.read(str(out), from_=to)
        assert [r.to_json() for r in back.rows] == [r.to_json() for r in evalconv.read(str(src)).rows]
    assert "[starter example, not a validated answer]" in seen["promptfoo"]
    assert all(json.loads(g)["comments"] == STARTER_MARK for g in [json.dumps(x) for x in json.loads(seen["deepeval"])])
    assert all(json.loads(line)["metadata"]["starter_example"] == STARTER_MARK
               for line in seen["langsmith"].splitlines())
    assert all("starter-example" in json.loads(line)["tags"] for line in seen["braintrust"].splitlines())


def test_rows_that_are_not_starters_carry_no_mark(tmp_path, write_jsonl):
    path = write_jsonl([row("a")])
    for to in VENDORS:
        out = tmp_path / f"out{EXT[to]}"
        run(path, "--to", to, "-o", out)
        text = out.read_text(encoding="utf-8")
        assert "starter" not in text, to


# ---------------------------------------------------------------- the schema and the docs

def test_every_shipped_pack_file_validates_against_the_published_pack_schema():
    import jsonschema
    import yaml
    from conftest import ROOT
    from evalconv.canonical.pack import pack_schema

    files = sorted((ROOT / "canonical" / "packs").glob("*.yaml"))
    assert len(files) == len(PACKS)
    validator = jsonschema.Draft7Validator(pack_schema())
    for path in files:
        value = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert list(validator.iter_errors(value)) == [], path.name
        assert value["id"] == path.stem


def test_packs_page_is_generated_from_the_packs():
    from conftest import ROOT
    from evalconv.authoring.packs_doc import packs_markdown

    page = (ROOT / "docs" / "packs.md").read_text(encoding="utf-8")
    assert page == packs_markdown(builtin_packs()), "regenerate: evalconv new --list --format markdown > docs/packs.md"
    assert all(f"### {family}" in page for family in FAMILIES)


def test_the_packs_ship_in_the_package():
    from conftest import ROOT
    assert '"packs/*.yaml"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_a_pack_with_several_problems_lists_each_on_its_own_line(tmp_path):
    pack = tmp_path / "billing.yaml"
    pack.write_text(GOOD_PACK.replace("oracleType: reference-answer", "oracleType: nope")
                    .replace("gate: release", "gate: sometimes"), encoding="utf-8")
    result = run("new", "--list", "--pack", pack)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 2
    assert lines[0].startswith(f"evalconv: error: {pack}:7: $.caseFamilies[0].oracleType")
    assert lines[1].startswith(f"evalconv: error: {pack}:9: $.caseFamilies[0].severity.gate")


def test_validate_counts_the_rows_that_are_still_starters(tmp_path):
    out = tmp_path / "set.jsonl"
    run("new", "rag-qa", "-o", out)
    result = run("validate", out)
    assert result.exit_code == 0 and "6 still starter examples: ok" in result.stdout


def test_every_built_in_starter_row_is_a_valid_row():
    """The built-in packs load without checking their starter rows (the validator, which loads
    them, is what checks rows); this holds every row they ship to what `--pack FILE` demands."""
    from evalconv.canonical.pack_files import starter_row_problems

    packs = builtin_packs().packs
    assert packs and [problem for pack in packs for problem in starter_row_problems(pack)] == []

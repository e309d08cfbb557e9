"""The docs tell the truth: generated tables match the code, every command has help."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from conftest import ROOT
from evalconv.cli import cli
from evalconv.cli.info import format_markdown


def test_formats_page_is_generated_from_the_field_maps():
    page = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert page == format_markdown(), "regenerate: evalconv formats --format markdown > docs/formats.md"


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_has_help_and_is_in_the_readme(command):
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0 and len(result.output) > 100
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"evalconv {command}\b", readme) or command == "convert"


def test_readme_links_the_csv_spec_and_it_exists():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/csv-spec.md" in readme and (ROOT / "docs" / "csv-spec.md").exists()


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    test_command = next(line for block in blocks for line in block.splitlines() if "pytest" in line)
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_csv_spec_lists_the_allowed_values_from_the_schema():
    from evalconv.canonical.schema import ALLOWED_VALUES_BEGIN, ALLOWED_VALUES_END, allowed_values_markdown

    page = (ROOT / "docs" / "csv-spec.md").read_text(encoding="utf-8")
    start, end = page.index(ALLOWED_VALUES_BEGIN), page.index(ALLOWED_VALUES_END) + len(ALLOWED_VALUES_END)
    assert page[start:end] == allowed_values_markdown(), \
        "regenerate the table in docs/csv-spec.md with evalconv.canonical.schema.allowed_values_markdown()"
    for column in ("oracleType", "evaluator", "provenance", "reversibility", "blastRadius"):
        assert f"| `case.{column}` |" in page[start:end]


def test_the_finding_codes_in_errors_md_are_generated_from_the_table():
    from evalconv.canonical.findings import codes_markdown
    page = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert codes_markdown() in page, "regenerate the code list in docs/errors.md from canonical.findings.codes_markdown()"


# ---------------------------------------------------------------- every snippet a user would paste runs

from doc_snippets import all_snippets, run  # noqa: E402


@pytest.mark.interop
@pytest.mark.parametrize("snippet", [s for s in all_snippets() if s.not_run is None], ids=lambda s: s.name)
def test_every_python_snippet_in_the_vendor_docs_runs_against_a_fresh_export(snippet, tmp_path):
    run(snippet, tmp_path)


def test_a_snippet_that_does_not_run_says_why_and_most_do():
    found = all_snippets()
    assert len(found) >= 8, [s.name for s in found]  # the extraction finds the blocks, indented ones too
    assert all(s.not_run.strip() for s in found if s.not_run is not None)
    assert sum(s.not_run is None for s in found) > sum(s.not_run is not None for s in found)


def test_runs_md_harness_rules_are_generated_from_the_readers():
    from evalconv.runs.readers import RESULTS_REGISTRY, rules_markdown

    page = (ROOT / "docs" / "runs.md").read_text(encoding="utf-8")
    assert rules_markdown() in page, "regenerate the table in docs/runs.md with results_registry.rules_markdown()"
    for name in RESULTS_REGISTRY.readers:
        assert f"\n| {name} | " in rules_markdown()


def test_the_layout_page_draws_every_room():
    """docs/layout.md is the newcomer's map of converters/: a subpackage it does not name is a room
    nobody was told about."""
    page = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    rooms = sorted(p.parent.name for p in (ROOT / "converters").glob("*/__init__.py"))
    assert rooms and [room for room in rooms if f"  {room}/ " not in page] == []

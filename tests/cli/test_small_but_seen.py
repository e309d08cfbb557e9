"""Issue 26 item 16, "small but seen", through the CLI: `formats` fits 80 columns, `stats --html`
does not print the whole text report unless asked, `new --list` heads its columns, and `new
writing --evaluator llm-judge` gives the case families that allow it instead of refusing."""
from __future__ import annotations

import json

from click.testing import CliRunner

from evalconv.cli import cli
from evalconv.registry import REGISTRY


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_formats_fits_an_80_column_terminal():
    result = run("formats")
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and lines[0].split() == ["format", "reads", "extensions", "loses"]
    assert max(len(line) for line in lines) <= 80, "\n".join(line for line in lines if len(line) > 80)
    firsts = [line.split()[0] for line in lines[1:] if not line.startswith(" ")]
    assert firsts == REGISTRY.names()  # a format a row; wrapped cells continue on indented lines
    assert ".deepeval.csv" in result.stdout  # the wrapped extensions are all there


def test_stats_html_prints_a_brief_unless_text_is_asked_for(tmp_path):
    path = tmp_path / "set.jsonl"
    assert run("new", "customer-support", "-o", path).exit_code == 0
    brief = run("stats", path, "--html", tmp_path / "p.html")
    assert brief.exit_code == 0 and (tmp_path / "p.html").exists()
    assert brief.stdout.startswith("8 rows in 1 file\ngaps: starter-rows, thin-family")
    assert "case.oracleType" not in brief.stdout and "--format text prints them" in brief.stdout
    full = run("stats", path, "--html", tmp_path / "q.html", "--format", "text")
    assert "case.oracleType" in full.stdout and "█" in full.stdout
    plain = run("stats", path)
    assert "case.oracleType" in plain.stdout  # without a page: the whole report, as always


def test_stats_html_brief_still_shows_a_failed_gate(tmp_path):
    path = tmp_path / "set.jsonl"
    run("new", "customer-support", "-o", path)
    result = run("stats", path, "--html", tmp_path / "p.html", "--min", "case.caseFamily=5")
    assert result.exit_code == 1 and "gate: FAILED" in result.stdout


def test_new_list_heads_its_columns():
    lines = run("new", "--list").stdout.splitlines()
    assert lines[0].split() == ["task", "family", "title"]
    assert lines[1].split()[:6] == ["case", "family", "oracle", "type", "evaluator", "R"]
    header_at = lines[1].index("oracle type")
    row = next(line for line in lines if line.startswith("  policy-answer"))
    assert row.index("reference-answer") == header_at  # the header sits over its column


def test_new_with_an_evaluator_gives_the_case_families_that_allow_it(tmp_path):
    """Issue 26: `new writing --evaluator llm-judge` refused the whole family for one case family
    graded by people, with a reason the README did not give."""
    out = tmp_path / "w.jsonl"
    result = run("new", "writing", "--evaluator", "llm-judge", "-o", out)
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    families = {r["metadata"]["case"]["caseFamily"] for r in rows}
    assert families == {"meeting-summary", "tone-rewrite"}
    assert {r["metadata"]["case"]["evaluator"] for r in rows} == {"llm-judge"}
    assert ("evalconv: note: --evaluator llm-judge: case family 'plain-language-rewrite' left out: "
            in result.stderr) and "alternativeEvaluators" in result.stderr
    assert "(2 case families)" in result.stderr


def test_new_with_an_evaluator_no_family_allows_is_refused(tmp_path):
    result = run("new", "writing", "--evaluator", "trajectory-or-state-check", "-o", tmp_path / "w.jsonl")
    assert result.exit_code == 2 and "refused for case family" in result.stderr
    assert not (tmp_path / "w.jsonl").exists()


def test_new_with_an_evaluator_a_named_family_bars_is_refused(tmp_path):
    result = run("new", "writing", "--evaluator", "llm-judge", "--case-family", "plain-language-rewrite",
                 "-o", tmp_path / "w.jsonl")
    assert result.exit_code == 2 and "refused for case family 'plain-language-rewrite'" in result.stderr


def test_a_deepeval_golden_naming_its_metadata_metadata_reads_as_additional_metadata(tmp_path):
    """Issue 26 item 16: DeepEval 4.3 renamed a test case's `additional_metadata` to `metadata`
    (its goldens keep `additional_metadata`, which evalconv writes: DeepEval's own loader proves it,
    tests/vendors/test_deepeval_interop.py). A file naming it `metadata` converts back the same."""
    source = tmp_path / "set.jsonl"
    run("new", "customer-support", "-o", source)
    assert run(source, "--to", "deepeval", "-o", tmp_path / "set.deepeval.json").exit_code == 0
    goldens = json.loads((tmp_path / "set.deepeval.json").read_text(encoding="utf-8"))
    assert all("additional_metadata" in g and "metadata" not in g for g in goldens)
    renamed = [{("metadata" if k == "additional_metadata" else k): v for k, v in g.items()} for g in goldens]
    (tmp_path / "renamed.deepeval.json").write_text(json.dumps(renamed), encoding="utf-8")
    back = run(tmp_path / "renamed.deepeval.json", "--to", "jsonl", "-o", tmp_path / "back.jsonl")
    assert back.exit_code == 0, back.stderr
    assert [json.loads(line) for line in (tmp_path / "back.jsonl").read_text().splitlines()] == \
        [json.loads(line) for line in source.read_text().splitlines()]

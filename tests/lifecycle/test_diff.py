"""`evalconv diff`: a change to a set, reviewed (issue 28 section 1)."""
from __future__ import annotations

import copy
import json
import subprocess
import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, row
from evalconv.canonical import jsonvalue
from evalconv.canonical.findings import CODES
from evalconv.cli import cli
from evalconv.lifecycle import diff as lifecycle_diff
from evalconv.lifecycle.diff import DIFF_CODES
from strategies import row_sets

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def golden() -> list[dict]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]


def codes(data: dict) -> list[tuple[str, str | None]]:
    return sorted((f["code"], f["id"]) for s in data["sets"] for f in s["findings"])


def test_every_diff_code_is_in_the_one_findings_table():
    assert set(DIFF_CODES) <= set(CODES)


def test_added_removed_changed_with_their_fields_and_findings(tmp_path):
    base = golden()
    head = copy.deepcopy(base)
    head[0]["expected"] = "changed answer"
    head[1]["metadata"]["case"]["version"] = "2"
    head[1]["metadata"]["case"]["expectedBehavior"] = "New behaviour."
    gone = head.pop(2)["id"]
    new = row("brand-new")
    head.append(new)
    b, h = write(tmp_path / "base.jsonl", base), write(tmp_path / "head.jsonl", head)
    done = run("diff", b, h, "--format", "json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    s = data["sets"][0]
    assert [a["id"] for a in s["added"]] == ["brand-new"]
    assert [r["id"] for r in s["removed"]] == [gone]
    changed = {c["id"]: c["fields"] for c in s["changed"]}
    assert changed[base[0]["id"]] == [{"path": "$.expected", "old": lifecycle_diff.short(base[0]["expected"]),
                                       "new": '"changed answer"'}]
    assert {f["path"] for f in changed[base[1]["id"]]} == {"$.metadata.case.version",
                                                           "$.metadata.case.expectedBehavior"}
    assert s["counts"]["unchanged"] == len(base) - 3
    assert codes(data) == sorted([("behavior-changed-without-version", base[0]["id"]),
                                  ("new-without-reason", "brand-new"), ("removed-without-retirement", gone)])
    text = run("diff", b, h)
    assert f"- {gone}" in text.output and "+ brand-new" in text.output and "$.expected" in text.output


def test_fail_on_makes_a_code_fail_and_an_unknown_code_is_a_usage_error(tmp_path):
    base = golden()
    b, h = write(tmp_path / "base.jsonl", base), write(tmp_path / "head.jsonl", base[1:])
    assert run("diff", b, h).exit_code == 0
    failed = run("diff", b, h, "--fail-on", "removed-without-retirement")
    assert failed.exit_code == 1 and "FAILED" in failed.output
    assert run("diff", b, h, "--fail-on", "new-without-reason").exit_code == 0
    assert run("diff", b, h, "--fail-on", "new-without-reason,removed-without-retirement").exit_code == 1
    bad = run("diff", b, h, "--fail-on", "removed-without-retirment")
    assert bad.exit_code == 2 and "did you mean 'removed-without-retirement'" in bad.output


def test_a_set_read_from_another_format_has_no_changes(tmp_path):
    base = write(tmp_path / "set.jsonl", golden())
    for fmt, name in (("csv", "set.csv"), ("json", "set.json")):
        assert run("convert", base, "--to", fmt, "-o", tmp_path / name).exit_code == 0
        data = json.loads(run("diff", base, tmp_path / name, "--format", "json").output)
        assert data["counts"] == {"added": 0, "removed": 0, "retired": 0, "changed": 0,
                                  "unchanged": len(golden()), "migrated": 0}, fmt
    head = golden()
    head[0]["expected"] = "edited in the sheet"
    write(tmp_path / "head.jsonl", head)
    assert run("convert", tmp_path / "head.jsonl", "--to", "csv", "-o", tmp_path / "head.csv").exit_code == 0
    data = json.loads(run("diff", tmp_path / "set.csv", tmp_path / "head.csv", "--format", "json").output)
    assert [c["id"] for c in data["sets"][0]["changed"]] == [head[0]["id"]]


def test_oracle_type_changed_names_the_evaluator_that_became_barred(tmp_path):
    base = [row("c1", evaluator="exact-or-programmatic", version="1"), row("c2", version="1")]
    head = copy.deepcopy(base)
    head[0]["metadata"]["case"].update(oracleType="rubric", version="2")
    head[1]["metadata"]["case"].update(oracleType="expected-behavior-only", version="2")
    data = json.loads(run("diff", write(tmp_path / "b.jsonl", base), write(tmp_path / "h.jsonl", head),
                          "--format", "json").output)
    messages = {f["id"]: f["message"] for f in data["sets"][0]["findings"] if f["code"] == "oracle-type-changed"}
    assert "its evaluator exact-or-programmatic is barred for rubric" in messages["c1"]
    assert "now barred: exact-or-programmatic, rubric-human" in messages["c2"]
    assert not [f for f in data["sets"][0]["findings"] if f["code"] == "behavior-changed-without-version"]


def test_starter_and_placeholder_rows_added_are_findings(tmp_path):
    from evalconv.canonical.review import PLACEHOLDER

    starter = row("s1", provenance="starter-example")
    placeholder = row("p1", provenance="imported", expectedBehavior=PLACEHOLDER.format(sheet="a.csv"))
    for r in (starter, placeholder):
        r["metadata"]["reason"] = "covered"
    data = json.loads(run("diff", write(tmp_path / "b.jsonl", []), write(tmp_path / "h.jsonl", [starter, placeholder]),
                          "--format", "json").output)
    assert codes(data) == [("starter-added", "p1"), ("starter-added", "s1")]


def test_reason_field_names_where_the_reason_lives(tmp_path):
    new = row("n1")
    new["metadata"]["why"] = "Regression: invented a policy"
    b, h = write(tmp_path / "b.jsonl", []), write(tmp_path / "h.jsonl", [new])
    assert codes(json.loads(run("diff", b, h, "--format", "json").output)) == [("new-without-reason", "n1")]
    assert codes(json.loads(run("diff", b, h, "--format", "json", "--reason-field", "metadata.why").output)) == []


def test_a_removal_the_head_ledger_records_is_accepted_and_a_reused_id_is_not(tmp_path):
    base = [row("keep"), row("old")]
    b = write(tmp_path / "b.jsonl", base)
    h = write(tmp_path / "h.jsonl", base)
    assert run("retire", h, "--id", "old", "--why", "feature removed").exit_code == 0
    data = json.loads(run("diff", b, h, "--format", "json", "--fail-on", "removed-without-retirement").output)
    assert data["ok"] and data["sets"][0]["removed"][0]["retired"]["reason"] == "feature removed"
    reused = row("old", oracle="rubric", expected=())
    reused["metadata"]["reason"] = "a new case"
    retired_base = write(tmp_path / "retired.jsonl", [row("keep")])  # the commit after the retirement
    write(h, [row("keep"), reused])
    done = run("diff", retired_base, h, "--format", "json", "--fail-on", "id-reused")
    assert done.exit_code == 1 and ("id-reused", "old") in codes(json.loads(done.output))
    done = run("diff", b, h, "--format", "json", "--fail-on", "id-reused")  # retired and changed in one go
    assert done.exit_code == 1 and ("id-reused", "old") in codes(json.loads(done.output))
    write(h, [row("keep"), base[1]])  # the same case back: not a reuse
    assert run("diff", retired_base, h, "--fail-on", "id-reused").exit_code == 0


def test_folders_pair_sets_by_name_across_formats(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    write(tmp_path / "base" / "a.jsonl", [row("a1"), row("a2")])
    write(tmp_path / "base" / "gone.jsonl", [row("g1")])
    write(tmp_path / "head" / "a.jsonl", [row("a1")])
    assert run("convert", tmp_path / "head" / "a.jsonl", "--to", "csv", "-o", tmp_path / "head" / "a.csv").exit_code == 0
    (tmp_path / "head" / "a.jsonl").unlink()
    write(tmp_path / "head" / "new.jsonl", [row("n1")])
    write(tmp_path / "head" / "a.csv.retired.jsonl", [])  # a ledger is never a set
    data = json.loads(run("diff", tmp_path / "base", tmp_path / "head", "--format", "json").output)
    by = {(s["base"] and Path(s["base"]).name, s["head"] and Path(s["head"]).name): s["counts"] for s in data["sets"]}
    assert by[("a.jsonl", "a.csv")]["removed"] == 1 and by[("a.jsonl", "a.csv")]["unchanged"] == 1
    assert by[("gone.jsonl", None)]["removed"] == 1
    assert by[(None, "new.jsonl")]["added"] == 1


def test_markdown_is_a_pull_request_comment(tmp_path):
    base = golden()
    done = run("diff", write(tmp_path / "b.jsonl", base), write(tmp_path / "h.jsonl", base[1:]), "--format", "markdown")
    assert done.output.startswith("## evalconv diff\n")
    assert "| `removed-without-retirement` | 1 |" in done.output and "<details>" in done.output


def test_unreadable_input_exits_2_with_one_line(tmp_path):
    b = write(tmp_path / "b.jsonl", [row("a")])
    done = run("diff", b, tmp_path / "missing.jsonl")
    assert done.exit_code == 2 and "missing.jsonl" in done.output and "Traceback" not in done.output
    assert run("diff", b).exit_code == 2


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_diff_git_compares_a_ref_with_the_working_tree_without_a_checkout(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "sets").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    write(repo / "sets" / "support.jsonl", golden())
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    head = golden()
    head[0]["expected"] = "edited"
    del head[1]
    write(repo / "sets" / "support.jsonl", head)
    write(repo / "sets" / "extra.jsonl", [row("x1")])
    monkeypatch.chdir(repo)
    data = json.loads(run("diff", "--git", "HEAD", "sets", "--format", "json").output)
    by = {s["head"]: s for s in data["sets"]}
    assert by["sets/support.jsonl"]["base"] == "HEAD:sets/support.jsonl"
    assert by["sets/support.jsonl"]["counts"]["changed"] == 1 and by["sets/support.jsonl"]["counts"]["removed"] == 1
    assert by["sets/extra.jsonl"]["base"] is None and by["sets/extra.jsonl"]["counts"]["added"] == 1
    one = json.loads(run("diff", "--git", "HEAD", "sets/support.jsonl", "--format", "json").output)
    assert one["counts"]["changed"] == 1
    assert git(repo, "status", "--porcelain") == "?? sets/extra.jsonl\n M sets/support.jsonl\n" or \
        set(git(repo, "status", "--porcelain").splitlines()) == {"?? sets/extra.jsonl", " M sets/support.jsonl"}
    assert run("diff", "--git", "no-such-ref", "sets").exit_code == 2
    assert run("diff", "--git", "HEAD", "sets", "--fail-on", "removed-without-retirement").exit_code == 1


def test_a_migration_is_one_finding_not_a_change_a_row(tmp_path):
    base = golden()
    head = copy.deepcopy(base)
    for r in head:
        r["metadata"]["case"]["schemaVersion"] = 2
    data = json.loads(run("diff", write(tmp_path / "b.jsonl", base), write(tmp_path / "h.jsonl", head),
                          "--format", "json").output)
    assert data["counts"]["changed"] == 0 and data["counts"]["migrated"] == len(base)
    assert [f["code"] for f in data["sets"][0]["findings"]] == ["schema-migrated"]


@settings(max_examples=40)
@given(row_sets(max_size=6), st.data())
def test_diff_reports_exactly_the_edits_made(rows, data):
    from evalconv.lifecycle.retire import retire

    base = [r.to_json() for r in rows]
    head, removed, changed, unversioned, added = [], set(), set(), set(), set()
    retired, reused, comeback = set(), set(), []
    for value in base:
        edit = data.draw(st.sampled_from(["keep", "remove", "change", "bump", "retire", "reuse"]))
        if edit == "remove":
            removed.add(value["id"])
            continue
        if edit in ("retire", "reuse"):  # retired with `evalconv retire`; a reused id comes back as another case
            head.append(value)
            retired.add(value["id"])
            if edit == "reuse":
                other = copy.deepcopy(value)
                other["expected"] = {"§reused§": value["id"]}
                other["metadata"]["case"]["version"] = str(other["metadata"]["case"].get("version", "")) + "+r"
                comeback.append(other)
                reused.add(value["id"])
            continue
        value = copy.deepcopy(value)
        if edit in ("change", "bump"):
            value["expected"] = {"§edited§": value["id"]}
            changed.add(value["id"])
            if edit == "bump":
                value["metadata"]["case"]["version"] = str(value["metadata"]["case"].get("version", "")) + "+1"
            else:
                unversioned.add(value["id"])
        head.append(value)
    for i in range(data.draw(st.integers(0, 2))):
        new = row(f"§new§{i}")
        head.append(new)
        added.add(new["id"])
    with tempfile.TemporaryDirectory() as tmp:
        b, h = write(Path(tmp) / "b.jsonl", base), write(Path(tmp) / "h.jsonl", head)
        same = lifecycle_diff.diff(str(b), str(b)).to_json()
        assert same["counts"]["unchanged"] == len(base) and not same["sets"][0]["findings"]
        if retired:
            retire(str(h), sorted(retired), "no longer needed")
            with open(h, "a", encoding="utf-8") as out:
                out.write("".join(jsonvalue.dumps(r) + "\n" for r in comeback))
        s = lifecycle_diff.diff(str(b), str(h)).sets[0]
    assert {a["id"] for a in s.added} == added
    assert {r["id"] for r in s.removed} == removed | (retired - reused)
    assert {r["id"] for r in s.removed if r["retired"]} == retired - reused
    assert {c.id for c in s.changed} == changed | reused
    assert s.unchanged == len(base) - len(removed) - len(changed) - len(retired)
    found = {(f.code, f.id) for f in s.findings}
    assert {i for c, i in found if c == "behavior-changed-without-version"} == unversioned
    assert {i for c, i in found if c == "removed-without-retirement"} == removed
    assert {i for c, i in found if c == "new-without-reason"} == added
    assert {i for c, i in found if c == "id-reused"} == reused


def _awkward_base(tmp_path: Path) -> tuple[Path, Path]:
    """A JSONL base with a BOM, CRLF, blank lines, a bad line, a repeated id and a row without
    one; a head that changes, removes and adds cases."""
    base = golden()[:8]
    lines = [jsonvalue.dumps(r) for r in base]
    lines.insert(2, "")
    lines.insert(4, "{not json")
    lines.insert(5, jsonvalue.dumps({**base[3], "expected": "a repeat of the id"}))
    lines.append(jsonvalue.dumps({"input": "no id"}))
    b = tmp_path / "base.jsonl"
    b.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode("utf-8") + b"\r\n")
    head = copy.deepcopy(base)
    head[0]["expected"] = "changed"
    head[3]["metadata"]["case"]["version"] = "9"
    del head[5]
    head.append(row("added-here"))
    return b, write(tmp_path / "head.jsonl", head)


def test_regression_a_jsonl_base_is_read_again_only_at_the_rows_that_changed_with_the_same_report(tmp_path, monkeypatch):
    """The second pass over a JSONL base parses only the lines of changed and removed cases (the
    1M-row diff bench); the report is the one a full second read gives."""
    b, h = _awkward_base(tmp_path)
    fast = lifecycle_diff.diff(str(b), str(h)).to_json()
    parsed = []
    real_loads = jsonvalue.loads
    monkeypatch.setattr(jsonvalue, "loads", lambda text: parsed.append(1) or real_loads(text))
    lifecycle_diff.diff(str(b), str(h))
    base_lines = len([line for line in b.read_bytes().split(b"\n") if line.strip()])
    head_lines = len(h.read_text("utf-8").splitlines())
    assert len(parsed) == base_lines + head_lines + 3  # the changed, the edited repeat's first row, the removed
    monkeypatch.setattr(jsonvalue, "loads", real_loads)
    monkeypatch.setattr(lifecycle_diff, "_jsonl_rows", lambda *args: None)  # the full second read
    assert lifecycle_diff.diff(str(b), str(h)).to_json() == fast
    counts = fast["counts"]
    assert (counts["changed"], counts["removed"], counts["added"]) == (2, 1, 1)


def test_regression_a_jsonl_base_that_changes_between_the_passes_is_refused(tmp_path, monkeypatch):
    b, h = _awkward_base(tmp_path)
    real = lifecycle_diff._jsonl_rows

    def rewritten(path, table, lines):
        Path(path).write_text("\n" * 3, encoding="utf-8")  # the base replaced after the first pass
        return real(path, table, lines)

    monkeypatch.setattr(lifecycle_diff, "_jsonl_rows", rewritten)
    done = run("diff", b, h)
    assert done.exit_code == 2 and "the file changed while diff read it" in done.output
    assert len(done.output.strip().splitlines()) == 1

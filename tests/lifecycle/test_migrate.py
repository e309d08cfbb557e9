"""`evalconv migrate SET --to N` (issue 28 §3): lossless in place, recorded, refused when it would lose."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

import evalconv
from hypothesis import given, settings

from conftest import ROOT, row
from evalconv import __version__
from evalconv.canonical.jsonvalue import same
from evalconv.lifecycle.migrate import migrate_file, migrate_row, migrations
from strategies import row_sets
from versioned_sets import CANONICAL, read_back, run, v2, write_set

GOLDEN = [json.loads(line) for line in (ROOT / "golden_roundtrips" / "support-agent.jsonl").read_text().splitlines()]


def at_version_2(value: dict) -> dict:
    out = json.loads(json.dumps(value))
    out["metadata"]["case"]["schemaVersion"] = 2
    return out


@pytest.mark.parametrize("fmt", CANONICAL)
def test_migrate_to_2_rewrites_the_set_in_place_and_records_it(tmp_path, fmt):
    path = write_set(GOLDEN, tmp_path / f"set.{fmt}")
    result = run("migrate", path, "--to", "2")
    assert result.exit_code == 0, result.output
    assert "10 rows (10 at version 1): migrated" in result.output
    assert read_back(path) == [at_version_2(v) for v in GOLDEN]
    (record,) = migrations(path + ".migrations.jsonl")
    assert record["from"] == 1 and record["to"] == 2 and record["tool"] == f"evalconv {__version__}"
    assert record["rows"] == record["changed"] == 10 and record["format"] == fmt
    assert record["fields"] == [{"path": "$.metadata.case.schemaVersion", "change": "set", "from": "(absent)",
                                 "to": 2, "rows": 10}]
    assert datetime.fromisoformat(record["date"].replace("Z", "+00:00")).tzinfo is not None
    assert "note" not in run("validate", path).output  # no longer a version-1 set
    again = run("migrate", path, "--to", "2")
    assert again.exit_code == 0 and "already at version 2: nothing to do" in again.output
    assert len(list(migrations(path + ".migrations.jsonl"))) == 1


@pytest.mark.parametrize("fmt", CANONICAL)
def test_back_to_1_is_refused_when_a_row_uses_a_version_2_field_and_nothing_is_written(tmp_path, fmt):
    rows = [v2("plain"), v2("refs", contextRefs=[{"source": "kb", "snapshot": "1"}]), v2("perm", permission={
        "callerRole": "guest", "resourceScope": "own"})]
    path = write_set(rows, tmp_path / f"set.{fmt}")
    before = Path(path).read_bytes()
    result = run("migrate", path, "--to", "1", "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)["sets"][0]
    assert data["status"] == "refused" and data["refused_count"] == 2
    assert [(f["id"], f["path"]) for f in data["refused"]] == [("refs", "$.metadata.case.contextRefs"),
                                                               ("perm", "$.metadata.case.permission")]
    assert "cannot move to schema version 1 without loss: the row uses contextRefs" in data["refused"][0]["message"]
    assert Path(path).read_bytes() == before and not os.path.exists(path + ".migrations.jsonl")


@pytest.mark.parametrize("fmt", CANONICAL)
def test_a_set_with_an_invalid_row_is_refused_untouched(tmp_path, fmt):
    path = write_set([row("a"), row("a")], tmp_path / f"set.{fmt}")
    before = Path(path).read_bytes()
    result = run("migrate", path, "--to", "2")
    assert result.exit_code == 1 and "refused: nothing written" in result.output and "duplicate-id" in result.output
    assert Path(path).read_bytes() == before and not os.path.exists(path + ".migrations.jsonl")


def test_dry_run_says_what_would_change_and_writes_nothing(tmp_path, write_jsonl):
    path = str(write_jsonl(GOLDEN))
    before = Path(path).read_bytes()
    result = run("migrate", path, "--to", "2", "--dry-run")
    assert result.exit_code == 0 and "would migrate" in result.output
    assert Path(path).read_bytes() == before and not os.path.exists(path + ".migrations.jsonl")


def test_migrated_rows_that_break_version_2s_rules_are_written_and_named(tmp_path, write_jsonl):
    """targetTurn can only be written in a version-2 row: the migration goes ahead and says what is left."""
    talk = row("talk")
    talk["input"] = {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                                  {"role": "user", "content": "c"}]}
    path = str(write_jsonl([talk, row("plain")]))
    result = run("migrate", path, "--to", "2", "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)["sets"][0]
    assert data["status"] == "migrated" and data["errors_after"] == 1
    assert [(f["id"], f["code"]) for f in data["findings_after"]] == [("talk", "conversation-without-target-turn")]
    assert [json.loads(line)["metadata"]["case"]["schemaVersion"] for line in open(path, encoding="utf-8")] == [2, 2]


def test_a_vendor_file_or_unknown_version_is_a_usage_error(tmp_path, write_jsonl):
    source = write_jsonl(GOLDEN)
    vendor = tmp_path / "tests.yaml"
    assert run(source, "--to", "promptfoo", "-o", vendor).exit_code == 0
    result = run("migrate", vendor, "--to", "2")
    assert result.exit_code == 2 and "migrate rewrites a canonical set file" in result.output
    result = run("migrate", source, "--to", "3")
    assert result.exit_code == 2 and "there is no schema version 3" in result.output


def test_a_folder_migrates_each_set_and_leaves_the_ledgers_alone(tmp_path):
    folder = tmp_path / "sets"
    folder.mkdir()
    write_set(GOLDEN[:3], folder / "a.jsonl")
    write_set(GOLDEN[3:], folder / "b.csv")
    (folder / "a.jsonl.retired.jsonl").write_text("", encoding="utf-8")
    result = run("migrate", folder, "--to", "2", "--format", "json")
    assert result.exit_code == 0
    assert sorted(Path(s["path"]).name for s in json.loads(result.stdout)["sets"]) == ["a.jsonl", "b.csv"]
    assert (folder / "a.jsonl.migrations.jsonl").exists() and (folder / "b.csv.migrations.jsonl").exists()


def test_migrating_back_and_forth_is_the_identity_and_each_step_is_recorded(tmp_path, write_jsonl):
    path = str(write_jsonl(GOLDEN))
    assert run("migrate", path, "--to", "2").exit_code == 0
    assert run("migrate", path, "--to", "1").exit_code == 0
    assert read_back(path) == GOLDEN
    assert [(r["from"], r["to"]) for r in migrations(path + ".migrations.jsonl")] == [(1, 2), (2, 1)]


def _read(path) -> list[dict]:
    result = evalconv.read(str(path))
    assert not result.log.errors
    return [r.to_json() for r in result.rows]


@settings(max_examples=25)
@given(rows=row_sets(max_size=4))
def test_property_every_version_1_row_has_one_version_2_form_in_every_format(rows):
    """v1 -> migrate -> v2 -> read: the same rows with schemaVersion 2 and nothing else changed,
    in every canonical format; and back to 1 gives the rows as they were."""
    values = [r.to_json() for r in rows]
    folder = tempfile.mkdtemp()
    try:
        for fmt in CANONICAL:
            path = write_set(values, Path(folder) / f"set.{fmt}")
            result = migrate_file(path, 2, now=datetime(2026, 1, 1, tzinfo=timezone.utc))
            assert result.refused_count == 0 and result.changed == len(values)
            back = _read(path)
            assert len(back) == len(values)
            for old, new in zip(values, back):
                assert new["metadata"]["case"].pop("schemaVersion") == 2
                assert same(old, new)
            assert migrate_file(path, 1).changed == len(values)
            assert all(same(a, b) for a, b in zip(values, _read(path)))
    finally:
        shutil.rmtree(folder)


def test_migrate_row_leaves_the_row_it_is_given_alone():
    value = row("a")
    new, problem = migrate_row(value, 1, 2)
    assert problem is None and new["metadata"]["case"]["schemaVersion"] == 2
    assert "schemaVersion" not in value["metadata"]["case"]


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x"})


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_diff_of_a_migration_commit_is_one_finding_not_a_changed_row_each(tmp_path, fmt):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    path = write_set(GOLDEN, repo / f"set.{fmt}")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    assert run("migrate", path, "--to", "2").exit_code == 0
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "migrate to 2")
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        result = run("diff", "--git", "HEAD~1", f"set.{fmt}", "--format", "json")
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["counts"]["changed"] == 0 and data["counts"]["migrated"] == 10
    (finding,) = data["sets"][0]["findings"]
    assert finding["code"] == "schema-migrated" and "10 case(s) moved from schema version 1 to 2" in finding["message"]
    assert "the migrations ledger records it" in finding["message"]


def test_markdown_is_a_pull_request_comment_naming_each_set_and_what_stopped_it(tmp_path, write_jsonl):
    good = str(write_jsonl(GOLDEN[:2], "good.jsonl"))
    bad = str(write_jsonl([v2("refs", contextRefs=[{"source": "kb", "snapshot": "1"}])], "bad.jsonl"))
    result = run("migrate", good, bad, "--to", "1", "--format", "markdown")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "### evalconv migrate"
    assert any(f"`{good}`" in line and "already at version 1: nothing to do" in line for line in lines)
    assert any(f"`{bad}`" in line and "refused: nothing written" in line for line in lines)
    assert any("`schema` refs `$.metadata.case.contextRefs`: cannot move to schema version 1" in line for line in lines)


def test_regression_a_migrations_ledger_line_that_is_not_a_record_names_the_file_line_and_field(tmp_path):
    # The migrations ledger was read by a copy of the retirement ledger's reader whose messages
    # put the line inside the text; both ledgers now share one reader (file:line: ... $.field).
    base = write_set(GOLDEN, tmp_path / "base.jsonl")
    head = write_set(GOLDEN, tmp_path / "head.jsonl")
    assert run("migrate", head, "--to", "2").exit_code == 0
    ledger = Path(head + ".migrations.jsonl")
    with open(ledger, "a", encoding="utf-8") as out:
        out.write('{"action": "retired"}\n')
    result = run("diff", base, head)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{ledger}:2: not a migration record: $.action" in result.output

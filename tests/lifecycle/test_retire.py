"""`evalconv retire`: retirement with history (issue 28 section 2), through the CLI on every
canonical format; the ledger and the set published together; `diff`, `stats` and `validate`
reading the ledger and the retirement condition."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, row
from evalconv import atomic
from evalconv.canonical import jsonvalue
from evalconv.canonical.retirement import record_problem, record_schema
from evalconv.cli import cli
from strategies import row_sets

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
FORMATS = {"jsonl": ".jsonl", "json": ".json", "csv": ".csv", "parquet": ".parquet"}
DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(autouse=True)
def no_git_identity(monkeypatch, tmp_path):
    """git knows nobody unless a test makes a repository that says who."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def golden() -> list[dict]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]


def written(tmp_path: Path, rows: list[dict], fmt: str, name: str) -> Path:
    """`rows` as evalconv writes them in `fmt`."""
    source = tmp_path / f"{name}.src.jsonl"
    source.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / f"{name}{FORMATS[fmt]}"
    done = run("convert", source, "--to", fmt, "-o", out)
    assert done.exit_code == 0, done.output
    source.unlink()
    return out


def ledger(path: Path) -> list[dict]:
    ledger_path = Path(str(path) + ".retired.jsonl")
    return [json.loads(line) for line in ledger_path.read_text(encoding="utf-8").splitlines()]


def ids_of(path: Path) -> list[str]:
    import evalconv

    return [r.id for r in evalconv.read(str(path)).rows]


@pytest.mark.parametrize("fmt", FORMATS)
def test_retire_writes_what_evalconv_writes_for_the_rest_and_keeps_the_case(tmp_path, fmt):
    rows = golden()
    gone = {rows[3]["id"], rows[6]["id"]}
    target = written(tmp_path, rows, fmt, "set")
    original = target.read_bytes()
    done = run("retire", target, "--id", rows[6]["id"], "--id", rows[3]["id"], "--why", "the feature is gone",
               "--format", "json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["counts"] == {"retired": 2, "restored": 0, "finished": 0}
    assert report["sets"][0]["rows_before"] == len(rows) and report["sets"][0]["rows_after"] == len(rows) - 2
    assert report["sets"][0]["reformatted"] is False
    expected = written(tmp_path, [r for r in rows if r["id"] not in gone], fmt, "expected")
    assert target.read_bytes() == expected.read_bytes(), "untouched rows must round-trip byte for byte"
    records = ledger(target)
    assert [r["id"] for r in records] == [rows[6]["id"], rows[3]["id"]]
    for record, position in zip(records, (7, 4)):
        assert record_problem(record) is None
        assert record["action"] == "retired" and record["reason"] == "the feature is gone"
        assert DATE.match(record["date"]) and "by" not in record  # git knows nobody here
        assert record["row"] == position and record["case"] == rows[position - 1]
    # put back one by one from the first row down, each lands on its old row: the set is as it was
    for case_id in (rows[3]["id"], rows[6]["id"]):
        back = run("retire", target, "--restore", case_id)
        assert back.exit_code == 0, back.output
    assert target.read_bytes() == original
    assert [r["action"] for r in ledger(target)] == ["retired", "retired", "restored", "restored"]


def test_a_set_not_laid_out_as_evalconv_writes_it_is_said_to_be_reformatted(tmp_path):
    rows = golden()
    by_hand = tmp_path / "sheet.csv"  # a sheet saved with ';', as Excel does in many locales
    by_hand.write_text("id;input;case.caseId;case.oracleType;case.expectedBehavior;case.provenance;case.evaluator\n"
                       "a;Hi?;a;expected-behavior-only;Greets back.;expert-authored;human-expert\n"
                       "b;Bye?;b;expected-behavior-only;Says goodbye.;expert-authored;human-expert\n",
                       encoding="utf-8")
    done = run("retire", by_hand, "--id", "a", "--why", "x", "--format", "json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["sets"][0]["reformatted"] is True
    assert by_hand.read_text(encoding="utf-8").startswith("id,input,")
    text = run("retire", by_hand, "--restore", "a").output
    assert "note:" not in text  # now it is laid out as evalconv writes it
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")  # ", " and ": "
    assert "not laid out as evalconv writes jsonl" in run("retire", spaced, "--id", rows[0]["id"], "--why", "x").output


def test_an_excel_safe_sheet_is_written_excel_safe_again(tmp_path):
    rows = golden()  # one id starts with '=': --excel-safe guards it
    source = tmp_path / "src.jsonl"
    source.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows), encoding="utf-8")
    target, expected = tmp_path / "sheet.csv", tmp_path / "expected.csv"
    assert run("convert", source, "--to", "csv", "--excel-safe", "-o", target).exit_code == 0
    source.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows[1:]), encoding="utf-8")
    assert run("convert", source, "--to", "csv", "--excel-safe", "-o", expected).exit_code == 0
    done = run("retire", target, "--id", rows[0]["id"], "--why", "x", "--format", "json")
    assert done.exit_code == 0, done.output
    change = json.loads(done.output)["sets"][0]
    assert change["reformatted"] is False and change["options"] == {"excel_safe": True}
    assert target.read_bytes() == expected.read_bytes()
    assert "written as it was: --excel-safe" in run("retire", target, "--restore", rows[0]["id"]).output


def test_an_unknown_id_exits_2_naming_it_and_writes_nothing(tmp_path):
    target = written(tmp_path, golden(), "jsonl", "set")
    before = target.read_bytes()
    done = run("retire", target, "--id", golden()[0]["id"], "--id", "no-such-case", "--why", "x")
    assert done.exit_code == 2 and "'no-such-case'" in done.output and "Traceback" not in done.output
    assert target.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["set.jsonl"]


def test_retiring_a_retired_case_says_when_it_left(tmp_path):
    target = written(tmp_path, golden(), "jsonl", "set")
    case_id = golden()[1]["id"]
    assert run("retire", target, "--id", case_id, "--why", "duplicated by another case").exit_code == 0
    again = run("retire", target, "--id", case_id, "--why", "again")
    assert again.exit_code == 2 and "was retired" in again.output and "duplicated by another case" in again.output


def test_restore_refuses_a_live_id_and_an_id_never_retired(tmp_path):
    rows = golden()
    target = written(tmp_path, rows, "jsonl", "set")
    comment = run("retire", target, "--id", rows[0]["id"], "--why", "obsolete | old", "--format", "markdown")
    assert comment.exit_code == 0 and comment.output.startswith("## evalconv retire\n")
    assert f"| `{rows[0]['id']}` | retired | 1 | " in comment.output and "obsolete \\| old" in comment.output
    assert run("retire", target, "--restore", rows[0]["id"], "--why", "needed after all").exit_code == 0
    assert ledger(target)[-1]["reason"] == "needed after all"
    before = target.read_bytes()
    live = run("retire", target, "--restore", rows[0]["id"])
    assert live.exit_code == 2 and f"'{rows[0]['id']}' is not retired: it was restored" in live.output
    never = run("retire", target, "--restore", "never-retired")
    assert never.exit_code == 2 and "no retired case 'never-retired'" in never.output and "is not retired" not in never.output
    assert target.read_bytes() == before and len(ledger(target)) == 2


def test_restore_refuses_when_the_id_came_back_by_hand(tmp_path):
    rows = golden()
    target = written(tmp_path, rows, "jsonl", "set")
    assert run("retire", target, "--id", rows[0]["id"], "--why", "obsolete").exit_code == 0
    with open(target, "a", encoding="utf-8") as out:
        out.write(jsonvalue.dumps(rows[0]) + "\n")  # pasted back without --restore
    done = run("retire", target, "--restore", rows[0]["id"])
    assert done.exit_code == 2 and f"'{rows[0]['id']}' is live in the set" in done.output


def test_usage_errors(tmp_path):
    target = written(tmp_path, golden(), "jsonl", "set")
    first = golden()[0]["id"]
    assert "--why" in run("retire", target, "--id", first).output
    assert run("retire", target, "--id", first).exit_code == 2
    assert run("retire", target, "--id", first, "--restore", first, "--why", "x").exit_code == 2
    nothing = run("retire", target)
    assert nothing.exit_code == 2 and "--id" in nothing.output
    assert run("retire", tmp_path / "missing.jsonl", "--id", first, "--why", "x").exit_code == 2


def test_a_vendor_file_is_refused(tmp_path):
    target = tmp_path / "tests.yaml"
    assert run("convert", GOLDEN, "--to", "promptfoo", "-o", target).exit_code == 0
    before = target.read_bytes()
    done = run("retire", target, "--id", golden()[0]["id"], "--why", "x")
    assert done.exit_code == 2 and "canonical" in done.output and target.read_bytes() == before


def test_a_set_with_an_invalid_row_exits_1_and_writes_nothing(tmp_path):
    rows = golden()
    rows[2]["metadata"]["case"]["oracleType"] = "not-an-oracle"
    target = tmp_path / "set.jsonl"
    target.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows), encoding="utf-8")
    before = target.read_bytes()
    done = run("retire", target, "--id", rows[0]["id"], "--why", "x")
    assert done.exit_code == 1 and f"set.jsonl:3: row 3 ({rows[2]['id']}) $.metadata.case.oracleType" in done.output
    assert target.read_bytes() == before and not Path(str(target) + ".retired.jsonl").exists()
    # the invalid row itself may leave: what stays is valid
    assert run("retire", target, "--id", rows[2]["id"], "--why", "broken").exit_code == 0


def test_a_folder_of_sets_retires_each_id_where_it_lives(tmp_path):
    rows = golden()
    folder = tmp_path / "sets"
    folder.mkdir()
    a = written(folder, rows[:5], "jsonl", "a")
    b = written(folder, rows[5:], "csv", "b")
    done = run("retire", folder, "--id", rows[1]["id"], "--id", rows[7]["id"], "--why", "split", "--format", "json")
    assert done.exit_code == 0, done.output
    assert [r["id"] for r in ledger(a)] == [rows[1]["id"]] and [r["id"] for r in ledger(b)] == [rows[7]["id"]]
    assert rows[1]["id"] not in ids_of(a) and rows[7]["id"] not in ids_of(b)
    # the ledgers beside the sets are history, not sets: validate and stats leave them out
    checked = run("validate", folder, "--format", "json")
    assert checked.exit_code == 0, checked.output
    counted = json.loads(run("stats", folder, "--format", "json").output)
    assert counted["rows"] == len(rows) - 2 and counted["retired"]["cases"] == 2
    missing = run("retire", folder, "--id", "nowhere", "--why", "x")
    assert missing.exit_code == 2 and "'nowhere'" in missing.output


def test_a_folder_is_changed_whole_or_not_at_all(tmp_path):
    rows = golden()
    folder = tmp_path / "sets"
    folder.mkdir()
    written(folder, rows[:5], "jsonl", "a")
    broken = rows[5:]
    broken[1]["metadata"]["case"]["oracleType"] = "not-an-oracle"
    b = folder / "b.jsonl"
    b.write_text("".join(jsonvalue.dumps(r) + "\n" for r in broken), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    done = run("retire", folder, "--id", rows[0]["id"], "--id", rows[5]["id"], "--why", "x")
    assert done.exit_code == 1 and "b.jsonl:2" in done.output
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before, "a.jsonl changed without b.jsonl"


def test_stats_counts_retired_cases_and_their_reasons(tmp_path):
    rows = golden()
    target = written(tmp_path, rows, "jsonl", "set")
    assert run("retire", target, "--id", rows[0]["id"], "--id", rows[1]["id"], "--why", "feature removed").exit_code == 0
    assert run("retire", target, "--id", rows[2]["id"], "--why", "policy changed").exit_code == 0
    assert run("retire", target, "--restore", rows[1]["id"]).exit_code == 0
    data = json.loads(run("stats", target, "--format", "json").output)
    assert data["retired"]["cases"] == 2
    assert data["retired"]["reasons"] == {"feature removed": 1, "policy changed": 1}
    assert data["rows"] == len(rows) - 2
    text = run("stats", target).output
    assert "retired: 2 cases" in text and "policy changed" in text
    assert "**Retired**: 2 cases" in run("stats", target, "--format", "markdown").output
    page = tmp_path / "coverage.html"
    assert run("stats", target, "--html", page).exit_code == 0
    assert '<div class="tile " data-tile="retired"><div class="k">retired</div><div class="v">2</div>' \
        in page.read_text(encoding="utf-8")
    plain = written(tmp_path, rows, "jsonl", "plain")
    assert json.loads(run("stats", plain, "--format", "json").output)["retired"] == {
        "cases": 0, "reasons": {}, "ledgers": [], "interrupted": []}


def test_a_ledger_line_that_is_not_a_record_names_the_file_and_line(tmp_path):
    rows = golden()
    target = written(tmp_path, rows, "jsonl", "set")
    assert run("retire", target, "--id", rows[0]["id"], "--why", "x").exit_code == 0
    ledger_path = Path(str(target) + ".retired.jsonl")
    with open(ledger_path, "a", encoding="utf-8") as out:
        out.write('{"action": "retired", "id": "x"}\n')
    done = run("retire", target, "--id", rows[1]["id"], "--why", "y")
    assert done.exit_code == 2 and f"{ledger_path}:2" in done.output and "Traceback" not in done.output
    counted = run("stats", target)
    assert counted.exit_code == 2 and f"{ledger_path}:2: not a ledger record" in counted.output


def test_the_published_schema_is_the_one_records_are_checked_against():
    schema = record_schema()
    assert json.loads(run("schema", "--retirement").output) == schema
    import jsonschema

    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["$id"].endswith("/retirement.schema.json") and schema["additionalProperties"] is False
    good = {"action": "restored", "id": "a", "date": "2026-12-02T16:05:09Z", "setBefore": "sha256:" + "0" * 64}
    assert record_problem(good) is None
    assert record_problem({**good, "case": {"id": "a"}}) is not None  # a restore carries no case
    assert record_problem({**good, "action": "retired"}) is not None  # a retirement needs its reason and case
    assert record_problem({**good, "action": "retired", "reason": "r", "row": 1, "case": {"id": "b"}}) \
        .startswith("$.case.id")
    assert record_problem({**good, "by": None}) is not None  # who: absent when git does not know


class Killed(BaseException):
    """The process dies here: nothing after this point runs (nothing catches a BaseException)."""


def _crash_on(monkeypatch, name: str):
    """os.replace dies (as a killed process would) when it would publish `name`."""
    real = os.replace

    def replace(src, dst):
        if os.path.basename(dst) == name:
            raise Killed
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)


def test_a_run_stopped_between_the_ledger_and_the_set_is_finished_by_the_next(tmp_path, monkeypatch):
    rows = golden()
    target = written(tmp_path, rows, "csv", "set")
    before = target.read_bytes()
    _crash_on(monkeypatch, "set.csv")
    with pytest.raises(Killed):
        run("retire", target, "--id", rows[4]["id"], "--why", "stopped half way")
    monkeypatch.undo()
    assert target.read_bytes() == before, "the set is whole: the old one"
    assert [r["id"] for r in ledger(target)] == [rows[4]["id"]], "the ledger, published first, holds the case"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(atomic.SUFFIX)]
    # meanwhile: the case is live and its record matches it, so diff sees nothing to flag
    assert json.loads(run("stats", target, "--format", "json").output)["retired"]["interrupted"] == [str(target)]
    # the next run finishes the change first, without a second record
    done = run("retire", target, "--format", "json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["counts"] == {"retired": 0, "restored": 0, "finished": 1}
    assert target.read_bytes() == written(tmp_path, rows[:4] + rows[5:], "csv", "expected").read_bytes()
    assert len(ledger(target)) == 1
    assert run("retire", target).exit_code == 2  # nothing left to finish


def test_a_restore_stopped_half_way_is_finished_and_a_new_change_waits_for_it(tmp_path, monkeypatch):
    rows = golden()
    target = written(tmp_path, rows, "jsonl", "set")
    original = target.read_bytes()
    assert run("retire", target, "--id", rows[2]["id"], "--why", "obsolete").exit_code == 0
    _crash_on(monkeypatch, "set.jsonl")
    with pytest.raises(Killed):
        run("retire", target, "--restore", rows[2]["id"])
    monkeypatch.undo()
    assert rows[2]["id"] not in ids_of(target) and ledger(target)[-1]["action"] == "restored"
    done = run("retire", target, "--id", rows[0]["id"], "--why", "next change", "--format", "json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)["sets"][0]
    assert [r["id"] for r in report["finished"]] == [rows[2]["id"]]
    assert ids_of(target) == [r["id"] for r in rows[1:]]
    assert run("retire", target, "--restore", rows[0]["id"]).exit_code == 0
    assert target.read_bytes() == original


def test_a_run_stopped_before_the_ledger_changes_nothing(tmp_path, monkeypatch):
    rows = golden()
    target = written(tmp_path, rows, "jsonl", "set")
    before = target.read_bytes()
    _crash_on(monkeypatch, "set.jsonl.retired.jsonl")
    with pytest.raises(Killed):
        run("retire", target, "--id", rows[0]["id"], "--why", "x")
    monkeypatch.undo()
    assert target.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["set.jsonl"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_diff_git_accepts_a_retirement_and_flags_a_reused_id(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "sets").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "ada@example.invalid")
    git(repo, "config", "user.name", "Ada")
    rows = golden()
    target = written(repo / "sets", rows, "jsonl", "support")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    monkeypatch.chdir(repo)
    done = run("retire", "sets/support.jsonl", "--id", rows[0]["id"], "--why", "refund policy v1 is gone")
    assert done.exit_code == 0, done.output
    assert ledger(target)[0]["by"] == "Ada <ada@example.invalid>"
    check = run("diff", "--git", "HEAD", "sets", "--format", "json", "--fail-on", "removed-without-retirement")
    assert check.exit_code == 0, check.output
    data = json.loads(check.output)
    assert data["counts"]["removed"] == 1 and data["counts"]["retired"] == 1
    assert data["sets"][0]["removed"][0]["retired"]["reason"] == "refund policy v1 is gone"
    assert not any(s["head"].endswith(".retired.jsonl") for s in data["sets"])
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "retire")
    # the ledger is append-only: a record edited away is a finding, an appended one is not
    ledger_path = Path(str(target) + ".retired.jsonl")
    kept = ledger_path.read_bytes()
    ledger_path.write_bytes(kept.replace(b"refund policy v1 is gone", b"nobody knows"))
    edited = run("diff", "--git", "HEAD", "sets/support.jsonl", "--format", "json", "--fail-on", "ledger-rewritten")
    assert edited.exit_code == 1 and [f["code"] for f in json.loads(edited.output)["failed"]] == ["ledger-rewritten"]
    ledger_path.unlink()
    gone = run("diff", "--git", "HEAD", "sets", "--format", "json", "--fail-on", "ledger-rewritten")
    assert gone.exit_code == 1 and "ledger is gone" in gone.output
    ledger_path.write_bytes(kept)
    assert run("retire", "sets/support.jsonl", "--id", rows[1]["id"], "--why", "next").exit_code == 0
    assert run("diff", "--git", "HEAD", "sets/support.jsonl", "--fail-on", "ledger-rewritten").exit_code == 0
    git(repo, "checkout", "-q", "--", "sets")
    # the id comes back as another case: id-reused; as the same case: not
    other = row(rows[0]["id"], oracle="rubric", expected=(), evaluationCriteria=["polite"])
    other["metadata"]["reason"] = "a new case under an old name"
    with open(target, "a", encoding="utf-8") as out:
        out.write(jsonvalue.dumps(other) + "\n")
    reused = run("diff", "--git", "HEAD", "sets", "--format", "json", "--fail-on", "id-reused")
    assert reused.exit_code == 1
    assert [f["id"] for f in json.loads(reused.output)["failed"]] == [rows[0]["id"]]
    git(repo, "checkout", "-q", "--", "sets/support.jsonl")
    assert run("retire", "sets/support.jsonl", "--restore", rows[0]["id"]).exit_code == 0
    assert run("diff", "--git", "HEAD", "sets", "--fail-on", "id-reused").exit_code == 0


def test_validate_warns_when_the_retirement_condition_names_a_past_date(tmp_path):
    rows = [row("old", retirementCondition="retire after 2001-03-31, when the v1 refund policy ends"),
            row("later", retirementCondition="retire after 2999-12-31"),
            row("no-date", retirementCondition="when the safety intake form ships"),
            row("not-a-date", retirementCondition="ticket 2001-13-45")]
    target = tmp_path / "set.jsonl"
    target.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = run("validate", target, "--format", "json")
    assert done.exit_code == 0, done.output
    found = [f for f in json.loads(done.output)["files"][0]["warnings"] if f["code"] == "retirement-due"]
    assert [(f["id"], f["path"]) for f in found] == [("old", "$.metadata.case.retirementCondition")]
    assert "2001-03-31" in found[0]["message"] and "evalconv retire" in found[0]["message"]


def test_sigkill_while_the_set_is_written_leaves_the_set_and_its_ledger_as_they_were(tmp_path):
    """A real process killed mid-write (the set's temporary file growing): the set is the old
    one byte for byte, no ledger record names a case still in it, and a rerun sweeps the temp
    file and does the whole change."""
    import sys

    from faultkit import digest, growing_temp, kill_when, start, temp_files, write_big_set

    if sys.platform == "win32":
        pytest.skip("SIGKILL is POSIX")
    target = write_big_set(tmp_path / "big.jsonl", copies=3000)
    retire_id = f"{golden()[0]['id']}-1500"
    before = digest(target)
    kill_when(start(["retire", target, "--id", retire_id, "--why", "killed"]), growing_temp(tmp_path))
    assert digest(target) == before
    assert not Path(str(target) + ".retired.jsonl").exists()
    assert temp_files(tmp_path)
    done = run("retire", target, "--id", retire_id, "--why", "done now")
    assert done.exit_code == 0, done.output
    assert not temp_files(tmp_path)
    assert [r["id"] for r in ledger(target)] == [retire_id]


def test_retirement_due_is_the_same_on_two_cores(tmp_path, small_chunks):
    import evalconv

    rows = [row(f"c{i}", retirementCondition=f"retire after {'2001-01-01' if i % 3 else '2999-01-01'}")
            for i in range(60)]
    target = tmp_path / "set.jsonl"
    target.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows), encoding="utf-8")
    one, two = evalconv.validate([str(target)], jobs=1).to_json(), evalconv.validate([str(target)], jobs=2).to_json()
    assert one == two
    due = [f["id"] for f in one["files"][0]["warnings"] if f["code"] == "retirement-due"]
    assert due == [f"c{i}" for i in range(60) if i % 3]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_the_ledger_keeps_the_case_exactly_big_integers_and_floats_too(tmp_path, fmt):
    rows = [row("big", expected=10 ** 30), row("float", expected=1.0), row("one", expected=1)]
    target = written(tmp_path, rows, fmt, "set")
    original = target.read_bytes()
    assert run("retire", target, "--id", "big", "--id", "float", "--why", "x").exit_code == 0
    ledger_path = Path(str(target) + ".retired.jsonl")
    kept = [jsonvalue.loads(line)["case"] for line in ledger_path.read_bytes().splitlines()]
    assert jsonvalue.same(kept[0], rows[0]) and jsonvalue.same(kept[1], rows[1])
    assert type(kept[1]["expected"]) is float and kept[0]["expected"] == 10 ** 30
    assert run("retire", target, "--restore", "float", "--restore", "big").exit_code == 0  # each at its row
    assert target.read_bytes() == original


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=25)
@given(rows=row_sets(max_size=6), data=st.data())
def test_any_set_retired_is_what_evalconv_writes_for_the_rest_and_restored_is_the_set_again(fmt, rows, data):
    """Random valid sets (every kind of value: strings that look like numbers or JSON, null vs
    absent, big integers, metadata keys with dots), random cases retired in one go: the set is
    byte for byte what evalconv writes for the rest, and putting them all back gives it back."""
    import tempfile

    import evalconv
    from evalconv.lifecycle.retire import restore, retire

    gone = data.draw(st.sets(st.sampled_from([r.id for r in rows]), max_size=len(rows)) if rows else st.just(set()))
    with tempfile.TemporaryDirectory() as tmp:
        target, expected = Path(tmp) / f"set{FORMATS[fmt]}", Path(tmp) / f"expected{FORMATS[fmt]}"
        evalconv.write(rows, str(target), fmt)
        original = target.read_bytes()
        evalconv.write([r for r in rows if r.id not in gone], str(expected), fmt)
        if not gone:
            return
        change = retire(str(target), sorted(gone), "random").changes[0]
        assert change.reformatted is False
        assert target.read_bytes() == expected.read_bytes()
        restore(str(target), sorted(gone))
        assert target.read_bytes() == original

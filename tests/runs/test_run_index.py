"""The run store's on-disk id index (`index.sqlite3`): an import keeps no ids in memory, and the
index stays true to the JSONL files: built when missing, extended when a file only grew, rebuilt
when a file changed otherwise or the index cannot be read."""
from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from conftest import ROOT
from evalconv.cli import cli
from evalconv.canonical.errors import UsageError
from evalconv.runs.readers import RESULTS_REGISTRY
from evalconv.runs.index import INDEX
from evalconv.runs.report import report
from evalconv.runs.store import _JUDGE, _WHAT_HAPPENED, _WHAT_WAS_JUDGED, import_runs, read_records

RUNS = ROOT / "tests" / "fixtures" / "runs"
CASES = RUNS / "cases.jsonl"
PROMPTFOO = RUNS / "promptfoo" / "results.json"
RERUN = RUNS / "promptfoo" / "rerun.jsonl"
NOTHING = {"attempts": 0, "results": 0, "ledger": 0}


def imported(store: Path, *paths: Path, **kwargs):
    return import_runs(str(store), ((str(p), RESULTS_REGISTRY.read(str(p))) for p in paths), **kwargs)


def stored_ids(store: Path, kind: str) -> list[str]:
    return [r["id"] for k, r in read_records(str(store)) if k == kind]


def test_the_index_is_written_beside_the_store_and_holds_every_id(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO, RERUN)
    with sqlite3.connect(store / INDEX) as db:
        ids = {kind: {i for (i,) in db.execute("SELECT id FROM ids WHERE kind = ?", (n,))} for n, kind in
               enumerate(("attempt", "result"))}
    assert ids["attempt"] == set(stored_ids(store, "attempt")) and len(ids["attempt"]) == 20
    assert ids["result"] == set(stored_ids(store, "result")) and len(ids["result"]) == 56


def test_a_store_without_an_index_gets_one_and_stays_idempotent(tmp_path):
    """A store written before the index existed (or whose index was deleted)."""
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    os.remove(store / INDEX)
    assert imported(store, PROMPTFOO).added == NOTHING
    assert (store / INDEX).exists()
    summary = imported(store, PROMPTFOO, RERUN)
    assert summary.added == {"attempts": 10, "results": 28, "ledger": 0}


def test_lines_appended_behind_the_index_are_indexed_before_importing(tmp_path):
    """An import cut short after its lines reached the file but before the index was saved, or an
    older evalconv appending: the index catches up from where it stopped."""
    store, elsewhere = tmp_path / "store", tmp_path / "elsewhere"
    imported(store, PROMPTFOO)
    imported(elsewhere, RERUN)
    for name in ("attempts.jsonl", "results.jsonl"):
        with open(store / name, "ab") as out:
            out.write((elsewhere / name).read_bytes())
    summary = imported(store, RERUN)
    assert summary.added == NOTHING and summary.known == {"attempts": 10, "results": 28, "ledger": 0}
    assert len(stored_ids(store, "result")) == 56


def test_a_file_changed_behind_the_index_rebuilds_it(tmp_path):
    """Lines removed by hand (not append-only any more): the index must not claim them."""
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    path = store / "results.jsonl"
    kept = path.read_text("utf-8").splitlines(keepends=True)[:10]
    path.write_text("".join(kept))
    summary = imported(store, PROMPTFOO)
    assert summary.added == {"attempts": 0, "results": 18, "ledger": 0}
    assert sorted(stored_ids(store, "result")) == sorted({r["id"] for k, r in RESULTS_REGISTRY.read(str(PROMPTFOO))
                                                          if k == "result"})


def test_a_file_replaced_by_another_of_the_same_size_rebuilds_the_index(tmp_path):
    store, other = tmp_path / "store", tmp_path / "other"
    imported(store, PROMPTFOO)
    imported(other, PROMPTFOO)
    # same bytes, a different file: the store was restored from a copy
    os.remove(store / "results.jsonl")
    shutil.copy(other / "results.jsonl", store / "results.jsonl")
    assert imported(store, PROMPTFOO).added == NOTHING
    (store / "results.jsonl").write_text("")
    assert imported(store, PROMPTFOO).added["results"] == 28


@pytest.mark.parametrize("damage", [b"not a database at all" * 100, b""])
def test_an_unreadable_index_is_made_again(tmp_path, damage):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    (store / INDEX).write_bytes(damage)
    assert imported(store, PROMPTFOO).added == NOTHING
    assert imported(store, RERUN).added["attempts"] == 10


def test_an_index_of_another_format_is_made_again(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    with sqlite3.connect(store / INDEX) as db:
        db.execute("UPDATE meta SET value = 'evalconv-run-index 0' WHERE key = 'format'")
        db.execute("DELETE FROM ids")
    assert imported(store, PROMPTFOO).added == NOTHING


def test_an_import_that_fails_midway_leaves_the_index_as_it_was_and_the_next_one_finishes(tmp_path):
    store = tmp_path / "store"
    imported(store, RERUN)
    records = list(RESULTS_REGISTRY.read(str(PROMPTFOO)))

    def cut_short():
        yield from records[:12]
        raise OSError("the disk went away")

    with pytest.raises(OSError):
        import_runs(str(store), [("cut", cut_short())])
    with sqlite3.connect(store / INDEX) as db:
        assert db.execute("SELECT COUNT(*) FROM ids").fetchone() == (38,)
    written = len(stored_ids(store, "attempt")) + len(stored_ids(store, "result"))
    assert written == 38 + 12  # what reached the file before the failure stays, and counts as stored
    summary = imported(store, PROMPTFOO)
    assert summary.known["attempts"] + summary.known["results"] == 12
    assert len(stored_ids(store, "attempt")) == 20 and len(stored_ids(store, "result")) == 56


def test_a_second_import_into_a_store_waits_for_the_first(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    holder = sqlite3.connect(store / INDEX, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # an import in progress holds the write lock
    try:
        with pytest.raises(UsageError, match="another import into this run store"):
            imported(store, RERUN, lock_timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(stored_ids(store, "attempt")) == 10  # nothing was appended meanwhile
    assert imported(store, RERUN).added["attempts"] == 10


def test_the_report_ignores_the_index(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    before = report([str(store)], [str(CASES)])
    os.remove(store / INDEX)
    assert report([str(store)], [str(CASES)]) == before


def test_an_index_that_cannot_be_opened_is_one_clear_error_and_nothing_is_appended(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    os.remove(store / INDEX)
    (store / INDEX).mkdir()  # in the way: not a file SQLite can open, nor one evalconv may remove
    before = (store / "attempts.jsonl").read_bytes()
    out = CliRunner().invoke(cli, ["runs", "import", str(RERUN), "--store", str(store)])
    assert out.exit_code == 2 and isinstance(out.exception, SystemExit)
    assert "index.sqlite3" in out.stderr and "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert (store / "attempts.jsonl").read_bytes() == before


def test_a_same_size_edit_behind_the_index_rebuilds_it(tmp_path):
    """An id changed in place (same size, same file): the old id must not count as stored any more."""
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    path = store / "results.jsonl"
    first = json.loads(path.read_text("utf-8").splitlines()[0])["id"]
    edited = first[:-1] + ("0" if first[-1] != "0" else "1")
    path.write_text(path.read_text("utf-8").replace(first, edited, 1))
    os.utime(path, ns=(0, 10**18))  # a different modification time, whatever the clock's resolution
    summary = imported(store, PROMPTFOO)
    assert summary.added == {"attempts": 0, "results": 1, "ledger": 0}


# ---- a damaged store (issue 23): the index checks itself, damaged lines are located, re-importing
# is idempotent whatever state the index is in

def cli_run(*args):
    out = CliRunner().invoke(cli, [str(a) for a in args])
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception  # never a traceback
    return out


def cli_import(store: Path, *paths: Path):
    return cli_run("runs", "import", *paths, "--store", store)


def attempt_lines(store: Path) -> list[str]:
    return (store / "attempts.jsonl").read_text("utf-8", "replace").splitlines()


def test_a_byte_0xff_in_a_store_file_is_a_located_ledger_entry_not_a_crash(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    path = store / "attempts.jsonl"
    data = bytearray(path.read_bytes())
    data[50] = 0xFF
    path.write_bytes(bytes(data))
    out = cli_run("report", store, "--cases", CASES, "--format", "json")
    assert out.exit_code == 0
    ledger = [e for e in json.loads(out.stdout)["ledger"] if e["kind"] == "unreadable"]
    assert ledger == [{"kind": "unreadable", "id": None, "ref": None, "reason": "not UTF-8: byte 0xff at column 51",
                       "source": {"file": str(path), "line": 1, "entry": None}}]
    again = cli_import(store, PROMPTFOO)
    assert again.exit_code == 0 and f"{path}:1: damaged store line: not UTF-8" in again.stderr
    assert "added 1 attempt," in again.stdout  # the unreadable attempt is stored again, once
    assert cli_import(store, PROMPTFOO).stdout.startswith(f"{store}: added 0 attempts, 0 results")


@pytest.mark.parametrize("column, value", [("size", -5), ("size", 10**12), ("lines", -1), ("tail", "text"),
                                           ("inode", None), ("ids", 3), ("checksum", 0), ("mtime_ns", "x")])
def test_an_index_field_out_of_range_rebuilds_that_part(tmp_path, column, value):
    """A negative size once reached seek() (ValueError, exit 70)."""
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    with sqlite3.connect(store / INDEX) as db:
        db.execute(f"UPDATE files SET {column} = ?", (value,))
        if column == "size":
            db.execute("UPDATE files SET tail = x''")  # so that the tail check alone would pass
    out = cli_import(store, PROMPTFOO)
    assert out.exit_code == 0 and "added 0 attempts, 0 results" in out.stdout
    assert len(attempt_lines(store)) == 10


@pytest.mark.parametrize("edit", ["DELETE FROM ids", "DELETE FROM ids WHERE rowid % 2 = 0 OR kind = 0",
                                  "UPDATE ids SET id = 'att-00000000000000000000' WHERE kind = 0 AND line = 3",
                                  "UPDATE ids SET digest = x'00' WHERE kind = 0", "UPDATE ids SET line = line + 1"])
def test_an_index_that_lost_or_changed_its_ids_does_not_append_the_run_again(tmp_path, edit):
    """The index kept its file rows but not its ids: the re-import appended all 10 attempts again."""
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    with sqlite3.connect(store / INDEX) as db:
        db.execute(edit.replace("rowid % 2 = 0 OR ", ""))
    out = cli_import(store, PROMPTFOO)
    assert out.exit_code == 0 and "added 0 attempts, 0 results" in out.stdout, out.output
    assert len(attempt_lines(store)) == 10 and not out.stderr


def test_corrupt_index_pages_are_rebuilt_from_the_files(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    data = bytearray((store / INDEX).read_bytes())
    for at in range(4096, len(data), 97):  # past the header: the pages themselves
        data[at] ^= 0x5A
    (store / INDEX).write_bytes(bytes(data))
    out = cli_import(store, PROMPTFOO)
    assert out.exit_code == 0 and "added 0 attempts, 0 results" in out.stdout, out.output
    assert len(attempt_lines(store)) == 10


def test_a_line_changed_in_place_is_reported_with_its_file_and_line(tmp_path):
    """A valid-looking line with another id: only the index can tell, and it says where."""
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    path = store / "attempts.jsonl"
    lines = path.read_text("utf-8").splitlines(keepends=True)
    first = json.loads(lines[2])["id"]
    lines[2] = lines[2].replace(first, first[:-1] + ("0" if first[-1] != "0" else "1"))
    path.write_text("".join(lines))
    out = cli_import(store, PROMPTFOO)
    assert out.exit_code == 0 and "added 1 attempt," in out.stdout
    assert f"{path}:3: damaged store line: att-" in out.stderr and "changed in place" in out.stderr


def test_a_conflict_names_the_stored_line(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    path = store / "attempts.jsonl"
    lines = path.read_text("utf-8").splitlines(keepends=True)
    record = json.loads(lines[4])
    record["status"] = "error" if record["status"] != "error" else "completed"
    lines[4] = json.dumps(record, ensure_ascii=False) + "\n"
    path.write_text("".join(lines))
    out = cli_import(store, PROMPTFOO)
    assert out.exit_code == 1
    assert f"{path}:5: damaged store line: {record['id']} changed since it was stored" in out.stderr
    assert f"{path}:5: conflict: {record['id']}: an attempt with this id is already stored" in out.stderr


@pytest.mark.parametrize("name", ["attempts.jsonl", "results.jsonl", INDEX])
def test_a_store_file_that_is_a_fifo_is_refused_not_waited_on(tmp_path, name):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    os.remove(store / name)
    os.mkfifo(store / name)
    out = cli_import(store, PROMPTFOO)
    assert out.exit_code == 2 and f"{store / name}: the run store file {name} is a FIFO (named pipe), not a regular file" in out.stderr
    if name != INDEX:
        out = cli_run("report", store, "--cases", CASES)
        assert out.exit_code == 2 and "not a regular file" in out.stderr


# ---- the property: random damage, then the same run again

def _store_records(store: Path) -> dict[str, list[str]]:
    """Every readable attempt and result line, as text (a multiset: duplicates show), by its id and its
    content: what an attempt did and what a result judged. How a harness described the run (promptfoo's
    eval id), where a record was read from and how its evaluator was typed are not content, so with the
    index deleted a flip there has no witness left to find it."""
    out: dict[str, list[str]] = {"attempt": [], "result": []}
    for kind, record in read_records(str(store)):
        if kind == "attempt":
            record = {k: record.get(k) for k in ("id", *_WHAT_HAPPENED)}
        elif kind == "result":
            judge = record.get("evaluator") or {}
            record = {**{k: record.get(k) for k in ("id", *_WHAT_WAS_JUDGED)}, "evaluator": {k: judge.get(k) for k in _JUDGE}}
        if kind in out:
            out[kind].append(json.dumps(record, sort_keys=True))
    return {k: sorted(v) for k, v in out.items()}


_CLEAN: dict[str, list[str]] = {}


def _clean_records(tmp_path_factory) -> dict[str, list[str]]:
    if not _CLEAN:
        clean = tmp_path_factory.mktemp("clean") / "store"
        imported(clean, PROMPTFOO)
        _CLEAN.update(_store_records(clean))
    return _CLEAN


_STORE_FILES = st.sampled_from(["attempts.jsonl", "results.jsonl"])
_INDEX_VALUES = st.one_of(st.none(), st.integers(-2**63, 2**63 - 1), st.binary(max_size=8), st.text(max_size=4))
_DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), _STORE_FILES, st.floats(0, 1)),
    st.tuples(st.just("flip"), _STORE_FILES, st.floats(0, 1), st.integers(1, 255)),
    st.tuples(st.just("delete-index")),
    st.tuples(st.just("index-field"), st.sampled_from(["size", "inode", "mtime_ns", "tail", "lines", "ids",
                                                       "checksum"]), _INDEX_VALUES),
    st.tuples(st.just("index-ids"), st.sampled_from(["DELETE FROM ids WHERE line = ?", "UPDATE ids SET id = 'x' || id "
                                                     "WHERE line = ?", "UPDATE ids SET line_sum = 0 WHERE line = ?",
                                                     "UPDATE ids SET digest = NULL WHERE line = ?"]),
              st.integers(1, 18)),
    st.tuples(st.just("index-bytes"), st.floats(0, 1), st.integers(1, 255)),
)


def _damage(store: Path, how: tuple) -> None:
    if how[0] in ("truncate", "flip"):
        path = store / how[1]
        data = bytearray(path.read_bytes())
        at = min(int(how[2] * len(data)), len(data) - 1)
        if at < 0:
            return
        if how[0] == "truncate":
            del data[at:]
        else:
            data[at] ^= how[3]
        path.write_bytes(bytes(data))
    elif how[0] == "delete-index":
        if (store / INDEX).exists():
            os.remove(store / INDEX)
    elif how[0] == "index-bytes":
        data = bytearray((store / INDEX).read_bytes()) if (store / INDEX).exists() else bytearray()
        if data:
            data[min(int(how[1] * len(data)), len(data) - 1)] ^= how[2]
            (store / INDEX).write_bytes(bytes(data))
    elif (store / INDEX).exists():
        try:
            with sqlite3.connect(store / INDEX) as db:
                if how[0] == "index-field":
                    db.execute(f"UPDATE files SET {how[1]} = ?", (how[2],))
                else:
                    db.execute(how[1], (how[2],))
            db.close()
        except sqlite3.DatabaseError:
            pass  # an earlier damage already broke it


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damages=st.lists(_DAMAGE, min_size=1, max_size=3))
def test_random_damage_then_reimport_is_a_located_error_or_the_clean_store(tmp_path_factory, damages):
    store = tmp_path_factory.mktemp("damaged") / "store"
    imported(store, PROMPTFOO)
    for how in damages:
        _damage(store, how)
    out = cli_import(store, PROMPTFOO)
    assert out.exit_code in (0, 1, 2)
    report_out = cli_run("report", store, "--cases", CASES, "--format", "json")
    assert report_out.exit_code in (0, 1, 2)
    located = re.search(r"\.(jsonl|sqlite3)(:\d+)?: ", out.stderr) is not None or (
        report_out.exit_code != 2 and any((e["source"] or {}).get("file", "").startswith(str(store))
                                          for e in json.loads(report_out.stdout)["ledger"]))
    if not located:
        assert out.exit_code == 0 and _store_records(store) == _clean_records(tmp_path_factory), out.output
    if out.exit_code != 2:  # the store has healed: importing once more adds nothing and finds nothing new
        again = cli_import(store, PROMPTFOO)
        assert "added 0 attempts, 0 results" in again.stdout and "damaged store line" not in again.stderr, again.output

"""The run store's on-disk id index (`index.sqlite3`): an import keeps no ids in memory, and the
index stays true to the JSONL files: built when missing, extended when a file only grew, rebuilt
when a file changed otherwise or the index cannot be read."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT
from evalconv.cli import cli
from evalconv.canonical.errors import UsageError
from evalconv.results_registry import RESULTS_REGISTRY
from evalconv.runindex import INDEX
from evalconv.runreport import report
from evalconv.runstore import import_runs, read_records

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
    assert ids["result"] == set(stored_ids(store, "result")) and len(ids["result"]) == 36


def test_a_store_without_an_index_gets_one_and_stays_idempotent(tmp_path):
    """A store written before the index existed (or whose index was deleted)."""
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    os.remove(store / INDEX)
    assert imported(store, PROMPTFOO).added == NOTHING
    assert (store / INDEX).exists()
    summary = imported(store, PROMPTFOO, RERUN)
    assert summary.added == {"attempts": 10, "results": 18, "ledger": 0}


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
    assert summary.added == NOTHING and summary.known == {"attempts": 10, "results": 18, "ledger": 0}
    assert len(stored_ids(store, "result")) == 36


def test_a_file_changed_behind_the_index_rebuilds_it(tmp_path):
    """Lines removed by hand (not append-only any more): the index must not claim them."""
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    path = store / "results.jsonl"
    kept = path.read_text("utf-8").splitlines(keepends=True)[:10]
    path.write_text("".join(kept))
    summary = imported(store, PROMPTFOO)
    assert summary.added == {"attempts": 0, "results": 8, "ledger": 0}
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
    assert imported(store, PROMPTFOO).added["results"] == 18


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
        assert db.execute("SELECT COUNT(*) FROM ids").fetchone() == (28,)
    written = len(stored_ids(store, "attempt")) + len(stored_ids(store, "result"))
    assert written == 28 + 12  # what reached the file before the failure stays, and counts as stored
    summary = imported(store, PROMPTFOO)
    assert summary.known["attempts"] + summary.known["results"] == 12
    assert len(stored_ids(store, "attempt")) == 20 and len(stored_ids(store, "result")) == 36


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

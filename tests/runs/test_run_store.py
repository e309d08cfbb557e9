"""The run store: append-only, idempotent imports; reruns add attempts, rescorings add results;
a stored attempt never changes; nothing unreadable is dropped silently."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT
from evalconv.canonical import runs
from evalconv.cli import cli
from evalconv.runs.readers import RESULTS_REGISTRY
from evalconv.runs.report import report
from evalconv.runs.store import import_runs, read_records

RUNS = ROOT / "tests" / "fixtures" / "runs"
CASES = RUNS / "cases.jsonl"
PROMPTFOO = RUNS / "promptfoo" / "results.json"
RERUN = RUNS / "promptfoo" / "rerun.jsonl"
ALL_RUNS = [PROMPTFOO, RERUN, *sorted((RUNS / "deepeval").glob("test_run_*.json")),
            RUNS / "braintrust" / "eval_result.json", RUNS / "braintrust" / "experiment_export.jsonl",
            RUNS / "langsmith" / "runs.jsonl",
            RUNS / "langsmith" / "feedback.jsonl"]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def imported(store: Path, *paths: Path):
    return import_runs(str(store), ((str(p), RESULTS_REGISTRY.read(str(p))) for p in paths))


def lines(path: Path) -> list[str]:
    return path.read_text("utf-8").splitlines() if path.exists() else []


@pytest.mark.parametrize("path", ALL_RUNS, ids=lambda p: p.name)
def test_every_record_a_reader_makes_fits_the_published_schema(path):
    seen = 0
    for kind, record in RESULTS_REGISTRY.read(str(path)):
        if kind in ("attempt", "result"):
            name = runs.ATTEMPT_SCHEMA if kind == "attempt" else runs.RESULT_SCHEMA
            assert list(runs.problems(record, name)) == [], record
            seen += 1
    assert seen


def test_importing_the_same_run_twice_adds_nothing(tmp_path):
    store = tmp_path / "store"
    first = imported(store, PROMPTFOO)
    assert first.added == {"attempts": 10, "results": 28, "ledger": 0}
    before = {name: (store / name).read_bytes() for name in ("attempts.jsonl", "results.jsonl")}
    again = imported(store, PROMPTFOO)
    assert again.added == {"attempts": 0, "results": 0, "ledger": 0}
    assert again.known == {"attempts": 10, "results": 28, "ledger": 0}
    assert {name: (store / name).read_bytes() for name in before} == before
    # the same run from a copy elsewhere is the same run
    copy = tmp_path / "copy.json"
    shutil.copy(PROMPTFOO, copy)
    assert imported(store, copy).added["attempts"] == 0


def test_a_rerun_adds_attempts_and_keeps_the_old_ones_byte_for_byte(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    old = (store / "attempts.jsonl").read_bytes()
    summary = imported(store, RERUN)
    assert summary.added["attempts"] == 10 and summary.added["results"] == 28
    assert (store / "attempts.jsonl").read_bytes().startswith(old)
    result = report([str(store)], [str(CASES)])
    assert result["attempts"] == 20
    # same verdicts twice: a case is counted once; excluded counts results (one per attempt)
    single = report([str(PROMPTFOO)], [str(CASES)])
    for key in ("passed", "failed", "unscored", "passRate"):
        assert result["overall"][key] == single["overall"][key]
    assert result["overall"]["excluded"] == 2 * single["overall"]["excluded"] == 2


def _rescored(store: Path, passed: bool) -> None:
    """A human rescoring of the warranty case's attempt, as a result of its own."""
    attempt = next(json.loads(line) for line in lines(store / "attempts.jsonl")
                   if json.loads(line)["caseId"] == "r-warranty-judgement")
    rescoring = runs.result(attempt_id=attempt["id"], name="warranty-review", type_="human-expert",
                            type_source="declared", score=None, passed=passed, review_status="reviewed",
                            reason="reviewed by the warranty lead", recorded_at="2026-12-01T10:00:00Z")
    source = store.parent / f"rescore-{passed}.jsonl"
    source.write_text(json.dumps(rescoring) + "\n")
    summary = import_runs(str(store), [(str(source), [("result", rescoring)])])
    assert summary.added == {"attempts": 0, "results": 1, "ledger": 0}


@pytest.mark.parametrize("first, then, outcome", [(False, True, "passed"), (True, False, "failed")])
def test_rescoring_adds_a_result_and_the_newest_verdict_counts(tmp_path, first, then, outcome):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    results_before = lines(store / "results.jsonl")
    before = report([str(store)], [str(CASES)])["slices"]["case.caseFamily"]["warranty"]
    assert (before["passed"], before["failed"], before["unscored"]) == (0, 0, 1)  # waiting for a person
    _rescored(store, passed=first)
    _rescored(store, passed=then)
    assert lines(store / "results.jsonl")[: len(results_before)] == results_before
    assert len(lines(store / "results.jsonl")) == len(results_before) + 2
    warranty = report([str(store)], [str(CASES)])["slices"]["case.caseFamily"]["warranty"]
    # the human expert's newest verdict decides the attempt; the older one is kept, superseded
    assert warranty[outcome] == 1 and warranty["unscored"] == 0
    assert warranty["excluded"] == 1  # promptfoo's defaultTest javascript check stays barred


def test_a_stored_attempt_never_changes(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    before = (store / "attempts.jsonl").read_bytes()
    kind, attempt = next(iter(RESULTS_REGISTRY.read(str(PROMPTFOO))))
    edited = {**attempt, "output": "something else"}
    summary = import_runs(str(store), [("edited", [(kind, edited)])])
    assert summary.exit_code == 1 and summary.conflicts[0]["id"] == attempt["id"]
    assert (store / "attempts.jsonl").read_bytes() == before


def test_regression_a_result_edited_behind_a_deleted_index_was_known_not_a_conflict(tmp_path):
    """A result's score changed in results.jsonl and the index deleted: re-importing the run used to
    count it "already there" (only attempts had a content digest), so the store kept a score no
    harness gave. Results are immutable like attempts: the edit is a conflict naming its line."""
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    path = store / "results.jsonl"
    stored = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    victim = next(i for i, r in enumerate(stored) if r["score"] == 1.0)
    stored[victim]["score"], stored[victim]["passed"] = 0.0, False
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in stored), "utf-8")
    (store / "index.sqlite3").unlink()
    before = path.read_bytes()
    summary = imported(store, PROMPTFOO)
    assert summary.exit_code == 1
    assert [c["id"] for c in summary.conflicts] == [stored[victim]["id"]]
    assert summary.conflicts[0]["stored"]["line"] == victim + 1 and "results are immutable" in summary.conflicts[0]["reason"]
    assert path.read_bytes() == before


def test_an_interrupted_import_is_finished_by_importing_again(tmp_path):
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    path = store / "results.jsonl"
    text = path.read_text("utf-8").splitlines(keepends=True)
    path.write_text("".join(text[:5]) + text[5][:20])  # the power went out mid-line
    summary = imported(store, PROMPTFOO)
    assert summary.added["results"] == 28 - 5
    kinds = [k for k, _ in read_records(str(store))]
    assert kinds.count("result") == 28
    ledger = [r for k, r in read_records(str(store)) if k == "ledger"]
    assert len(ledger) == 1 and ledger[0]["kind"] == "unreadable" and ledger[0]["source"]["line"] == 6


def _feedback_import(tmp_path: Path, *bad: str):
    """LangSmith feedback lines with `bad` lines between the good ones, imported into a store."""
    feedback = tmp_path / "feedback.jsonl"
    good = (RUNS / "langsmith" / "feedback.jsonl").read_text("utf-8").splitlines()
    feedback.write_text("".join(f"{line}\n{bad_line}\n" for line, bad_line in zip(good, bad)) + good[len(bad)] + "\n")
    store = tmp_path / "store"
    return feedback, store, import_runs(str(store), [(str(feedback), RESULTS_REGISTRY.read(str(feedback), "langsmith"))])


def test_unreadable_lines_go_to_the_ledger_with_file_and_line(tmp_path):
    feedback, store, summary = _feedback_import(tmp_path, "{not json")
    assert summary.added == {"attempts": 0, "results": 2, "ledger": 1}
    entry = json.loads(lines(store / "ledger.jsonl")[0])
    assert entry["kind"] == "unreadable" and entry["source"]["line"] == 2 and entry["source"]["file"] == str(feedback)
    result = report([str(RUNS / "langsmith" / "runs.jsonl"), str(store)], [str(CASES)])
    assert result["ledgerCounts"] == {"unreadable": 1}


def test_regression_a_second_unreadable_line_is_not_taken_for_the_first(tmp_path):
    """Ledger entries about lines that name no record all had the id null, and the import kept
    only the first of them: every later one was counted 'already there' and never stored."""
    feedback, store, summary = _feedback_import(tmp_path, "{not json", "[1, 2")
    assert summary.added == {"attempts": 0, "results": 3, "ledger": 2}
    assert [json.loads(line)["source"]["line"] for line in lines(store / "ledger.jsonl")] == [2, 4]
    again = import_runs(str(store), [(str(feedback), RESULTS_REGISTRY.read(str(feedback), "langsmith"))])
    assert again.added == {"attempts": 0, "results": 0, "ledger": 0}
    assert again.known == {"attempts": 0, "results": 3, "ledger": 2}


def test_cli_import_then_report_from_the_store(tmp_path):
    store = tmp_path / "store"
    out = run("runs", "import", PROMPTFOO, RERUN, "--store", store, "--format", "json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["added"] == {"attempts": 20, "results": 56, "ledger": 0}
    again = run("runs", "import", PROMPTFOO, "--store", store)
    assert again.exit_code == 0 and "added 0 attempts, 0 results" in again.output
    assert run("report", store, "--cases", CASES).exit_code == 0


def test_cli_import_checks_every_file_before_appending_anything(tmp_path):
    store = tmp_path / "store"
    out = run("runs", "import", PROMPTFOO, CASES, "--store", store)
    assert out.exit_code == 2 and "not a run output" in out.stderr
    assert not (store / "attempts.jsonl").exists()


def test_schema_command_prints_the_record_schemas():
    for flag, title in (("--attempt", "evalconv run attempt"), ("--result", "evalconv evaluation result")):
        out = run("schema", flag)
        assert out.exit_code == 0 and json.loads(out.output)["title"] == title
    assert run("schema", "--attempt", "--result").exit_code == 2


def test_ids_are_stable_and_distinct():
    a = list(RESULTS_REGISTRY.read(str(PROMPTFOO)))
    b = list(RESULTS_REGISTRY.read(str(PROMPTFOO)))
    assert [r["id"] for _, r in a] == [r["id"] for _, r in b]
    ids = [r["id"] for _, r in a]
    assert len(ids) == len(set(ids))


def test_readers_recover_the_counts_each_manifest_entry_names():
    manifest = json.loads((RUNS / "MANIFEST.json").read_text("utf-8"))
    assert len(manifest["files"]) >= 10
    for entry in manifest["files"]:
        kinds = [k for k, _ in RESULTS_REGISTRY.read(str(RUNS / entry["path"]))]
        got = {"attempts": kinds.count("attempt"), "results": kinds.count("result"), "ledger": kinds.count("ledger")}
        assert got == entry["reader_must_recover"], entry["path"]


def test_the_same_promptfoo_eval_as_json_and_as_jsonl_is_one_run(tmp_path):
    """promptfoo writes the same EvaluateResult objects to -o results.jsonl, without the eval id."""
    entries = json.loads(PROMPTFOO.read_text("utf-8"))["results"]["results"]
    as_jsonl = tmp_path / "results.jsonl"
    as_jsonl.write_text("".join(json.dumps(e) + "\n" for e in entries))
    store = tmp_path / "store"
    imported(store, PROMPTFOO)
    summary = imported(store, as_jsonl)
    assert summary.conflicts == [] and summary.added == {"attempts": 0, "results": 0, "ledger": 0}


def test_results_readers_are_found_not_listed():
    """Every vendor package with a `results.py` is a harness the registry knows, and nothing in
    converters/runs/ names a vendor (LangSmith's example ids are the LangSmith reader's `case_refs`)."""
    import ast
    import importlib

    modules = sorted(f"evalconv.vendors.{p.parent.name}.results" for p in (ROOT / "vendors").glob("*/results.py"))
    assert modules and not RESULTS_REGISTRY.broken
    assert sorted(type(r).__module__ for r in RESULTS_REGISTRY.readers.values()) == modules
    assert all(importlib.import_module(m).READER in RESULTS_REGISTRY.readers.values() for m in modules)
    named = [(path.name, node.module) for path in (ROOT / "converters" / "runs").glob("*.py")
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.ImportFrom) and "vendors" in (node.module or "")]
    assert not named


def test_results_readers_are_not_formats():
    """Run output has its own registry: format detection and round-trip routes never see it."""
    from evalconv.registry import REGISTRY

    formats = {type(f).__module__ for f in REGISTRY.all()}
    readers = {type(r).__module__ for r in RESULTS_REGISTRY.readers.values()}
    assert readers and not readers & formats
    assert all(m.endswith(".results") for m in readers)

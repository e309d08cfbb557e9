"""SQL over the run store (evalconv.runs.sql): DuckDB views whose pass rates are `evalconv report`'s."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conftest import ROOT
from evalconv.canonical import runs
from evalconv.canonical.vocabulary import EVALUATOR_TYPES
from evalconv.runs.report import report
from evalconv.runs.store import import_runs
from evalconv.runs.readers import RESULTS_REGISTRY

duckdb = pytest.importorskip("duckdb")
from evalconv.runs import sql  # noqa: E402

RUNS = ROOT / "tests" / "fixtures" / "runs"
GOLDEN = [json.loads(line) for line in (ROOT / "golden_roundtrips" / "support-agent.jsonl").read_text().splitlines()]
BUCKET_KEYS = ("passed", "failed", "unscored", "excluded", "passRate", "starter", "conditional")
SQL_KEYS = ("passed", "failed", "unscored", "excluded", "pass_rate", "starter", "conditional")


def _rows(con, query: str) -> list[dict]:
    result = con.execute(query)
    names = [d[0] for d in result.description]
    return [dict(zip(names, values)) for values in result.fetchall()]


def _bucket(row: dict) -> dict:
    return {key: row[name] for key, name in zip(BUCKET_KEYS, SQL_KEYS)}


def assert_sql_is_the_report(store: Path, cases: Path, by=None) -> dict:
    """The views' overall, per-slice and flag numbers are the report dict's, exactly."""
    expected = report([str(store)], [str(cases)], by=by)
    con = duckdb.connect()
    sql.register(con, str(store), str(cases), by=by)
    overall = _rows(con, "SELECT * FROM evalconv_pass_rate")[0]
    assert overall["cases"] == expected["cases"]
    assert _bucket(overall) == expected["overall"]
    slices: dict = {}
    for row in _rows(con, "SELECT * FROM evalconv_slice_pass_rates"):
        slices.setdefault(row["slice"], {})[row["value"]] = _bucket(row)
    assert slices == {name: values for name, values in expected["slices"].items() if values}
    flags = _rows(con, "SELECT * FROM evalconv_flags")[0]
    assert flags == {"starter_cases": expected["flags"]["starterCases"],
                     "excluded_results": expected["flags"]["excludedResults"],
                     "untyped_results": expected["flags"]["untypedResults"],
                     "conditional_results": expected["flags"]["conditionalResults"],
                     "judge_only_cases": expected["flags"]["judgeOnlyCases"],
                     "not_run": expected["flags"]["notRun"]}
    return expected


def test_the_harness_fixtures_store_gives_the_reports_numbers(tmp_path):
    store = tmp_path / "store"
    paths = [RUNS / "promptfoo" / "results.json", RUNS / "promptfoo" / "rerun.jsonl",
             *sorted((RUNS / "deepeval").glob("test_run_*.json")), RUNS / "braintrust" / "eval_result.json",
             RUNS / "braintrust" / "experiment_export.jsonl", RUNS / "langsmith" / "runs.jsonl",
             RUNS / "langsmith" / "feedback.jsonl"]
    import_runs(str(store), ((str(p), RESULTS_REGISTRY.read(str(p))) for p in paths))
    expected = assert_sql_is_the_report(store, RUNS / "cases.jsonl")
    assert expected["flags"]["excludedResults"] and expected["overall"]["failed"]  # the test can fail
    con = duckdb.connect()
    sql.register(con, str(store), str(RUNS / "cases.jsonl"))
    by_harness = {(r["harness"], r["evaluator_type"]): r for r in _rows(con, "SELECT * FROM evalconv_pass_rate_by_harness_evaluator")}
    assert by_harness[("deepeval", "exact-or-programmatic")]["failed"] >= 1
    assert {h for h, _ in by_harness} == {"promptfoo", "deepeval", "braintrust", "langsmith"}


def synthetic_store(folder: Path, seed: int) -> tuple[Path, Path]:
    """A case set and a store exercising every rule the views express: links by caseId, name,
    LangSmith example id and (unique) input text; rescorings; people's verdicts; harness verdicts
    (passed, failed, errored); barred, conditional, untyped and mistyped evaluators; overriding
    ratings; results without their attempt; a duplicated attempt; a line cut short."""
    from evalconv.vendors.langsmith.format import example_id

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    cases = []
    for i in range(40):
        value = json.loads(json.dumps(GOLDEN[i % len(GOLDEN)]))
        value["id"] = value["metadata"]["case"]["caseId"] = f"c{i}"
        value["input"] = f"shared question {i % 3}" if i >= 36 else f"question {i}"
        value["metadata"]["severity"] = rng.choice(["harmful", "cosmetic", "wrong-answer", None])
        value["metadata"]["reason"] = rng.choice([["a", "b"], "a", [], None])
        cases.append(value)
    cases_path = folder / "cases.jsonl"
    cases_path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    attempts, results = [], []
    types = [*EVALUATOR_TYPES, None, "not-a-type"]
    for n in range(160):
        i = rng.randrange(45)  # 40..44: no such case
        link = rng.choice(["id", "id", "name", "langsmith", "input", "none"])
        case_id = f"c{i}" if link == "id" else None
        ref = {"name": {"kind": "name", "value": f"c{i}"},
               "langsmith": {"kind": "langsmith-example-id", "value": example_id(f"c{i}")},
               "input": {"kind": "input", "value": f"question {i}" if i < 36 else f"shared question {i % 3}"},
               }.get(link)
        harness = rng.choice(["promptfoo", "deepeval", "braintrust"])
        attempt = runs.attempt(harness=harness, key=(n,), case_id=case_id, case_ref=ref, system="s",
                               run=f"run-{n % 2}")
        attempts.append(attempt)
        if rng.random() < 0.05:
            attempts.append(attempt)  # the same attempt twice: counted once
        if rng.random() < 0.4:  # the harness decides it
            results.append({"id": f"res-v{n}", "attemptId": attempt["id"], "role": "verdict",
                            "evaluator": {"type": None, "name": harness}, "passed": rng.choice([True, False, None])})
        for k in range(rng.randrange(4)):
            type_ = rng.choice(types)
            for _rescoring in range(rng.choice([1, 1, 2])):
                results.append({"id": f"res-{n}-{k}-{len(results)}", "attemptId": attempt["id"],
                                "evaluator": {"type": type_, "name": f"e{k}-{type_}"},
                                "passed": rng.choice([True, False, None]),
                                **({"role": "override"} if rng.random() < 0.15 else {})})
    results.append({"id": "res-orphan", "attemptId": "att-nowhere", "evaluator": {"type": "llm-judge", "name": "j"},
                    "passed": False})
    rng.shuffle(results)
    store = folder / "store"
    store.mkdir()
    (store / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))
    (store / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results) + '{"id": "res-cut", "attemptId": "at')
    return store, cases_path


@pytest.mark.parametrize("seed", range(12))
def test_a_synthetic_store_gives_the_reports_numbers(tmp_path, seed):
    store, cases = synthetic_store(tmp_path, seed)
    expected = assert_sql_is_the_report(store, cases, by=("metadata.severity", "metadata.reason", "case.oracleType"))
    assert expected["ledgerCounts"].get("result-without-attempt") and expected["ledgerCounts"].get("unreadable")


def test_newly_failing_cases_between_two_runs(tmp_path):
    store, cases = synthetic_store(tmp_path, 3)
    con = duckdb.connect()
    sql.register(con, str(store), str(cases))
    outcomes = {(r["run"], r["case_id"]): r["outcome"] for r in _rows(con, "SELECT * FROM evalconv_run_case_outcomes")}
    newly = _rows(con, "SELECT * FROM evalconv_newly_failing('run-0', 'run-1')")
    wanted = sorted({c for (run, c), o in outcomes.items() if run == "run-1" and o == "failed"
                     and outcomes.get(("run-0", c)) == "passed"}, key=lambda c: int(c[1:]))
    assert [r["case_id"] for r in newly] == wanted and wanted
    # each run alone is the report over that run's attempts alone
    for run_id in ("run-0", "run-1"):
        only = tmp_path / run_id
        only.mkdir()
        lines = (store / "attempts.jsonl").read_text().splitlines()
        (only / "attempts.jsonl").write_text("".join(line + "\n" for line in lines if json.loads(line)["harness"]["run"] == run_id))
        (only / "results.jsonl").write_bytes((store / "results.jsonl").read_bytes())
        per_case = _cases_outcomes(only, cases)
        for (run, case_id), outcome in outcomes.items():
            if run == run_id and case_id is not None:
                assert per_case[case_id] == outcome, (run_id, case_id)


def _cases_outcomes(store: Path, cases: Path) -> dict[str, str]:
    con = duckdb.connect()
    sql.register(con, str(store), str(cases))
    assert _bucket(_rows(con, "SELECT * FROM evalconv_pass_rate")[0]) == report([str(store)], [str(cases)])["overall"]
    return {r["case_id"]: r["outcome"] for r in _rows(con, "SELECT * FROM evalconv_case_outcomes")}


def test_a_folder_that_is_not_a_store_is_a_usage_error(tmp_path):
    from evalconv.canonical.errors import UsageError

    with pytest.raises(UsageError, match="run store"):
        sql.register(duckdb.connect(), str(tmp_path), str(RUNS / "cases.jsonl"))


def _cli(*args):
    from click.testing import CliRunner
    from evalconv.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_runs_sql_prints_the_views_answers(tmp_path):
    store, cases = synthetic_store(tmp_path, 5)
    result = _cli("runs", "sql", store, "--cases", cases, "--format", "json")
    assert result.exit_code == 0, result.stderr
    overall, by_harness = json.loads(result.stdout)
    assert _bucket(overall["rows"][0]) == report([str(store)], [str(cases)])["overall"]
    assert {row["harness"] for row in by_harness["rows"]} == {"promptfoo", "deepeval", "braintrust"}
    text = _cli("runs", "sql", store, "--cases", cases, "SELECT count(*) AS n FROM evalconv_attempts")
    assert text.exit_code == 0 and text.stdout.splitlines()[0].strip() == "n"


def test_runs_sql_a_bad_query_or_no_duckdb_is_one_line_exit_2(tmp_path, monkeypatch):
    store, cases = synthetic_store(tmp_path, 1)
    bad = _cli("runs", "sql", store, "--cases", cases, "SELECT nope FROM evalconv_cases")
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "the query 'SELECT nope FROM evalconv_cases' failed: Binder Error" in bad.stderr
    monkeypatch.setitem(__import__("sys").modules, "duckdb", None)
    missing = _cli("runs", "sql", store, "--cases", cases)
    assert missing.exit_code == 2
    assert missing.stderr.strip() == "evalconv: error: SQL over the run store needs DuckDB: pip install 'evalconv[dask]'"


def test_regression_attempts_named_by_an_opik_item_id_link_in_sql_as_in_the_report(tmp_path):
    # The views linked a caseRef only when it was a LangSmith example id; the report links every
    # kind a harness reader spells (Opik's dataset item ids too), so the two counted differently.
    from evalconv.vendors.opik.write import item_id

    export = RUNS / "opik" / "experiment_export.json"
    data = json.loads(export.read_text(encoding="utf-8"))
    for item in data["items"]:  # as an export whose items lost the carried case profile
        case_id = item["dataset_item_data"]["metadata"]["case"]["caseId"]
        item["dataset_item_data"] = {"input": item["dataset_item_data"]["input"]}
        item["dataset_item_id"] = item_id(case_id)
    bare = tmp_path / "experiment_export.json"
    bare.write_text(json.dumps(data), encoding="utf-8")
    store = tmp_path / "store"
    import_runs(str(store), [(str(bare), RESULTS_REGISTRY.read(str(bare)))])
    expected = assert_sql_is_the_report(store, RUNS / "opik" / "cases.opik.jsonl")
    assert expected["attempts"] == len(data["items"]) and expected["overall"]["failed"] + expected["overall"]["passed"]


def _big_store(tmp_path: Path, count: int = 300_000) -> tuple[Path, Path]:
    """The synthetic store with `count` results (36 MB: DuckDB reads it in parallel pieces), every
    one failing but each attempt's last, which passes and sits pieces away from its first."""
    store, cases = synthetic_store(tmp_path, 0)
    attempt_ids = [json.loads(line)["id"] for line in (store / "attempts.jsonl").read_text().splitlines()]
    pad = "x" * 90
    with (store / "results.jsonl").open("w") as out:
        for n in range(count):
            attempt = attempt_ids[n % len(attempt_ids)]
            passed = "true" if n >= count - len(attempt_ids) else "false"
            out.write(f'{{"id": "r{n}", "attemptId": "{attempt}", "evaluator": {{"type": "exact-or-programmatic", '
                      f'"name": "exact"}}, "passed": {passed}, "reason": "{pad}"}}\n')
    assert (store / "results.jsonl").stat().st_size > 36_000_000
    return store, cases


@pytest.mark.parametrize("keeps_order", [True, False])
def test_line_numbers_keep_the_file_order_when_duckdb_reads_it_in_parallel_pieces(tmp_path, keeps_order):
    # The views number the results lines from a parallel scan kept in order (a materialized CTE,
    # then row_number() OVER ()), not from WITH ORDINALITY's one-thread scan, unless the
    # connection lets DuckDB reorder rows (preserve_insertion_order = false), where they fall back
    # to WITH ORDINALITY. DuckDB splits a newline-delimited file into pieces above about 32 MB;
    # this one is 36 MB, read on 4 threads, and every attempt's newest result (a pass) sits pieces
    # away from its first (a fail).
    store, cases = _big_store(tmp_path)
    count = 300_000
    con = duckdb.connect()
    con.execute(f"SET threads = 4; SET preserve_insertion_order = {keeps_order}")
    sql.register(con, str(store), str(cases))
    misplaced = _rows(con, "SELECT count(*) AS n, count(*) FILTER (WHERE result_id <> 'r' || (line_no - 1)) AS wrong "
                           "FROM evalconv_results")[0]
    assert misplaced["wrong"] == 0 and misplaced["n"] > count // 2
    verdicts = _rows(con, "SELECT count(*) AS n, count(*) FILTER (WHERE passed) AS passed FROM evalconv_verdicts")[0]
    assert verdicts["n"] > 0 and verdicts["passed"] == verdicts["n"]
    assert _bucket(_rows(con, "SELECT * FROM evalconv_pass_rate")[0]) == report([str(store)], [str(cases)])["overall"]


def test_runs_sql_reads_the_store_in_one_streaming_scan_when_duckdb_runs_out_of_memory(tmp_path):
    # Numbering the lines on several threads holds the scanned columns in memory: on 2 threads this
    # store needs more than 135 MB of DuckDB's memory that way, less in one streaming scan. The
    # query that ran out is asked again with preserve_insertion_order = false, and stderr says so.
    store, cases = _big_store(tmp_path)
    limits = ["SET threads = 2", "SET memory_limit = '135MB'"]
    con = duckdb.connect()
    sql.register(con, str(store), str(cases))
    for statement in limits:
        con.execute(statement)
    with pytest.raises(duckdb.OutOfMemoryException):  # the parallel scan alone does run out
        con.execute("SELECT * FROM evalconv_pass_rate").fetchall()
    answers = sql.query(str(store), [str(cases)], [*limits, "SELECT * FROM evalconv_pass_rate"])
    assert [a.streamed for a in answers] == [False, False, True]
    assert _bucket(answers[-1].to_json()["rows"][0]) == report([str(store)], [str(cases)])["overall"]
    result = _cli("runs", "sql", store, "--cases", cases, *limits, "SELECT * FROM evalconv_pass_rate", "--format", "json")
    assert result.exit_code == 0 and result.stderr.strip() == f"evalconv: note: {sql.STREAMED_NOTE}"
    assert json.loads(result.stdout)[-1]["rows"] == answers[-1].to_json()["rows"]


def test_runs_sql_out_of_memory_even_in_one_streaming_scan_says_how_to_give_duckdb_more(tmp_path):
    store, cases = synthetic_store(tmp_path, 2)
    result = _cli("runs", "sql", store, "--cases", cases, "SET memory_limit = '1MB'", "SELECT * FROM evalconv_pass_rate")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "Out of Memory Error" in result.stderr and "SET memory_limit" in result.stderr

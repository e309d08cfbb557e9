"""evalconv on an engine (issue 30): `--engine dask` against the default engine, and the DuckDB
views over the run store against `evalconv report`, ratios measured in one run.

    python bench/scale.py                       # 250k and 1M rows; a store of 1M results
    python bench/scale.py --rows 50000 200000 --results 200000   # quicker

Routes, each its own process (wall time, CPU time and peak RSS read with wait4; the RSS of every
process the route starts sampled every 0.2 s, so a Dask worker's own peak is known):

- `validate PARQUET --format json`, default engine and `--engine dask` (a local two-process
  cluster, started and closed by the command, included in its time). The outputs must be equal.
  Target: dask wall <= 1.25x default at the largest size; each worker's peak RSS at the largest
  size <= 1.25x its peak at the smallest (flat: a worker holds one 5,000-row row group at a time).
- `stats PARQUET --format json`, both engines (outputs equal; no target, reported).
- `report STORE --cases SET --format json` against a process that registers the views
  (`evalconv.runs.sql.register`) and reads `evalconv_pass_rate`; both start Python and read the
  cases. Target: the SQL process under 0.2x the report's time. The numbers must be equal.
- The same views over the store's files as Parquet (attempts.parquet / results.parquet written by
  DuckDB with each line's number): does a Parquet store answer faster, and by how much?

Results go to bench/out/scale/scale.json and are printed as a table.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out" / "scale"
DATA = BENCH / "out" / "data"

EVALCONV = [sys.executable, "-c", "from evalconv.cli import main; main()"]
DASK_RATIO, SQL_RATIO, FLAT = 1.25, 0.2, 1.25


def measure(cmd: list[str]) -> dict:
    """Run `cmd`; wall, CPU, the process's peak RSS and each descendant's peak RSS (sampled)."""
    import psutil

    peaks: dict[int, tuple[str, float]] = {}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        done = threading.Event()

        def sample() -> None:
            try:
                parent = psutil.Process(proc.pid)
            except psutil.Error:
                return
            while not done.is_set():
                try:
                    children = parent.children(recursive=True)
                except psutil.Error:
                    break
                for child in children:
                    try:
                        rss = child.memory_info().rss / 2**20
                        name = " ".join(child.cmdline()[-3:])[-80:]
                    except psutil.Error:
                        continue
                    if rss > peaks.get(child.pid, ("", 0.0))[1]:
                        peaks[child.pid] = (name, rss)
                done.wait(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        done.set()
        sampler.join()
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read().decode(errors="replace")[-800:]
    code = os.waitstatus_to_exitcode(status)
    workers = sorted((round(rss, 1) for name, rss in peaks.values() if "spawn_main" in name or "multiprocessing" in name),
                     reverse=True)
    return {"seconds": round(seconds, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "descendant_peaks_mb": workers, "exit": code,
            "stderr": stderr if code not in (0, 1) else "", "stdout": stdout}


def parquet_set(rows: int) -> Path:
    """bench/generate.py's rows as evalconv's Parquet (5,000-row row groups), cached."""
    DATA.mkdir(parents=True, exist_ok=True)
    jsonl, parquet = DATA / f"rows-{rows}.jsonl", DATA / f"rows-{rows}.parquet"
    if not parquet.exists():
        if not jsonl.exists():
            subprocess.run([sys.executable, str(BENCH / "generate.py"), str(rows), "-o", str(jsonl)], check=True)
        subprocess.run([*EVALCONV, str(jsonl), "--to", "parquet", "-o", str(parquet)], check=True)
    return parquet


_SQL_CHILD = """
import json, sys, time
import duckdb
from evalconv.runs import sql
started = time.perf_counter()
store, cases, kind = sys.argv[1:4]
if kind == "parquet":  # the same views over Parquet copies of the store files
    def _scan(path, columns):
        return f"(SELECT * FROM read_parquet('{path[:-len('.jsonl')]}.parquet'))"
    sql._scan = _scan
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
sql.register(con, store, cases)
registered = time.perf_counter()
result = con.execute("SELECT * FROM evalconv_pass_rate")
row = dict(zip([d[0] for d in result.description], result.fetchone()))
print(json.dumps({"overall": row, "register_s": round(registered - started, 3),
                  "query_s": round(time.perf_counter() - registered, 3)}, default=str))
"""

_ORDER_CHILD = """
import json, sys
import duckdb
from evalconv.runs import sql
path = sys.argv[1]
ids = [json.loads(line)["id"] for line in open(path)]
scan = sql._scan(path, sql._RESULT_COLUMNS)
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
got = [r[0] for r in con.execute(f"SELECT id FROM {scan} ORDER BY line_no").fetchall()]
print(json.dumps({"lines": len(ids), "in_file_order": got == ids}))
"""


def parquet_store(store: Path) -> float:
    """Parquet copies of the store's attempts and results, each line's number kept: seconds taken."""
    import duckdb

    from evalconv.runs import sql

    started = time.perf_counter()
    con = duckdb.connect()
    for name, columns in (("attempts", sql._ATTEMPT_COLUMNS), ("results", sql._RESULT_COLUMNS)):
        scan = sql._scan(str(store / f"{name}.jsonl"), columns)
        con.execute(f"COPY (SELECT * FROM {scan}) TO '{store / name}.parquet' (FORMAT parquet)")
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[250_000, 1_000_000])
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--skip", nargs="*", default=[], choices=["validate", "stats", "sql"])
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    out: dict = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()}, "routes": {}, "checks": []}
    routes, checks = out["routes"], out["checks"]
    for command in ("validate", "stats"):
        if command in args.skip:
            continue
        for rows in args.rows:
            path = parquet_set(rows)
            for engine in ("default", "dask"):
                cmd = [*EVALCONV, command, str(path), "--format", "json"] + (["--engine", "dask"] if engine == "dask" else [])
                routes[f"{command} {rows} {engine}"] = measured = measure(cmd)
                print(f"{command} {rows:>9,} {engine:>7}: {measured['seconds']:7.2f} s wall, "
                      f"{measured['cpu_seconds']:7.2f} s CPU (with its reaped workers), peak {measured['peak_rss_mb']} MB, "
                      f"workers {measured['descendant_peaks_mb'][:2]} MB", flush=True)
            default, dask = routes[f"{command} {rows} default"], routes[f"{command} {rows} dask"]
            checks.append({"check": f"{command} {rows}: --format json equal", "ok": default["stdout"] == dask["stdout"]})
            if command == "validate":
                ratio = dask["seconds"] / default["seconds"]
                checks.append({"check": f"validate {rows}: dask wall / default wall <= {DASK_RATIO}",
                               "value": round(ratio, 2), "ok": ratio <= DASK_RATIO})
        if command == "validate" and len(args.rows) > 1:
            small, large = routes[f"validate {min(args.rows)} dask"], routes[f"validate {max(args.rows)} dask"]
            small_peak = max(small["descendant_peaks_mb"][:2] or [0])
            large_peak = max(large["descendant_peaks_mb"][:2] or [0])
            checks.append({"check": f"dask worker peak RSS at {max(args.rows)} rows <= {FLAT}x at {min(args.rows)}",
                           "value": [small_peak, large_peak], "ok": bool(small_peak) and large_peak <= FLAT * small_peak})
    if "sql" not in args.skip:
        from runs_memory import make_cases, make_store

        cases, store = make_cases(OUT), make_store(OUT, args.results)
        report = routes["report STORE"] = measure([*EVALCONV, "report", str(store), "--cases", str(cases), "--format", "json"])
        duck = routes["duckdb evalconv_pass_rate (JSONL store)"] = measure(
            [sys.executable, "-c", _SQL_CHILD, str(store), str(cases), "jsonl"])
        out["parquet_store_copy_seconds"] = round(parquet_store(store), 2)
        parq = routes["duckdb evalconv_pass_rate (Parquet store)"] = measure(
            [sys.executable, "-c", _SQL_CHILD, str(store), str(cases), "parquet"])
        order = measure([sys.executable, "-c", _ORDER_CHILD, str(store / "results.jsonl")])
        for name in ("report STORE", "duckdb evalconv_pass_rate (JSONL store)", "duckdb evalconv_pass_rate (Parquet store)"):
            m = routes[name]
            print(f"{name:>42} ({args.results:,} results): {m['seconds']:6.2f} s wall, peak {m['peak_rss_mb']} MB", flush=True)
        expected = json.loads(report["stdout"])["overall"]
        for label, measured in (("JSONL", duck), ("Parquet", parq)):
            got = json.loads(measured["stdout"])
            numbers = {k: got["overall"][k] for k in ("passed", "failed", "unscored", "excluded")}
            checks.append({"check": f"SQL over the {label} store: the report's numbers",
                           "ok": numbers == {k: expected[k] for k in numbers}, "value": got})
        ratio = duck["seconds"] / report["seconds"]
        checks.append({"check": f"SQL process / report process <= {SQL_RATIO}", "value": round(ratio, 3),
                       "ok": ratio < SQL_RATIO})
        checks.append({"check": "DuckDB's line numbers are the file's line order at this size",
                       **json.loads(order["stdout"] or "{}"), "ok": json.loads(order["stdout"] or "{}").get("in_file_order")})
    out["machine"]["load_after"] = os.getloadavg()
    for route in routes.values():
        route.pop("stdout", None)
    (OUT / "scale.json").write_text(json.dumps(out, indent=1) + "\n")
    for check in checks:
        print(f"{'ok  ' if check['ok'] else 'FAIL'} {check['check']}" + (f": {check['value']}" if "value" in check else ""))


if __name__ == "__main__":
    main()

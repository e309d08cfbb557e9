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
- `evalconv runs sql STORE --cases SET "SELECT * FROM evalconv_pass_rate" --format json`: the same
  view as a user asks for it, the command line's start included (the report's route has it too).
  These four run in `--pairs` rounds, back to back in a rotated order within a round (the load
  of a shared machine moves between rounds, not within one): the median round's ratio is the
  claim, wall and CPU, every round's beside it with the load.

Every child imports evalconv from bytecode compiled once into bench/out/pycache, as an installed
package does (pip compiles at install); `--no-bytecode` leaves PYTHONDONTWRITEBYTECODE as it is set.

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

from run import installed_bytecode  # noqa: E402  (beside this script)

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
started, cpu_started = time.perf_counter(), time.process_time()
store, cases, kind = sys.argv[1:4]
if kind == "parquet":  # the same views over Parquet copies of the store files
    def _scan(path, columns):
        return f"(SELECT * FROM read_parquet('{path[:-len('.jsonl')]}.parquet'))"
    sql._scan = _scan
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
sql.register(con, store, cases)
registered, cpu_registered = time.perf_counter(), time.process_time()
result = con.execute("SELECT * FROM evalconv_pass_rate")
row = dict(zip([d[0] for d in result.description], result.fetchone()))
print(json.dumps({"overall": row, "register_s": round(registered - started, 3),
                  "register_cpu_s": round(cpu_registered - cpu_started, 3),
                  "query_s": round(time.perf_counter() - registered, 3),
                  "query_cpu_s": round(time.process_time() - cpu_registered, 3)}, default=str))
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


_COPY_CHILD = """
import sys
import duckdb
from evalconv.runs import sql
store = sys.argv[1]
con = duckdb.connect()
for name, columns in (("attempts", sql._ATTEMPT_COLUMNS), ("results", sql._RESULT_COLUMNS)):
    scan = sql._scan(f"{store}/{name}.jsonl", columns)
    con.execute(f"COPY (SELECT * FROM {scan}) TO '{store}/{name}.parquet' (FORMAT parquet)")
"""


def parquet_store(store: Path) -> float:
    """Parquet copies of the store's attempts and results, each line's number kept: seconds taken
    (in a process of its own: this one stays small, so the peak RSS its children report is theirs)."""
    copied = measure([sys.executable, "-c", _COPY_CHILD, str(store)])
    assert copied["exit"] == 0, copied["stderr"]
    return copied["seconds"]


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def sql_routes(args: argparse.Namespace, out: dict) -> None:
    """The report against the DuckDB views (JSONL store, Parquet copies), in `--pairs` rounds, each
    round running the three processes back to back in a rotated order: the ratio of each round is
    taken between processes that ran under the same load, and the median round is reported."""
    from runs_memory import make_cases, make_store

    routes, checks = out["routes"], out["checks"]
    cases, store = make_cases(OUT), make_store(OUT, args.results)
    out["parquet_store_copy_seconds"] = round(parquet_store(store), 2)
    commands = {"report STORE": [*EVALCONV, "report", str(store), "--cases", str(cases), "--format", "json"],
                "duckdb evalconv_pass_rate (JSONL store)": [sys.executable, "-c", _SQL_CHILD, str(store), str(cases), "jsonl"],
                "duckdb evalconv_pass_rate (Parquet store)": [sys.executable, "-c", _SQL_CHILD, str(store), str(cases),
                                                              "parquet"],
                "evalconv runs sql (JSONL store)": [*EVALCONV, "runs", "sql", str(store), "--cases", str(cases),
                                                    "SELECT * FROM evalconv_pass_rate", "--format", "json"]}
    names = list(commands)
    rounds: list[dict] = []
    for n in range(args.pairs):
        order = names[n % len(names):] + names[:n % len(names)]
        measured = {name: measure(commands[name]) for name in order}
        measured["load"] = os.getloadavg()[0]
        rounds.append(measured)
        report = measured["report STORE"]
        print(f"round {n + 1} (load {measured['load']:.2f}): " + ", ".join(
            f"{name.split(' (')[0].replace('duckdb evalconv_pass_rate', 'sql').replace('evalconv runs sql', 'runs sql')}"
            f"{' ' + name.split('(')[1][:-7] if '(' in name else ''} {measured[name]['seconds']:.2f} s "
            f"({measured[name]['cpu_seconds']:.2f} CPU)" for name in order), flush=True)
        assert report["exit"] in (0, 1), report["stderr"]
    expected = json.loads(rounds[0]["report STORE"]["stdout"])["overall"]
    for label, name in (("JSONL", names[1]), ("Parquet", names[2])):
        got = json.loads(rounds[0][name]["stdout"])
        numbers = {k: got["overall"][k] for k in ("passed", "failed", "unscored", "excluded")}
        checks.append({"check": f"SQL over the {label} store: the report's numbers",
                       "ok": numbers == {k: expected[k] for k in numbers}, "value": got})
    command_row = json.loads(rounds[0][names[3]]["stdout"])[0]["rows"][0]
    checks.append({"check": "`evalconv runs sql` over the JSONL store: the report's numbers", "value": command_row,
                   "ok": all(command_row[k] == expected[k] for k in ("passed", "failed", "unscored", "excluded"))})
    for name in names:  # the median round's process, and every round's wall and CPU
        walls = [r[name]["seconds"] for r in rounds]
        routes[name] = dict(min((r[name] for r in rounds), key=lambda m: abs(m["seconds"] - _median(walls))),
                            rounds_wall=walls, rounds_cpu=[r[name]["cpu_seconds"] for r in rounds])
    ratios = {label: ([r[name]["seconds"] / r[names[0]]["seconds"] for r in rounds],
                      [r[name]["cpu_seconds"] / r[names[0]]["cpu_seconds"] for r in rounds])
              for label, name in (("JSONL", names[1]), ("Parquet", names[2]), ("runs sql", names[3]))}
    out["sql_rounds"] = {"loads": [round(r["load"], 2) for r in rounds],
                         **{f"{label} / report wall": [round(x, 3) for x in wall] for label, (wall, _) in ratios.items()},
                         **{f"{label} / report CPU": [round(x, 3) for x in cpu] for label, (_, cpu) in ratios.items()}}
    wall, cpu = ratios["JSONL"]
    checks.append({"check": f"SQL process / report process <= {SQL_RATIO} (median of {args.pairs} paired rounds, wall)",
                   "value": round(_median(wall), 3), "ok": _median(wall) < SQL_RATIO})
    # CPU time is said, not judged: the query's JSON scan runs on DuckDB's two threads, so the
    # time it answers in (wall) is less than the CPU it spends
    checks.append({"check": "the same, CPU time (median; reported, the target is the time it answers in)",
                   "value": round(_median(cpu), 3), "ok": None})
    wall, cpu = ratios["runs sql"]
    checks.append({"check": f"`evalconv runs sql` process / report process <= {SQL_RATIO} (median, wall)",
                   "value": round(_median(wall), 3), "ok": _median(wall) < SQL_RATIO})
    checks.append({"check": "the same, CPU time (median; reported)", "value": round(_median(cpu), 3), "ok": None})
    order = measure([sys.executable, "-c", _ORDER_CHILD, str(store / "results.jsonl")])
    checks.append({"check": "DuckDB's line numbers are the file's line order at this size",
                   **json.loads(order["stdout"] or "{}"), "ok": json.loads(order["stdout"] or "{}").get("in_file_order")})
    for name in names:
        m = routes[name]
        print(f"{name:>42} ({args.results:,} results): median {m['seconds']:6.2f} s wall, "
              f"{m['cpu_seconds']:.2f} s CPU, peak {m['peak_rss_mb']} MB", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[250_000, 1_000_000])
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--skip", nargs="*", default=[], choices=["validate", "stats", "sql"])
    parser.add_argument("--pairs", type=int, default=5, help="paired rounds of the report and the SQL processes")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="leave PYTHONDONTWRITEBYTECODE alone: every process compiles evalconv's modules again")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    out: dict = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()}, "routes": {}, "checks": []}
    out["machine"]["bytecode"] = None if args.no_bytecode else installed_bytecode()
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
        sql_routes(args, out)
    out["machine"]["load_after"] = os.getloadavg()
    for route in routes.values():
        route.pop("stdout", None)
    (OUT / "scale.json").write_text(json.dumps(out, indent=1) + "\n")
    for check in checks:
        verdict = "info" if check["ok"] is None else "ok  " if check["ok"] else "FAIL"
        print(f"{verdict} {check['check']}" + (f": {check['value']}" if "value" in check else ""))


if __name__ == "__main__":
    main()

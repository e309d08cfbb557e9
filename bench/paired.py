"""Two evalconv installs timed in pairs, on the same data, run after run (A, B, A, B, ...).

    python bench/paired.py --a "env PYTHONPATH=/tmp/before python -m evalconv" \
                           --b "env PYTHONPATH=/tmp/after python -m evalconv" --rows 100000 --repeat 3

`bench/run.py` times one install; on a machine others share, the load changes between its routes
and between two of its runs, so two runs of it cannot tell a 5% change. Here each route runs A
and B back to back, `--repeat` times, and the best wall and CPU time of each are compared (the
CPU time, user + system of the process and the workers it reaped, moves least with the load).
Routes: the ones a change to the engine or the writers can move (JSONL to every writer that
goes on two cores, validation, CSV back to JSONL). Output: a Markdown table on stdout, and
bench/out/paired.json.

    python bench/paired.py --a OLD --b NEW --interleave --repeat 5 --routes "JSONL -> CSV,pydantic-evals"

`--interleave` runs every chosen route in each round (A, B, route after route) and adds each
route's time over JSONL -> CSV's in the same round: the writers-within-2x-of-CSV ratios, paired.

    python bench/paired.py --a OLD --b NEW --rows 100000 --repeat 5 --baselines --routes "JSONL -> CSV"

`--baselines` runs bench/baseline_script.py and bench/baseline_pandas.py in the same rounds on
the routes they have (JSONL -> CSV, CSV -> JSONL; pandas only up to `--pandas-max-rows`, it
needs 15 GB at 1M rows), so that the ratios to them are paired too. Each side's median wall and
CPU time are printed beside the best, with the 1-minute load average the runs started under:
on a machine others share, read the medians and the CPU time.

Each side runs once, unmeasured, before the rounds, with its bytecode written to bench/out/pycache
(`run.bytecode_cache`): an installed package imports compiled bytecode, while this machine's
PYTHONDONTWRITEBYTECODE would have every process compile evalconv's modules again at start
(0.1-0.2 CPU seconds). `--no-bytecode` and `--no-warmup` measure as before 2026-12-05.
"""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from run import BENCH, bytecode_cache, dataset, run_process  # beside this script: Python puts its folder first on sys.path

ROUTES = [  # (route, arguments; IN is the JSONL data, CSV the canonical CSV of it, OUT an output)
    ("JSONL -> CSV", ["IN", "--to", "csv", "-o", "OUT.csv"]),
    ("JSONL -> JSONL", ["IN", "--from", "jsonl", "--to", "jsonl", "-o", "OUT.jsonl"]),
    ("JSONL -> parquet", ["IN", "--to", "parquet", "-o", "OUT.parquet"]),
    ("validate JSONL", ["validate", "IN"]),
    ("CSV -> JSONL", ["CSV", "--from", "csv", "--to", "jsonl", "-o", "OUT.jsonl"]),
    ("validate CSV", ["validate", "CSV"]),
    ("JSONL -> braintrust", ["IN", "--to", "braintrust", "-o", "OUT.braintrust.jsonl"]),
    ("JSONL -> langsmith", ["IN", "--to", "langsmith", "-o", "OUT.langsmith.jsonl"]),
    ("JSONL -> inspect", ["IN", "--to", "inspect", "-o", "OUT.inspect.jsonl"]),
    ("JSONL -> promptfoo", ["IN", "--to", "promptfoo", "-o", "OUT.promptfoo.jsonl"]),
    ("JSONL -> deepeval", ["IN", "--to", "deepeval", "-o", "OUT.deepeval.json"]),
    ("JSONL -> hf", ["IN", "--to", "hf", "-o", "OUTDIR"]),
    # the other writers that go on two cores (`Format.splits`), for the one-core/two-core question
    ("JSONL -> promptfoo yaml", ["IN", "--to", "promptfoo", "-o", "OUT.promptfoo.yaml"]),
    ("JSONL -> deepeval csv", ["IN", "--to", "deepeval", "-o", "OUT.deepeval.csv"]),
    ("JSONL -> langfuse", ["IN", "--to", "langfuse", "-o", "OUT.langfuse.jsonl"]),
    ("JSONL -> mlflow", ["IN", "--to", "mlflow", "-o", "OUT.mlflow.jsonl"]),
    ("JSONL -> openai-evals", ["IN", "--to", "openai-evals", "-o", "OUT.openai-evals.jsonl"]),
    ("JSONL -> phoenix", ["IN", "--to", "phoenix", "-o", "OUT.phoenix.jsonl"]),
    ("JSONL -> pydantic-evals", ["IN", "--to", "pydantic-evals", "-o", "OUT.pydantic-evals.yaml"]),
    ("JSONL -> opik", ["IN", "--to", "opik", "-o", "OUT.opik.jsonl"]),
]


def command(tool: str, args: list[str], data: Path, csv: Path, out: Path) -> list[str]:
    swap = {"IN": str(data), "CSV": str(csv), "OUTDIR": str(out / "hf")}
    line = [swap.get(a, a.replace("OUT", str(out / "out"))) for a in args]
    return shlex.split(tool) + line


BASELINE_MODES = {"JSONL -> CSV": "jsonl2csv", "CSV -> JSONL": "csv2jsonl"}  # routes the baselines have


def baseline(script: str, mode: str, route_args: list[str], data: Path, csv: Path, out: Path) -> list[str]:
    src = data if route_args[0] == "IN" else csv
    dst = out / ("base.csv" if mode == "jsonl2csv" else "base.jsonl")
    return [sys.executable, str(BENCH / script), mode, str(src), str(dst)]


def summary(runs: list[tuple[float, float, float, float, float]]) -> dict[str, float]:
    """A side's runs (wall, CPU, tree RSS, tree PSS, load): medians, best, the highest memory."""
    walls, cpus, rss, pss, loads = zip(*runs)
    return {"wall_median": statistics.median(walls), "wall_best": min(walls), "cpu_median": statistics.median(cpus),
            "cpu_best": min(cpus), "tree_rss_mb": max(rss), "tree_pss_mb": max(pss),
            "load_min": min(loads), "load_max": max(loads), "runs": len(runs)}


def sides(args: argparse.Namespace, route: str, route_args: list[str], data: Path, csv: Path,
          out: Path) -> list[tuple[str, list[str]]]:
    """What runs in each round of a route: A, B, and the baselines it has."""
    cmds = [("a", command(args.a, route_args, data, csv, out)), ("b", command(args.b, route_args, data, csv, out))]
    mode = BASELINE_MODES.get(route)
    if args.baselines and mode is not None:
        cmds.append(("script", baseline("baseline_script.py", mode, route_args, data, csv, out)))
        if args.rows <= args.pandas_max_rows:
            cmds.append(("pandas", baseline("baseline_pandas.py", mode, route_args, data, csv, out)))
    return cmds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="two evalconv installs, timed in pairs")
    parser.add_argument("--a", required=True, help="the first install's command (before)")
    parser.add_argument("--b", required=True, help="the second install's command (after)")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--routes", type=lambda s: s.split(","), help="only routes whose name contains one of these")
    parser.add_argument("--baselines", action="store_true", help="the script and pandas in the same rounds")
    parser.add_argument("--pandas-max-rows", type=int, default=200_000)
    parser.add_argument("--out", default="paired.json", help="file name under bench/out")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--no-bytecode", action="store_true",
                        help="leave PYTHONDONTWRITEBYTECODE as it is (each process compiles evalconv's modules again)")
    parser.add_argument("--no-warmup", action="store_true", help="no unmeasured first round")
    parser.add_argument("--interleave", action="store_true",
                        help="each round runs every route (A, B) before the next round starts, so that routes' "
                             "ratios to one another (a writer against JSONL -> CSV) are paired too")
    args = parser.parse_args(argv)
    if not args.no_bytecode:
        bytecode_cache()
    data = dataset(args.rows, args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        csv = out / "in.csv"
        chosen = [(route, route_args) for route, route_args in ROUTES
                  if not args.routes or any(word in route for word in args.routes)]
        if any("CSV" in route_args for _, route_args in chosen):  # the routes that read a canonical CSV
            made = run_process(shlex.split(args.a) + [str(data), "--to", "csv", "-o", str(csv)], args.timeout)
            assert made.returncode == 0, made.stderr
        if not args.no_warmup:  # unmeasured: each side's modules compiled (as at install), the data in the page cache
            for route, route_args in chosen:
                for _side, cmd in sides(args, route, route_args, data, csv, out):
                    shutil.rmtree(out / "hf", ignore_errors=True)
                    run_process(cmd, args.timeout)
        runs_of: dict[str, dict[str, list[tuple[float, float, float, float, float]]]] = {r: {} for r, _ in chosen}
        order = ([[c] * args.repeat for c in chosen] if not args.interleave
                 else [chosen] * args.repeat)  # route by route, or round by round
        for block in order:
            for route, route_args in block:
                runs = runs_of[route]
                for side, cmd in sides(args, route, route_args, data, csv, out):
                    shutil.rmtree(out / "hf", ignore_errors=True)
                    run = run_process(cmd, args.timeout)
                    if run.returncode not in (0, 1):  # 1: the set's warnings fail nothing, but --strict may
                        raise SystemExit(f"{route} ({side}) failed: {run.stderr}")
                    runs.setdefault(side, []).append((run.seconds, run.cpu_seconds, run.tree_rss_mb or run.peak_rss_mb,
                                                      run.tree_pss_mb or 0.0, run.load))
        for route, _ in chosen:
            runs = runs_of[route]
            got = {side: summary(r) for side, r in runs.items()}
            rows.append({"route": route, **got, "raw": runs})
            a, b = got["a"], got["b"]
            line = (f"{route:22} wall {a['wall_median']:6.2f} -> {b['wall_median']:6.2f} "
                    f"({b['wall_median'] / a['wall_median'] - 1:+.1%})   cpu {a['cpu_median']:6.2f} -> "
                    f"{b['cpu_median']:6.2f} ({b['cpu_median'] / a['cpu_median'] - 1:+.1%})   tree RSS "
                    f"{a['tree_rss_mb']:4.0f} -> {b['tree_rss_mb']:4.0f} MB   load {a['load_min']:.1f}-{a['load_max']:.1f}")
            for side in ("script", "pandas"):
                if side in got:
                    o = got[side]
                    line += (f"\n{'':22} {side}: wall {o['wall_median']:6.2f} cpu {o['cpu_median']:6.2f}; "
                             f"b / {side} wall {b['wall_median'] / o['wall_median']:.2f}x "
                             f"cpu {b['cpu_median'] / o['cpu_median']:.2f}x; a / {side} wall "
                             f"{a['wall_median'] / o['wall_median']:.2f}x")
            print(line, flush=True)
    if args.interleave:
        print(round_ratios(rows))
    (BENCH / "out").mkdir(exist_ok=True)
    (BENCH / "out" / args.out).write_text(json.dumps({"rows": args.rows, "repeat": args.repeat, "a": args.a,
                                                     "b": args.b, "routes": rows}, indent=2), encoding="utf-8")
    print(table(rows))


def round_ratios(rows: list[dict], to: str = "JSONL -> CSV") -> str:
    """With --interleave: each route's time over `to`'s in the same round, for A and B (median,
    best in brackets), and the load the round's two runs started under."""
    base = next((r for r in rows if r["route"] == to), None)
    if base is None:
        return ""
    lines = [f"| route / {to} | side | wall x median (best) | CPU x median (best) | load |", "|---|---|---:|---:|---|"]
    for r in rows:
        if r is base:
            continue
        for side in ("a", "b"):
            pairs = list(zip(r["raw"][side], base["raw"][side]))
            walls = [mine[0] / theirs[0] for mine, theirs in pairs]
            cpus = [mine[1] / theirs[1] for mine, theirs in pairs]
            loads = [load for mine, theirs in pairs for load in (mine[4], theirs[4])]
            lines.append(f"| {r['route']} | {side} | {statistics.median(walls):.2f}x ({min(walls):.2f}x) | "
                         f"{statistics.median(cpus):.2f}x ({min(cpus):.2f}x) | {min(loads):.1f}-{max(loads):.1f} |")
    return "\n".join(lines)


def table(rows: list[dict]) -> str:
    """Medians (best in brackets); the load average the runs started under."""
    lines = ["| route | side | wall s median (best) | CPU s median (best) | tree RSS MB | tree PSS MB | b / side "
             "(wall, CPU) | load |", "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        b = r["b"]
        for side in ("a", "b", "script", "pandas"):
            if side not in r:
                continue
            o = r[side]
            ratio = "" if side == "b" else (f"{b['wall_median'] / o['wall_median']:.2f}x, "
                                            f"{b['cpu_median'] / o['cpu_median']:.2f}x")
            lines.append(f"| {r['route']} | {side} | {o['wall_median']:.2f} ({o['wall_best']:.2f}) | "
                         f"{o['cpu_median']:.2f} ({o['cpu_best']:.2f}) | {o['tree_rss_mb']:.0f} | "
                         f"{o['tree_pss_mb']:.0f} | {ratio} | {o['load_min']:.1f}-{o['load_max']:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

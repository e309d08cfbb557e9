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
"""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import tempfile
from pathlib import Path

from run import BENCH, dataset, run_process  # beside this script: Python puts its folder first on sys.path

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
]


def command(tool: str, args: list[str], data: Path, csv: Path, out: Path) -> list[str]:
    swap = {"IN": str(data), "CSV": str(csv), "OUTDIR": str(out / "hf")}
    line = [swap.get(a, a.replace("OUT", str(out / "out"))) for a in args]
    return shlex.split(tool) + line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="two evalconv installs, timed in pairs")
    parser.add_argument("--a", required=True, help="the first install's command (before)")
    parser.add_argument("--b", required=True, help="the second install's command (after)")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--routes", type=lambda s: s.split(","), help="only routes whose name contains one of these")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    data = dataset(args.rows, args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        csv = out / "in.csv"
        made = run_process(shlex.split(args.a) + [str(data), "--to", "csv", "-o", str(csv)], args.timeout)
        assert made.returncode == 0, made.stderr
        for route, route_args in ROUTES:
            if args.routes and not any(word in route for word in args.routes):
                continue
            best: dict[str, tuple[float, float, float]] = {}
            for _ in range(args.repeat):
                for side, tool in (("a", args.a), ("b", args.b)):
                    shutil.rmtree(out / "hf", ignore_errors=True)
                    run = run_process(command(tool, route_args, data, csv, out), args.timeout)
                    if run.returncode not in (0, 1):  # 1: the set's warnings fail nothing, but --strict may
                        raise SystemExit(f"{route} ({side}) failed: {run.stderr}")
                    wall, cpu, rss = best.get(side, (float("inf"), float("inf"), 0.0))
                    best[side] = (min(wall, run.seconds), min(cpu, run.cpu_seconds), max(rss, run.tree_rss_mb or 0.0))
            (wa, ca, ra), (wb, cb, rb) = best["a"], best["b"]
            rows.append({"route": route, "wall_a": wa, "wall_b": wb, "cpu_a": ca, "cpu_b": cb,
                         "tree_rss_mb_a": ra, "tree_rss_mb_b": rb})
            print(f"{route:22} wall {wa:6.2f} -> {wb:6.2f} ({wb / wa - 1:+.1%})   cpu {ca:6.2f} -> {cb:6.2f} "
                  f"({cb / ca - 1:+.1%})   tree RSS {ra:4.0f} -> {rb:4.0f} MB", flush=True)
    (BENCH / "out").mkdir(exist_ok=True)
    (BENCH / "out" / "paired.json").write_text(json.dumps({"rows": args.rows, "repeat": args.repeat, "a": args.a,
                                                          "b": args.b, "routes": rows}, indent=2), encoding="utf-8")
    print("\n| route | wall before s | wall after s | change | CPU before s | CPU after s | change | tree RSS MB before / after |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['route']} | {r['wall_a']:.2f} | {r['wall_b']:.2f} | {r['wall_b'] / r['wall_a'] - 1:+.1%} "
              f"| {r['cpu_a']:.2f} | {r['cpu_b']:.2f} | {r['cpu_b'] / r['cpu_a'] - 1:+.1%} "
              f"| {r['tree_rss_mb_a']:.0f} / {r['tree_rss_mb_b']:.0f} |")


if __name__ == "__main__":
    main()

"""`evalconv stats` against `evalconv validate` on the same file, in one run (issue 18).

    python bench/stats_vs_validate.py                    # N = 20k and 100k
    python bench/stats_vs_validate.py --sizes 1000000    # the flat-memory check at 1M rows (slow)

Each command runs as its own process (wall time includes start-up; peak RSS from wait4, the
process tree's with its workers sampled from /proc as in run.py), best of `--repeat` runs. The
targets are ratios measured in the same run, never absolute times: stats' wall and CPU time
within `validate`'s (ratio <= 1.0 plus a 10% noise margin), on two workers and on one (`-j1`),
both printing their JSON report; and stats' peak memory, its own and its process tree's, about
the same at every size (flat: it keeps counters, not rows). `stats` runs with the default
slices plus a cross-tab; `stats --html` (also writing the page) is measured beside it.
Results go to bench/out/stats_vs_validate.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent

from run import dataset, measure  # noqa: E402

NOISE = 1.10  # a shared machine: within 10% counts as "as fast"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--evalconv", default=f"{sys.executable} -c 'from evalconv.cli import main; main()'")
    args = parser.parse_args(argv)
    import shlex

    evalconv = shlex.split(args.evalconv)
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        page = str(Path(tmp) / "coverage.html")
        for size in args.sizes:
            data = str(dataset(size, args.seed))
            print(f"N = {size:,}", flush=True)
            results = {}
            for name, cmd in (
                    ("validate", [*evalconv, "validate", data]),
                    ("validate -j1", [*evalconv, "validate", "-j", "1", data]),
                    ("stats", [*evalconv, "stats", data, "--by", "case.oracleType,metadata.severity",
                               "--format", "json"]),
                    ("stats -j1", [*evalconv, "stats", "-j", "1", data, "--by", "case.oracleType,metadata.severity",
                                   "--format", "json"]),
                    ("stats --html", [*evalconv, "stats", data, "--by", "case.oracleType,metadata.severity",
                                      "--format", "json", "--html", page])):
                results[name] = measure(size, name, "evalconv", cmd, args.repeat, timeout=1800)
            stats = results["stats"]
            if any(r.seconds is None for r in results.values()):
                ok = False
                continue

            def ratio(a: str, b: str, cpu: bool = False, results: dict = results) -> float:
                num, den = results[a], results[b]
                return round((num.cpu_seconds or 0) / (den.cpu_seconds or 1) if cpu
                             else num.seconds / den.seconds, 3)  # type: ignore[operator]

            row = {"size": size, **{f"{name.replace(' ', '_').replace('-', '')}_{key}": getattr(r, attr)
                                    for name, r in results.items()
                                    for key, attr in (("s", "seconds"), ("cpu_s", "cpu_seconds"),
                                                      ("rss_mb", "peak_rss_mb"), ("tree_pss_mb", "tree_pss_mb"),
                                                      ("tree_rss_mb", "tree_rss_mb"))},
                   "wall_ratio": ratio("stats", "validate"), "cpu_ratio": ratio("stats", "validate", True),
                   "j1_wall_ratio": ratio("stats -j1", "validate -j1"),
                   "j1_cpu_ratio": ratio("stats -j1", "validate -j1", True),
                   "load": stats.load}
            rows.append(row)
            print(f"  stats / validate: two workers wall {row['wall_ratio']:.2f}, cpu {row['cpu_ratio']:.2f}; "
                  f"one core wall {row['j1_wall_ratio']:.2f}, cpu {row['j1_cpu_ratio']:.2f}; "
                  f"stats peak {stats.peak_rss_mb:.0f} MB, process tree {stats.tree_pss_mb or 0:.0f} MB PSS",
                  flush=True)
            ok &= all(row[k] <= NOISE for k in ("wall_ratio", "cpu_ratio", "j1_wall_ratio", "j1_cpu_ratio"))
    if len(rows) > 1:
        growth = rows[-1]["stats_rss_mb"] / rows[0]["stats_rss_mb"]
        tree = (rows[-1]["stats_tree_pss_mb"] or 0) / (rows[0]["stats_tree_pss_mb"] or 1)
        print(f"stats peak memory, {rows[0]['size']:,} -> {rows[-1]['size']:,} rows: x{growth:.2f} "
              f"(the process tree's PSS x{tree:.2f})")
        ok &= growth < 1.5 and tree < 1.5
    out = BENCH / "out" / "stats_vs_validate.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"results": rows, "ok": ok}, indent=2) + "\n", encoding="utf-8")
    print("target met" if ok else "target MISSED", f"({out.relative_to(BENCH.parent)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

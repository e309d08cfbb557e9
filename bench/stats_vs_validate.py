"""`evalconv stats` against `evalconv validate` on the same file, in one run (issue 18).

    python bench/stats_vs_validate.py                    # N = 20k and 100k
    python bench/stats_vs_validate.py --sizes 1000000    # the flat-memory check at 1M rows (slow)

Each command runs as its own process (wall time includes start-up; peak RSS from wait4), best
of `--repeat` runs. The targets are ratios measured in the same run, never absolute times:
stats' wall or CPU time within `validate`'s (ratio <= 1.0 plus a 10% noise margin), both
printing their JSON report, and stats' peak memory about the same at every size (flat: it
keeps counters, not rows). `stats` runs with the default slices plus a cross-tab; `stats
--html` (also writing the page) is measured beside it.
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
            stats, validate = results["stats"], results["validate"]
            if stats.seconds is None or validate.seconds is None:
                ok = False
                continue
            row = {"size": size, "stats_s": stats.seconds, "validate_s": validate.seconds,
                   "validate_j1_s": results["validate -j1"].seconds, "stats_j1_s": results["stats -j1"].seconds,
                   "stats_html_s": results["stats --html"].seconds,
                   "j1_cpu_ratio": round((results["stats -j1"].cpu_seconds or 0)
                                         / (results["validate -j1"].cpu_seconds or 1), 3),
                   "stats_cpu_s": stats.cpu_seconds, "validate_cpu_s": validate.cpu_seconds,
                   "wall_ratio": round(stats.seconds / validate.seconds, 3),
                   "cpu_ratio": round((stats.cpu_seconds or 0) / (validate.cpu_seconds or 1), 3),
                   "stats_rss_mb": stats.peak_rss_mb, "validate_rss_mb": validate.peak_rss_mb}
            rows.append(row)
            print(f"  stats / validate: wall {row['wall_ratio']:.2f}, cpu {row['cpu_ratio']:.2f} "
                  f"(one core each: cpu {row['j1_cpu_ratio']:.2f}); "
                  f"stats peak {row['stats_rss_mb']:.0f} MB", flush=True)
            ok &= row["wall_ratio"] <= NOISE or row["cpu_ratio"] <= NOISE
    if len(rows) > 1:
        growth = rows[-1]["stats_rss_mb"] / rows[0]["stats_rss_mb"]
        print(f"stats peak memory, {rows[0]['size']:,} -> {rows[-1]['size']:,} rows: x{growth:.2f}")
        ok &= growth < 1.5
    out = BENCH / "out" / "stats_vs_validate.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"results": rows, "ok": ok}, indent=2) + "\n", encoding="utf-8")
    print("target met" if ok else "target MISSED", f"({out.relative_to(BENCH.parent)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

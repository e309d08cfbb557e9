"""Profile evalconv's JSONL -> CSV and validate-only routes with cProfile.

    python bench/profile_routes.py [--rows 100000] [--top 20]

Prints the functions with the most own time (tottime) and the cumulative view of the route,
and saves the raw profiles to bench/out/profile-*.prof (open them with snakeviz or pstats).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent

import run  # noqa: E402  (for the cached data set)

import evalconv  # noqa: E402
from evalconv import api  # noqa: E402


def profiled(name: str, call, top: int) -> None:
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    call()
    profile.disable()
    plain = time.perf_counter() - start
    out = BENCH / "out" / f"profile-{name}.prof"
    profile.dump_stats(out)
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    print(f"==== {name}: {plain:.2f} s under the profiler; raw profile in {out.relative_to(BENCH.parent)}")
    print(text.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    src = str(run.dataset(args.rows, args.seed))
    print(f"evalconv from {Path(evalconv.__file__).parent}")
    with tempfile.TemporaryDirectory() as tmp:
        profiled("jsonl-to-csv", lambda: api.convert(src, f"{tmp}/out.csv", to="csv", from_="jsonl"), args.top)
    profiled("validate-jsonl", lambda: api.validate([src], from_="jsonl"), args.top)


if __name__ == "__main__":
    main()

"""`evalconv diff BASE HEAD` against `evalconv validate BASE` (issue 28: "diff on two 1M-row sets
runs in flat memory at no worse than 2x the time of validate on one of them").

    python bench/diff_vs_validate.py                      # N = 100k and 1M (1M is slow: ~1 GB a set)
    python bench/diff_vs_validate.py --sizes 20000        # a quick look
    python bench/diff_vs_validate.py --sizes 1000000 --before   # also diff edited as before its JSONL second pass

BASE is bench/generate.py's set (version-1 rows). Two heads are derived from it, a line at a time:
- `edited`: what a pull request does to a set, at scale: 1% of the cases change their expected
  answer (half of them with a new metadata.case.version), 0.2% are removed, 0.2% added;
- `migrated`: every row moved to schema version 2 (`evalconv migrate --to 2`'s change), which
  diff reports as one `schema-migrated` finding, not a million changed rows.

Each command runs as its own process, interleaved (validate, validate -j1, diff edited, diff
migrated, diff edited -j1, then again) so that the machine's load falls on each alike; the best wall time of `--repeat` rounds,
its CPU time (workers included), the process's peak RSS (wait4) and the process tree's (sampled).
The target is a ratio measured in the same run: diff's wall time within 2x validate's (both on
their default two processes; each also on one, `-j 1`), and diff's peak memory about the same at
every size (flat: ids and content digests, not rows, nor the changes: those go to a spool file).
Results go to bench/out/diff_vs_validate.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent

from run import Measured, dataset, run_process  # noqa: E402

TARGET = 2.0
CHANGED_EVERY, REMOVED_EVERY = 100, 500  # 1% changed, 0.2% removed and as many added


def edited_head(base: Path, out: Path) -> None:
    with open(base, encoding="utf-8") as src, open(out, "w", encoding="utf-8", newline="") as dst:
        for number, line in enumerate(src):
            if number % REMOVED_EVERY == 1:
                continue
            if number % CHANGED_EVERY == 0:
                value = json.loads(line)
                value["expected"] = f"changed in the head: {value.get('expected')!r}"[:200]
                if number % (2 * CHANGED_EVERY) == 0:
                    case = value["metadata"]["case"]
                    case["version"] = f"{case.get('version') or '1'}.1"
                line = json.dumps(value, ensure_ascii=False) + "\n"
            dst.write(line)
            if number % REMOVED_EVERY == 2:
                value = json.loads(line)
                value["id"] = value["metadata"]["case"]["caseId"] = f"{value['id']}-new"
                value["metadata"]["reason"] = "added in the head"
                dst.write(json.dumps(value, ensure_ascii=False) + "\n")


def migrated_head(base: Path, out: Path) -> None:
    with open(base, encoding="utf-8") as src, open(out, "w", encoding="utf-8", newline="") as dst:
        for line in src:
            value = json.loads(line)
            value["metadata"]["case"]["schemaVersion"] = 2
            dst.write(json.dumps(value, ensure_ascii=False) + "\n")


def head(base: Path, kind: str) -> Path:
    path = base.with_name(f"{base.stem}-{kind}.jsonl")
    if not path.exists() or path.stat().st_mtime < base.stat().st_mtime:
        print(f"deriving the {kind} head -> {path.relative_to(BENCH.parent)}", flush=True)
        tmp = path.with_suffix(".tmp")
        (edited_head if kind == "edited" else migrated_head)(base, tmp)
        tmp.replace(path)
    return path


def _entry(m: Measured) -> dict:
    return {"s": round(m.seconds, 2), "cpu_s": round(m.cpu_seconds, 2), "rss_mb": round(m.peak_rss_mb),
            "tree_rss_mb": round(m.tree_rss_mb) if m.tree_rss_mb else None, "load": round(m.load, 2)}


# `diff` as it was before a JSONL base's second pass read only the lines it needs: the full read.
BEFORE = ("from evalconv.lifecycle import diff as d; d._jsonl_rows = lambda *args: None; "
          "from evalconv.cli import main; main()")


def one_size(evalconv: list[str], size: int, seed: int, repeat: int, before: bool = False) -> dict:
    base = dataset(size, seed)
    heads = {kind: head(base, kind) for kind in ("edited", "migrated")}
    commands = {
        "validate": [*evalconv, "validate", str(base)],
        "validate -j1": [*evalconv, "validate", "-j", "1", str(base)],
        "diff edited": [*evalconv, "diff", str(base), str(heads["edited"]), "--format", "json"],
        "diff migrated": [*evalconv, "diff", str(base), str(heads["migrated"]), "--format", "json"],
        "diff edited -j1": [*evalconv, "diff", "-j", "1", str(base), str(heads["edited"]), "--format", "json"],
    }
    if before:
        commands["diff edited, before"] = [sys.executable, "-c", BEFORE, "diff", str(base), str(heads["edited"]),
                                           "--format", "json"]
    best: dict[str, Measured] = {}
    runs: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(repeat):
        for name, cmd in commands.items():  # interleaved: each round runs every command once
            m = run_process(cmd, timeout=3600)
            if m.returncode not in (0, 1):  # validate exits 1 on the generated set's errors, if any
                raise SystemExit(f"{name} failed (exit {m.returncode}): {m.stderr.strip()[-300:]}")
            runs[name].append(round(m.seconds, 2))
            if name not in best or m.seconds < best[name].seconds:
                best[name] = m
            print(f"  round {round_ + 1} {name:<16} {m.seconds:7.2f} s {m.cpu_seconds:7.2f} cpu-s "
                  f"{m.peak_rss_mb:6.0f} MB (tree {m.tree_rss_mb or 0:.0f})  load {m.load:.2f}", flush=True)
    row = {"size": size, **{name: {**_entry(m), "runs": runs[name]} for name, m in best.items()}}
    row["edited_j1_vs_validate_j1"] = round(best["diff edited -j1"].seconds / best["validate -j1"].seconds, 2)
    for kind in ("edited", "migrated"):
        diff = best[f"diff {kind}"]
        row[f"{kind}_vs_validate"] = round(diff.seconds / best["validate"].seconds, 2)
        row[f"{kind}_vs_validate_j1"] = round(diff.seconds / best["validate -j1"].seconds, 2)
        row[f"{kind}_cpu_vs_validate"] = round(diff.cpu_seconds / best["validate"].cpu_seconds, 2)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--before", action="store_true", help="also time diff edited with the full second read")
    parser.add_argument("--evalconv", default=f"{sys.executable} -c 'from evalconv.cli import main; main()'")
    args = parser.parse_args(argv)
    evalconv = shlex.split(args.evalconv)
    rows = []
    for size in args.sizes:
        print(f"N = {size:,}  (uptime: {os.getloadavg()})", flush=True)
        row = one_size(evalconv, size, args.seed, args.repeat, args.before)
        rows.append(row)
        print(f"  diff / validate (wall): edited {row['edited_vs_validate']:.2f} "
              f"(-j1 {row['edited_vs_validate_j1']:.2f}), migrated {row['migrated_vs_validate']:.2f} "
              f"(-j1 {row['migrated_vs_validate_j1']:.2f})", flush=True)
    ok = all(row[f"{kind}_vs_validate"] <= TARGET for row in rows for kind in ("edited", "migrated"))
    if len(rows) > 1:
        growth = {kind: round(rows[-1][f"diff {kind}"]["rss_mb"] / rows[0][f"diff {kind}"]["rss_mb"], 2)
                  for kind in ("edited", "migrated")}
        print(f"diff peak RSS, {rows[0]['size']:,} -> {rows[-1]['size']:,} rows: {growth}")
        ok &= all(g < 1.5 for g in growth.values())
    out = BENCH / "out" / "diff_vs_validate.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"results": rows, "ok": ok}, indent=2) + "\n", encoding="utf-8")
    print("target met" if ok else "target MISSED", f"({out.relative_to(BENCH.parent)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

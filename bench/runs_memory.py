"""Import and report stream: memory stays flat as the number of results grows (issue 17).

    python bench/runs_memory.py                              # 100k, 300k and 1M results
    python bench/runs_memory.py --sizes 20000 100000 300000  # on a busy machine

The cases (2,000) are fixed. Routes, each its own process, peak RSS read with wait4:

- `report STORE`: a store of 10,000 attempts (five runs of every case) and N result records
  (evaluators x rescorings); only the results grow.
- `report braintrust rows`: Braintrust experiment rows, four scores a row, straight from the file
  (N/4 attempts: the report keeps one small entry per attempt, so this one grows a little).
- `runs import` of those rows into an empty store (N/4 attempts and N results added), then the
  same file again into the store it made (adds nothing: every record is looked up in the index
  of a store of N results). The bench checks the counts the import prints.

Baselines measured in the same run: the process that only imports evalconv, and the ids of the
N-result store in a Python set (what the import kept in memory before the index moved to disk).
The target: each evalconv route's peak at the largest size at most 1.25x its peak at the smallest
(flat). Results go to bench/out/runs/runs_memory.json.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out" / "runs"

CASES, RUNS_PER_CASE, EVALUATORS = 2000, 5, ("exact", "membership", "judge", "review")
TYPES = {"exact": "exact-or-programmatic", "membership": "exact-or-programmatic", "judge": "llm-judge",
         "review": "rubric-human"}
FLAT = 1.25


def make_cases(folder: Path) -> Path:
    path = folder / "cases.jsonl"
    oracles = ("reference-answer", "acceptable-set", "rubric", "expected-tool-calls")
    with open(path, "w") as out:
        for i in range(CASES):
            oracle = oracles[i % 4]
            case = {"caseId": f"c{i}", "oracleType": oracle, "expectedBehavior": "x", "provenance": "expert-authored",
                    "caseFamily": f"family-{i % 40}"}
            if oracle == "rubric":
                case["evaluationCriteria"] = ["polite"]
            row = {"id": f"c{i}", "input": f"q{i}", "metadata": {"case": case, "severity": ("cosmetic", "wrong-answer", "harmful")[i % 3],
                                                               "reason": f"reason {i % 25}", "gate": "release" if i % 2 else "trend"}}
            if oracle != "rubric":
                row["expected"] = ["a"] if oracle != "reference-answer" else "a"
            out.write(json.dumps(row) + "\n")
    return path


def make_store(folder: Path, results: int, seed: int = 17) -> Path:
    from evalconv.canonical import runs

    store = folder / f"store-{results}"
    if (store / "results.jsonl").exists():
        return store
    store.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    attempts = []
    with open(store / "attempts.jsonl", "w") as out:
        for r in range(RUNS_PER_CASE):
            for i in range(CASES):
                record = runs.attempt(harness="evalconv", key=("bench", r, i), case_id=f"c{i}", system="app",
                                      output="a", has_output=True)
                attempts.append(record["id"])
                out.write(json.dumps(record) + "\n")
    with open(store / "results.jsonl", "w") as out:
        for n in range(results):
            attempt = attempts[n % len(attempts)]
            name = EVALUATORS[(n // len(attempts)) % len(EVALUATORS)]
            record = runs.result(attempt_id=attempt, name=name, type_=TYPES[name], type_source="declared",
                                 score=None, passed=rng.random() < 0.8, review_status="automated", own_id=n)
            out.write(json.dumps(record) + "\n")
    return store


def make_braintrust_rows(folder: Path, results: int, seed: int = 17) -> Path:
    """Braintrust experiment rows (the export shape), four scores a row."""
    path = folder / f"braintrust-{results}.jsonl"
    if path.exists():
        return path
    rng = random.Random(seed)
    with open(path, "w") as out:
        for n in range(results // len(EVALUATORS)):
            i = n % CASES
            out.write(json.dumps({"id": f"row-{n}", "input": f"q{i}", "output": "a", "expected": "a",
                                  "scores": {name: float(rng.random() < 0.8) for name in EVALUATORS},
                                  "metadata": {"case": {"caseId": f"c{i}"}}, "span_id": f"s{n}"}) + "\n")
    return path


def measure(cmd: list[str]) -> dict:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read().decode()[-500:]
    code = os.waitstatus_to_exitcode(status)
    return {"seconds": round(seconds, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "exit": code, "stderr": stderr if code not in (0, 1) else "",
            "stdout": stdout}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    cases = make_cases(OUT)
    evalconv = [sys.executable, "-c", "from evalconv.cli import main; main()"]
    rows = {"baseline: import evalconv": {0: measure([sys.executable, "-c", "import evalconv.cli, evalconv.runs.report"])}}
    checks = []
    for size in args.sizes:
        store, harness_file = make_store(OUT, size), make_braintrust_rows(OUT, size)
        rows.setdefault("baseline: the store's result ids in a set", {})[size] = measure(
            [sys.executable, "-c", "import json, sys; ids = {json.loads(l)['id'] for l in open(sys.argv[1])}",
             str(store / "results.jsonl")])
        rows.setdefault("report STORE", {})[size] = measure([*evalconv, "report", str(store), "--cases", str(cases), "--format", "json"])
        rows.setdefault("report braintrust rows", {})[size] = measure(
            [*evalconv, "report", str(harness_file), "--cases", str(cases), "--format", "json"])
        target = OUT / f"imported-{size}"
        shutil.rmtree(target, ignore_errors=True)
        importing = [*evalconv, "runs", "import", str(harness_file), "--store", str(target), "--format", "json"]
        for route, added in (("runs import (empty store)", size), ("runs import again (store of N)", 0)):
            rows.setdefault(route, {})[size] = measured = measure(importing)
            got = json.loads(measured["stdout"])["added"]["results"] if measured["exit"] == 0 else None
            checks.append({"route": route, "size": size, "results added": got, "expected": added, "ok": got == added})
    small, large = min(args.sizes), max(args.sizes)
    base = rows["baseline: import evalconv"][0]["peak_rss_mb"]
    summary = {"sizes": args.sizes, "cases": CASES, "store attempts": CASES * RUNS_PER_CASE, "load": os.getloadavg()[0],
               "baseline_mb": base, "rows": {k: {str(s): {f: v for f, v in m.items() if f != "stdout"} for s, m in r.items()}
                                             for k, r in rows.items()},
               "checks": checks, "targets": []}
    for route, by_size in rows.items():
        if route.startswith("baseline: import"):
            continue
        ratio = by_size[large]["peak_rss_mb"] / by_size[small]["peak_rss_mb"]
        flat = None if route.startswith("baseline") else ratio <= FLAT
        summary["targets"].append({"route": route, "peak_mb": {str(s): by_size[s]["peak_rss_mb"] for s in args.sizes},
                                   "largest/smallest": round(ratio, 3), "largest/baseline": round(by_size[large]["peak_rss_mb"] / base, 3),
                                   "flat_target": FLAT if flat is not None else None, "holds": flat})
    (OUT / "runs_memory.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))


if __name__ == "__main__":
    main()

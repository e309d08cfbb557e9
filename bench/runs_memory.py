"""Import and report stream: memory stays flat as the number of results grows (issue 17).

    python bench/runs_memory.py                      # 100k and 1M results
    python bench/runs_memory.py --sizes 20000 200000 # on a busy machine

The cases (2,000) and attempts (10,000: five runs of every case) are fixed; only the number of
result records grows (evaluators x rescorings). Each measurement is its own process, its peak
RSS read with wait4. The baseline, measured in the same run, is the process that only imports
evalconv. The target: the peak at the largest size is at most 1.25x the peak at the smallest
(flat), for `evalconv report STORE` and for `evalconv report RESULTS.jsonl` straight from a
harness file (Braintrust experiment rows). `evalconv runs import` keeps the ids of the runs it
imports (to add nothing twice), so its memory grows with the results imported: measured and
reported, not held to the flat target.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
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
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode()[-500:] if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    return {"seconds": round(seconds, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "exit": code, "stderr": err if code not in (0, 1) else ""}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    cases = make_cases(OUT)
    evalconv = [sys.executable, "-c", "from evalconv.cli import main; main()"]
    rows = {"baseline (import evalconv)": {0: measure([sys.executable, "-c", "import evalconv.cli, evalconv.runreport"])}}
    for size in args.sizes:
        store, harness_file = make_store(OUT, size), make_braintrust_rows(OUT, size)
        rows.setdefault("report STORE", {})[size] = measure([*evalconv, "report", str(store), "--cases", str(cases), "--format", "json"])
        rows.setdefault("report braintrust rows", {})[size] = measure(
            [*evalconv, "report", str(harness_file), "--cases", str(cases), "--format", "json"])
        target = OUT / f"imported-{size}"
        if target.exists():
            for f in target.iterdir():
                f.unlink()
        rows.setdefault("runs import (ids kept)", {})[size] = measure([*evalconv, "runs", "import", str(harness_file), "--store", str(target)])
    small, large = min(args.sizes), max(args.sizes)
    summary = {"sizes": args.sizes, "cases": CASES, "attempts": CASES * RUNS_PER_CASE, "load": os.getloadavg()[0],
               "rows": {k: {str(s): v for s, v in m.items()} for k, m in rows.items()}, "targets": []}
    for route in ("report STORE", "report braintrust rows", "runs import (ids kept)"):
        ratio = rows[route][large]["peak_rss_mb"] / rows[route][small]["peak_rss_mb"]
        summary["targets"].append({"route": route, "ratio": round(ratio, 3), "flat_target": FLAT if route.startswith("report") else None,
                                   "holds": ratio <= FLAT if route.startswith("report") else None})
    (OUT / "runs_memory.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()

"""The long commands of issue 26 item 13, run on small inputs: what each prints when piped.

`tests/fixtures/piped_output.txt` holds what they printed before the progress bar and -q came,
changed since only where a count of one was made singular ("1 case has", item 16). Regenerate
it only when a command's own text changes on purpose: `python tests/progress_scenes.py`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "tests" / "fixtures" / "runs"
GOLDEN = ROOT / "tests" / "fixtures" / "piped_output.txt"

SHEET = ("question,answer,topic\n"
         "How do I reset my password?,Use the link on the sign-in page.,account\n"
         "Can I get a refund after 30 days?,,billing\n"
         "What is the delivery time?,Three to five working days.,shipping\n")

COMMANDS = [
    ["convert", "set.jsonl", "--to", "promptfoo", "-o", "t.yaml"],
    ["validate", "set.jsonl"],
    ["stats", "set.jsonl"],
    ["import", "sheet.csv", "-o", "imp.jsonl"],
    ["report", "results.json", "--cases", "cases.jsonl"],
    ["runs", "import", "results.json", "--store", "store"],
    ["roundtrip", "sets", "--via", "csv", "--via", "deepeval"],
]


def lay_out(where: Path) -> None:
    """The inputs: a starter set, a team's sheet, a promptfoo run and its cases, a folder of sets."""
    subprocess.run([sys.executable, "-m", "evalconv", "new", "customer-support", "-o", "set.jsonl"], cwd=where,
                   check=True, capture_output=True, env=env())
    (where / "sheet.csv").write_text(SHEET, encoding="utf-8")
    shutil.copy(RUNS / "promptfoo" / "results.json", where / "results.json")
    shutil.copy(RUNS / "cases.jsonl", where / "cases.jsonl")
    (where / "sets").mkdir()
    shutil.copy(where / "set.jsonl", where / "sets" / "a.jsonl")
    shutil.copy(RUNS / "cases.jsonl", where / "sets" / "b.jsonl")


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "80", **extra}


def run(where: Path, args: list[str], **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalconv", *args], cwd=where, timeout=300,
                          **{"capture_output": True, "env": env(), **kwargs})  # type: ignore[call-overload]


def piped(where: Path, extra: list[str] | None = None) -> str:
    """Every command's exit code, standard output and standard error, piped."""
    out = []
    for args in COMMANDS:
        for stale in ("t.yaml", "imp.jsonl", "store"):
            target = where / stale
            shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
        done = run(where, [*args, *(extra or [])])
        out.append(f"=== {' '.join(args)} (exit {done.returncode})\n--- stdout\n{done.stdout.decode()}"
                   f"--- stderr\n{done.stderr.decode()}")
    return "".join(out)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        lay_out(Path(tmp))
        GOLDEN.write_text(piped(Path(tmp)), encoding="utf-8")
    print(f"wrote {GOLDEN}")

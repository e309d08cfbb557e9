"""Real evalconv processes killed mid-write: big sets, temp files, workers (the fault tests share these)."""
from __future__ import annotations

import hashlib
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cli_process import evalconv_command
from conftest import ROOT
from evalconv.canonical import jsonvalue

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
TEMP_NAME = re.compile(r"^\.(?P<target>.+)\.[^.]+\.evalconv-tmp$")
KILL_AFTER_BYTES = 512 * 1024
WAIT_SECONDS = 60


def write_big_set(path: Path, copies: int) -> Path:
    """The golden set `copies` times over, with fresh ids (about 700 bytes a row)."""
    rows = [jsonvalue.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    with open(path, "w", encoding="utf-8", newline="") as out:
        for k in range(copies):
            for row in rows:
                row_id = f"{row['id']}-{k}"
                row = {**row, "id": row_id,
                       "metadata": {**row["metadata"], "case": {**row["metadata"]["case"], "caseId": row_id}}}
                out.write(jsonvalue.dumps(row) + "\n")
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if TEMP_NAME.match(p.name)]


def start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(evalconv_command() + [str(a) for a in args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def kill_when(process: subprocess.Popen, ready) -> None:
    """SIGKILL the process as soon as `ready()` holds; fail if it ends first."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not ready():
        if process.poll() is not None:
            pytest.fail(f"the conversion ended (exit {process.returncode}) before the kill: "
                        f"make the generated set larger\n{process.stderr.read().decode()}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("the conversion never started writing")
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.wait(WAIT_SECONDS)
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL


def growing_temp(folder: Path):
    return lambda: any(p.stat().st_size >= KILL_AFTER_BYTES for p in temp_files(folder) if p.exists())


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry.name))
    return out


def wait_for_no_workers(workers: list[int]) -> None:
    deadline = time.monotonic() + 10
    while [w for w in workers if Path(f"/proc/{w}").exists() and "Z" not in _state(w)]:
        assert time.monotonic() < deadline, "workers outlived their parent"
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"

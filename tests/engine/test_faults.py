"""Issue 7, faults: a conversion killed with SIGKILL mid-write leaves the old target or none, never
a torn one; the input is never touched; an interrupted folder conversion leaves every finished
file whole and a rerun completes the rest.

The conversions are real processes (the installed console script) on generated sets large enough
that the kill lands while the temporary file is growing.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from faultkit import GOLDEN, TEMP_NAME, WAIT_SECONDS, children, digest, growing_temp, kill_when, start, temp_files, wait_for_no_workers, write_big_set

from cli_process import evalconv_command

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


@pytest.fixture(scope="module")
def big_set(tmp_path_factory) -> Path:
    return write_big_set(tmp_path_factory.mktemp("in") / "big.jsonl", copies=3000)  # 30 000 rows, 21 MB


@pytest.mark.parametrize("to", ["csv", "json", "jsonl"])
@pytest.mark.parametrize("old", [None, b"the old file\n"], ids=["no-old-target", "old-target"])
def test_sigkill_mid_write_leaves_the_old_target_or_none(big_set, tmp_path, to, old):
    target = tmp_path / f"out.{to}"
    if old is not None:
        target.write_bytes(old)
    before = digest(big_set)
    process = start([big_set, "--from", "jsonl", "--to", to, "-o", target])
    kill_when(process, growing_temp(tmp_path))

    if old is None:
        assert not target.exists(), "a torn target was published"
    else:
        assert target.read_bytes() == old, "the old target was changed"
    assert digest(big_set) == before, "the input was changed"
    leftovers = [p.name for p in tmp_path.iterdir() if p != target]
    assert leftovers and all(TEMP_NAME.match(n) and TEMP_NAME.match(n)["target"] == target.name
                             for n in leftovers), leftovers


def test_a_rerun_cleans_the_temp_file_a_killed_run_left(big_set, tmp_path):
    target = tmp_path / "out.jsonl"
    kill_when(start([big_set, "--to", "jsonl", "-o", target]), growing_temp(tmp_path))
    assert temp_files(tmp_path)
    done = subprocess.run(evalconv_command() + [str(big_set), "--to", "jsonl", "-o", str(target)],
                          capture_output=True, timeout=WAIT_SECONDS)
    assert done.returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def open_files(pid: int) -> list[str]:
    try:
        return [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
    except OSError:
        return []


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads /proc")
def test_a_killed_parallel_conversion_leaves_no_worker_behind_nor_holding_its_temp_file(big_set, tmp_path):
    target = tmp_path / "out.csv"
    process = start([big_set, "--from", "jsonl", "--to", "csv", "-o", target])
    workers: list[int] = []

    def writing_with_workers() -> bool:
        workers[:] = children(process.pid)
        return len(workers) >= 2 and growing_temp(tmp_path)()

    deadline = time.monotonic() + WAIT_SECONDS
    while not writing_with_workers():
        assert process.poll() is None and time.monotonic() < deadline, "no parallel conversion to kill"
        time.sleep(0.002)
    temp = str(temp_files(tmp_path)[0])
    assert any(path == temp for path in open_files(process.pid))
    assert not [w for w in workers if temp in open_files(w)], "a worker holds the output's temp file"
    kill_when(process, lambda: True)
    wait_for_no_workers(workers)


def folder_of_sets(tmp_path: Path, files: int = 4, copies: int = 800) -> Path:
    source = tmp_path / "in"
    source.mkdir()
    for i in range(files):
        write_big_set(source / f"part{i}.jsonl", copies=copies)
    return source


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads /proc")
def test_a_killed_folder_conversion_leaves_no_worker_behind(tmp_path):
    outdir = tmp_path / "out"
    process = start([folder_of_sets(tmp_path), "--to", "jsonl", "-o", outdir, "-j", "2"])
    workers: list[int] = []

    def writing_with_workers() -> bool:
        workers[:] = children(process.pid)
        return len(workers) >= 2 and growing_temp(tmp_path)()

    kill_when(process, writing_with_workers)
    wait_for_no_workers(workers)


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads /proc")
@pytest.mark.parametrize("run", ["one large file", "a folder with -j 2"])
@pytest.mark.parametrize("whom", ["process group", "parent only"])
def test_ctrl_c_stops_workers_quietly_with_exit_130_and_leaves_no_temp_file(big_set, tmp_path, run, whom):
    # JSONL streams into its temp file from the start; the CSV writer (it learns its columns from
    # every row) writes its temp file only at the end, where the signal can miss the run under load.
    if run == "one large file":
        args, target = [big_set, "--from", "jsonl", "--to", "jsonl", "-o", tmp_path / "out.jsonl"], tmp_path / "out.jsonl"
    else:
        args, target = [folder_of_sets(tmp_path), "--to", "jsonl", "-o", tmp_path / "out", "-j", "2"], None
    process = subprocess.Popen(evalconv_command() + [str(a) for a in args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    workers: list[int] = []
    deadline = time.monotonic() + WAIT_SECONDS
    while not (len(workers) >= 2 and growing_temp(tmp_path)()):
        assert process.poll() is None and time.monotonic() < deadline, "nothing to interrupt"
        workers[:] = children(process.pid)
        time.sleep(0.002)
    if whom == "process group":  # what a terminal's Ctrl-C does
        os.killpg(process.pid, signal.SIGINT)
    else:
        os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 130
    assert err.decode().strip() == "evalconv: interrupted"
    wait_for_no_workers(workers)
    assert temp_files(tmp_path) == []
    assert target is None or not target.exists()


def test_interrupted_folder_conversion_keeps_finished_files_whole_and_a_rerun_completes(tmp_path):
    source = tmp_path / "in"
    source.mkdir()
    names = [f"part{i}" for i in range(4)]
    for name in names:
        write_big_set(source / f"{name}.jsonl", copies=800)  # 8 000 rows each
    inputs = {name: digest(source / f"{name}.jsonl") for name in names}
    outdir = tmp_path / "out"

    def outputs() -> list[Path]:
        return [outdir / f"{n}.csv" for n in names if (outdir / f"{n}.csv").exists()]

    process = start([source, "--to", "csv", "-o", outdir, "--jobs", "1"])
    kill_when(process, lambda: len(outputs()) >= 1 and growing_temp(outdir)())

    expected = {}
    for name in names:  # the same file converted on its own, uninterrupted
        alone = tmp_path / "alone" / f"{name}.csv"
        alone.parent.mkdir(exist_ok=True)
        subprocess.run(evalconv_command() + [str(source / f"{name}.jsonl"), "--to", "csv", "-o", str(alone)],
                       check=True, capture_output=True, timeout=WAIT_SECONDS)
        expected[name] = alone.read_bytes()
    finished = outputs()
    assert 1 <= len(finished) < len(names)
    for path in finished:
        assert path.read_bytes() == expected[path.stem], f"{path.name} is torn"

    rerun = subprocess.run(evalconv_command() + [str(source), "--to", "csv", "-o", str(outdir)],
                           capture_output=True, text=True, timeout=WAIT_SECONDS)
    assert rerun.returncode == 0, rerun.stderr
    assert "Traceback" not in rerun.stderr
    for name in names:
        assert (outdir / f"{name}.csv").read_bytes() == expected[name]
        assert digest(source / f"{name}.jsonl") == inputs[name]
    assert {p.name for p in outdir.iterdir() if not TEMP_NAME.match(p.name)} == {f"{n}.csv" for n in names}


@pytest.mark.parametrize("how", ["same-path", "hard-link", "symlink", "folder-into-itself"])
def test_the_input_is_never_overwritten(tmp_path, how):
    folder = tmp_path / "in"
    folder.mkdir()
    source = folder / "set.jsonl"
    source.write_bytes(GOLDEN.read_bytes())
    before = digest(source)
    target = {"same-path": source, "hard-link": tmp_path / "link.jsonl",
              "symlink": tmp_path / "sym.jsonl", "folder-into-itself": folder}[how]
    if how == "hard-link":
        os.link(source, target)
    elif how == "symlink":
        os.symlink(source, target)
    run_on = folder if how == "folder-into-itself" else source
    done = subprocess.run(evalconv_command() + [str(run_on), "--to", "jsonl", "-o", str(target)],
                          capture_output=True, text=True, timeout=WAIT_SECONDS)
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr
    assert "never overwrites its input" in done.stderr
    assert digest(source) == before and sorted(os.listdir(folder)) == ["set.jsonl"]


def test_a_sweep_between_close_and_rename_cannot_lose_a_finished_output(tmp_path, monkeypatch):
    from evalconv import atomic

    target = tmp_path / "out.jsonl"
    real_replace = os.replace

    def another_run_sweeps_first(src, dst):
        atomic.sweep_stale(str(tmp_path), target.name)
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", another_run_sweeps_first)
    with atomic.AtomicOutput(str(target)) as out:
        out.stream.write("row\n")
        out.commit()
    assert target.read_text() == "row\n"


def test_a_live_temp_file_is_not_swept(tmp_path):
    from evalconv import atomic

    target = tmp_path / "out.jsonl"
    with atomic.AtomicOutput(str(target)) as out:
        out.stream.write("row\n")
        atomic.sweep_stale(str(tmp_path), target.name)  # another run starting meanwhile
        out.commit()
    assert target.read_text() == "row\n" and os.listdir(tmp_path) == [target.name]

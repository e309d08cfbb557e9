"""Issue 23 items 1, 2 and 9: `--to hf -o DIR` never deletes a file evalconv did not write, never
loses the old dataset when the swap fails, and a later run sweeps what a killed run left, only
when it can prove the leftover is a dead run's."""
from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evalconv
from conftest import ROOT, run_cli
from evalconv import _stopping as atomic_stopping
from evalconv import atomic
from faultkit import WAIT_SECONDS, kill_when, start, write_big_set
from cli_process import evalconv_command

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="flock, signals and strace are Linux here")

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
GOLDEN_IDS = [r.id for r in evalconv.read(str(GOLDEN)).rows]


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under the folder: a file's digest, a link's target, a folder's mark."""
    out = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            out[name] = "-> " + os.readlink(path)
        elif path.is_dir():
            out[name] = "dir"
        else:
            out[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.endswith(atomic.SUFFIX))


@pytest.fixture
def old_dataset(tmp_path) -> Path:
    """A dataset folder evalconv wrote from the golden set (10 rows)."""
    out = tmp_path / "ds"
    assert evalconv.convert(str(GOLDEN), str(out), to="hf").exit_code == 0
    return out


@pytest.fixture
def new_set(write_jsonl) -> Path:
    from conftest import row
    return write_jsonl([row("new-1"), row("new-2")], "new.jsonl")


def ids_in(folder: Path) -> list[str]:
    return [r.id for r in evalconv.read(str(folder), from_="hf").rows]


# --- item 1: a folder is evalconv's to replace only if it can prove it wrote it -----------------

def test_hf_writer_refuses_a_folder_whose_readme_merely_says_written_by_evalconv(tmp_path, capsys):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "README.md").write_text("# Tools\n\nOur golden sets are written by evalconv.\n")
    (project / "src" / "app.py").write_text("print('hi')\n")
    (project / "notes.txt").write_text("keep me\n")
    before = snapshot(project)
    code, err = run_cli([str(GOLDEN), "--to", "hf", "-o", str(project)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "holds files evalconv did not write (README.md, notes.txt, src/app.py)" in err and str(project) in err
    assert snapshot(project) == before and leftovers(tmp_path) == []


@pytest.mark.parametrize("added", ["notes.txt", "data/extra.parquet", "data/nested/x.txt", "empty-folder/",
                                   "link-to-elsewhere"])
def test_hf_writer_refuses_its_own_folder_once_a_foreign_file_is_added(old_dataset, tmp_path, new_set, capsys, added):
    if added.endswith("/"):
        (old_dataset / added).mkdir()
    elif added.startswith("link"):
        (old_dataset / added).symlink_to(tmp_path)
    else:
        (old_dataset / added).parent.mkdir(parents=True, exist_ok=True)
        (old_dataset / added).write_text("mine")
    before = snapshot(old_dataset)
    code, err = run_cli([str(new_set), "--to", "hf", "-o", str(old_dataset)], capsys)
    assert code == 2 and f"holds files evalconv did not write ({added})" in err, err
    assert snapshot(old_dataset) == before and leftovers(tmp_path) == []


@pytest.mark.parametrize("edited", ["README.md", "data/test-00000-of-00001.parquet"])
def test_hf_writer_refuses_its_own_folder_once_a_file_in_it_is_edited(old_dataset, tmp_path, new_set, capsys, edited):
    with open(old_dataset / edited, "ab") as f:
        f.write(b"\n")
    before = snapshot(old_dataset)
    code, err = run_cli([str(new_set), "--to", "hf", "-o", str(old_dataset)], capsys)
    assert code == 2 and f"holds files changed since evalconv wrote them ({edited})" in err, err
    assert snapshot(old_dataset) == before


def test_hf_writer_replaces_its_own_folder_and_a_copy_of_it(old_dataset, tmp_path, new_set, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(old_dataset, copy)  # the files are what the manifest says, wherever they are
    for target in (old_dataset, copy):
        code, err = run_cli([str(new_set), "--to", "hf", "-o", str(target)], capsys)
        assert code == 0, err
        assert ids_in(target) == ["new-1", "new-2"]
    assert leftovers(tmp_path) == []


def test_hf_writer_replaces_a_folder_the_previous_release_wrote(old_dataset, tmp_path, new_set, capsys):
    """That release wrote no manifest: its folder is replaced only while every file in it is its
    card (the YAML header it wrote, not just the words) or a Parquet data file."""
    (old_dataset / atomic.MANIFEST).unlink()
    card = old_dataset / "README.md"  # that release's card: its splits had no num_bytes
    card.write_text("".join(line for line in card.read_text().splitlines(keepends=True)
                            if not line.lstrip().startswith("num_bytes:")))
    code, err = run_cli([str(new_set), "--to", "hf", "-o", str(old_dataset)], capsys)
    assert code == 0, err
    assert ids_in(old_dataset) == ["new-1", "new-2"] and (old_dataset / atomic.MANIFEST).is_file()


@pytest.mark.parametrize("damage", ["an extra file", "a card without its header", "a data file that is not Parquet"])
def test_hf_writer_refuses_a_previous_release_folder_holding_anything_else(old_dataset, new_set, capsys, damage):
    (old_dataset / atomic.MANIFEST).unlink()
    if damage == "an extra file":
        (old_dataset / "data" / "notes.md").write_text("mine")
        named = "data/notes.md"
    elif damage == "a card without its header":
        (old_dataset / "README.md").write_text("Our sets are written by evalconv.\n")
        named = "README.md"
    else:
        (old_dataset / "data" / "test-00000-of-00001.parquet").write_text("not parquet")
        named = "data/test-00000-of-00001.parquet"
    before = snapshot(old_dataset)
    code, err = run_cli([str(new_set), "--to", "hf", "-o", str(old_dataset)], capsys)
    assert code == 2 and f"holds files evalconv did not write ({named})" in err, err
    assert snapshot(old_dataset) == before


def test_hf_writer_refusal_names_at_most_a_few_files(tmp_path, capsys):
    full = tmp_path / "full"
    full.mkdir()
    for i in range(12):
        (full / f"f{i:02}.txt").write_text("x")
    code, err = run_cli([str(GOLDEN), "--to", "hf", "-o", str(full)], capsys)
    assert code == 2 and "(f00.txt, f01.txt, f02.txt, f03.txt, f04.txt and 7 more)" in err, err
    assert len(os.listdir(full)) == 12


def test_hf_writer_rechecks_the_folder_once_moved_aside_and_puts_it_back(old_dataset, tmp_path, new_set,
                                                                          monkeypatch, capsys):
    """A file that lands between the check and the swap is not lost: the folder moved aside is
    listed again, and put back when it is not the one checked."""
    real_rename = os.rename

    def file_arrives_first(src, dst):
        if Path(src) == old_dataset:
            (old_dataset / "late.txt").write_text("arrived during the run")
        real_rename(src, dst)

    monkeypatch.setattr(atomic.os, "rename", file_arrives_first)
    code, err = run_cli([str(new_set), "--to", "hf", "-o", str(old_dataset)], capsys)
    assert code == 2 and "files arrived in the folder while the dataset was written" in err, err
    assert (old_dataset / "late.txt").read_text() == "arrived during the run"
    assert ids_in(old_dataset) == GOLDEN_IDS and leftovers(tmp_path) == []


# --- item 2: the old dataset survives until the new one is in place ------------------------------

def failing_rename(monkeypatch, failing: set[int]) -> list[tuple[str, str]]:
    """os.rename in atomic raising EIO at the given calls (1-based); the calls are recorded."""
    calls: list[tuple[str, str]] = []
    real_rename = os.rename

    def rename(src, dst):
        calls.append((str(src), str(dst)))
        if len(calls) in failing:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_rename(src, dst)

    monkeypatch.setattr(atomic.os, "rename", rename)
    return calls


@pytest.mark.parametrize("step", [1, 2], ids=["moving-the-old-aside", "renaming-the-new-in"])
def test_replacing_an_hf_dataset_keeps_the_old_one_when_a_rename_fails(old_dataset, tmp_path, new_set,
                                                                      monkeypatch, capsys, step):
    before = snapshot(old_dataset)
    calls = failing_rename(monkeypatch, {step})
    code, err = run_cli([str(new_set), "--to", "hf", "-o", str(old_dataset)], capsys)
    assert code == 2 and err.strip().endswith("cannot write here: Input/output error"), err
    assert len(calls) == (1 if step == 1 else 3)  # aside, in (EIO), back
    assert snapshot(old_dataset) == before and leftovers(tmp_path) == []


def test_a_failed_swap_whose_undo_fails_too_keeps_the_old_dataset_and_says_where(old_dataset, tmp_path, new_set,
                                                                                 monkeypatch, capsys):
    before = snapshot(old_dataset)
    failing_rename(monkeypatch, {2, 3})
    code, err = run_cli([str(new_set), "--to", "hf", "-o", str(old_dataset)], capsys)
    assert code == 2 and "the previous folder is kept in " in err, err
    kept = Path(err.strip().rsplit("the previous folder is kept in ", 1)[1])
    assert kept.parent.parent == tmp_path and snapshot(kept) == before and not old_dataset.exists()
    monkeypatch.undo()
    os.utime(kept.parent / atomic.OWNER, (time.time() - 60,) * 2)  # as if that run ended a while ago
    atomic.sweep_stale_folders(str(tmp_path), old_dataset.name)  # what the next run does first
    assert snapshot(old_dataset) == before and leftovers(tmp_path) == []


def test_a_sigterm_between_the_renames_never_leaves_no_dataset(old_dataset, tmp_path, new_set, monkeypatch, capsys):
    """A real SIGTERM sent to this process right after the old folder is moved aside: it lands
    once the swap is complete (signals are held for the two renames), so the target always holds
    a whole dataset, and nothing is left beside it."""
    real_rename = os.rename

    def term_after_moving_aside(src, dst):
        real_rename(src, dst)
        if Path(src) == old_dataset:
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(atomic.os, "rename", term_after_moving_aside)
    code, err = run_cli([str(new_set), "--to", "hf", "-o", str(old_dataset)], capsys)
    assert code == 143 and "evalconv: terminated" in err, err
    assert ids_in(old_dataset) in (GOLDEN_IDS, ["new-1", "new-2"]) and leftovers(tmp_path) == []


def test_regression_a_sigterm_during_the_clean_up_left_the_temporary_folder(old_dataset, tmp_path, new_set,
                                                                            monkeypatch, capsys):
    """CI once ran the test above with the SIGTERM taken by another thread of the test worker: the
    handler then runs in the main thread whatever its mask, here in the removal of the temporary
    folder after the swap, and that folder stayed. Now the removal is finished, then the run stops."""
    real_rmtree = shutil.rmtree
    cut_short = []

    def rmtree_interrupted_once(path, *args, **kwargs):
        if not cut_short:
            cut_short.append(path)
            entries = sorted(os.listdir(path))
            real_rmtree(os.path.join(path, entries[0]), ignore_errors=True)  # part of the way, then the signal
            raise atomic_stopping.Terminated()
        return real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(atomic.shutil, "rmtree", rmtree_interrupted_once)
    code, err = run_cli([str(new_set), "--to", "hf", "-o", str(old_dataset)], capsys)
    assert cut_short and code == 143 and "evalconv: terminated" in err, err
    assert ids_in(old_dataset) == ["new-1", "new-2"] and leftovers(tmp_path) == []


STRACE = shutil.which("strace")


def strace_run(args: list, inject: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real console script under strace, its rename system calls tampered with."""
    if STRACE is None:
        pytest.skip("strace is not installed")
    calls = "rename,renameat,renameat2"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no .pyc renames: ours are the only ones
    done = subprocess.run([STRACE, "-f", "-qq", "-o", str(cwd / "strace.log"), "-e", f"trace={calls}",
                           "-e", f"inject={calls}:{inject}"] + evalconv_command() + [str(a) for a in args],
                          capture_output=True, text=True, timeout=WAIT_SECONDS, env=env, cwd=cwd)
    if "PTRACE" in done.stderr or "Operation not permitted" in done.stderr:
        pytest.skip(f"strace cannot trace here: {done.stderr.strip()}")
    return done


@pytest.mark.parametrize("when", ["1", "2"], ids=["moving-the-old-aside", "renaming-the-new-in"])
def test_strace_eio_on_a_rename_keeps_the_old_dataset(old_dataset, tmp_path, new_set, when):
    before = snapshot(old_dataset)
    done = strace_run([new_set, "--to", "hf", "-o", old_dataset], f"error=EIO:when={when}", tmp_path)
    assert done.returncode == 2 and done.stderr.strip().endswith("cannot write here: Input/output error"), done.stderr
    assert "(INJECTED)" in (tmp_path / "strace.log").read_text()
    assert snapshot(old_dataset) == before and leftovers(tmp_path) == []


def test_strace_sigkill_between_the_renames_leaves_the_old_dataset_for_the_next_run(old_dataset, tmp_path, new_set):
    """Killed (a real SIGKILL, from strace) as it renames the new folder in: the old one is in
    the temporary folder and the target is gone. The next run puts it back before anything else,
    then replaces it as asked."""
    before = snapshot(old_dataset)
    done = strace_run([new_set, "--to", "hf", "-o", old_dataset], "signal=KILL:when=2", tmp_path)
    assert done.returncode == -signal.SIGKILL or done.returncode == 128 + signal.SIGKILL, done.stderr
    assert not old_dataset.exists()
    [temp] = leftovers(tmp_path)
    assert snapshot(tmp_path / temp / "previous") == before
    os.utime(tmp_path / temp / atomic.OWNER, (time.time() - 60,) * 2)
    atomic.sweep_stale_folders(str(tmp_path), old_dataset.name)
    assert snapshot(old_dataset) == before and leftovers(tmp_path) == []
    # and once more, killed again, with the next run itself doing the sweep
    strace_run([new_set, "--to", "hf", "-o", old_dataset], "signal=KILL:when=2", tmp_path)
    [temp] = leftovers(tmp_path)
    os.utime(tmp_path / temp / atomic.OWNER, (time.time() - 60,) * 2)
    again = subprocess.run(evalconv_command() + [str(new_set), "--to", "hf", "-o", str(old_dataset)],
                           capture_output=True, text=True, timeout=WAIT_SECONDS)
    assert again.returncode == 0, again.stderr
    assert ids_in(old_dataset) == ["new-1", "new-2"] and leftovers(tmp_path) == []


# --- item 9: what a killed run left is swept, only when provably a dead run's --------------------

@pytest.fixture(scope="module")
def big_set(tmp_path_factory) -> Path:
    return write_big_set(tmp_path_factory.mktemp("in") / "big.jsonl", copies=3000)  # 30 000 rows


def parquet_growing(parent: Path):
    def ready() -> bool:
        return any(p.stat().st_size > 0 for p in parent.glob(f".*{atomic.SUFFIX}/dataset/data/*.parquet")
                   if p.exists())
    return ready


def test_a_sigkilled_hf_conversion_leaves_a_temp_folder_the_next_run_sweeps(big_set, tmp_path):
    target = tmp_path / "ds"
    kill_when(start([big_set, "--to", "hf", "-o", target]), parquet_growing(tmp_path))
    [temp] = leftovers(tmp_path)
    owner = json.loads((tmp_path / temp / atomic.OWNER).read_text())
    assert owner["target"] == "ds" and not target.exists()
    os.utime(tmp_path / temp / atomic.OWNER, (time.time() - 60,) * 2)  # the run ended a minute ago
    done = subprocess.run(evalconv_command() + [str(GOLDEN), "--to", "hf", "-o", str(target)],
                          capture_output=True, text=True, timeout=WAIT_SECONDS)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path)) == ["ds"] and ids_in(target) == GOLDEN_IDS


def test_a_live_runs_temp_folder_is_never_swept(big_set, tmp_path):
    """Its lock is held and its process is running: even an old marker does not make it stale."""
    process = start([big_set, "--to", "hf", "-o", tmp_path / "ds"])
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while not parquet_growing(tmp_path)():
            assert process.poll() is None and time.monotonic() < deadline, "the run ended before the check"
            time.sleep(0.005)
        [temp] = leftovers(tmp_path)
        os.utime(tmp_path / temp / atomic.OWNER, (time.time() - 3600,) * 2)
        atomic.sweep_stale_folders(str(tmp_path), "ds")
        assert leftovers(tmp_path) == [temp]
    finally:
        process.kill()
        process.wait(WAIT_SECONDS)
        process.stderr.close()


@pytest.mark.parametrize("what", ["no marker", "a marker for another target", "a marker that is not ours",
                                  "a file, not a folder"])
def test_a_temp_folder_evalconv_did_not_mark_is_never_swept(tmp_path, capsys, what):
    stale = tmp_path / f".ds.mine{atomic.SUFFIX}"
    if what == "a file, not a folder":
        stale.write_text("mine")
    else:
        stale.mkdir()
        (stale / "notes.txt").write_text("mine")
        if what != "no marker":
            owner = {"evalconv": atomic.OWNER_SAYS, "target": "other", "pid": 1 << 22, "host": os.uname().nodename}
            if what == "a marker that is not ours":
                owner = {"target": "ds", "pid": 1 << 22}
            (stale / atomic.OWNER).write_text(json.dumps(owner))
    old = time.time() - 86400
    for path in [stale, *stale.rglob("*")] if stale.is_dir() else [stale]:
        os.utime(path, (old, old))
    before = snapshot(tmp_path)
    code, err = run_cli([str(GOLDEN), "--to", "hf", "-o", str(tmp_path / "ds")], capsys)
    assert code == 0, err
    after = snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("ds")} == before

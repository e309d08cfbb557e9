"""Issue 15: the reliability probes, each reproduced on a real process. Special files are never
replaced; an input that changes under a run fails it; standard input redirected from the target
counts as the input; a full disk leaves no temp file and names the output; side outputs publish
with the main output or not at all; the stdout spool is unnamed and fails cleanly; SIGTERM is
Ctrl-C with exit 143; no Ctrl-C traceback, during start-up or under a burst of signals; a closed
stdout; a JSONL file holding only a BOM.

Probes that need root (mount, mknod) skip with the reason when not root; CI runs as root.
Nothing here asserts a duration: every wait is a generous deadline on an observable state.
"""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT
from faultkit import TEMP_NAME, WAIT_SECONDS, children, temp_files, wait_for_no_workers, write_big_set
from cli_process import evalconv_command

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="POSIX signals, /proc and special files")

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mount, mknod); CI runs as root")
VENDORS = ["promptfoo", "deepeval", "langsmith", "braintrust"]
SUFFIX = {"csv": ".csv", "json": ".json", "jsonl": ".jsonl", "promptfoo": ".yaml", "deepeval": ".json",
          "langsmith": ".jsonl", "braintrust": ".jsonl"}


def run(args: list, *, stdin=None, env=None, timeout: float = WAIT_SECONDS, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(evalconv_command() + [str(a) for a in args], stdin=stdin, capture_output=True,
                          env=env, timeout=timeout, **kwargs)


def one_line(stderr: bytes) -> str:
    text = stderr.decode()
    assert "Traceback" not in text, text
    lines = [line for line in text.splitlines() if line.startswith("evalconv: ")]
    assert len(lines) == 1, text
    return lines[0]


@pytest.fixture(scope="module")
def big_set(tmp_path_factory) -> Path:
    """Large enough (21 MB) for the parallel path and for a signal to land mid-run."""
    return write_big_set(tmp_path_factory.mktemp("probe-in") / "big.jsonl", copies=3000)


@pytest.fixture(scope="module")
def small_set(tmp_path_factory) -> Path:
    return write_big_set(tmp_path_factory.mktemp("probe-small") / "set.jsonl", copies=100)  # 700 KB


def expected_output(source: Path, to: str, tmp_path: Path) -> bytes:
    plain = tmp_path / f"expected.{to}"
    assert run([source, "--to", to, "-o", plain]).returncode == 0
    return plain.read_bytes()


# 1. Special files are written through, or refused; never replaced. ------------------------------

def mknod(path: Path, mode: int, device: int) -> None:
    try:
        os.mknod(path, mode, device)
    except PermissionError as err:  # root in a container without CAP_MKNOD
        pytest.skip(f"cannot make device nodes here: {err}")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_dev_full_is_a_disk_full_error_and_stays_a_device(small_set):
    done = run([small_set, "--to", "csv", "-o", "/dev/full"])
    assert done.returncode == 2
    assert one_line(done.stderr) == "evalconv: error: /dev/full: cannot write: No space left on device"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert not [n for n in os.listdir("/dev") if TEMP_NAME.match(n)]


@ROOT_ONLY
@pytest.mark.parametrize("device", [(1, 3), (1, 7)], ids=["like-dev-null", "like-dev-full"])
def test_a_character_device_is_written_through_never_replaced(small_set, tmp_path, device):
    target = tmp_path / "device"
    mknod(target, 0o666 | stat.S_IFCHR, os.makedev(*device))
    done = run([small_set, "--to", "json", "-o", target])
    assert done.returncode == (0 if device == (1, 3) else 2), done.stderr
    assert stat.S_ISCHR(os.stat(target).st_mode), "the device was replaced"
    assert os.listdir(tmp_path) == ["device"]


@ROOT_ONLY
def test_a_block_device_is_refused_in_one_line(small_set, tmp_path):
    target = tmp_path / "disk"
    mknod(target, 0o600 | stat.S_IFBLK, os.makedev(7, 250))  # a loop device node; never opened
    done = run([small_set, "--to", "csv", "-o", target])
    assert done.returncode == 2
    assert "is a block device" in one_line(done.stderr)
    assert stat.S_ISBLK(os.stat(target).st_mode) and os.listdir(tmp_path) == ["disk"]


def test_a_fifo_gets_the_whole_output_and_stays_a_fifo(small_set, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = run([small_set, "--to", "csv", "-o", fifo])
    reader.join(WAIT_SECONDS)
    assert done.returncode == 0, done.stderr
    assert received == [expected_output(small_set, "csv", tmp_path)]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert not temp_files(tmp_path)


def test_a_failed_conversion_sends_a_fifo_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "input": "x"}\nnot json\n', encoding="utf-8")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = run([bad, "--to", "csv", "-o", fifo])  # fails before it would open the FIFO (no reader: it would block)
    assert done.returncode == 1 and "nothing written" in done.stderr.decode()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("stdout", ["file", "pipe"])
def test_dev_stdout_is_standard_output(small_set, tmp_path, stdout):
    expected = expected_output(small_set, "jsonl", tmp_path)
    if stdout == "file":
        with open(tmp_path / "captured", "wb") as out:
            done = subprocess.run(evalconv_command() + [str(small_set), "--to", "jsonl", "-o", "/dev/stdout"],
                                  stdout=out, stderr=subprocess.PIPE, timeout=WAIT_SECONDS)
        got = (tmp_path / "captured").read_bytes()
    else:
        done = run([small_set, "--to", "jsonl", "-o", "/dev/stdout"])
        got = done.stdout
    assert done.returncode == 0, done.stderr
    assert got == expected
    assert os.path.islink("/dev/stdout") or not os.path.isfile("/dev/stdout")


def test_a_symlinked_target_keeps_its_link(small_set, tmp_path):
    real = tmp_path / "v3.csv"
    real.write_text("old\n")
    link = tmp_path / "current.csv"
    link.symlink_to(real.name)
    assert run([small_set, "--to", "csv", "-o", link]).returncode == 0
    assert link.is_symlink() and real.read_bytes() == expected_output(small_set, "csv", tmp_path)


# 2. An input that changes under the run fails it, and nothing is written. ------------------------

def test_truncating_the_input_mid_run_fails_the_parallel_conversion(big_set, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_bytes(big_set.read_bytes())
    target = tmp_path / "out" / "set.jsonl"  # JSONL streams into its temp file; CSV writes it only at the end
    target.parent.mkdir()
    process = subprocess.Popen(evalconv_command() + [str(source), "--to", "jsonl", "-o", str(target)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + WAIT_SECONDS
    while not (len(children(process.pid)) >= 2 and temp_files(target.parent)):  # workers running, writing
        assert process.poll() is None, "the conversion ended before the input was truncated: make the set larger"
        assert time.monotonic() < deadline, "the parallel conversion never started"
        time.sleep(0.002)
    os.truncate(source, 0)  # the racing writer
    _, err = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 2
    assert "the file changed while it was read" in one_line(err)
    assert os.listdir(target.parent) == []


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_input_cut_short_mid_run_is_not_a_complete_conversion(big_set, tmp_path, jobs):
    """The truncation lands on a line end, where a serial reader sees a shorter, valid set."""
    source = tmp_path / "in.jsonl"
    data = big_set.read_bytes()
    source.write_bytes(data)
    cut = data.index(b"\n", len(data) // 3) + 1
    target = tmp_path / "out" / "set.jsonl"
    target.parent.mkdir()
    process = subprocess.Popen(evalconv_command() + [str(source), "--to", "jsonl", "-o", str(target), "-j", jobs],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + WAIT_SECONDS
    while not temp_files(target.parent):
        assert process.poll() is None, "the conversion ended before the input was cut: make the set larger"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    os.truncate(source, cut)
    _, err = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 2, err.decode()
    assert "the file changed while it was read" in one_line(err)
    assert os.listdir(target.parent) == []


def test_a_chunk_read_after_the_file_shrank_is_refused(big_set, tmp_path):
    """The same, without a race: the file shrinks after the workers took their first chunks."""
    from evalconv.engine import parallel
    from evalconv.canonical.validator import Validator
    from evalconv.sources import InputChanged

    source = tmp_path / "in.jsonl"
    source.write_bytes(big_set.read_bytes())
    with parallel.Workers(str(source), label="in.jsonl", to="csv", options={}, jobs=2) as workers:
        os.truncate(source, source.stat().st_size // 2)
        with pytest.raises(InputChanged, match="it is now"):
            for _ in workers.checked(Validator(source="in.jsonl")):
                pass


def test_truncating_the_input_mid_run_fails_parallel_stats(big_set, tmp_path):
    """`stats` reads a large JSONL file in worker processes too: the same check, the same line."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(big_set.read_bytes())
    process = subprocess.Popen(evalconv_command() + ["stats", str(source), "-j", "2"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + WAIT_SECONDS
    while len(children(process.pid)) < 2:  # the workers are counting
        assert process.poll() is None, "stats ended before the input was truncated: make the set larger"
        assert time.monotonic() < deadline, "the parallel count never started"
        time.sleep(0.002)
    os.truncate(source, 0)  # the racing writer
    _, err = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 2, err.decode()
    line = one_line(err)
    assert "the file changed while it was read" in line and "in.jsonl" in line


def test_a_stats_chunk_read_after_the_file_shrank_is_refused(big_set, tmp_path, monkeypatch):
    """The same, without a race: the file shrinks once the parent has added up the first chunk,
    so a later chunk, or the last look at the file, finds it changed."""
    from evalconv.coverage import stats as stats_module
    from evalconv.sources import InputChanged
    from evalconv.engine.counting import Counting, count_in_chunks

    source = tmp_path / "in.jsonl"
    source.write_bytes(big_set.read_bytes())
    merge = stats_module._Counter.merge

    def merge_then_shrink(self, other, line_base):
        merge(self, other, line_base)
        if source.stat().st_size == big_set.stat().st_size:
            os.truncate(source, source.stat().st_size // 2)

    monkeypatch.setattr(stats_module._Counter, "merge", merge_then_shrink)
    counter = stats_module._Counter(list(stats_module.DEFAULT_SLICES), [], stats_module.DEFAULT_SAMPLES)
    with pytest.raises(InputChanged, match="it is now"):
        count_in_chunks(counter, str(source), stats_module.FileStats("in.jsonl"), 2,
                        Counting(stats_module.chunk_counter, stats_module.count_sources))


# 3. Standard input redirected from a file is the input. -------------------------------------------

@pytest.mark.parametrize("how", ["-o", "stdout >>"])
def test_standard_input_redirected_from_the_target_is_refused(tmp_path, how):
    source = tmp_path / "in.jsonl"
    source.write_bytes(GOLDEN.read_bytes())
    before = source.read_bytes()
    with open(source, "rb") as stdin:
        if how == "-o":
            done = run(["-", "--from", "jsonl", "--to", "csv", "-o", source], stdin=stdin)
        else:
            with open(source, "ab") as stdout:
                done = subprocess.run(evalconv_command() + ["-", "--from", "jsonl", "--to", "csv"], stdin=stdin,
                                      stdout=stdout, stderr=subprocess.PIPE, timeout=WAIT_SECONDS)
    assert done.returncode == 2
    assert "never overwrites its input" in one_line(done.stderr)
    assert source.read_bytes() == before


def test_standard_input_from_a_pipe_still_converts(tmp_path):
    target = tmp_path / "out.csv"
    done = run(["-", "--from", "jsonl", "--to", "csv", "-o", target], input=GOLDEN.read_bytes())
    assert done.returncode == 0 and target.read_bytes() == expected_output(GOLDEN, "csv", tmp_path)


# 4-6. A full disk, side outputs, the stdout spool. ---------------------------------------------

@pytest.fixture
def mount_tmpfs(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; CI runs as root")
    mounted: list[Path] = []

    def mount(name: str, size: str = "256k", read_only: bool = False) -> Path:
        point = tmp_path / name
        point.mkdir()
        options = f"size={size}" + (",ro" if read_only else "")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], capture_output=True)
        if done.returncode:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def fill(folder: Path, leave: int = 0) -> None:
    """Leave `leave` bytes of room (the inode table keeps room: creating a file works)."""
    with open(folder / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
        f.truncate(max(0, f.tell() - leave))


@pytest.mark.parametrize("to", ["csv", "json", "jsonl", *VENDORS])
@pytest.mark.parametrize("old", [False, True], ids=["new-target", "old-target"])
def test_a_full_disk_leaves_no_temp_file_and_names_the_output(small_set, mount_tmpfs, to, old):
    disk = mount_tmpfs("disk")
    target = disk / f"set{SUFFIX[to]}"
    if old:
        target.write_bytes(b"old\n")
    done = run([small_set, "--to", to, "-o", target])
    assert done.returncode == 2
    assert one_line(done.stderr) == f"evalconv: error: {target}: cannot write: No space left on device"
    assert os.listdir(disk) == ([target.name] if old else [])
    assert not old or target.read_bytes() == b"old\n"


def side_output_args(kind: str, where: Path, tmp_path: Path) -> tuple[list, Path]:
    if kind == "--report":
        return [GOLDEN, "--to", "jsonl", "--report", where / "report.json"], where / "report.json"
    if kind == "--ledger":
        bad = tmp_path / "with-bad-row.jsonl"
        bad.write_bytes(GOLDEN.read_bytes() + b'{"id": "broken"}\n')
        return [bad, "--to", "jsonl", "--keep-going", "--ledger", where / "rejected.jsonl"], where / "rejected.jsonl"
    return [GOLDEN, "--to", "promptfoo", "--config", where / "promptfooconfig.yaml"], where / "promptfooconfig.yaml"


@pytest.mark.parametrize("kind", ["--report", "--ledger", "--config"])
@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_a_side_output_that_cannot_be_written_publishes_nothing(mount_tmpfs, tmp_path, kind, fault):
    where = mount_tmpfs("side", read_only=fault == "read-only")
    if fault == "full":
        fill(where)
    main = tmp_path / "main" / ("tests.yaml" if kind == "--config" else "tests.jsonl")
    main.parent.mkdir()
    main.write_bytes(b"old\n")
    args, side = side_output_args(kind, where, tmp_path)
    done = run([*args, "-o", main])
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert str(side) in line and ("No space left" in line or "Read-only" in line), line
    assert main.read_bytes() == b"old\n", "the main output was published without its side output"
    assert os.listdir(main.parent) == [main.name]
    assert sorted(os.listdir(where)) == (["filler"] if fault == "full" else [])


def test_outputs_published_together_say_what_was_written_when_a_late_one_fails(tmp_path, monkeypatch):
    from evalconv import atomic
    from evalconv.canonical.errors import WriteError

    first, second = tmp_path / "out.jsonl", tmp_path / "report.json"
    real_replace = os.replace

    def folder_gone_for_the_second(src, dst):
        if dst == str(second):
            raise FileNotFoundError(2, "No such file or directory")
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", folder_gone_for_the_second)
    with pytest.raises(WriteError) as caught:
        with atomic.together():
            for path in (first, second):
                with atomic.AtomicOutput(str(path)) as out:
                    out.stream.write("x\n")
                    out.commit()
    assert caught.value.render() == (f"{second}: cannot write: No such file or directory; "
                                     f"written: {first}; not written: {second}")
    assert first.read_text() == "x\n" and os.listdir(tmp_path) == [first.name]


def test_a_full_tmpdir_fails_the_stdout_spool_cleanly(small_set, mount_tmpfs):
    spool = mount_tmpfs("spool")
    fill(spool, leave=16 * 1024)  # room for Python's check that TMPDIR is writable, not for the spool
    done = run([small_set, "--to", "json"], env={**os.environ, "TMPDIR": str(spool)})
    assert done.returncode == 2 and done.stdout == b""
    assert one_line(done.stderr).startswith(f"evalconv: error: <stdout>: cannot spool the output in {spool}: "
                                            "No space left on device")
    assert os.listdir(spool) == ["filler"]


def test_a_killed_run_leaves_no_spool_and_stale_spools_are_swept(big_set, tmp_path):
    spool = tmp_path / "tmp"
    spool.mkdir()
    stale = spool / ".stdout.k1ll3d00.evalconv-tmp"  # what older versions left
    stale.write_bytes(b"x" * 4096)
    os.utime(stale, (time.time() - 3600,) * 2)
    process = subprocess.Popen(evalconv_command() + [str(big_set), "--to", "json", "-j", "1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, "TMPDIR": str(spool)})

    def spooling() -> bool:
        for fd in Path(f"/proc/{process.pid}/fd").iterdir():
            try:
                if os.readlink(fd).startswith(str(spool)) and fd.stat().st_size >= 512 * 1024:
                    return True
            except OSError:
                continue
        return False

    deadline = time.monotonic() + WAIT_SECONDS
    while not spooling():
        assert process.poll() is None and time.monotonic() < deadline, "no spool to see"
        time.sleep(0.002)
    process.kill()
    process.communicate(timeout=WAIT_SECONDS)
    assert os.listdir(spool) == [], "the spool outlived the run, or the stale one was not swept"


# 7-8. SIGTERM and Ctrl-C: stop, clean up, one line. ----------------------------------------------

def start_in_own_group(args: list) -> subprocess.Popen:
    return subprocess.Popen(evalconv_command() + [str(a) for a in args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def wait_until_writing(process: subprocess.Popen, folder: Path, workers: int) -> list[int]:
    found: list[int] = []
    deadline = time.monotonic() + WAIT_SECONDS
    while not (len(found) >= workers and any(p.stat().st_size >= 512 * 1024 for p in temp_files(folder)
                                             if p.exists())):
        assert process.poll() is None, "the run ended before the signal: make the set larger"
        assert time.monotonic() < deadline, "nothing to signal"
        found = children(process.pid)
        time.sleep(0.002)
    return found


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("whom", ["process group", "parent only"])
def test_sigterm_stops_cleans_up_and_exits_143(big_set, tmp_path, jobs, whom):
    # JSONL streams into its temp file from the start; the CSV writer (it learns its columns from
    # every row) writes its temp file only in the last moments, where a signal can miss the run.
    target = tmp_path / "out.jsonl"
    process = start_in_own_group([big_set, "--to", "jsonl", "-o", target, "-j", jobs])
    workers = wait_until_writing(process, tmp_path, 2 if jobs == "2" else 0)
    if whom == "process group":
        os.killpg(process.pid, signal.SIGTERM)
    else:
        process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 143
    assert err.decode() == "evalconv: terminated\n"
    wait_for_no_workers(workers)
    assert temp_files(tmp_path) == [] and not target.exists()


@pytest.mark.parametrize("try_", range(3))
def test_a_burst_of_ctrl_c_to_the_process_group_prints_one_line(big_set, tmp_path, try_):
    process = start_in_own_group([big_set, "--to", "jsonl", "-o", tmp_path / "out.jsonl"])
    workers = wait_until_writing(process, tmp_path, 2)
    for _ in range(6):
        os.killpg(process.pid, signal.SIGINT)
        time.sleep(0.003)
    _, err = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 130
    assert err.decode() == "evalconv: interrupted\n"
    wait_for_no_workers(workers)
    assert temp_files(tmp_path) == []


def _catches_sigterm(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_start_up_prints_one_line(signum):
    """The console script sets its handlers before importing the command line; a signal from
    then on, while the modules load, stops with one line."""
    process = subprocess.Popen(evalconv_command() + ["formats"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + WAIT_SECONDS
    while not _catches_sigterm(process.pid):  # the handlers are in place (Python alone leaves SIGTERM alone)
        assert process.poll() is None, "the command ended before the handlers were seen"
        assert time.monotonic() < deadline
        time.sleep(0.0005)
    process.send_signal(signum)
    _, err = process.communicate(timeout=WAIT_SECONDS)
    word, code = ("interrupted", 130) if signum == signal.SIGINT else ("terminated", 143)
    if process.returncode == 0:  # the command finished first; nothing to check this time
        pytest.skip("the signal came after the command had finished")
    assert (process.returncode, err.decode()) == (code, f"evalconv: {word}\n")


@pytest.mark.parametrize("module", ["click", "evalconv.cli.common", "evalconv.registry", "evalconv.cli.info"])
def test_ctrl_c_while_a_module_loads_prints_one_line(module):
    """A real SIGINT delivered at a set point of start-up: while `module` is being imported (the
    command line's own modules first, then the ones `formats` loads when it is named)."""
    code = f"""
import os, signal, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Interrupt())
from evalconv._launch import main
sys.argv[0] = "evalconv"
sys.exit(main())
"""
    done = subprocess.run([sys.executable, "-c", code, "formats"], capture_output=True, timeout=WAIT_SECONDS)
    assert (done.returncode, done.stderr.decode()) == (130, "evalconv: interrupted\n")


# 9-10. A closed stdout; a BOM alone. --------------------------------------------------------------

def _close_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize("args", [["--to", "csv"], ["--to", "json"]])
def test_a_closed_stdout_is_one_line_and_exit_2(args):
    done = subprocess.run(evalconv_command() + [str(GOLDEN), *args], stderr=subprocess.PIPE,
                          preexec_fn=_close_stdout, timeout=WAIT_SECONDS)
    assert done.returncode == 2
    assert one_line(done.stderr) == "evalconv: error: <stdout>: standard output is closed; name an output file with -o"


def test_commands_that_print_to_a_closed_stdout_fail_the_same_way():
    """Issue 23 item 11 (every command: tests/cli/test_output_safety.py)."""
    for args in (["validate", str(GOLDEN)], ["formats"], ["schema"]):
        done = subprocess.run(evalconv_command() + args, stderr=subprocess.PIPE, preexec_fn=_close_stdout,
                              timeout=WAIT_SECONDS)
        assert done.returncode == 2 and "standard output is closed" in one_line(done.stderr), (args, done.stderr)


@pytest.mark.parametrize("content", [b"\xef\xbb\xbf", b"\xef\xbb\xbf\n", b""], ids=["bom", "bom-newline", "empty"])
def test_a_jsonl_file_holding_only_a_bom_is_an_empty_set(tmp_path, content):
    source = tmp_path / "empty.jsonl"
    source.write_bytes(content)
    done = run([source, "--to", "csv", "-o", tmp_path / "out.csv"])
    assert done.returncode == 0, done.stderr
    assert "0 rows written" in one_line(done.stderr)
    checked = run(["validate", source])
    assert checked.returncode == 0 and b"0 rows, 0 errors" in checked.stdout


def test_the_pool_knows_its_workers_without_the_executors_private_attributes():
    from evalconv.engine.pools import WorkerPool, start_method

    forked = start_method() == "fork"
    with WorkerPool(2) as pool:
        ran = {f.result(timeout=WAIT_SECONDS) for f in [pool.submit(os.getpid) for _ in range(6)]}
        known = pool.worker_pids()  # each worker reports itself as it starts
        assert ran <= known and 1 <= len(known) <= 2
        assert not forked or known <= set(children(os.getpid()))

"""Issue 26 item 13: a progress bar on a terminal only, nothing when piped, and -q.

The bar is drawn by `evalconv.cli.progress` from what the library tells a watcher
(`evalconv.sources.watching`); these tests run the CLI with standard error on a pseudo-terminal
to see the bar, and piped to see that nothing changed.
"""
from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from progress_scenes import GOLDEN, lay_out, piped

ROOT = Path(__file__).resolve().parents[2]
NOW = {"EVALCONV_PROGRESS_DELAY": "0"}  # draw at once: the inputs here take well under the usual delay


def _row(i: int) -> dict:
    return {"id": f"q-{i}", "input": f"What is {i} plus one?", "expected": str(i + 1),
            "metadata": {"case": {"caseId": f"q-{i}", "oracleType": "reference-answer",
                                  "expectedBehavior": "Gives the sum.", "provenance": "expert-authored",
                                  "caseFamily": "sums", "evaluator": "exact-or-programmatic"}}}


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("progress")
    with open(where / "big.jsonl", "w", encoding="utf-8") as f:
        for i in range(3000):
            f.write(json.dumps(_row(i)) + "\n")
    with open(where / "sheet.csv", "w", encoding="utf-8") as f:
        f.write("question,answer\n")
        for i in range(3000):
            f.write(f"What is {i} plus one?,{i + 1}\n")
    (where / "sets").mkdir()
    for name in ("a", "b", "c"):
        shutil.copy(where / "big.jsonl", where / "sets" / f"{name}.jsonl")
    return where


def on_terminal(where: Path, args: list[str], stdout_too: bool = False) -> tuple[int, bytes, bytes]:
    """Run the CLI with standard error on a pseudo-terminal: exit code, what the terminal showed,
    and standard output (a pipe)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    proc = subprocess.Popen([sys.executable, "-m", "evalconv", *args], cwd=where, stdout=slave if stdout_too else subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL,
                            env={**os.environ, **NOW, "TERM": "xterm"})
    os.close(slave)
    shown = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
    out = proc.stdout.read() if proc.stdout else b""
    return proc.wait(timeout=120), shown, out


@pytest.mark.parametrize("args, unit", [
    (["convert", "big.jsonl", "--to", "promptfoo", "-o", "t.yaml"], b"rows/s"),
    (["validate", "big.jsonl"], b"rows/s"),
    (["stats", "big.jsonl"], b"rows/s"),
    (["import", "sheet.csv", "-o", "imported.jsonl", "--force"], b"row/s"),
    (["roundtrip", "sets", "--via", "csv"], b"route"),
    (["convert", "sets", "--to", "csv", "-o", "out"], b"file"),
])
def test_a_long_command_draws_a_bar_on_a_terminal(work, args, unit):
    code, shown, _ = on_terminal(work, args)
    assert code in (0, 1), shown.decode(errors="replace")
    assert b"\r" in shown and b"%|" in shown, shown.decode(errors="replace")  # tqdm's bar, redrawn in place
    assert unit in shown
    if args[0] in ("convert", "validate", "stats") and args[1] == "big.jsonl":
        assert b"3,000 rows" in shown  # rows beside the bytes: the last draw before the bar is cleared


def test_the_bar_is_gone_before_the_command_prints(work):
    code, shown, out = on_terminal(work, ["validate", "big.jsonl"])
    assert code == 0
    assert out.startswith(b"big.jsonl (jsonl): 3000 rows, 0 errors, 0 warnings: ok")  # stdout untouched
    assert b"\r" not in out and b"%|" not in out


def test_no_bar_with_quiet_on_a_terminal(work):
    code, shown, _ = on_terminal(work, ["validate", "big.jsonl", "-q"])
    assert code == 0 and b"%|" not in shown


def test_no_bar_when_the_converted_set_goes_to_the_terminal(work):
    code, shown, _ = on_terminal(work, ["big.jsonl", "--to", "jsonl"], stdout_too=True)
    assert code == 0 and b'"id":"q-2999"' in shown  # the rows are the output: no bar drawn over them
    assert b"%|" not in shown


def test_piped_output_is_byte_for_byte_what_it_was_before_the_bar(tmp_path):
    """The golden was printed by these commands before progress and -q existed."""
    lay_out(tmp_path)
    assert piped(tmp_path) == GOLDEN.read_text(encoding="utf-8")


def test_piped_start_up_never_imports_tqdm(work):
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "evalconv", "validate", "big.jsonl"],
                          cwd=work, capture_output=True, env={**os.environ, **NOW}, timeout=120)
    assert done.returncode == 0
    assert b"| tqdm" not in done.stderr and b"import time" in done.stderr


# -q: notes and warnings go, errors and the result stay

def test_quiet_convert_prints_no_warning_nor_note_but_its_summary(tmp_path):
    lay_out(tmp_path)
    loud = subprocess.run([sys.executable, "-m", "evalconv", "set.jsonl", "--to", "promptfoo", "-o", "t.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "warning[" in loud.stderr and "evalconv: note:" in loud.stderr
    quiet = subprocess.run([sys.executable, "-m", "evalconv", "set.jsonl", "--to", "promptfoo", "-o", "t2.yaml",
                            "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert quiet.returncode == 0
    assert quiet.stderr.splitlines() == [loud.stderr.splitlines()[-1].replace("t.yaml", "t2.yaml")]


def test_quiet_still_prints_errors(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"id": "x", "input": "hi"}\n', encoding="utf-8")
    for args in (["validate", "bad.jsonl", "-q"], ["bad.jsonl", "--to", "csv", "-o", "x.csv", "--quiet"]):
        done = subprocess.run([sys.executable, "-m", "evalconv", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 1
        assert "error[" in done.stderr, done.stderr


def test_quiet_validate_stats_import_report_keep_their_results(tmp_path):
    lay_out(tmp_path)
    cases = [(["validate", "set.jsonl"], "set.jsonl (jsonl): 8 rows"),
             (["stats", "set.jsonl"], "8 rows in 1 file"),
             (["import", "sheet.csv", "-o", "imp.jsonl"], "evalconv: sheet.csv -> imp.jsonl (jsonl): 3 rows written"),
             (["report", "results.json", "--cases", "cases.jsonl"], "10 cases, 10 attempts"),
             (["runs", "import", "results.json", "--store", "store"], "store: added 10 attempts"),
             (["roundtrip", "sets", "--via", "csv"], "file")]
    for args, result in cases:
        done = subprocess.run([sys.executable, "-m", "evalconv", *args, "-q"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, (args, done.stderr)
        assert result in done.stdout + done.stderr
        assert "warning[" not in done.stderr and "note:" not in done.stderr and "matched:" not in done.stderr, \
            (args, done.stderr)


def test_quiet_does_not_last_beyond_its_command(capsys, tmp_path):
    """In one process (a caller, the tests), -q on one run leaves the next one loud."""
    from conftest import run_cli

    lay_out(tmp_path)
    code, err = run_cli(["validate", str(tmp_path / "set.jsonl"), "-q"], capsys)
    assert code == 0 and "warning[" not in err
    code, err = run_cli(["validate", str(tmp_path / "set.jsonl")], capsys)
    assert code == 0 and "warning[" in err


# the library tells, and never prints

def test_the_library_tells_a_watcher_how_far_a_read_is(work, capsys):
    from evalconv import api
    from evalconv.sources import watching

    told = []
    with watching(told.append):
        report = api.validate([str(work / "big.jsonl")], jobs=1)
    assert report.exit_code == 0 and capsys.readouterr() == ("", "")
    assert [p.rows for p in told] == [512, 1024, 1536, 2048, 2560, 3000]
    size = (work / "big.jsonl").stat().st_size
    assert all(p.size == size for p in told) and told[-1].read == size and told[-1].done
    assert [p.read for p in told] == sorted(p.read for p in told)


def test_two_cores_tell_each_chunk(work, monkeypatch):
    from evalconv import api
    from evalconv.engine import parallel
    from evalconv.coverage import stats as coverage
    from evalconv.sources import watching

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 64 * 1024)
    size = (work / "big.jsonl").stat().st_size
    for run in (lambda: api.validate([str(work / "big.jsonl")], jobs=2),
                lambda: coverage.stats([str(work / "big.jsonl")], jobs=2)):
        told = []
        with watching(told.append):
            run()
        assert len(told) >= 3 and told[-1].done and told[-1].rows == 3000 and told[-1].read == size
        assert [p.read for p in told] == sorted(p.read for p in told)


def test_runs_import_tells_the_records_read(tmp_path):
    from evalconv.runs.readers import RESULTS_REGISTRY
    from evalconv.sources import watching

    told = []
    path = str(ROOT / "tests" / "fixtures" / "runs" / "promptfoo" / "results.json")
    with watching(told.append):
        records = list(RESULTS_REGISTRY.read(path))
    assert told[-1].done and told[-1].rows == len(records) and told[-1].source == path

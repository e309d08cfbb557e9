"""Directory conversion: mirror the tree, one bad file never stops the others."""
from __future__ import annotations

import json
import os
import shutil

from click.testing import CliRunner

from conftest import ROOT, row
from evalconv.cli import cli

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def tree(tmp_path, write_jsonl):
    src = tmp_path / "sets"
    (src / "support").mkdir(parents=True)
    (src / "extract").mkdir()
    shutil.copy(GOLDEN, src / "support" / "agent.jsonl")
    shutil.copy(ROOT / "golden_roundtrips" / "support-agent.csv", src / "extract" / "receipts.csv")
    (src / "extract" / "broken.json").write_text('[{"id": "x",', encoding="utf-8")
    (src / "notes.txt").write_text("not a set", encoding="utf-8")
    (src / ".hidden.jsonl").write_text("{}", encoding="utf-8")
    invalid = [row("a"), row("a")]
    (src / "support" / "dupes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in invalid), encoding="utf-8")
    return src


def convert(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_tree_with_one_broken_file_converts_the_rest(tmp_path, write_jsonl):
    src, out = tree(tmp_path, write_jsonl), tmp_path / "out"
    summary = tmp_path / "summary.json"
    result = convert(src, "--to", "json", "-o", out, "--summary", summary)
    assert result.exit_code == 1
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["extract/receipts.json", "support/agent.json"]
    report = json.loads(summary.read_text())
    status = {f["source"]: f["status"] for f in report["files"]}
    assert status == {"extract/broken.json": "unreadable", "extract/receipts.csv": "ok",
                      "support/agent.jsonl": "ok", "support/dupes.jsonl": "invalid"}
    assert "broken.json:1: invalid JSON in the array" in result.stderr
    assert "error[duplicate-id]" in result.stderr
    assert "support/agent.jsonl" in result.stdout and "unreadable" in result.stdout
    assert not any(name.endswith(".evalconv-tmp") for _, _, names in os.walk(out) for name in names)


def test_include_exclude_and_parallel_jobs_give_the_same_files(tmp_path, write_jsonl):
    src = tree(tmp_path, write_jsonl)
    one, two = tmp_path / "one", tmp_path / "two"
    convert(src, "--to", "csv", "-o", one, "--exclude", "broken.json", "--exclude", "dupes.*")
    result = convert(src, "--to", "csv", "-o", two, "--exclude", "broken.json", "--exclude", "dupes.*", "-j", "2")
    assert result.exit_code == 0
    listing = lambda root: sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert listing(one) == listing(two) == ["extract/receipts.csv", "support/agent.csv"]
    assert all((one / f).read_bytes() == (two / f).read_bytes() for f in listing(one))
    only = tmp_path / "only"
    convert(src, "--to", "jsonl", "-o", only, "--include", "support/*.jsonl", "--exclude", "dupes.jsonl")
    assert listing(only) == ["support/agent.jsonl"]


def test_folder_needs_an_output_folder(tmp_path, write_jsonl):
    result = convert(tree(tmp_path, write_jsonl), "--to", "json")
    assert result.exit_code == 2 and "needs -o OUTDIR" in result.stderr


def test_folder_options_are_refused_for_a_file():
    result = convert(GOLDEN, "--to", "json", "--include", "*.jsonl")
    assert result.exit_code == 2 and "apply to a folder" in result.stderr


def test_two_inputs_landing_on_one_output_are_refused(tmp_path):
    src = tmp_path / "s"
    src.mkdir()
    shutil.copy(GOLDEN, src / "a.jsonl")
    shutil.copy(ROOT / "golden_roundtrips" / "support-agent.json", src / "a.json")
    result = convert(src, "--to", "csv", "-o", tmp_path / "o")
    assert result.exit_code == 2 and "would both become" in result.stderr


def test_rerun_after_an_interruption_completes_the_rest(tmp_path, write_jsonl):
    src, out = tree(tmp_path, write_jsonl), tmp_path / "out"
    (out / "support").mkdir(parents=True)
    (out / "support" / ".agent.json.123.evalconv-tmp").write_text("torn", encoding="utf-8")  # a killed write
    convert(src, "--to", "json", "-o", out)
    assert json.loads((out / "support" / "agent.json").read_text())[0]["id"] == "cs-refund-valid-receipt"
    assert (out / "extract" / "receipts.json").exists()


def _run_cli(args, stderr):
    import subprocess
    import sys
    code = "import sys; from evalconv.cli import main; sys.argv[0] = 'evalconv'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], stdout=subprocess.PIPE,
                          stderr=stderr, timeout=120, env={**os.environ, "EVALCONV_PROGRESS_DELAY": "0"})


def test_progress_bar_on_a_terminal_and_quiet_elsewhere(tmp_path):
    import pty
    import subprocess
    src = tmp_path / "s"
    src.mkdir()
    for i in range(3):
        shutil.copy(GOLDEN, src / f"set{i}.jsonl")
    import fcntl
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    try:
        result = _run_cli([src, "--to", "json", "-o", tmp_path / "a"], stderr=slave)
        os.close(slave)
        shown = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
    assert result.returncode == 0
    assert b"converting" in shown and b"30 rows" in shown
    quiet = _run_cli([src, "--to", "json", "-o", tmp_path / "b"], stderr=subprocess.PIPE)
    assert quiet.returncode == 0 and b"converting" not in quiet.stderr


def test_a_live_writers_temp_file_is_never_swept(tmp_path):
    from evalconv.atomic import AtomicOutput
    target = tmp_path / "out.jsonl"
    live = AtomicOutput(str(target))
    live.open()
    live.stream.write("in progress")
    other = AtomicOutput(str(target))  # a second run on the same target sweeps only dead files
    other.open()
    other.stream.write("x\n")
    other.commit()
    live.stream.flush()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".evalconv-tmp")]
    live.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]

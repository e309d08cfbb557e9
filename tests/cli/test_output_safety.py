"""Issue 23, items 3, 4, 10 and 11: no output of any command replaces an input or another output;
all outputs of a command are published together or not at all; a command that exits 2 writes
no file; every command that prints its result refuses a closed standard output. And a property
test over random command lines: no input file ever changes."""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT, run_cli
from cli_process import evalconv_command

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"
RUN = ROOT / "tests" / "fixtures" / "runs" / "promptfoo" / "results.json"
CASES = ROOT / "tests" / "fixtures" / "runs" / "cases.jsonl"
SHEET = "question,answer\nWhich queue handles refunds?,billing\nWho signs off?,the lead\n"
WAIT_SECONDS = 60


def make_workspace(folder: Path) -> None:
    """The same few paths every test draws from: sets, a sheet, links, a folder of sets, a run
    store and a harness's run output."""
    shutil.copy(GOLDEN, folder / "set.jsonl")
    (folder / "sheet.csv").write_text(SHEET, encoding="utf-8")
    (folder / "sets").mkdir()
    shutil.copy(GOLDEN, folder / "sets" / "a.jsonl")
    (folder / "sets" / "b.csv").write_text(_as_csv(), encoding="utf-8")
    os.symlink("set.jsonl", folder / "link.jsonl")
    os.link(folder / "sets" / "a.jsonl", folder / "hard.jsonl")
    shutil.copy(RUN, folder / "results.json")
    shutil.copy(CASES, folder / "cases.jsonl")
    shutil.copytree(_store(), folder / "store")


_made: dict[str, Path] = {}


def _as_csv() -> str:
    if "csv" not in _made:
        out = Path(tempfile.mkdtemp(prefix="evalconv-safety-")) / "golden.csv"
        done = subprocess.run(evalconv_command() + [str(GOLDEN), "--to", "csv", "-o", str(out)], capture_output=True,
                              timeout=WAIT_SECONDS)
        assert done.returncode == 0, done.stderr
        _made["csv"] = out
    return _made["csv"].read_text(encoding="utf-8")


def _store() -> Path:
    if "store" not in _made:
        store = Path(tempfile.mkdtemp(prefix="evalconv-safety-")) / "store"
        done = subprocess.run(evalconv_command() + ["runs", "import", str(RUN), "--store", str(store)],
                              capture_output=True, timeout=WAIT_SECONDS)
        assert done.returncode == 0, done.stderr
        _made["store"] = store
    return _made["store"]


def snapshot(folder: Path) -> dict[str, tuple[tuple[int, int], bytes, int]]:
    """Every regular file (not symlinks: their targets are listed): identity, bytes, mtime."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            info = path.stat()
            out[str(path.relative_to(folder))] = ((info.st_dev, info.st_ino), path.read_bytes(), info.st_mtime_ns)
    return out


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    make_workspace(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused(args: list[str], capsys, *names: str) -> str:
    code, err = run_cli(args, capsys)
    lines = [line for line in err.splitlines() if line.startswith("evalconv: ")]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (args, code, err)
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


# 3. Side outputs never replace an input -----------------------------------------------------------

ISSUE_REPRODUCTIONS = [
    (["validate", "set.jsonl", "--junit", "set.jsonl"], "set.jsonl", "set.jsonl"),
    (["validate", "sets", "--junit", "sets/a.jsonl"], "sets/a.jsonl", "sets/a.jsonl"),
    (["roundtrip", "set.jsonl", "--via", "jsonl", "--junit", "set.jsonl"], "set.jsonl", "set.jsonl"),
    (["stats", "sets", "--html", "sets/a.jsonl"], "sets/a.jsonl", "sets/a.jsonl"),
    (["roundtrip", "sets", "--via", "jsonl", "--html", "sets/a.jsonl"], "sets/a.jsonl", "sets/a.jsonl"),
    (["sets", "--to", "csv", "-o", "out", "--summary", "sets/a.jsonl"], "sets/a.jsonl", "sets/a.jsonl"),
    (["import", "sheet.csv", "--report", "sheet.csv"], "sheet.csv", "sheet.csv"),
    (["report", "store", "--cases", "cases.jsonl", "--html", "store/attempts.jsonl"], "store/attempts.jsonl",
     "store/attempts.jsonl"),
]
MORE_OUTPUTS = [  # every other output option of every command, and inputs that are not the first argument
    (["set.jsonl", "--to", "jsonl", "-o", "o.jsonl", "--report", "set.jsonl"], "set.jsonl", "set.jsonl"),
    (["sets/a.jsonl", "--to", "jsonl", "-o", "o.jsonl", "--keep-going", "--ledger", "hard.jsonl"], "hard.jsonl",
     "sets/a.jsonl"),
    (["set.jsonl", "--to", "promptfoo", "-o", "o.yaml", "--config", "set.jsonl"], "set.jsonl", "set.jsonl"),
    (["import", "sheet.csv", "--map", "set.jsonl", "-o", "set.jsonl"], "set.jsonl", "set.jsonl"),
    (["new", "customer-support", "-o", "sets/b.csv", "--pack", "sets/b.csv"], "sets/b.csv", "sets/b.csv"),
    (["validate", "set.jsonl", "--pack", "sheet.csv", "--junit", "sheet.csv"], "sheet.csv", "sheet.csv"),
    (["report", "results.json", "--cases", "cases.jsonl", "--html", "cases.jsonl"], "cases.jsonl", "cases.jsonl"),
    (["runs", "import", "store/attempts.jsonl", "--store", "store"], "store/attempts.jsonl", "store/attempts.jsonl"),
    (["stats", "sets", "--include", "*.csv", "--html", "sets/b.csv"], "sets/b.csv", "sets/b.csv"),
]


@pytest.mark.parametrize("args,output,input_", ISSUE_REPRODUCTIONS + MORE_OUTPUTS,
                         ids=[" ".join(a) for a, _, _ in ISSUE_REPRODUCTIONS + MORE_OUTPUTS])
def test_side_outputs_that_name_an_input_are_refused(workspace, capsys, args, output, input_):
    before = snapshot(workspace)
    line = refused(args, capsys, "never overwrites its input")
    assert line.startswith(f"evalconv: error: {output}: ") and f"the input {input_}" in line
    assert snapshot(workspace) == before  # nothing written, nothing touched


@pytest.mark.parametrize("link", ["link.jsonl", "hard.jsonl"])
@pytest.mark.parametrize("command", [["validate", "--junit"], ["stats", "--html"], ["roundtrip", "--via", "jsonl", "--html"]])
def test_an_output_that_is_a_link_to_an_input_is_refused(workspace, capsys, command, link):
    source = "set.jsonl" if link == "link.jsonl" else "sets"
    before = snapshot(workspace)
    line = refused([command[0], source, *command[1:], link], capsys, "never overwrites its input")
    assert f"{link}: " in line and ("set.jsonl (the same file" in line or "sets/a.jsonl (in the folder sets)" in line)
    assert snapshot(workspace) == before


def test_an_input_named_through_a_symlinked_folder_is_still_the_input(workspace, capsys):
    os.symlink("sets", workspace / "alias")
    before = snapshot(workspace)
    refused(["validate", "alias", "--junit", "sets/a.jsonl"], capsys, "sets/a.jsonl: --junit is the input alias/a.jsonl")
    assert snapshot(workspace) == before


@pytest.mark.parametrize("args", [
    ["import", "sheet.csv", "-o", "new.csv", "--report", "new.csv"],
    ["import", "sheet.csv", "-o", "new.csv", "--report", "./new.csv"],
    ["roundtrip", "set.jsonl", "--via", "jsonl", "--junit", "page", "--html", "page"],
    ["new", "customer-support", "-o", "new.jsonl", "--report", "new.jsonl"],
    ["sets", "--to", "jsonl", "-o", "out", "--summary", "out/a.jsonl"],
])
def test_two_outputs_that_are_one_file_are_refused(workspace, capsys, args):
    before = snapshot(workspace)
    refused(args, capsys, "name the same file")
    assert snapshot(workspace) == before and not (workspace / "new.csv").exists()


def test_import_report_naming_an_existing_output_through_a_link_is_refused(workspace, capsys):
    (workspace / "old.csv").write_text("kept\n")
    os.symlink("old.csv", workspace / "alias.csv")
    refused(["import", "sheet.csv", "-o", "old.csv", "--report", "alias.csv"], capsys, "name the same file")
    assert (workspace / "old.csv").read_text() == "kept\n"


def test_a_folder_output_that_holds_an_input_is_refused(workspace, capsys):
    before = snapshot(workspace)
    refused(["sets/a.jsonl", "--to", "hf", "-o", "sets"], capsys, "sets: -o holds the input sets/a.jsonl")
    refused(["hard.jsonl", "--to", "hf", "-o", "sets"], capsys, "sets: -o holds the input hard.jsonl")
    assert snapshot(workspace) == before


@pytest.mark.parametrize("exists", [False, True])
def test_a_report_inside_a_dataset_folder_output_is_refused(workspace, capsys, exists):
    """It would be replaced with the folder, or stay in it as a file the hf writer did not write."""
    if exists:
        code, err = run_cli(["set.jsonl", "--to", "hf", "-o", "ds"], capsys)
        assert code == 0, err
    before = snapshot(workspace)
    refused(["set.jsonl", "--to", "hf", "-o", "ds", "--report", "ds/r.json"], capsys, "ds/r.json: --report is inside -o ds")
    assert snapshot(workspace) == before and not (workspace / "ds" / "r.json").exists()


def test_a_folder_conversion_never_writes_over_another_file_of_its_input(workspace, capsys):
    """`sets --to csv -o sets`: sets/b.csv is an input, and b.csv -> b.csv would replace it."""
    before = snapshot(workspace)
    refused(["sets", "--to", "csv", "-o", "sets"], capsys, "sets/b.csv: -o is the input sets/b.csv")
    assert snapshot(workspace) == before


def test_a_folder_converted_into_a_folder_inside_it_runs_again(workspace, capsys):
    """The output folder inside the input is not read, so its files are not inputs."""
    for _ in range(2):
        code, err = run_cli(["sets", "--to", "jsonl", "-o", "sets/out"], capsys)
        assert code == 0, err
    assert (workspace / "sets" / "out" / "a.jsonl").exists()


def test_standard_output_appending_to_an_input_is_refused(workspace):
    before = snapshot(workspace)
    for args in (["stats", "set.jsonl"], ["validate", "set.jsonl"], ["sets", "--to", "jsonl", "-o", "out"]):
        target = "set.jsonl" if args[0] != "sets" else "sets/a.jsonl"
        with open(workspace / target, "ab") as stdout:
            done = subprocess.run(evalconv_command() + args, stdout=stdout, stderr=subprocess.PIPE, cwd=workspace,
                                  timeout=WAIT_SECONDS)
        assert done.returncode == 2, (args, done.stderr)
        assert f"{target}: standard output is the input {target}" in done.stderr.decode()
    assert snapshot(workspace) == before


# 4. All outputs of a command, together or not at all ----------------------------------------------

@pytest.fixture
def failing_write(monkeypatch):
    """A disk that is full for one output: its prepare (flush, fsync) raises ENOSPC."""
    from evalconv import atomic

    failing: set[str] = set()
    prepare = atomic.AtomicOutput.prepare

    def full(self):
        if self.path is not None and os.path.basename(self.path) in failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        return prepare(self)

    monkeypatch.setattr(atomic.AtomicOutput, "prepare", full)
    return failing


@pytest.mark.parametrize("args,late", [
    (["import", "sheet.csv", "-o", "out.jsonl", "--report", "report.json", "--force"], "report.json"),
    (["new", "customer-support", "-o", "out.jsonl", "--report", "report.json", "--force"], "report.json"),
    (["roundtrip", "set.jsonl", "--via", "jsonl", "--junit", "out.jsonl", "--html", "report.json"], "report.json"),
    (["roundtrip", "set.jsonl", "--via", "jsonl", "--junit", "report.json", "--html", "out.jsonl"], "report.json"),
])
def test_import_new_and_roundtrip_publish_all_their_outputs_or_none(workspace, capsys, failing_write, args, late):
    (workspace / "out.jsonl").write_text("the old output\n")
    failing_write.add(late)
    before = snapshot(workspace)
    refused(args, capsys, f"{late}: cannot write: No space left on device")
    assert snapshot(workspace) == before
    assert not list(workspace.glob(".*evalconv-tmp"))
    failing_write.clear()
    code, err = run_cli(args, capsys)
    assert code in (0, 1) and (workspace / late).exists() and (workspace / "out.jsonl").read_text() != "the old output\n"


# 10. No file on exit 2 ---------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["stats", "sets", "--html", "old.html"],
    ["roundtrip", "sets", "--via", "jsonl", "--html", "old.html"],
    ["roundtrip", "sets", "--via", "jsonl", "--junit", "old.html"],
    ["validate", "sets", "--junit", "old.html"],
])
def test_a_command_that_exits_2_writes_no_page_or_junit(workspace, capsys, args):
    (workspace / "sets" / "cut.json").write_text('[{"id": ')  # a file that cannot be read: exit 2
    (workspace / "old.html").write_text("the page of the last good run")
    before = snapshot(workspace)
    code, err = run_cli(args, capsys)
    assert code == 2 and "cut.json:1: invalid JSON" in err and "wrote" not in err
    assert snapshot(workspace) == before


# 11. A closed standard output ---------------------------------------------------------------------

def _close_stdout() -> None:
    os.close(1)


CLOSED = "evalconv: error: <stdout>: standard output is closed; "
PRINTING = [  # every command that prints its result, with the outputs it would write
    ["validate", "set.jsonl", "--junit", "j.xml"],
    ["stats", "set.jsonl", "--html", "p.html"],
    ["roundtrip", "set.jsonl", "--via", "jsonl", "--junit", "j.xml"],
    ["report", "store", "--cases", "cases.jsonl", "--html", "p.html"],
    ["runs", "import", "results.json", "--store", "newstore"],
    ["formats"],
    ["schema"],
    ["explain", "rubric"],
    ["new", "--list"],
    ["sets", "--to", "jsonl", "-o", "out", "--summary", "s.json"],
    ["set.jsonl", "--to", "csv", "--report", "r.json"],
    ["import", "sheet.csv", "--report", "r.json"],
    ["import", "sheet.csv", "--suggest-map"],
    ["new", "customer-support", "--report", "r.json"],
]


@pytest.mark.parametrize("args", PRINTING, ids=[" ".join(a) for a in PRINTING])
def test_every_command_that_prints_refuses_a_closed_stdout(workspace, args):
    before = snapshot(workspace)
    done = subprocess.run(evalconv_command() + args, stderr=subprocess.PIPE, preexec_fn=_close_stdout,
                          cwd=workspace, timeout=WAIT_SECONDS)
    lines = [line for line in done.stderr.decode().splitlines() if line.startswith("evalconv: ")]
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith(CLOSED), (args, done.stderr)
    hint = "name an output file with -o" if args[0] in ("set.jsonl", "import", "new") and "-o" not in args \
        and "--list" not in args and "--suggest-map" not in args else "redirect it to a file"
    assert hint in lines[0]
    assert snapshot(workspace) == before and sorted(os.listdir(workspace)) == sorted(
        ["cases.jsonl", "hard.jsonl", "link.jsonl", "results.json", "set.jsonl", "sets", "sheet.csv", "store"])


@pytest.mark.parametrize("args", [["set.jsonl", "--to", "csv", "-o", "o.csv"], ["import", "sheet.csv", "-o", "o.csv"],
                                  ["new", "customer-support", "-o", "o.csv"]])
def test_a_command_writing_to_o_still_runs_with_stdout_closed(workspace, args):
    done = subprocess.run(evalconv_command() + args, stderr=subprocess.PIPE, preexec_fn=_close_stdout,
                          cwd=workspace, timeout=WAIT_SECONDS)
    assert done.returncode == 0 and (workspace / "o.csv").exists(), done.stderr


# docs/errors.md lists each refusal, and each example is what evalconv says ------------------------

def test_errors_md_lists_the_output_refusals_generated_from_the_table():
    from evalconv.output_paths import refusals_markdown

    page = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert refusals_markdown() in page, "regenerate the table in docs/errors.md from output_paths.refusals_markdown()"


EXAMPLES = {
    "is-input": ["validate", "set.jsonl", "--junit", "set.jsonl"],
    "in-folder": ["stats", "sets", "--html", "sets/a.jsonl"],
    "by-link": ["import", "sheet.csv", "--report", "link.csv"],
    "holds-input": ["out/a.jsonl", "--to", "hf", "-o", "out"],
    "stdout-input": ["stats", "set.jsonl"],
    "same-output": ["import", "sheet.csv", "-o", "set.csv", "--report", "set.csv"],
    "inside-output": ["set.jsonl", "--to", "hf", "-o", "ds", "--report", "ds/report.json"],
    "stdout-closed": ["validate", "set.jsonl"],
}


def test_every_refusal_in_the_table_has_an_example_here():
    from evalconv.output_paths import REFUSALS

    assert sorted(EXAMPLES) == sorted(REFUSALS)


@pytest.mark.parametrize("code", sorted(EXAMPLES))
def test_each_documented_refusal_says_what_the_table_says(workspace, code):
    from evalconv.output_paths import REFUSALS

    os.symlink("sheet.csv", workspace / "link.csv")
    (workspace / "out").mkdir()
    shutil.copy(GOLDEN, workspace / "out" / "a.jsonl")
    kwargs: dict = {"stdout": subprocess.DEVNULL}
    if code == "stdout-closed":
        kwargs = {"preexec_fn": _close_stdout}
    before = snapshot(workspace)
    with open(workspace / "set.jsonl", "ab") as appending:
        if code == "stdout-input":
            kwargs = {"stdout": appending}
        done = subprocess.run(evalconv_command() + EXAMPLES[code], stderr=subprocess.PIPE, cwd=workspace,
                              timeout=WAIT_SECONDS, **kwargs)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [f"evalconv: error: {REFUSALS[code][1]}"]
    assert snapshot(workspace) == before


# The property: random command lines never change an input ----------------------------------------

POOL = ["set.jsonl", "sheet.csv", "sets", "sets/a.jsonl", "sets/b.csv", "link.jsonl", "hard.jsonl", "store",
        "store/attempts.jsonl", "results.json", "cases.jsonl", "new.jsonl", "new.csv", "page.html"]
paths = st.sampled_from(POOL)
maybe = st.none() | paths


@st.composite
def command_lines(draw) -> tuple[list[str], list[str], list[str]]:
    """(argv, the inputs it names, the outputs it names)."""
    command = draw(st.sampled_from(["convert", "validate", "stats", "roundtrip", "import", "new", "report", "runs"]))
    inputs = draw(st.lists(paths, min_size=1, max_size=2, unique=True))
    outs: dict[str, str | None] = {}
    if command == "convert":
        args = [inputs[0], "--to", draw(st.sampled_from(["jsonl", "csv", "promptfoo"]))]
        inputs = inputs[:1]
        outs = {"-o": draw(maybe), "--report": draw(maybe), "--summary": draw(maybe)}
        if draw(st.booleans()):
            args.append("--keep-going")
            outs["--ledger"] = draw(maybe)
        if args[2] == "promptfoo":
            outs["--config"] = draw(maybe)
    elif command in ("validate", "stats", "roundtrip"):
        args = [command, *inputs] + (["--via", "jsonl"] if command == "roundtrip" else [])
        outs = {"--junit": draw(maybe)} if command != "stats" else {}
        if command != "validate":
            outs["--html"] = draw(maybe)
    elif command == "import":
        args, inputs = ["import", inputs[0]], inputs[:1]
        outs = {"-o": draw(maybe), "--report": draw(maybe)}
    elif command == "new":
        args, inputs = ["new", "customer-support"], []
        outs = {"-o": draw(maybe), "--report": draw(maybe)}
    elif command == "report":
        cases = draw(paths)
        args = ["report", inputs[0], "--cases", cases]
        inputs = [inputs[0], cases]
        outs = {"--html": draw(maybe)}
    else:
        args = ["runs", "import", *inputs, "--store", draw(paths)]
        outs = {"--store": args[-1]}
    for option, path in outs.items():
        if path is not None and option != "--store":
            args += [option, path]
    return args, inputs, [p for p in outs.values() if p is not None]


def _identities(folder: Path, names: list[str]) -> set[tuple[int, int]]:
    out = set()
    for name in names:
        path = folder / name
        for member in ([path] if not path.is_dir() else [p for p in path.rglob("*") if p.is_file()]):
            if member.is_file():
                info = member.stat()
                out.add((info.st_dev, info.st_ino))
    return out


@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])  # capsys: read per run
@given(line=command_lines())
def test_random_command_lines_never_change_an_input(line, capsys):
    args, inputs, outputs = line
    with tempfile.TemporaryDirectory(prefix="evalconv-property-") as tmp:
        folder = Path(tmp)
        make_workspace(folder)
        read = _identities(folder, inputs)
        named = _identities(folder, outputs) - read  # what the user asked to be written
        before = snapshot(folder)
        with inside(folder):
            code, err = run_cli(args, capsys)
        assert code in (0, 1, 2) and "Traceback" not in err and "internal error" not in err, (args, err)
        after = snapshot(folder)
        for name, (identity, data, mtime) in before.items():
            if identity in named:
                continue
            assert name in after and after[name][1:] == (data, mtime), (args, name, err)


def test_regression_ctrl_c_as_the_temp_file_is_made_leaves_no_temp_file(tmp_path, monkeypatch):
    """Seen once in a full suite under load: Ctrl-C to a folder conversion's process group left a
    worker's `.part1.jsonl.*.evalconv-tmp`. The signal landed after `mkstemp` made the file and
    before the output knew its name. The output now knows the name before the file is made."""
    from evalconv import atomic

    made = []
    real_open = os.open

    def open_then_ctrl_c(path, flags, mode=0o777, **kwargs):
        fd = real_open(path, flags, mode, **kwargs)
        if str(path).endswith(atomic.SUFFIX):
            made.append(path)
            raise KeyboardInterrupt  # as a Ctrl-C raised right after the file is made
        return fd

    monkeypatch.setattr(atomic.os, "open", open_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        with atomic.AtomicOutput(str(tmp_path / "out.jsonl")) as out:
            out.stream.write("never\n")
    assert made and sorted(p.name for p in tmp_path.iterdir()) == []

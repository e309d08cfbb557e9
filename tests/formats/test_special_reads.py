"""Issue 23 §5-8: reads that hang, are unbounded, recurse or run out of memory. Every command
runs in a real process with a timeout, so a read that blocks again fails instead of hanging."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT, row
from evalconv.canonical import jsonvalue
from cli_process import evalconv_command

# FIFOs opened without blocking and /dev/fd of a pipe as Linux has them
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux FIFOs and /dev/fd")

SECONDS = 90  # a blocked read never finishes; a working one takes a second or two
PROJECT = ROOT / "tests" / "fixtures" / "vendors" / "promptfoo" / "refs_project"
RUNS = ROOT / "tests" / "fixtures" / "runs"


def run(args: list, *, cwd: Path | None = None, pass_fds: tuple[int, ...] = (), preexec_fn=None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(evalconv_command() + [str(a) for a in args], capture_output=True, text=True,
                              timeout=SECONDS, cwd=cwd, pass_fds=pass_fds, preexec_fn=preexec_fn, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"evalconv {' '.join(map(str, args))} did not finish in {SECONDS} s (blocked on a read?)")


def one_error_line(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stderr.splitlines() if line.startswith("evalconv: error:")]
    assert lines and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def write_set(path: Path, ids: tuple[str, ...] = ("a-1", "a-2")) -> Path:
    path.write_text("".join(jsonvalue.dumps(row(i)) + "\n" for i in ids), encoding="utf-8")
    return path


def fifo_instead(path: Path) -> Path:
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


# --- §5 what is not a regular file is refused, never opened blocking ------------------------------

@pytest.mark.parametrize("reference", ["vars/cancelled_connection.yaml", "defaults.yaml", "cases/escalations.yaml"],
                         ids=["vars-file", "defaultTest-file", "tests-file"])
def test_a_fifo_named_by_a_promptfoo_reference_is_refused_not_waited_on(tmp_path, reference):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    fifo_instead(project / reference)
    done = run(["validate", project / "promptfooconfig.yaml"])
    assert done.returncode == 2
    line = one_error_line(done)
    assert reference in line and "is a FIFO (named pipe), not a regular file" in line


@pytest.mark.parametrize("command", ["validate", "stats", "roundtrip", "convert"])
def test_a_fifo_inside_a_folder_is_refused_and_the_other_files_are_read(tmp_path, command):
    folder = tmp_path / "sets"
    folder.mkdir()
    write_set(folder / "a.jsonl")
    fifo_instead(folder / "b.jsonl")
    args = [folder, "--to", "csv", "-o", tmp_path / "out"] if command == "convert" else [command, folder]
    done = run(args)
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr
    said = [line for line in (done.stderr + done.stdout).splitlines() if "b.jsonl" in line]
    assert any("b.jsonl: it is a FIFO (named pipe), not a regular file" in line for line in said), said
    if command == "convert":
        assert (tmp_path / "out" / "a.csv").is_file() and not (tmp_path / "out" / "b.csv").exists()
    elif command == "stats":
        assert done.stdout.startswith("2 rows in 1 file")
    else:
        assert "a.jsonl" in done.stdout + done.stderr


def saved_dataset(folder: Path) -> Path:
    """What `datasets`' save_to_disk writes for canonical rows: an Arrow file named by state.json."""
    datasets = pytest.importorskip("datasets")
    from evalconv import read

    rows = read(str(write_set(folder.parent / "rows.jsonl"))).rows
    columns = {"id": [r.id for r in rows], "input": [r.input for r in rows],
               "case.caseId": [r.case["caseId"] for r in rows], "case.oracleType": [r.case["oracleType"] for r in rows],
               "case.expectedBehavior": [r.case["expectedBehavior"] for r in rows],
               "case.provenance": [r.case["provenance"] for r in rows]}
    datasets.Dataset.from_dict(columns).save_to_disk(str(folder))
    return folder


def test_an_hf_folder_whose_state_json_names_a_fifo_is_refused(tmp_path):
    folder = saved_dataset(tmp_path / "saved")
    assert run(["validate", folder]).returncode == 0  # the folder as save_to_disk wrote it reads
    (arrow,) = folder.glob("*.arrow")
    fifo_instead(arrow)
    done = run(["validate", folder])
    assert done.returncode == 2
    line = one_error_line(done)
    assert arrow.name in line and "is a FIFO (named pipe)" in line


def test_an_hf_folder_whose_state_json_is_a_fifo_is_refused(tmp_path):
    folder = saved_dataset(tmp_path / "saved")
    fifo_instead(folder / "state.json")
    done = run(["validate", folder, "--from", "hf"])
    assert done.returncode == 2
    assert "state.json" in one_error_line(done) and "FIFO" in done.stderr


@pytest.mark.parametrize("command", ["report", "import"])
def test_a_run_store_file_that_is_a_fifo_is_refused(tmp_path, command):
    store = tmp_path / "store"
    promptfoo = RUNS / "promptfoo" / "results.json"
    assert run(["runs", "import", promptfoo, "--store", store]).returncode == 0
    fifo_instead(store / "results.jsonl")
    args = (["report", store, "--cases", RUNS / "cases.jsonl"] if command == "report"
            else ["runs", "import", promptfoo, "--store", store])
    done = run(args)
    assert done.returncode == 2
    line = one_error_line(done)
    assert "results.jsonl" in line and "FIFO (named pipe), not a regular file" in line


def feeding(data: bytes) -> tuple[int, threading.Thread]:
    """The read end of a pipe that a thread fills with `data`: what `<(cat set.jsonl)` hands evalconv."""
    read_end, write_end = os.pipe()

    def feed() -> None:
        with os.fdopen(write_end, "wb") as out:
            try:
                out.write(data)
            except BrokenPipeError:
                pass
    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return read_end, thread


@pytest.mark.parametrize("command", ["convert", "validate", "stats", "roundtrip"])
def test_process_substitution_as_the_input_is_still_read(tmp_path, command):
    data = write_set(tmp_path / "set.jsonl").read_bytes()
    read_end, thread = feeding(data)
    path = f"/dev/fd/{read_end}"
    try:
        args = [path, "--to", "csv"] if command == "convert" else [command, path]
        done = run(args, pass_fds=(read_end,))
    finally:
        os.close(read_end)
        thread.join(5)
    assert done.returncode == 0, done.stderr
    if command == "convert":
        assert done.stdout.splitlines()[1].startswith("a-1,")


def test_a_named_fifo_given_as_the_input_is_read_as_a_stream(tmp_path):
    data = write_set(tmp_path / "set.jsonl").read_bytes()
    fifo = fifo_instead(tmp_path / "pipe.jsonl")
    writer = threading.Thread(target=fifo.write_bytes, args=(data,), daemon=True)
    writer.start()
    done = run([fifo, "--from", "jsonl", "--to", "csv"])
    writer.join(5)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3


# --- §6 the same limits for every reader, and nothing written that cannot be read back -------------

def peak_mib(args: list) -> tuple[subprocess.CompletedProcess, float]:
    """The command's result and the peak resident memory of its process, in MiB."""
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so it would count the test's own memory
    code = ("import re, sys\nfrom evalconv.cli import main\ntry:\n    main(sys.argv[1:])\nfinally:\n"
            "    hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
            "    print(f'peak-kib={hwm}', file=sys.stderr)")
    try:
        done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                              timeout=SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"evalconv {' '.join(map(str, args))} did not finish in {SECONDS} s")
    peak = [line for line in done.stderr.splitlines() if line.startswith("peak-kib=")]
    assert peak, done.stderr
    return done, int(peak[-1].split("=")[1]) / 1024


@pytest.mark.parametrize("reference", ["vars/cancelled_connection.yaml", "defaults.yaml"],
                         ids=["vars-file", "defaultTest-file"])
def test_a_referenced_file_of_3_gb_is_refused_unread(tmp_path, reference):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    with open(project / reference, "r+b") as f:  # sparse: 3 GB that take no disk
        f.truncate(3 << 30)
    done, peak = peak_mib(["validate", project / "promptfooconfig.yaml"])
    assert done.returncode == 2
    line = one_error_line(done)
    assert reference in line and "3,072 MiB, more than the 256 MiB" in line
    assert peak < 400, f"{peak:.0f} MiB: the file was read"


def parquet_with_a_cell(path: Path, size: int) -> Path:
    """A canonical Parquet file (a few KB, zstd) whose one row's input is `size` bytes."""
    import numpy
    import pyarrow as pa
    import pyarrow.parquet as pq
    from evalconv.canonical import parquet_format

    small = tmp_set = write_set(path.with_suffix(".jsonl"), ("big-1",))
    assert run([tmp_set, "--to", "parquet", "-o", path]).returncode == 0
    table = pq.read_table(path)
    cell = pa.StringArray.from_buffers(1, pa.py_buffer(numpy.array([0, size], dtype=numpy.int32)),
                                       pa.py_buffer(b"y" * size))
    at = table.schema.get_field_index("input")
    table = table.set_column(at, table.schema.field(at), pa.chunked_array([cell]))
    pq.write_table(table, path, **parquet_format.WRITER_OPTIONS)
    small.unlink()
    return path


@pytest.mark.parametrize("command", ["validate", "convert"])
def test_a_parquet_cell_over_the_cell_limit_is_refused_as_csv_and_json_refuse_one(tmp_path, command):
    source = parquet_with_a_cell(tmp_path / "big.parquet", 100 << 20)
    assert source.stat().st_size < 1 << 20
    out = tmp_path / "out.csv"
    done = run(["validate", source] if command == "validate" else [source, "--to", "csv", "-o", out])
    assert done.returncode == 2
    assert one_error_line(done).endswith("big.parquet: input: row 1: a cell of 100 MiB, more than the 64 MiB limit "
                                         "of a cell")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["big.parquet"]


def test_a_parquet_page_too_large_to_decompress_is_refused_from_its_header(tmp_path):
    source = parquet_with_a_cell(tmp_path / "bomb.parquet", 300 << 20)
    assert source.stat().st_size < 1 << 20  # 300 MiB in a few KB, as the 1.5 GiB in 50 KB
    done, peak = peak_mib(["validate", source])
    assert done.returncode == 2
    line = one_error_line(done)
    assert "bomb.parquet: input: row group 1 holds a page of 300 MiB uncompressed" in line
    assert "more than the 256 MiB" in line
    assert peak < 250, f"{peak:.0f} MiB: the page was decompressed"


@pytest.mark.parametrize("to", ["jsonl", "json"])
def test_a_line_evalconv_could_not_read_back_is_never_written(tmp_path, to):
    """A 40 MiB CSV cell of backslashes reads (under the 64 MiB cell limit); as JSON text each
    backslash is escaped, 80 MiB that no evalconv reader would take back: refused, nothing written."""
    from evalconv.canonical.csv_format import csv_line

    source = tmp_path / "wide.csv"
    header = ["id", "input", "case.caseId", "case.oracleType", "case.expectedBehavior", "case.provenance"]
    cells = ["w-1", "\\" * (40 << 20), "w-1", "expected-behavior-only", "Answers.", "expert-authored"]
    source.write_text(csv_line(header) + csv_line(cells), encoding="utf-8")
    assert run(["validate", source]).returncode == 0
    out = tmp_path / f"out.{to}"
    done = run([source, "--to", to, "-o", out])
    assert done.returncode == 2
    line = one_error_line(done)
    assert "row 'w-1' cannot be written" in line and "more than the 64 MiB evalconv reads back" in line
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["wide.csv"]


@pytest.mark.parametrize("to", ["parquet", "csv", "jsonl", "hf"])
def test_writers_refuse_a_cell_over_the_cell_limit(tmp_path, to):
    import evalconv
    from evalconv.canonical.errors import WriteError
    from evalconv.canonical.row import Row

    rows = [Row.from_json(row("ok-1")), Row.from_json({**row("huge-2"), "input": "z" * ((64 << 20) + 1)})]
    out = tmp_path / ("out" if to == "hf" else f"out.{to}")
    with pytest.raises(WriteError, match=r"row 'huge-2' cannot be written: .* more than the 64 MiB"):
        evalconv.write(rows, str(out), to=to)
    assert not out.exists()


# --- §7 recursion: one guarded loader, and folder references that cannot loop ------------------------

@pytest.mark.parametrize("split", [".", "", "loop"], ids=["dot", "empty", "symlink-to-itself"])
def test_an_hf_folder_whose_dataset_dict_names_the_folder_itself_as_a_split_is_refused(tmp_path, split):
    folder = tmp_path / "dd"
    folder.mkdir()
    if split == "loop":
        (folder / "loop").symlink_to(folder)
    (folder / "dataset_dict.json").write_text(jsonvalue.dumps({"splits": [split]}), encoding="utf-8")
    done = run(["validate", folder, "--from", "hf"])
    assert done.returncode == 2
    line = one_error_line(done)
    assert "dataset_dict.json names the split" in line and "(a loop)" in line


def hf_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "ds"
    assert run([write_set(tmp_path / "set.jsonl"), "--to", "hf", "-o", folder]).returncode == 0
    return folder


def test_a_card_whose_yaml_header_nests_100k_levels_is_read_without_it(tmp_path):
    folder = hf_folder(tmp_path)
    deep = "[" * 100_000 + "]" * 100_000
    (folder / "README.md").write_text(f"---\nconfigs: {deep}\n---\n# a card\n", encoding="utf-8")
    done = run(["validate", folder, "--from", "hf"])  # the header cannot be read: the usual data/ layout is
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr and "2 rows" in done.stdout


def test_a_state_json_nested_100k_levels_is_refused_in_one_line(tmp_path):
    folder = saved_dataset(tmp_path / "saved")
    (folder / "state.json").write_text('{"_data_files": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    done = run(["validate", folder, "--from", "hf"])
    assert done.returncode == 2
    line = one_error_line(done)
    assert "state.json" in line and "nesting is too deep" in line


def test_a_sheet_map_nested_100k_levels_is_refused_in_one_line(tmp_path):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("question,answer\nWhat?,That.\n", encoding="utf-8")
    deep = tmp_path / "map.yaml"
    deep.write_text("question: " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    done = run(["import", sheet, "--map", deep, "-o", tmp_path / "set.jsonl"])
    assert done.returncode == 2
    line = one_error_line(done)
    assert "map.yaml" in line and "nesting is too deep" in line
    assert not (tmp_path / "set.jsonl").exists()


# --- §8 low memory: an environment condition, said in one line ---------------------------------------

def memory_limit(mib: int):
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
    return limit


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_running_out_of_memory_is_one_line_exit_2_and_leaves_no_temp_file(tmp_path):
    source = write_set(tmp_path / "big.jsonl", ("m-1",))
    with open(source, "a", encoding="utf-8") as f:
        f.write(jsonvalue.dumps({**row("m-2"), "input": "y" * (60 << 20)}) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    done = run([source, "--to", "csv", "-o", out / "big.csv"], preexec_fn=memory_limit(300))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("evalconv: out of memory while reading ") and done.stderr.count("\n") == 1
    assert "internal error" not in done.stderr and "bug" not in done.stderr
    assert list(out.iterdir()) == []
    assert run([source, "--to", "csv", "-o", out / "big.csv"]).returncode == 0  # the same run with memory


@pytest.mark.parametrize("command", ["validate", "convert"])
def test_pyarrow_that_cannot_load_for_lack_of_memory_is_not_called_missing(tmp_path, command):
    source = write_set(tmp_path / "set.jsonl")
    parquet = tmp_path / "set.parquet"
    assert run([source, "--to", "parquet", "-o", parquet]).returncode == 0
    out = tmp_path / "out"
    out.mkdir()
    args = ["validate", parquet] if command == "validate" else [source, "--to", "parquet", "-o", out / "o.parquet"]
    done = run(args, preexec_fn=memory_limit(180))  # enough for Python, not for pyarrow's libraries
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("evalconv: out of memory") and "not installed" not in done.stderr
    assert done.stderr.count("\n") == 1 and list(out.iterdir()) == []


def test_pyarrow_that_is_not_installed_is_still_called_missing(tmp_path):
    source = write_set(tmp_path / "set.jsonl")
    code = "import sys\nsys.modules['pyarrow'] = None\nfrom evalconv.cli import main\nmain(sys.argv[1:])"
    done = subprocess.run([sys.executable, "-c", code, str(source), "--to", "parquet", "-o", str(tmp_path / "o.parquet")],
                          capture_output=True, text=True, timeout=SECONDS)
    assert done.returncode == 2
    assert one_error_line(done) == ("evalconv: error: Parquet needs pyarrow, which is not installed "
                                    "(pip install 'evalconv[parquet]')")


def test_openblas_does_not_end_the_process_when_memory_is_short(tmp_path):
    """At 250-300 MB numpy's OpenBLAS, with a buffer per core, exited with its own message (exit 1,
    leaving the temp file); with one thread pyarrow loads, and the run completes or says it is
    out of memory."""
    source = write_set(tmp_path / "set.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = run([source, "--to", "parquet", "-o", out / "o.parquet"], preexec_fn=memory_limit(300), env=env)
    assert "OpenBLAS" not in done.stderr
    assert done.returncode == 0 or done.returncode == 2 and done.stderr.startswith("evalconv: out of memory")
    assert leftovers(out) == []

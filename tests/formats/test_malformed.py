"""Issue 7: every malformed input in tests/malformed/ gets a one-line error naming the file and the
line (and the field where it can), exit 2 (unreadable) or 1 (invalid rows), no traceback, and no
output: neither the output file nor a temporary file beside it. BOM and CRLF files are not errors.

The cases and the errors they must produce are data: tests/malformed/cases.json.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import resource
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_process import evalconv_command
from click.testing import CliRunner

import evalconv
from evalconv.canonical.source import MAX_LINE_BYTES
from evalconv.cli import cli

CORPUS = Path(__file__).resolve().parents[1] / "malformed"
CASES = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))["cases"]
OUTPUT_SUFFIX = {"csv": ".csv", "json": ".json", "jsonl": ".jsonl", "promptfoo": ".yaml", "parquet": ".parquet",
                 "hf": ""}
# Cases also run through a real process (the installed console script), not only CliRunner.
REAL_PROCESS = {"truncated-json", "nul-bytes-csv", "deep-nesting-json", "unbalanced-quotes",
                "ragged-more-cells", "lone-surrogate", "bom-csv", "truncated-parquet", "wrong-type-parquet"}
SUBPROCESS_SECONDS = 60
SUBPROCESS_MEMORY = 2 * 1024 ** 3

HEADER = "id,input,expected,case.caseId,case.oracleType,case.expectedBehavior,case.provenance\n"


def _csv_record(row_id: str, input_cell: str) -> str:
    return f"{row_id},{input_cell},Yes,{row_id},reference-answer,Does the right thing.,expert-authored\n"


def _generate(name: str, folder: Path) -> Path:
    """The large-cell cases: files of 64 MiB and more are built here, not kept in git."""
    path = folder / name
    over = MAX_LINE_BYTES + 1024
    with open(path, "w", encoding="utf-8", newline="") as out:
        if name == "large-line.csv":
            out.write(HEADER + _csv_record("cs-1", "x" * over))
        elif name == "large-cell.csv":  # one quoted cell over many short lines
            line = "x" * 1023 + "\n"
            out.write(HEADER + _csv_record("cs-1", '"' + line * (over // len(line) + 1) + '"'))
        elif name == "large-line.jsonl":
            out.write('{"id": "cs-1", "input": "' + "x" * over + '"}\n')
        elif name == "big-cell-2mib.csv":  # over Python's default 128 KiB field limit
            out.write(HEADER + _csv_record("cs-1", "x" * (2 * 1024 * 1024)))
        else:
            raise AssertionError(f"no generator for {name}")
    return path


def _params(cases=CASES) -> list:
    return [pytest.param(case, id=case["id"],
                         marks=[pytest.mark.xfail(strict=True, reason=case["xfail"])] if case.get("xfail") else [])
            for case in cases]


def _source(case: dict, tmp_path: Path) -> Path:
    if case.get("requires") and importlib.util.find_spec(case["requires"]) is None:
        pytest.skip(f"{case['requires']} does not exist yet")
    if "generate" in case:
        folder = tmp_path / "in"
        folder.mkdir(exist_ok=True)
        return _generate(case["generate"], folder)
    return CORPUS / case["file"]


def _output_path(case: dict, tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir(exist_ok=True)
    to = case["args"][case["args"].index("--to") + 1]
    return folder / ("out" + OUTPUT_SUFFIX.get(to, ".out"))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _in_process(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args, catch_exceptions=True)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback
        stderr += "".join(traceback.format_exception(result.exception))
    return result.exit_code, result.stdout, stderr


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (SUBPROCESS_MEMORY, SUBPROCESS_MEMORY))


def real_process(args: list[str], *, cwd: Path | None = None) -> tuple[int, str, str]:
    try:
        done = subprocess.run(evalconv_command() + args, capture_output=True, text=True, cwd=cwd,
                              timeout=SUBPROCESS_SECONDS, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"evalconv {' '.join(args)} did not finish in {SUBPROCESS_SECONDS} s")
    return done.returncode, done.stdout, done.stderr


def _run(case: dict, args: list[str], *, real: bool) -> tuple[int, str, str]:
    # YAML cases can hang or eat memory while the reader is unfinished: always a bounded process.
    return real_process(args) if real or case.get("requires") else _in_process(args)


def assert_reported(case: dict, code: int, stdout: str, stderr: str) -> None:
    """Exit code, the message on one line with the file:line and field, and no traceback."""
    expected = case["exit"] if isinstance(case["exit"], list) else [case["exit"]]
    assert "Traceback" not in stderr + stdout, stderr
    assert code in expected, f"exit {code}, expected {expected}:\n{stderr}"
    if code == 0:
        return
    fragments = case.get("message_any") or [case["message"]]
    lines = [line for line in stderr.splitlines() if any(f in line for f in fragments)]
    assert lines, f"no stderr line holds any of {fragments}:\n{stderr}"
    located = [line for line in lines if case["where"] in line and case.get("field", "") in line]
    assert located, f"no line holds {case['where']!r} and {case.get('field')!r}:\n{stderr}"
    if code == 2:
        assert any(line.startswith("evalconv: error: ") for line in located), stderr


def assert_no_output(out: Path) -> None:
    assert os.listdir(out.parent) == [], "an output or temporary file was left behind"


def assert_output(case: dict, out: Path) -> None:
    assert os.listdir(out.parent) == [out.name], "only the output file, no temporary file"
    rows = evalconv.read(str(out)).rows
    assert len(rows) == case["rows"]
    if "contains" in case:
        assert any(case["contains"] in text for text in _strings([r.to_json() for r in rows]))


def _strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("case", _params())
def test_convert(case, tmp_path):
    src = _source(case, tmp_path)
    before = _digest(src)
    out = _output_path(case, tmp_path)
    code, stdout, stderr = _run(case, [str(src), *case["args"], "-o", str(out)], real=False)
    assert_reported(case, code, stdout, stderr)
    assert stdout == ""
    assert _digest(src) == before, "the input was changed"
    if code == 0:
        assert_output(case, out)
    else:
        assert_no_output(out)


def _validate_args(case: dict, src: Path) -> list[str]:
    args, rest = [], iter(case["args"])
    for word in rest:
        value = next(rest)
        if word != "--to":
            args += [word, value]
    return ["validate", str(src), *args]


@pytest.mark.parametrize("case", _params([c for c in CASES if c.get("validate", True)]))
def test_validate(case, tmp_path):
    src = _source(case, tmp_path)
    code, stdout, stderr = _run(case, _validate_args(case, src), real=False)
    assert_reported(case, code, stdout, stderr)
    assert os.listdir(tmp_path) in ([], ["in"])


@pytest.mark.parametrize("case", _params([c for c in CASES if c["id"] in REAL_PROCESS]))
def test_real_process(case, tmp_path):
    src = _source(case, tmp_path)
    out = _output_path(case, tmp_path)
    code, stdout, stderr = _run(case, [str(src), *case["args"], "-o", str(out)], real=True)
    assert_reported(case, code, stdout, stderr)
    if code == 0:
        assert_output(case, out)
    else:
        assert_no_output(out)


@pytest.mark.parametrize("name", ["truncated.json", "ragged-more.csv", "nul-bytes.jsonl"])
def test_a_failed_conversion_keeps_the_old_output(name, tmp_path):
    out = tmp_path / ("old" + Path(name).suffix.replace(".csv", ".jsonl").replace(".jsonl", ".json"))
    out.write_bytes(b"[]\n")
    code, _, stderr = _in_process([str(CORPUS / name), "--to", "json", "-o", str(out)])
    assert code in (1, 2) and "Traceback" not in stderr
    assert out.read_bytes() == b"[]\n" and os.listdir(tmp_path) == [out.name]


def test_standard_input_is_named_stdin():
    result = CliRunner().invoke(cli, ["-", "--from", "json", "--to", "jsonl"],
                                input=(CORPUS / "truncated.json").read_bytes())
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("evalconv: error: <stdin>:3: invalid JSON in the array")


def test_every_corpus_file_has_a_case():
    named = {c["file"] for c in CASES if "file" in c}
    on_disk = {p.name for p in CORPUS.iterdir() if p.name != "cases.json"}
    assert on_disk == named


def test_a_folder_of_broken_files_converts_the_good_ones_and_names_each_bad_one(tmp_path):
    """One bad file never stops the others, and never leaves an output of its own."""
    plain = [c for c in CASES if "file" in c and not c.get("requires") and not c.get("xfail")
             and c["args"] == ["--to", c["args"][1]] and not c["file"].endswith(".txt")]
    source = tmp_path / "in"
    source.mkdir()
    def renamed(name: str) -> str:  # bom.csv and bom.json must not both become bom.jsonl
        path = Path(name)
        return f"{path.stem}-{path.suffix[1:]}{path.suffix}"

    for case in plain:
        shutil.copy(CORPUS / case["file"], source / renamed(case["file"]))
    outdir = tmp_path / "out"
    code, _, stderr = _in_process([str(source), "--to", "jsonl", "-o", str(outdir)])
    assert code == 1 and "Traceback" not in stderr
    written = {p.name for p in outdir.rglob("*")}
    for case in plain:
        out_name = Path(renamed(case["file"])).stem + ".jsonl"
        if case["exit"] == 0:
            assert out_name in written, case["id"]
        else:
            assert out_name not in written, case["id"]
            assert renamed(case["file"]) in stderr, f"{case['id']} is not named"
    assert not [n for n in written if n.endswith(".evalconv-tmp")]


def test_a_format_that_fails_to_import_does_not_break_the_others():
    from evalconv.registry import Registry

    registry = Registry()
    registry.register("broken", "evalconv.vendors.no_such_module:FORMAT")
    registry.register("jsonl", "evalconv.canonical.json_format:JSONL_FORMAT", fallback=True)
    assert registry.detect("set.jsonl", '{"id": "a"}').name == "jsonl"
    assert registry.detect(None, '{"id": "a"}').name == "jsonl"
    with pytest.raises(evalconv.UsageError, match="broken"):
        registry.get("broken")


def test_every_csv_reader_keeps_the_64_mib_cell_bound_regression_large_cell_after_promptfoo_csv():
    """A promptfoo CSV read lifted the csv module's process-wide limit to sys.maxsize, so a later
    canonical CSV read in the same process accepted a cell over 64 MiB."""
    import csv
    import io

    from evalconv.canonical.source import MAX_LINE_BYTES, Lines
    from evalconv.registry import REGISTRY
    from evalconv.reports import ReadReport

    sheet = b"vars,__expected\nhi,equals:hi\n"
    list(REGISTRY.get("promptfoo").read(Lines(io.BytesIO(sheet), source="t.csv", path="t.csv"),
                                         ReadReport("promptfoo")))
    assert csv.field_size_limit() == MAX_LINE_BYTES

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# fixtures kept in helper modules, so a test module never imports another to reach one
pytest_plugins = ["fake_formats"]

os.environ.setdefault("EVALCONV_NO_PLUGINS", "1")  # installed third-party formats must not leak in

# Every run, here or in CI, uses the fixed "ci" profile (the same examples each time), so the
# README's test command and .ci/run agree. Random exploration is asked for: HYPOTHESIS_PROFILE=dev.
settings.register_profile("ci", derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")

ROOT = Path(__file__).resolve().parent.parent

# promptfoo runs on the Node.js the test command installs into .ci/node (the npm `node` package),
# not on whatever node the machine has: tests/test_node_version.py says why and checks it.
NODE_BIN = ROOT / ".ci" / "node" / "node_modules" / ".bin"
if (NODE_BIN / "node").exists() and not os.environ.get("PATH", "").startswith(f"{NODE_BIN}{os.pathsep}"):
    os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"


def run_main(args: list[str], capsys) -> tuple[int, str, str]:
    """The CLI in this process: its exit code and what it printed on stdout and stderr."""
    from evalconv.cli import main

    try:
        main(args)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 0
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_cli(args: list[str], capsys) -> tuple[int, str]:
    """The CLI in this process: its exit code and what it printed on stderr."""
    code, _, err = run_main(args, capsys)
    return code, err


def case(case_id: str = "cs-1", oracle: str = "reference-answer", **extra) -> dict:
    return {"caseId": case_id, "oracleType": oracle, "expectedBehavior": "Does the right thing.",
            "provenance": "expert-authored", **extra}


def row(row_id: str = "cs-1", *, oracle: str = "reference-answer", expected=("Yes",), **case_extra) -> dict:
    """A valid row as a plain dict; pass `expected=()` to leave expected out."""
    value = {"id": row_id, "input": "Question?", "metadata": {"case": case(row_id, oracle, **case_extra)}}
    if expected != ():
        value["expected"] = expected[0] if isinstance(expected, tuple) else expected
    return value


@pytest.fixture
def write_jsonl(tmp_path):
    from evalconv.canonical import jsonvalue

    def write(rows: list, name: str = "set.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path
    return write


@pytest.fixture(params=["fork", "forkserver"])
def small_chunks(monkeypatch, request):
    """Large-file mode on a small file: 2 KiB chunks, with workers forked and with workers from
    a fork server."""
    import multiprocessing

    from evalconv.engine import parallel, pools

    if request.param not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {request.param} here")
    monkeypatch.setattr(pools, "start_method", lambda: request.param)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 2048)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    return request.param


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for a test module (tests/browser.py)."""
    from browser import Browser

    with Browser() as b:
        yield b

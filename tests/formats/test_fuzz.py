"""Issue 7, fuzzing: random bytes and mutated valid files go to every registered reader (vendors
too, as they land). Only EvalconvError may escape, and every message, error or finding, is one
line fit for a person. Rows that come out valid must also be writable by every writer.

Budget: FUZZ_BYTES + FUZZ_MUTATIONS examples per reader, plus FUZZ_DETECT; CI runs the
derandomized "ci" profile from conftest.py, so a red build reproduces.
"""
from __future__ import annotations

import copy
import datetime
import functools
import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalconv
from conftest import ROOT
from evalconv import REGISTRY, EvalconvError
from evalconv.canonical import jsonvalue
from strategies import json_values, keys

# EVALCONV_FUZZ_SCALE=20 runs a longer campaign locally.
_SCALE = int(os.environ.get("EVALCONV_FUZZ_SCALE", "1"))
FUZZ_BYTES = 30 * _SCALE
FUZZ_MUTATIONS = 50 * _SCALE
FUZZ_DETECT = 40 * _SCALE

READERS = [name for name in REGISTRY.names() if REGISTRY.get(name).can_read]
WRITERS = [name for name in REGISTRY.names() if REGISTRY.get(name).can_write]
SEED_LIMIT = 64 * 1024
SEEDS = sorted(
    [ROOT / "golden_roundtrips" / f"support-agent.{ext}" for ext in ("jsonl", "json", "csv", "parquet")]
    + [p for p in (ROOT / "tests" / "fixtures" / "vendors").rglob("*")
       if p.is_file() and p.name != "MANIFEST.json" and p.stat().st_size <= SEED_LIMIT])
SEED_BYTES = {str(p.relative_to(ROOT)): p.read_bytes() for p in SEEDS}

_REPR = re.compile(r"<[\w.]+ object at 0x|\b\w*(Error|Exception)\(|Traceback \(most recent")


def assert_fit_for_a_person(message: str) -> None:
    assert isinstance(message, str) and message.strip(), "empty message"
    assert "\n" not in message and "\r" not in message, f"not one line: {message!r}"
    assert not _REPR.search(message), f"internal repr or traceback in: {message!r}"
    assert len(message) < 2000, f"message too long ({len(message)} chars)"


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="evalconv-fuzz-") as folder:
        yield Path(folder)


def check_reader(path: Path, from_: str | None, workdir: Path) -> None:
    """Read through the library: an EvalconvError or rows; messages fit for a person; valid
    rows go through every writer."""
    result = evalconv.validate_file(str(path), from_=from_)
    if result.unreadable is not None:
        assert_fit_for_a_person(result.unreadable)
    for finding in result.log.errors + result.log.warnings:
        assert_fit_for_a_person(finding.render())
    try:
        rows = evalconv.read(str(path), from_=from_).rows
    except EvalconvError as err:
        assert_fit_for_a_person(err.render())
        return
    if rows:
        check_writers(rows, workdir)


def check_writers(rows, workdir: Path) -> None:
    for to in WRITERS:
        fmt = REGISTRY.get(to)
        out = workdir / ("written" + (fmt.extensions[0] if fmt.extensions else ".out"))
        try:
            evalconv.write(rows, str(out), to)
        except EvalconvError as err:
            assert_fit_for_a_person(err.render())


def _write(workdir: Path, name: str, data: bytes) -> Path:
    path = workdir / name
    path.write_bytes(data)
    return path


def _extension(name: str) -> str:
    fmt = REGISTRY.get(name)
    return fmt.extensions[0] if fmt.extensions else ".txt"


@pytest.mark.parametrize("reader", READERS)
@settings(max_examples=FUZZ_BYTES)
@given(data=st.one_of(st.binary(max_size=600),
                      st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_random_bytes(reader, data, workdir):
    check_reader(_write(workdir, "random" + _extension(reader), data), reader, workdir)


# What hand edits, spreadsheets and truncated downloads do to a file.
TOKENS = [b'"', b"'", b",", b"\n", b"\r\n", b"\x00", b"\xff", b"\xef\xbb\xbf", b"{", b"}", b"[", b"]",
          b":", b"NaN", b"Infinity", b"-", b"1e999", b"12345678901234567890123", b"\\ud800", b"\\",
          b"null", b"true", b"- ", b"&a ", b"*a", b"!!binary ", b"!!python/object ", b"---\n", b"\t",
          b"=cmd|' /C calc'!A0", b"\xc3", b"\xe2\x80\xa8", b"|", b"#"]


@st.composite
def mutated(draw) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(SEED_BYTES)))
    data = bytearray(SEED_BYTES[name])
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["truncate", "delete", "insert", "replace", "duplicate"]))
        if kind == "truncate":
            del data[at:]
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 64))]
        elif kind == "insert":
            data[at:at] = draw(st.one_of(st.sampled_from(TOKENS), st.binary(min_size=1, max_size=8)))
        elif kind == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif kind == "duplicate":
            data[at:at] = data[at:at + draw(st.integers(1, 200))]
    return name, bytes(data)


@pytest.mark.parametrize("reader", READERS)
@settings(max_examples=FUZZ_MUTATIONS)
@given(sample=mutated())
def test_mutated_valid_files(reader, sample, workdir):
    name, data = sample
    check_reader(_write(workdir, "mutated" + os.path.splitext(name)[1], data), reader, workdir)


@settings(max_examples=FUZZ_DETECT)
@given(sample=st.one_of(mutated(), st.tuples(st.just("x.txt"), st.binary(max_size=400))),
       suffix=st.sampled_from(sorted({e for n in READERS for e in REGISTRY.get(n).extensions} | {".txt"})))
def test_detection_of_mutated_files(sample, suffix, workdir):
    """No --from: the registry's detection runs on broken content too."""
    _, data = sample
    check_reader(_write(workdir, "detect" + suffix, data), None, workdir)


GOLDEN_ROWS = [jsonvalue.loads(line) for line in
               SEED_BYTES["golden_roundtrips/support-agent.jsonl"].decode("utf-8").splitlines()]
ODD_VALUES = st.one_of(json_values, st.sampled_from(
    ["\ud800", "\udc00x", 2 ** 80, -0.0, 1e308, "", [], {}, [[[]]], {"case": {}}, "a\x00b", "\u2028",
     "=HYPERLINK(\"x\")", "\r", functools.reduce(lambda v, _: [v], range(250), 0)]))


@st.composite
def edited_rows(draw) -> list:
    """Golden rows with values swapped for odd ones, keys dropped or added: valid JSON, odd rows."""
    rows = copy.deepcopy(draw(st.lists(st.sampled_from(GOLDEN_ROWS), min_size=1, max_size=3)))
    for _ in range(draw(st.integers(1, 4))):
        node = draw(st.sampled_from(rows))
        while isinstance(node, dict) and node and draw(st.booleans()):
            child = node[draw(st.sampled_from(sorted(node)))]
            if not isinstance(child, dict) or not child:
                break
            node = child
        if not isinstance(node, dict):
            continue
        key = draw(st.one_of(st.sampled_from(sorted(node) or ["id"]), keys))
        if draw(st.booleans()) and key in node:
            del node[key]
        else:
            node[key] = copy.deepcopy(draw(ODD_VALUES))
    return rows


@pytest.mark.parametrize("as_", ["jsonl", "json"])
@settings(max_examples=FUZZ_MUTATIONS)
@given(rows=edited_rows())
def test_edited_rows(as_, rows, workdir):
    """Well-formed JSON holding odd rows: the validator and every writer must cope."""
    lines = [json.dumps(r, ensure_ascii=True) for r in rows]
    text = "\n".join(lines) + "\n" if as_ == "jsonl" else "[\n" + ",\n".join(lines) + "\n]\n"
    path = _write(workdir, "edited." + as_, text.encode("ascii"))
    for reader in [as_, None]:
        check_reader(path, reader, workdir)


def test_a_key_with_a_newline_is_reported_on_one_line(workdir):
    row = {**GOLDEN_ROWS[0], "bad\nkey": 1}
    path = _write(workdir, "newline-key.jsonl", (json.dumps(row) + "\n").encode())
    [finding] = evalconv.validate_file(str(path)).log.errors
    assert_fit_for_a_person(finding.render())


def test_an_id_with_a_newline_is_reported_on_one_line(workdir):
    row = {**GOLDEN_ROWS[0], "id": "two\nlines"}
    path = _write(workdir, "newline-id.jsonl", (json.dumps(row) + "\n").encode())
    [finding] = evalconv.validate_file(str(path)).log.errors
    assert_fit_for_a_person(finding.render())


def test_an_oracle_type_that_is_a_list_is_a_finding_not_a_crash(workdir):
    row = copy.deepcopy(GOLDEN_ROWS[0])
    row["metadata"]["case"]["oracleType"] = ["reference-answer"]
    path = _write(workdir, "list-oracle.jsonl", (json.dumps(row) + "\n").encode())
    result = evalconv.validate_file(str(path))
    assert result.log.errors and {f.code for f in result.log.errors} == {"schema"}


UNWRITABLE = {  # what YAML and vendor SDKs can hand a reader, which no writer can put out
    "lone surrogate": ("\ud800", "$.metadata.x", "lone surrogate"),
    "bytes (YAML !!binary)": (b"hello", "$.metadata.x", "bytes value is not JSON"),
    "date (unquoted YAML date)": (datetime.date(2024, 5, 1), "$.metadata.x", "date value is not JSON"),
    "NaN": (float("nan"), "$.metadata.x", "not valid JSON"),
    "300 levels": (functools.reduce(lambda v, _: [v], range(300), 0), "$.metadata.x", "nesting is too deep"),
}


@pytest.mark.parametrize("kind", sorted(UNWRITABLE))
def test_value_problem_names_what_no_writer_can_put_out(kind):
    value, path, words = UNWRITABLE[kind]
    row = copy.deepcopy(GOLDEN_ROWS[0])
    row["metadata"]["x"] = value
    where, message = jsonvalue.value_problem(row)
    assert where.startswith(path) and words in message
    assert jsonvalue.value_problem(GOLDEN_ROWS[0]) is None


@pytest.mark.parametrize("kind", sorted(UNWRITABLE))
def test_the_validator_refuses_what_no_writer_can_put_out(kind):
    from evalconv.canonical.source import SourceRow
    from evalconv.canonical.validator import Validator

    row = copy.deepcopy(GOLDEN_ROWS[0])
    row["metadata"]["x"] = UNWRITABLE[kind][0]
    checked = Validator(source="mem").check(SourceRow(row, 1))
    assert checked.row is None and any(UNWRITABLE[kind][2] in f.message for f in checked.errors)


def test_a_csv_column_name_with_a_newline_is_reported_on_one_line(workdir):
    path = _write(workdir, "newline-column.csv", b'id,input,"a\nb"\nx,y,z\n')
    result = evalconv.validate_file(str(path))
    assert result.unreadable is not None and "unknown column 'a\\nb'" in result.unreadable
    assert_fit_for_a_person(result.unreadable)


def test_the_fuzzers_see_every_reader_and_the_golden_seeds():
    assert {"csv", "json", "jsonl"} <= set(READERS)
    assert {"golden_roundtrips/support-agent.csv", "golden_roundtrips/support-agent.json",
            "golden_roundtrips/support-agent.jsonl"} <= set(SEED_BYTES)

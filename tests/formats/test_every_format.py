"""The contract every registered format keeps, checked for each one the registry finds (no list
here: a new format package is picked up as it lands). This is the checklist in CONTRIBUTING.md.

Per-format test files hold only what is particular to their tool (its mapping rules, its own files,
its interop); what every format promises is checked here, once."""
from __future__ import annotations

import io
import re

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical.diff import diff_paths, unexplained
from evalconv.canonical.errors import EvalconvError, RowRefused
from evalconv.canonical.field_table import field_table
from evalconv.cli import cli
from evalconv.registry import REGISTRY
from evalconv.reports import LossReport
from evalconv.roundtrip import route
from evalconv.engine.split_writers import write_row
from roundtrip_helpers import read_text, write_text
from strategies import any_format_rows

GOLDEN = ROOT / "golden_roundtrips"
FORMATS = [f.name for f in REGISTRY.all()]
ROUND_TRIPS = [(f.name, suffix) for f in REGISTRY.all() if f.can_read and f.can_write
               for suffix in ([s for v in f.variants for s in v.suffixes[:1]] or [f.output_suffix])]
READERS = [f.name for f in REGISTRY.all() if f.can_read]

# Heads that no format should choke on: every golden file whole and cut short, and junk.
HEADS = [""] + ["\ufeff", "\x00\x01\x02binary", "[", "{", '[{"input": "q", "expected', "- vars: [", 'a,"b\n',
                "\r\n\r\n", "id\n", "{\"a\": {\"b\": [1, 2, {\"c\": \"\\\"", "]]]}}}"]
for _path in sorted(p for p in GOLDEN.glob("support-agent.*") if p.is_file()):  # not the hf folder
    try:
        _text = _path.read_bytes()[:8192].decode("utf-8", "ignore") if _path.suffix == ".parquet" \
            else _path.read_text(encoding="utf-8")[:8192]
    except UnicodeDecodeError:
        continue
    HEADS += [_text] + [_text[:cut] for cut in range(1, min(len(_text), 2000), 97)]

MALFORMED = {"truncated.json": '[{"id": "a", "input": "q", "expected',
             "garbage.jsonl": "not json at all\n\x7f\x01\n",
             "quote.csv": 'id,input\na,"b\n',
             "broken.yaml": "- vars: [unclosed\n  assert: {\n"}


def test_the_registry_finds_every_format_and_none_is_broken():
    assert {"csv", "json", "jsonl", "promptfoo", "deepeval", "langsmith", "braintrust"} <= set(FORMATS)
    assert REGISTRY.broken == {}


@pytest.mark.parametrize("name, suffix", ROUND_TRIPS)
def test_round_trip_is_exact_up_to_the_loss_report(name, suffix):
    rows = evalconv.read(str(GOLDEN / "support-agent.jsonl")).rows
    result = route(rows, name, "support-agent.jsonl", suffix)
    assert result.problems == [], [p.to_json() for p in result.problems]
    assert result.status in ("ok", "lossy") and result.rows == len(rows)
    assert (result.status == "ok") or not REGISTRY.get(name).lossless


@pytest.mark.parametrize("name", FORMATS)
def test_detection_never_raises_and_answers_a_confidence(name):
    fmt = REGISTRY.get(name)
    for head in HEADS:
        confidence = fmt.detect(head)
        assert isinstance(confidence, (int, float)) and 0 <= confidence <= 1, (name, head[:80])


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize("file", sorted(MALFORMED))
def test_malformed_input_is_one_line_per_problem_never_a_traceback(tmp_path, name, file):
    path = tmp_path / file
    path.write_text(MALFORMED[file], encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(path), "--from", name])
    assert result.exit_code in (0, 1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output + result.stderr
    for line in result.stderr.splitlines():
        assert line.startswith((str(path), "evalconv:")), line
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1 and str(path) in result.stderr


@pytest.mark.parametrize("name", FORMATS)
def test_the_declarations_hold_together(name):
    fmt = REGISTRY.get(name)
    assert fmt.name == name and fmt.title and (fmt.extensions or fmt.folder)  # a folder format has no suffix
    assert fmt.can_read or fmt.can_write
    if fmt.can_write and not fmt.folder:
        assert fmt.matches_path("set" + fmt.output_suffix)
        for variant in fmt.variants:
            for suffix in variant.suffixes:
                assert fmt.make_options("set" + suffix).variant == variant.name
    paths = {f.path for f in fmt.field_map}
    assert all(p.startswith("$") for p in paths)
    assert all(f.fate in ("native", "carried", "dropped") for f in fmt.field_map)


# --- random rows: exact up to the loss report, in every variant --------------------------------

def _declared(fmt, path: str) -> bool:
    """`path` is a field the format's field map documents (`<other keys>`, `*` and `[*]` stand
    for any key or index), or lies under one."""
    for entry in fmt.field_map:
        pattern = re.escape(entry.path)
        pattern = re.sub(r"\\\.(<[^>]*>|\\\*)", r"(\\..+|\\[.+\\])", pattern)
        pattern = pattern.replace(r"\[\*\]", r"\[\d+\]")
        if re.fullmatch(pattern + r"([.\[].*)?", path, re.DOTALL):
            return True
    return False


def _write(name: str, rows, suffix: str, tmp):
    """Write and read back: in memory, or through a folder for a folder format.
    Returns (loss report, rows read, read report, error messages)."""
    if REGISTRY.get(name).folder:
        path = str(tmp / f"set{len(list(tmp.iterdir()))}")
        loss = evalconv.write(rows, path, name)
        back = evalconv.read(path, from_=name)
        return loss, back.rows, back.report, [e.to_json() for e in back.log.errors]
    text, loss = write_text(name, rows, path="set" + suffix)
    checked, report = read_text(name, text, path="set" + suffix)
    return loss, [c.row for c in checked if c.row is not None], report, [f.to_json() for c in checked for f in c.errors]


def _write_refusing(name: str, rows, suffix: str, tmp):
    """A row the tool cannot hold may be refused, in one line that stops the write; the rest
    go through. Returns what `_write` does for the rows written, and those rows."""
    try:
        return _write(name, rows, suffix, tmp), rows
    except EvalconvError as first:
        assert "\n" not in str(first), str(first)
    kept = []
    for row in rows:
        try:
            _write(name, [row], suffix, tmp)
            kept.append(row)
        except EvalconvError as err:
            assert "\n" not in str(err), str(err)
    assert len(kept) < len(rows), "the set was refused but no row alone is"
    if not REGISTRY.get(name).folder:
        _refuses_before_it_writes(name, rows, kept, suffix)
    return _write(name, kept, suffix, tmp), kept


def _refuses_before_it_writes(name: str, rows, kept, suffix: str) -> None:
    """A refusal is a `RowRefused` raised before the writer writes, notes or keeps anything of the
    row: the writer told to write every row, its refusals skipped (what --keep-going does), gives
    the file and the loss report of the kept rows alone."""
    fmt = REGISTRY.get(name)
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="") if fmt.binary else io.StringIO(newline="")
    report = LossReport(fmt.name)
    writer = fmt.open_writer(out, report, fmt.make_options("set" + suffix))
    for row in rows:
        try:
            write_row(writer, row)
        except RowRefused as err:
            assert err.row_id == row.id and row not in kept, str(err)
            continue
        report.rows += 1
    writer.close()
    if fmt.binary:
        out.flush()
    alone, alone_report = write_text(name, kept, path="set" + suffix)
    assert (out.buffer.getvalue() if fmt.binary else out.getvalue()) == alone
    assert report.to_json() == alone_report.to_json()


@pytest.mark.parametrize("name, suffix", ROUND_TRIPS)
@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                   HealthCheck.data_too_large])
@given(rows=any_format_rows())
def test_random_rows_come_back_exactly_up_to_the_loss_report(tmp_path, name, suffix, rows):
    """Write, read back: every row returns, differing from what went out by exactly the paths the
    loss report names (carried fields identical); the report speaks only of documented fields,
    drops nothing a format does not declare as dropped, and reading infers or edits nothing."""
    fmt = REGISTRY.get(name)
    (loss, back, report, errors), rows = _write_refusing(name, rows, suffix, tmp_path)
    assert errors == []
    assert [r.id for r in back] == [r.id for r in rows]
    for before, after in zip(rows, back):
        dropped = loss.dropped_paths(before.id)
        assert unexplained(diff_paths(before.to_json(), after.to_json()), dropped) == ([], []), before.id
        if not dropped:
            assert before == after, before.id
    assert report.inferred.entries == {} and report.edited.entries == {}, "a row evalconv wrote reads as changed"
    if fmt.lossless or not any(f.fate == "dropped" for f in fmt.field_map):
        assert not loss.lossy, loss.to_json()["dropped"]
    reported = [path for kind in (loss.carried, loss.dropped) for path, _ in kind.entries]
    assert [p for p in reported if not _declared(fmt, p)] == [], "the loss report names fields its table does not"


# --- the docs say what the code does ---------------------------------------------------------

DOCS = sorted((ROOT / "docs").rglob("*.md"))


@pytest.mark.parametrize("name", [f.name for f in REGISTRY.all() if f.field_map])
def test_the_field_map_table_in_the_docs_is_the_field_map(name):
    """Every format's field map is in its docs page as a table, word for word and in order."""
    rows = "\n".join(field_table(REGISTRY.get(name).field_map).splitlines()[2:])  # a page names its columns
    assert any(rows in page.read_text(encoding="utf-8") for page in DOCS if "vendors" in page.parts), name

"""`evalconv diff` in flat memory: the report's entries in a temporary spool, printed from it
(issue 28: "diff on two 1M-row sets runs in flat memory")."""
from __future__ import annotations

import copy
import os
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_process import in_a_fresh_process
from conftest import row
from evalconv.canonical import jsonvalue
from evalconv.cli import cli
from evalconv.lifecycle import diff as lifecycle_diff
from evalconv.lifecycle import json_stream, render
from evalconv.lifecycle.spool import Spool
from strategies import json_values


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def edited(base: list[dict], changed_every: int) -> list[dict]:
    """Every `changed_every`-th case changed (a third with a version bump), every 7th removed,
    one added (without a reason) after every 6th."""
    head = []
    for n, value in enumerate(base):
        if n % 7 == 3:
            continue
        value = copy.deepcopy(value)
        if n % changed_every == 0:
            value["expected"] = f"changed {n}: é \u2028 \x01 | `tick`"
            value["input"] = ["a", {"nested": n}] if n % 2 else value["input"]
            if n % 3 == 0:
                value["metadata"]["case"]["version"] = f"{n}.1"
        head.append(value)
        if n % 6 == 1:
            head.append(row(f"new-{n}"))
    return head


def base_set(size: int) -> list[dict]:
    return [row(f"case-{n:05d}", expected=(f"answer {n} " + "x" * 300,)) for n in range(size)]


@pytest.fixture
def spool_home(tmp_path, monkeypatch):
    """Where the spool's temporary folders go in this test (the system's temp folder, moved)."""
    home = tmp_path / "tmp"
    home.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(home))
    return home


def spools(home: Path) -> list[str]:
    """The diff spools left in `home` (multiprocessing keeps a folder of its own there meanwhile)."""
    return [name for name in os.listdir(home) if name.startswith("evalconv-diff-")]


def test_diff_json_streamed_is_byte_for_byte_the_report_held_in_memory(tmp_path, spool_home):
    base = base_set(400)
    b = write(tmp_path / "base.jsonl", base)
    h = write(tmp_path / "head.jsonl", edited(base, 3))
    assert run("retire", h, "--id", "case-00011", "--why", "gone: «reason» with | pipes").exit_code == 0
    report = lifecycle_diff.diff(str(b), str(h), fail_on=["new-without-reason"])
    counts = report.to_json()["counts"]
    assert min(counts["added"], counts["removed"], counts["changed"]) > render.SHOWN  # every list is cut in text
    data = report.to_json()
    for fmt, expected in (("json", jsonvalue.dumps(data, indent=True) + "\n"), ("text", render.text(data) + "\n"),
                          ("markdown", render.markdown(data))):
        done = run("diff", b, h, "--format", fmt, "--fail-on", "new-without-reason")
        assert done.exit_code == 1 == report.exit_code
        assert done.output == expected, fmt
    assert not spools(spool_home)


def test_diff_json_of_folders_and_git_refs_is_the_report_held_in_memory(tmp_path, spool_home):
    for side, changed_every in (("base", 1000), ("head", 4)):
        (tmp_path / side).mkdir()
        base = base_set(120)
        write(tmp_path / side / "a.jsonl", base if side == "base" else edited(base, changed_every))
        write(tmp_path / side / f"{side}-only.jsonl", [row(f"{side}-{n}") for n in range(60)])
    done = run("diff", tmp_path / "base", tmp_path / "head", "--format", "json")
    data = lifecycle_diff.diff(str(tmp_path / "base"), str(tmp_path / "head")).to_json()
    assert len(data["sets"]) == 3 and done.output == jsonvalue.dumps(data, indent=True) + "\n"


@settings(max_examples=60, deadline=None)
@given(json_values, st.lists(st.lists(json_values, max_size=4), min_size=1, max_size=3), st.data())
def test_a_report_printed_in_pieces_is_what_jsonvalue_dumps_prints_whole(value, entries, data):
    """Journals anywhere in a dict print as the lists they hold, orjson's text or (an integer
    beyond 64 bits anywhere) the standard library's, as `jsonvalue.dumps` picks for the whole."""
    with Spool() as spool:
        journals = []
        for kept in entries:
            journal = spool.journal("entries")
            for entry in kept:
                journal.append(entry)
            journals.append(journal)
        keys = data.draw(st.lists(st.text(max_size=5), min_size=len(entries), max_size=len(entries), unique=True))
        streamed = {"value": value, "sets": [dict(zip(keys, journals))], "last": journals[0]}
        whole = {"value": value, "sets": [dict(zip(keys, entries))], "last": entries[0]}
        stdlib = any(j.stdlib for j in journals) or json_stream.needs_stdlib(streamed)
        assert "".join(json_stream.chunks(streamed, stdlib=stdlib)) == jsonvalue.dumps(whole, indent=True)
        assert [list(j) for j in journals] == entries and [j[1:3] for j in journals] == [e[1:3] for e in entries]


def _peak_and_spool(b: Path, h: Path) -> tuple[int, int]:
    """Peak Python memory while diffing and printing the JSON and the text as the CLI does
    (tracemalloc), and the bytes the spool held at the end."""
    tracemalloc.start()
    try:
        with lifecycle_diff.open_diff(str(b), str(h), jobs=1) as report:
            data = report.to_json()
            printed = sum(len(piece) for piece in json_stream.chunks(data, stdlib=False))
            assert printed > 1_000_000 or len(data["sets"][0]["changed"]) < 100
            render.text(data)
            _, peak = tracemalloc.get_traced_memory()
            folder = report.spool.folder
            spooled = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    finally:
        tracemalloc.stop()
    return peak, spooled


def test_diff_memory_does_not_grow_with_the_changes(tmp_path, spool_home):
    """The regression: every change, added and removed case and finding was kept in lists for
    the report (~4.5 KB a case: 185 MB at 1M rows with 1% changed, against 123 MB for no change).
    Now the same ids with 100 times the changes take the same memory; only the spool grows."""
    base = base_set(1500)
    b = write(tmp_path / "base.jsonl", base)
    few = write(tmp_path / "few.jsonl", edited(base, 100))
    many = write(tmp_path / "many.jsonl", edited(base, 1))
    assert lifecycle_diff.diff(str(b), str(many)).to_json()["counts"]["changed"] > 1000
    _peak_and_spool(b, few)  # warm: imports and caches are not the diff's
    peak_few, spooled_few = _peak_and_spool(b, few)
    peak_many, spooled_many = _peak_and_spool(b, many)
    assert spooled_many - spooled_few > 1_000_000  # the changes' entries, on disk
    # Held in lists (before), the 1,280 more changed cases took 2.0 MB more (0.39 -> 2.44 MB at the
    # peak); spooled, 0.14 MB more (0.20 -> 0.34 MB: the held rows' index, the ids' strings).
    assert peak_many - peak_few < 512 * 1024, (peak_few, peak_many)


def test_the_spool_is_removed_after_a_diff_an_error_and_ctrl_c(tmp_path, spool_home, monkeypatch):
    base = base_set(60)
    b = write(tmp_path / "base.jsonl", base)
    h = write(tmp_path / "head.jsonl", edited(base, 2))
    beside = sorted(os.listdir(tmp_path))
    seen = []
    real = Spool.__init__

    def spy(self):
        real(self)
        seen.append(self.folder)

    monkeypatch.setattr(Spool, "__init__", spy)
    assert run("diff", b, h, "--format", "json").exit_code == 0
    assert lifecycle_diff.diff(str(b), str(h)).to_json()["counts"]["changed"] == 26
    assert len(seen) == 2 and all(Path(f).parent == spool_home for f in seen)
    assert not spools(spool_home) and sorted(os.listdir(tmp_path)) == beside  # nothing beside the sets

    def refused(*args, **kwargs):
        raise lifecycle_diff.ReadError("the file changed while diff read it: run diff again", source=str(b))

    monkeypatch.setattr(lifecycle_diff, "_second_pass", refused)
    done = run("diff", b, h)
    assert done.exit_code == 2 and "the file changed" in done.output
    assert not spools(spool_home) and len(seen) == 3

    def interrupted(*args, **kwargs):
        assert spools(spool_home)  # the spool is there while the diff runs
        raise KeyboardInterrupt

    monkeypatch.setattr(lifecycle_diff, "_second_pass", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lifecycle_diff.diff(str(b), str(h))
    assert not spools(spool_home) and len(seen) == 4


def _awkward(path: Path, rows: list[dict]) -> Path:
    """JSONL with a BOM, CRLF, a blank line, a bad line, a repeated id and a row without one."""
    lines = [jsonvalue.dumps(r) for r in rows]
    lines.insert(2, "")
    lines.insert(4, "{not json")
    lines.insert(5, jsonvalue.dumps({**rows[3], "expected": "a repeat of the id"}))
    lines.append(jsonvalue.dumps({"input": "no id"}))
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode("utf-8") + b"\r\n")
    return path


def test_the_base_read_in_a_second_process_gives_the_same_report_byte_for_byte(tmp_path, spool_home, monkeypatch):
    """`-j 2` (the default): the base's table is read in a worker process while the head is read
    here, then the head's added and changed rows again by their lines; `-j 1` reads both here."""
    # Alone: a test-run worker that other tests left with threads cannot fork, and the base's
    # process may then not start (the report is the same; this test checks that two processes ran).
    if not in_a_fresh_process(__file__, "test_the_base_read_in_a_second_process_gives_the_same_report_byte_for_byte"):
        return
    from evalconv.engine import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)  # two processes for small files too
    used = []
    real = lifecycle_diff._in_two_processes
    monkeypatch.setattr(lifecycle_diff, "_in_two_processes", lambda *a: used.append(real(*a)) or used[-1])
    base = base_set(300)
    b = write(tmp_path / "base.jsonl", base)
    head = edited(base, 4)
    head[5] = copy.deepcopy(head[5])
    head[5]["metadata"]["case"]["schemaVersion"] = 2  # migrated, not changed
    pairs = [(b, write(tmp_path / "head.jsonl", head)), (_awkward(tmp_path / "awkward-base.jsonl", base[:40]), b),
             (b, _awkward(tmp_path / "awkward-head.jsonl", head[:50]))]
    for base_path, head_path in pairs:
        for fmt in ("json", "text"):
            one = run("diff", "-j", "1", base_path, head_path, "--format", fmt, "--fail-on", "new-without-reason")
            two = run("diff", base_path, head_path, "--format", fmt, "--fail-on", "new-without-reason")
            assert (two.exit_code, two.output) == (one.exit_code, one.output)
    assert [u is not None for u in used] == [False, True] * 6
    assert lifecycle_diff.diff(str(b), str(pairs[0][1])).to_json() == \
        lifecycle_diff.diff(str(b), str(pairs[0][1]), jobs=1).to_json()
    assert not spools(spool_home)


def test_two_processes_refuse_an_unreadable_base_and_a_head_that_changes_in_one_line(tmp_path, spool_home,
                                                                                       monkeypatch):
    # Alone: a test-run worker that other tests left with threads cannot fork, and the base's
    # process may then not start (the report is the same; this test checks that two processes ran).
    if not in_a_fresh_process(__file__, "test_two_processes_refuse_an_unreadable_base_and_a_head_that_changes_in_one_line"):
        return
    from evalconv.engine import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    base = base_set(50)
    h = write(tmp_path / "head.jsonl", edited(base, 3))
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"id,input\n\xff\xfe,x\n")
    done = run("diff", bad, h)
    assert done.exit_code == 2 and "bad.csv" in done.output and len(done.output.strip().splitlines()) == 1
    real = lifecycle_diff._head_lines

    def rewritten(path, head, wanted):
        Path(path).write_text("\n" * 3, encoding="utf-8")  # the head replaced after its first read
        return real(path, head, wanted)

    monkeypatch.setattr(lifecycle_diff, "_head_lines", rewritten)
    done = run("diff", write(tmp_path / "base.jsonl", base), h)
    assert done.exit_code == 2 and "the file changed while diff read it" in done.output
    assert not spools(spool_home)

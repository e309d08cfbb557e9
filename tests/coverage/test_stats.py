"""`evalconv stats`: counts proven against sets with known counts, the gaps, and the gate."""
from __future__ import annotations

import contextlib
import json
import multiprocessing
import shutil
from typing import Iterator

import pytest
from stat_sets import GOLDEN, known_set

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, row
from evalconv.coverage import stats as coverage
from evalconv.canonical import jsonvalue
from evalconv.canonical.admissibility import implied_evaluator
from evalconv.cli import cli
from strategies import row_sets

SINGLE = ("case.oracleType", "case.evaluator", "case.provenance", "case.caseFamily", "case.reversibility",
          "case.blastRadius")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_known_counts(write_jsonl):
    path = write_jsonl(known_set())
    data = coverage.stats([str(path)]).to_json()
    assert data["rows"] == 12 and data["invalid"] == 0
    s = data["slices"]
    assert s["case.oracleType"] == {"reference-answer": 7, "acceptable-set": 0, "rubric": 3,
                                    "expected-tool-calls": 2, "expected-final-state": 0,
                                    "expected-behavior-only": 0}
    assert s["case.evaluator"] == {"exact-or-programmatic": 5, "exact-or-programmatic (implied)": 4,
                                   "llm-judge (implied)": 3}
    assert s["case.caseFamily"] == {"refunds": 5, "tone": 3, "greeting": 2, "(none)": 2}
    # once per concern per row: the starter rows' ["tone", "tone"] count once each
    assert s["case.linkedConcerns"] == {"tone": 4, "invented-policy": 3, "refund-accuracy": 3, "(none)": 5}
    assert s["metadata.severity"] == {"cosmetic": 3, "wrong-answer": 3, "harmful": 2, "(none)": 4}
    assert s["metadata.gate"] == {"release": 6, "trend": 2, "(none)": 4}
    assert "metadata.origin" not in s  # a reason field the set does not use
    assert data["multi_valued"] == ["case.linkedConcerns"]
    gaps = {g["code"]: g for g in data["gaps"]}
    assert gaps["starter-rows"]["count"] == 2 and gaps["starter-rows"]["values"] == {"greeting": 2}
    assert gaps["thin-family"]["values"] == {"greeting": 2}  # below the default minimum of 3
    assert gaps["missing-oracle-type"]["values"] == {"acceptable-set": 0, "expected-final-state": 0,
                                                     "expected-behavior-only": 0}
    assert "missing-severity" not in gaps
    assert gaps["no-reason"]["count"] == 7
    assert gaps["rubric-without-criteria"]["count"] == 2
    assert gaps["rubric-without-criteria"]["ids"] == ["rub-1", "rub-2"]
    assert gaps["judge-needs-validation"]["count"] == 3 and "3 implied" in gaps["judge-needs-validation"]["message"]
    assert gaps["gate-not-deterministic"]["ids"] == ["rub-0"]  # release-gated, graded by an llm-judge


def test_implied_evaluator_follows_the_admissibility_map():
    assert implied_evaluator("reference-answer") == "exact-or-programmatic"
    assert implied_evaluator("expected-final-state") == "exact-or-programmatic"
    assert implied_evaluator("rubric") == "llm-judge"
    assert implied_evaluator("expected-behavior-only") == "human-expert"


def test_crosstab_counts_and_samples(write_jsonl):
    path = write_jsonl(known_set())
    data = coverage.stats([str(path)], by=["case.oracleType,metadata.severity"]).to_json()
    [table] = data["crosstabs"]
    assert table["by"] == ["case.oracleType", "metadata.severity"]
    assert table["counts"]["reference-answer"] == {"wrong-answer": 3, "harmful": 2, "(none)": 2}
    assert table["counts"]["rubric"] == {"cosmetic": 3}
    assert table["columns"][:3] == ["cosmetic", "wrong-answer", "harmful"]  # severity order, not counts
    assert [r["id"] for r in table["samples"]["rubric"]["cosmetic"]] == ["rub-0", "rub-1", "rub-2"]
    assert sum(n for cols in table["counts"].values() for n in cols.values()) == 12


def test_samples_are_the_rows_behind_each_value(write_jsonl):
    path = write_jsonl(known_set())
    data = coverage.stats([str(path)], samples=2).to_json()
    behind = data["samples"]["case.caseFamily"]
    assert [r["id"] for r in behind["refunds"]] == ["ref-0", "ref-1"]
    assert behind["refunds"][0] == {"id": "ref-0", "file": str(path), "line": 1, "input": "Question?"}
    assert [r["id"] for r in data["samples"]["case.linkedConcerns"]["tone"]] == ["ref-3", "ref-4"]
    assert coverage.stats([str(path)], samples=0).to_json()["samples"]["case.caseFamily"] == {}


def test_values_of_other_types_count_apart_and_as_json(write_jsonl):
    rows = [row(f"r{i}") for i in range(5)]
    for r, value in zip(rows, [True, 1, 1.0, {"a": 1}, [1, True]]):
        r["metadata"]["team"] = value
    data = coverage.stats([str(write_jsonl(rows))], by=["metadata.team"]).to_json()
    assert data["slices"]["metadata.team"] == {"1": 2, "true": 2, "1.0": 1, '{"a":1}': 1}


@settings(max_examples=40)
@given(row_sets(max_size=8), st.lists(st.one_of(st.none(), st.sampled_from(["harmful", "cosmetic", " "]),
                                                st.lists(st.sampled_from(["a", "b", "", None]), max_size=3)),
                                      min_size=8, max_size=8))
def test_slices_add_up(tmp_path_factory, rows, severities):
    """Single-valued slices sum to the row count; a multi-valued one counts each distinct value
    once per row, and (none) once for a row with no value."""
    values = []
    for r, severity in zip(rows, severities):
        value = r.to_json()
        if severity is not None:
            value["metadata"]["severity"] = severity
        values.append(value)
    path = tmp_path_factory.mktemp("p") / "set.jsonl"
    path.write_text("".join(jsonvalue.dumps(v) + "\n" for v in values), encoding="utf-8")
    data = coverage.stats([str(path)], by=["metadata.severity"]).to_json()
    assert data["rows"] == len(values)
    for name in SINGLE:
        assert sum(data["slices"][name].values()) == len(values), name
    for name, get in (("case.linkedConcerns", lambda v: v["metadata"]["case"].get("linkedConcerns")),
                      ("metadata.severity", lambda v: v["metadata"].get("severity"))):
        expected: dict[str, int] = {}
        for v in values:
            for key in coverage.bucket_keys(get(v)):
                expected[key] = expected.get(key, 0) + 1
        counted = {k: n for k, n in data["slices"][name].items() if n}
        assert counted == expected, name


def test_many_files_and_folders_count_as_one_set(tmp_path):
    folder = tmp_path / "sets"
    folder.mkdir()
    for name in ("support-agent.jsonl", "support-agent.promptfoo.yaml", "support-agent.csv"):
        shutil.copy(GOLDEN / name, folder / name)
    data = coverage.stats([str(folder)]).to_json()
    assert [f["format"] for f in data["files"]] == ["csv", "jsonl", "promptfoo"]
    assert data["rows"] == sum(f["rows"] for f in data["files"]) == 30
    one = coverage.stats([str(GOLDEN / "support-agent.jsonl")]).to_json()
    assert data["slices"]["case.oracleType"] == {k: 3 * n for k, n in one["slices"]["case.oracleType"].items()}
    two = coverage.stats([str(GOLDEN / "support-agent.jsonl"), str(GOLDEN / "support-agent.csv")]).to_json()
    assert two["rows"] == 20


# --- the CLI and the gate ---------------------------------------------------------------------

def test_cli_json_is_the_library_dict(write_jsonl):
    path = write_jsonl(known_set())
    result = run("stats", path, "--by", "case.oracleType,metadata.severity", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads(jsonvalue.dumps(
        coverage.stats([str(path)], by=["case.oracleType,metadata.severity"]).to_json()))


def test_cli_text_and_markdown(write_jsonl):
    path = write_jsonl(known_set())
    text = run("stats", path).stdout
    assert text.startswith("12 rows in 1 file")
    assert "  reference-answer        7   58.3%  ███" in text
    assert "(implied) = the row names no evaluator" in text
    assert "[thin-family] 1 case family with fewer than 3 cases: greeting (2)" in text
    markdown = run("stats", path, "--format", "markdown").stdout
    assert "| rubric | 3 | 25.0% |" in markdown and "#### `case.oracleType`" in markdown
    assert "- `no-reason`: 7 rows with no reason" in markdown


def test_gate_min_every_value_fails_naming_the_slices(write_jsonl):
    path = write_jsonl(known_set())
    result = run("stats", path, "--min", "case.caseFamily=3")
    assert result.exit_code == 1
    assert ("evalconv: gate failed: --min case.caseFamily=3: case.caseFamily=greeting has 2 rows, fewer than 3"
            in result.stderr)
    assert "refunds" not in result.stderr and "tone" not in result.stderr
    assert run("stats", path, "--min", "case.caseFamily=2").exit_code == 0


def test_gate_min_one_value(write_jsonl):
    path = write_jsonl(known_set())
    result = run("stats", path, "--min", "metadata.severity=harmful:3", "--format", "json")
    assert result.exit_code == 1
    [failure] = json.loads(result.stdout)["gate"]["failures"]
    assert failure == {"check": "--min metadata.severity=harmful:3", "slice": "metadata.severity",
                       "value": "harmful", "count": 2, "min": 3,
                       "message": "metadata.severity=harmful has 2 rows, fewer than 3"}
    assert run("stats", path, "--min", "metadata.severity=harmful:2").exit_code == 0
    # a value the set lacks entirely counts as 0
    assert "acceptable-set has 0 rows" in run("stats", path, "--min", "case.oracleType=acceptable-set:1").stderr
    # a slice that is not a default one is added by the check
    result = run("stats", path, "--min", "metadata.origin=1")
    assert result.exit_code == 1 and "metadata.origin (no values at all) has 0 rows" in result.stderr


def test_gate_fail_on(write_jsonl):
    path = write_jsonl(known_set())
    result = run("stats", path, "--fail-on", "starter-rows", "--fail-on", "missing-severity")
    assert result.exit_code == 1
    assert "gate failed: --fail-on starter-rows: gap starter-rows: 2 rows from starter examples" in result.stderr
    assert "missing-severity" not in result.stderr  # the set has every severity
    assert run("stats", path, "--fail-on", "missing-severity,invalid-rows").exit_code == 0


def test_the_ci_recipe_in_the_docs_gates_as_documented(tmp_path):
    """The coverage gate of docs/ci.md, run as written: exit 1 naming every failing check (on
    stderr, and in the table's gate line), the page written as the CI artifact; exit 0 once the
    set covers what the checks ask."""
    import re
    import shlex

    recipe = re.search(r"`(evalconv stats sets/ [^`]+)`", (ROOT / "docs" / "ci.md").read_text())
    assert recipe is not None
    args = shlex.split(recipe.group(1))[1:]
    sets, reports = tmp_path / "sets", tmp_path / "reports"
    sets.mkdir()
    reports.mkdir()
    args = [str(sets) if a == "sets/" else a.replace("reports/", f"{reports}/") for a in args]

    (sets / "set.jsonl").write_text("".join(jsonvalue.dumps(r) + "\n" for r in known_set()), encoding="utf-8")
    result = run(*args)
    assert result.exit_code == 1
    failed = [line for line in result.stderr.splitlines() if line.startswith("evalconv: gate failed: ")]
    assert {line.split(": ")[2] for line in failed} == {
        "--min case.caseFamily=5", "--min metadata.severity=harmful:10", "--fail-on starter-rows",
        "--fail-on gate-not-deterministic"}
    assert ("evalconv: gate failed: --min case.caseFamily=5: case.caseFamily=refunds has 5 rows"
            not in result.stderr)  # refunds has 5: not named
    assert "evalconv: gate failed: --min case.caseFamily=5: case.caseFamily=tone has 3 rows, fewer than 5" \
        in result.stderr
    assert "\ngate: FAILED (--min case.caseFamily=5, --min metadata.severity=harmful:10, " in result.stdout
    assert (reports / "coverage.html").read_text(encoding="utf-8").startswith("<!doctype html>")

    covered = []
    for i in range(10):
        value = row(f"ok-{i}", evaluator="exact-or-programmatic", caseFamily=["refunds", "tone"][i % 2])
        value["metadata"].update(reason=f"Incident {i}", severity="harmful", gate="release")
        covered.append(value)
    (sets / "set.jsonl").write_text("".join(jsonvalue.dumps(r) + "\n" for r in covered), encoding="utf-8")
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    assert "gate failed" not in result.stderr and "\ngate: ok (" in result.stdout


def test_gate_usage_errors_exit_2(write_jsonl):
    path = write_jsonl(known_set())
    for args, message in ((["--fail-on", "nope"], "unknown gap code 'nope'"),
                          (["--min", "case.caseFamily"], "--min takes SLICE=N"),
                          (["--min", "case.caseFamily=x"], "--min takes SLICE=N"),
                          (["--by", "input"], "a slice is case.<field> or metadata.<key>, not 'input'"),
                          (["--by", "a,b,c"], "a slice is case.<field>"),
                          (["--by", "case.oracleType,case.evaluator,case.provenance"], "--by takes one field")):
        result = run("stats", path, *args)
        assert result.exit_code == 2, args
        assert message in result.stderr and "Traceback" not in result.output


def test_invalid_rows_are_reported_not_counted(write_jsonl):
    rows = known_set()
    rows[3]["metadata"]["case"]["oracleType"] = "vibes"
    path = write_jsonl(rows)
    result = run("stats", path, "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["rows"] == 11 and data["invalid"] == 1
    assert data["gaps"][0]["code"] == "invalid-rows"
    assert "evalconv: 1 row invalid, not counted; run evalconv validate" in result.stderr


def test_unreadable_input_exits_2(tmp_path):
    missing = run("stats", tmp_path / "nope.jsonl")
    assert missing.exit_code == 2 and "no such file or folder" in missing.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("stats", empty)
    assert result.exit_code == 2 and "no set files found" in result.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("tests: [\n", encoding="utf-8")
    result = run("stats", broken, "--from", "promptfoo")
    assert result.exit_code == 2 and "broken.yaml" in result.stderr


def test_html_page_is_written_atomically_or_not_at_all(write_jsonl, tmp_path):
    path = write_jsonl(known_set())
    page = tmp_path / "coverage.html"
    result = run("stats", path, "--html", page, "--format", "json")
    assert result.exit_code == 0
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>")
    nowhere = tmp_path / "no-such-folder" / "page.html"
    result = run("stats", path, "--html", nowhere)
    assert result.exit_code == 2 and "does not exist" in result.stderr and not nowhere.parent.exists()
    result = run("stats", path, "--html", path)
    assert result.exit_code == 2 and "never overwrites its input" in result.stderr


def test_the_readme_shows_a_small_screenshot_of_each_page():
    """Issue 18: one small screenshot of the stats page and of the roundtrip page in docs/, shown in
    the README (docs/screenshots.py makes them in the headless browser)."""
    import re
    import struct

    shown = re.findall(r"!\[evalconv (\w+) --html\]\((docs/[\w.-]+\.png)\)", (ROOT / "README.md").read_text())
    assert sorted(command for command, _ in shown) == ["roundtrip", "stats"]
    for _, image in shown:
        data = (ROOT / image).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 400_000, image
        width, height = struct.unpack(">II", data[16:24])
        assert 800 <= width <= 1600 and height <= 4000, (image, width, height)


@pytest.mark.parametrize("command", ["stats", "roundtrip", "report"])
def test_every_page_path_is_checked_the_same_way_before_any_work(command, tmp_path):
    """`stats`, `roundtrip` and `report` share `--html` (cli/pages.py): the same refusals, exit
    2, no file left behind, before a row is read."""
    data = tmp_path / "set.jsonl"
    shutil.copy(GOLDEN / "support-agent.jsonl", data)
    before = {"stats": [command, data], "roundtrip": [command, data, "--via", "jsonl"],
              "report": [command, tmp_path / "no-such-run.json", "--cases", data]}[command]
    for page, message in ((tmp_path / "missing" / "page.html", "does not exist"),
                          (tmp_path, "is a folder, not a file"),
                          (data, "never overwrites its input")):
        result = run(*before, "--html", page)
        assert result.exit_code == 2, (page, result.output)
        assert f"evalconv: error: {page}: --html" in result.stderr and message in result.stderr
        assert result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set.jsonl"]
    assert data.read_bytes() == (GOLDEN / "support-agent.jsonl").read_bytes()


def test_two_cores_count_exactly_what_one_counts(small_chunks, tmp_path):
    """A large JSONL file is counted a chunk per worker; the sums, the gaps and the rows behind
    each value (with their lines) are the single pass's, invalid rows and all."""
    rows = known_set() * 1
    for i in range(60):
        extra = row(f"more-{i}", caseFamily=f"family-{i % 7}", linkedConcerns=[f"c{i % 5}", f"c{i % 3}"])
        extra["metadata"].update(reason="r" * (i % 4), severity=["cosmetic", "harmful"][i % 2])
        rows.append(extra)
    path = tmp_path / "big.jsonl"
    lines = [jsonvalue.dumps(r) for r in rows]
    lines.insert(30, '{"id": "broken", "input": ')  # unparseable: invalid, not counted
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    by = ["case.caseFamily,metadata.severity"]
    one = coverage.stats([str(path)], by=by, jobs=1, samples=3).to_json()
    two = coverage.stats([str(path)], by=by, jobs=2, samples=3).to_json()
    assert one["rows"] == 72 and one["invalid"] == 1
    assert two == one
    assert [r["line"] for r in two["samples"]["case.caseFamily"]["family-6"]] == [19, 26, 34]  # the broken line is 31


REASONS = st.one_of(st.sampled_from([f"reason {i}" for i in range(16)] + ["", " "]), st.none(), st.integers(0, 2),
                    st.booleans(), st.lists(st.sampled_from(["a", "b", " "]), max_size=2))
COUNTED_ROWS = st.lists(st.tuples(REASONS, st.integers(0, 9), st.lists(st.sampled_from("xyz"), max_size=3)),
                        min_size=20, max_size=80)


def _capped_set(tmp_path_factory, drawn) -> str:
    rows = []
    for i, (reason, family, concerns) in enumerate(drawn):
        value = row(f"r{i}", caseFamily=f"f{family}", linkedConcerns=concerns)
        value["metadata"]["reason"] = reason
        rows.append(value)
    path = tmp_path_factory.mktemp("capped") / "set.jsonl"
    path.write_text("".join(jsonvalue.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@contextlib.contextmanager
def small_caps() -> Iterator[pytest.MonkeyPatch]:
    """Caps small enough for a few dozen rows to reach them all (undone when the block ends)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(coverage, "RAW_CAP", 6)
        patch.setattr(coverage, "MAX_VALUES", 4)
        patch.setattr(coverage, "SAMPLED_VALUES", 3)
        yield patch


@settings(max_examples=40, deadline=None)
@given(drawn=COUNTED_ROWS, batch=st.integers(2, 9))
def test_batches_count_exactly_what_a_row_at_a_time_counts(tmp_path_factory, drawn, batch):
    """Rows are counted a batch at a time (and, once a slice is full, by set operations); with
    every cap reached, that is still exactly a row-at-a-time pass: the same counts, the same
    `(other values)`, the same rows behind each value."""
    path = _capped_set(tmp_path_factory, drawn)
    by = ["metadata.reason,case.caseFamily"]
    with small_caps() as patch:
        patch.setattr(coverage, "BATCH_ROWS", 1)
        one_by_one = coverage.stats([path], by=by, jobs=1, samples=2).to_json()
        patch.setattr(coverage, "BATCH_ROWS", batch)
        assert coverage.stats([path], by=by, jobs=1, samples=2).to_json() == one_by_one


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork here")
@settings(max_examples=10, deadline=None)
@given(drawn=COUNTED_ROWS)
def test_two_cores_count_exactly_what_one_counts_past_every_cap(tmp_path_factory, drawn):
    """The workers count their chunks with no cap; the parent adds them up in file order as one
    pass would, caps and all."""
    from evalconv.engine import parallel, pools

    path = _capped_set(tmp_path_factory, drawn)
    by = ["metadata.reason,case.caseFamily"]
    with small_caps() as patch:
        patch.setattr(coverage, "BATCH_ROWS", 1)
        one = coverage.stats([path], by=by, jobs=1, samples=2).to_json()
        patch.setattr(pools, "start_method", lambda: "fork")
        patch.setattr(parallel, "CHUNK_BYTES", 4096)
        patch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
        two = coverage.stats([path], by=by, jobs=2, samples=2).to_json()
    assert two == one

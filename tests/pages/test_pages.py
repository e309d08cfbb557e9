"""The HTML pages, in a real headless Chromium: what a person sees is what the JSON says."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from browser import LAYOUT_JS, OVERFLOW_JS, cli_page, page_data
from evalconv.cli import cli
from evalconv.pages import kit
from stat_sets import GOLDEN, known_set

pytestmark = pytest.mark.interop  # needs the OS browser; CI fails without it


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def stats_page(write_jsonl, tmp_path):
    rows = known_set()
    for i in range(30):  # a family with a long name and many values: the chart must cut, not overflow
        extra = {"caseFamily": f"family-with-a-rather-long-name-for-a-chart-label-{i:02d}"}
        rows.append({"id": f"x-{i}", "input": "Why? " * 80, "metadata": {
            "case": {"caseId": f"x-{i}", "oracleType": "expected-behavior-only", "expectedBehavior": "Escalates.",
                     "provenance": "production-sample", **extra}, "reason": "A reason " * 30}})
    return cli_page(tmp_path / "coverage.html", "stats", write_jsonl(rows), "--by", "case.oracleType,metadata.severity",
                    "--min", "case.caseFamily=3", exit_code=1)  # the gate fails: the page shows why


def test_stats_page_is_self_contained(stats_page):
    page, data = stats_page
    assert page_data(page) == data


def test_stats_page_shows_the_json_numbers(browser, stats_page):
    page, data = stats_page
    browser.open(page, width=1366)
    assert browser.eval("JSON.parse(document.getElementById('evalconv-data').textContent)") == data
    charts = browser.eval("""[...document.querySelectorAll('div.chart')].map(chart => ({
        slice: chart.dataset.slice,
        bars: [...chart.querySelectorAll('.bar')].map(r => [r.dataset.value, +r.dataset.count,
               r.classList.contains('zero') ? 0 : r.getBoundingClientRect().width]),
        shown: [...chart.querySelectorAll('b.count')].map(t => +t.textContent)}))""")
    assert [c["slice"] for c in charts] == list(data["slices"])
    for chart in charts:
        expected = list(data["slices"][chart["slice"]].items())[:kit.MAX_BARS]
        assert [(v, n) for v, n, _ in chart["bars"]] == expected
        assert chart["shown"] == [n for _, n in expected]  # the numbers a person reads
        widths = {n: w for _, n, w in chart["bars"]}
        if len(widths) > 1:  # a longer bar for a larger count
            ordered = [widths[n] for n in sorted(widths)]
            assert ordered == sorted(ordered)
    families = next(c for c in charts if c["slice"] == "case.caseFamily")
    assert len(families["bars"]) == kit.MAX_BARS and len(data["slices"]["case.caseFamily"]) > kit.MAX_BARS
    heat = browser.eval("""[...document.querySelectorAll('table.heat td.cell:not(.zero)')].map(
        td => [td.dataset.row, td.dataset.col, +td.textContent])""")
    [table] = data["crosstabs"]
    assert sorted(map(tuple, heat)) == sorted((a, b, n) for a, cols in table["counts"].items() for b, n in cols.items())
    codes = browser.eval("[...document.querySelectorAll('ul.gaps li')].map(li => li.dataset.code)")
    assert codes == [f["check"] for f in data["gate"]["failures"]] + [g["code"] for g in data["gaps"]]
    assert browser.eval("document.querySelector('[data-tile=rows] .v').textContent") == str(data["rows"])
    assert browser.eval(OVERFLOW_JS) == []


def test_the_rows_behind_a_bar_are_one_click_away(browser, stats_page):
    page, data = stats_page
    browser.open(page, width=1366)
    assert browser.eval("[...document.querySelectorAll('.drill')].every(d => d.offsetHeight === 0)")
    href = browser.eval("""document.querySelector('div.chart[data-slice="case.caseFamily"] a')
        .getAttribute('href')""")
    browser.eval("document.querySelector('div.chart[data-slice=\"case.caseFamily\"] a')"
                 ".dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}))")
    shown = browser.eval(f"""(() => {{ const d = document.querySelector('{href}');
        return {{visible: d.offsetHeight > 0, top: d.getBoundingClientRect().top,
                 ids: [...d.querySelectorAll('span.id')].map(s => s.textContent)}}; }})()""")
    first_family = next(iter(data["slices"]["case.caseFamily"]))
    assert shown["visible"] and -1 <= shown["top"] < 900  # scrolled into view (to a subpixel)
    assert shown["ids"] == [r["id"] for r in data["samples"]["case.caseFamily"][first_family]]
    assert browser.eval(OVERFLOW_JS) == []
    cell = browser.eval("document.querySelector('table.heat td.cell a').getAttribute('href')")
    browser.go(cell)
    ids = browser.eval(f"[...document.querySelector('{cell}').querySelectorAll('span.id')].map(s => s.textContent)")
    [table] = data["crosstabs"]
    first_row = next(iter(table["counts"]))
    first_col = next(iter(table["counts"][first_row]))
    assert ids == [r["id"] for r in table["samples"][first_row][first_col]]


def test_stats_page_fits_a_narrow_window_too(browser, stats_page):
    page, _ = stats_page
    browser.open(page, width=800)
    assert browser.eval(OVERFLOW_JS) == []


@pytest.mark.parametrize("width", [390, 1280])
def test_stats_page_is_legible_on_a_phone_and_a_laptop(browser, stats_page, width):
    """Issue 26: chart labels shrank to about 7 px on a phone, table words broke inside."""
    page, _ = stats_page
    browser.open(page, width=width)
    assert browser.eval(LAYOUT_JS) == []


def test_stats_page_of_the_golden_folder(browser, tmp_path):
    page = tmp_path / "golden.html"
    assert run("stats", GOLDEN, "--html", page).exit_code == 0
    browser.open(page, width=1366)
    assert browser.eval("document.querySelectorAll('div.chart').length") >= 7
    assert browser.eval(OVERFLOW_JS) == []


def test_page_text_is_escaped(write_jsonl, tmp_path):
    rows = known_set()
    rows[0]["metadata"]["case"]["caseFamily"] = "</script><script>alert(1)</script>"
    rows[0]["metadata"]["reason"] = "<b>&amp;"
    page = tmp_path / "p.html"
    run("stats", write_jsonl(rows), "--html", page)
    html = Path(page).read_text(encoding="utf-8")
    assert "<script>alert(1)" not in html and "<b>&amp;" not in html


# --- the round-trip page ----------------------------------------------------------------------

@pytest.fixture
def roundtrip_page(tmp_path, broken_formats):
    return cli_page(tmp_path / "roundtrip.html", "roundtrip", GOLDEN / "support-agent.jsonl", "--via", "jsonl",
                    "--via", "promptfoo", "--via", "honest", "--via", "dishonest", exit_code=1)


def test_roundtrip_page_shows_the_gate(browser, roundtrip_page):
    from evalconv.pages.roundtrip_page import fates

    page, data = roundtrip_page
    assert page_data(page) == data
    browser.open(page, width=1366)
    assert browser.eval("JSON.parse(document.getElementById('evalconv-data').textContent)") == data
    statuses = browser.eval("""[...document.querySelectorAll('table.status td[data-status]')].map(
        td => [td.dataset.via, td.dataset.status, +td.dataset.count])""")
    assert statuses == [[r["via"], r["status"], len(r["problems"])] for r in data["results"]]
    assert [s for _, s, _ in statuses] == ["ok", "ok", "lossy", "fail"]
    order, cells = fates(data)
    shown = browser.eval("""[...document.querySelectorAll('td.fate')].map(
        td => [td.dataset.format, td.dataset.path, td.dataset.fate])""")
    assert sorted(map(tuple, shown)) == sorted((f, p, cells[f][p]["fate"]) for f in cells for p in order)
    assert cells["honest"]["$.metadata.case.scenario"]["fate"] == "dropped"  # dropped in this run
    assert cells["promptfoo"]["$.input"]["fate"] == "native"
    assert cells["jsonl"]["$.input"]["fate"] == "lossless"
    dropped = browser.eval("[...document.querySelectorAll('#dropped span[data-count]')].map(s => +s.dataset.count)")
    honest = next(r for r in data["results"] if r["via"] == "honest")
    assert dropped == [len(d["ids"]) for d in honest["dropped"]]
    assert browser.eval(OVERFLOW_JS) == []
    # the failing route: its rows and paths, one click away
    href = browser.eval("document.querySelector('table.status td[data-status=fail] a').getAttribute('href')")
    browser.go(href)
    rows = browser.eval(f"""(() => {{ const d = document.querySelector('{href}');
        return {{visible: d.offsetHeight > 0, cells: [...d.querySelectorAll('tr')].slice(1).map(
            tr => [...tr.querySelectorAll('td')].map(td => td.textContent))}}; }})()""")
    failing = next(r for r in data["results"] if r["via"] == "dishonest")
    assert rows["visible"] and failing["problems"]
    expected: dict = {}
    for p in failing["problems"]:
        expected.setdefault((p["path"], p["problem"]), []).append(p["id"])
    assert rows["cells"] == [[path, problem, str(len(ids)), ", ".join(ids)]
                             for (path, problem), ids in expected.items()]
    codes = browser.eval("[...document.querySelectorAll('#failed li')].map(li => li.dataset.code)")
    assert codes == ["dishonest: fail"]


@pytest.mark.parametrize("width", [390, 1280])
def test_roundtrip_page_is_legible_on_a_phone_and_a_laptop(browser, roundtrip_page, width):
    """Issue 26: at 1280 px the table split words ("identic al", "carrie d"); at 390 px it went one
    character a line and was clipped."""
    page, _ = roundtrip_page
    browser.open(page, width=width)
    assert browser.eval(LAYOUT_JS) == []


def test_roundtrip_html_is_refused_before_anything_runs(tmp_path):
    result = run("roundtrip", GOLDEN / "support-agent.jsonl", "--via", "jsonl", "--html", tmp_path / "no" / "p.html")
    assert result.exit_code == 2 and "does not exist" in result.stderr
    page = tmp_path / "p.html"
    result = run("roundtrip", GOLDEN / "support-agent.jsonl", "--via", "jsonl", "--html", page)
    assert result.exit_code == 0 and page.read_text(encoding="utf-8").startswith("<!doctype html>")

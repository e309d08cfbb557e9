"""`evalconv report --html`, in a real headless Chromium: what a person sees is what the JSON says."""
from __future__ import annotations


import pytest
from browser import LAYOUT_JS, OVERFLOW_JS, cli_page, page_data
from click.testing import CliRunner
from conftest import ROOT
from evalconv.cli import cli

pytestmark = pytest.mark.interop  # needs the OS browser; CI fails without it
RUNS = ROOT / "tests" / "fixtures" / "runs"
CASES = RUNS / "cases.jsonl"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def report_page(tmp_path):
    return cli_page(tmp_path / "report.html", "report", RUNS / "promptfoo" / "results.json", "--cases", CASES,
                    "--fail-under", "metadata.severity=harmful:1.0", exit_code=1)  # the gate fails: the page shows why


def test_report_page_is_self_contained_and_embeds_the_json(report_page):
    page, data = report_page
    assert page_data(page) == data


def test_report_page_shows_the_json_numbers_worst_slice_first(browser, report_page):
    page, data = report_page
    browser.open(page, width=1366)
    assert browser.eval("JSON.parse(document.getElementById('evalconv-data').textContent)") == data
    charts = browser.eval("""[...document.querySelectorAll('div.chart')].map(chart => ({
        slice: chart.dataset.slice,
        rows: [...chart.querySelectorAll('.rate')].map(g => [g.dataset.value, +g.dataset.passed, +g.dataset.failed,
               +g.dataset.unscored, g.querySelector('.rate-text').textContent,
               [...g.querySelectorAll('.bar')].map(r => [r.classList[1],
                 r.getBoundingClientRect().width / g.querySelector('.track').getBoundingClientRect().width])])}))""")
    assert [c["slice"] for c in charts] == list(data["slices"])
    for chart in charts:
        buckets = data["slices"][chart["slice"]]
        assert [r[0] for r in chart["rows"]] == list(buckets)  # worst first, as the JSON orders them
        for value, passed, failed, unscored, shown, bars in chart["rows"]:
            bucket = buckets[value]
            assert (passed, failed, unscored) == (bucket["passed"], bucket["failed"], bucket["unscored"])
            rate = bucket["passRate"]
            assert shown == ("n/a" if rate is None else f"{rate * 100:.1f}%")
            widths = dict(bars)
            total = passed + failed + unscored
            for outcome, count in (("passed", passed), ("failed", failed), ("unscored", unscored)):
                assert widths.get(outcome, 0) == pytest.approx(count / total, abs=0.01)
    assert browser.eval("document.querySelector('[data-tile=\"pass rate\"] .v').textContent") == "60.0%"
    assert browser.eval("document.querySelector('[data-tile=excluded] .v').textContent") == "1"
    codes = browser.eval("[...document.querySelectorAll('ul.gaps li')].map(li => li.dataset.code)")
    assert codes[0] == "gate" and "excluded" in codes and "attempt-without-case" in codes and "not-run" in codes
    ledger = browser.eval("[...document.querySelectorAll('#ledger table tr')].length")
    assert ledger == 1 + len(data["ledger"])
    assert browser.eval(OVERFLOW_JS) == []


def test_report_page_fits_a_narrow_window(browser, report_page):
    page, _ = report_page
    browser.open(page, width=800)
    assert browser.eval(OVERFLOW_JS) == []


@pytest.mark.parametrize("width", [390, 1280])
def test_report_page_is_legible_on_a_phone_and_a_laptop(browser, report_page, width):
    page, _ = report_page
    browser.open(page, width=width)
    assert browser.eval(LAYOUT_JS) == []


def test_report_page_lists_failing_cases_one_click_under_each_bar(browser, report_page):
    """Issue 25 §2: `grep cs-... report.html` found nothing; now each bar's failed and unscored cases
    are in a <details> under it, as the JSON's `failures` lists them."""
    page, data = report_page
    browser.open(page, width=1366)
    listed = browser.eval("""Object.fromEntries([...document.querySelectorAll('div.chart')].map(chart => [
        chart.dataset.slice, Object.fromEntries([...chart.querySelectorAll('details.cases')].map(d => [d.dataset.value,
          {open: d.open, ids: [...d.querySelectorAll('span.id')].map(s => s.textContent),
           visible: d.querySelector('table').checkVisibility()}]))]))""")
    for name, values in data["failures"].items():
        assert list(listed[name]) == list(values), name  # a list under every bar with a failure, worst first
        for value, listing in values.items():
            shown = listed[name][value]
            assert shown["ids"] == [c["id"] for c in listing["failed"] + listing["unscored"]]
            assert not shown["open"] and not shown["visible"]  # closed until clicked
    harmful = "document.querySelector('div.chart[data-slice=\"metadata.severity\"] details.cases[data-value=harmful]')"
    browser.eval(f"{harmful}.querySelector('summary').click()")
    assert browser.eval(f"{harmful}.open")
    cells = browser.eval(f"[...{harmful}.querySelectorAll('tr')].slice(1).map(tr => "
                         "[...tr.querySelectorAll('td')].map(td => td.textContent))")
    failed = data["failures"]["metadata.severity"]["harmful"]["failed"][0]
    assert cells[0] == [failed["id"], "failed", "harmful", failed["reason"], f"{failed['evaluator']}: {failed['message']}",
                        failed["outputRef"]]
    problems = browser.eval("[...document.querySelectorAll('ul.gaps li[data-code=gate] .ids')].map(e => e.textContent)")
    assert "r-order-status-tool" in problems[0]  # the failed gate names its unscored cases
    for width in (390, 1280):  # opened, it still fits a phone and a laptop
        browser.open(page, width=width)
        browser.eval("document.querySelectorAll('details.cases').forEach(d => d.open = true)")
        assert browser.eval(LAYOUT_JS) == [], width


def test_report_page_shows_judge_agreement(browser, tmp_path):
    from run_stores import build_store

    folder, cases = build_store(tmp_path)
    page = tmp_path / "agreement.html"
    assert run("report", folder, "--cases", cases, "--html", page).exit_code == 0
    browser.open(page, width=1366)
    rows = browser.eval("[...document.querySelectorAll('#agreement table tr')].slice(1).map("
                        "tr => [...tr.querySelectorAll('td')].map(td => td.textContent))")
    assert ["tone", "10", "7", "70.0%", "0.400", "4", "3", "2", "1"] in rows
    marked = browser.eval("document.querySelector('ul.gaps li[data-code=conditional] .count').textContent")
    assert marked == str(page_data(page)["flags"]["conditionalResults"]) and int(marked) > 0  # judge results marked
    assert browser.eval(OVERFLOW_JS) == []


def test_html_next_to_an_input_is_refused(tmp_path):
    out = run("report", RUNS / "promptfoo" / "results.json", "--cases", CASES, "--html", CASES)
    assert out.exit_code == 2 and "never overwrites its input" in out.stderr

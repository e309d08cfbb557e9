"""`evalconv stats SET... [--by FIELD]... [--min SLICE=N]... [--fail-on CODE]... [--html PAGE]`"""
from __future__ import annotations

import sys
from typing import Any

import click

from ..coverage import stats as coverage
from ..output_paths import check_outputs
from .texttable import aligned
from .common import echo_json, encoding_option, from_option, handles_errors
from .pages import by_option, format_option, html_option, say_written, write_page

SHOWN_VALUES = 15  # per slice in text and markdown; JSON and the page have them all
BAR_WIDTH = 28
EVALUATOR_NOTE = ("(implied) = the row names no evaluator; counted under the one its oracle type "
                  "implies (the automated one that needs no model, else llm-judge, else a person)")
MULTI_NOTE = "a row counts once under each of its values, so the counts add up to more than the rows"


@click.command("stats")
@click.argument("targets", nargs=-1, required=True, metavar="SET...")
@by_option("Also slice by case.<field> or metadata.<key> (repeatable); A,B adds a cross-tab.", "FIELD[,FIELD]")
@format_option("json", "markdown", help="json prints exactly what the library returns; markdown pastes into a PR.")
@html_option("Also write a self-contained HTML page with the charts.")
@click.option("--min", "minimums", multiple=True, metavar="SLICE=N|SLICE=VALUE:N",
              help="Gate: every value of SLICE (or VALUE) needs at least N rows, e.g. case.caseFamily=5.")
@click.option("--fail-on", multiple=True, metavar="CODE", help="Gate: fail when this gap is present (repeatable).")
@click.option("--family-min", type=click.IntRange(1), default=coverage.DEFAULT_FAMILY_MIN, show_default=True,
              help="A case family with fewer cases is a thin-family gap.")
@click.option("--samples", type=click.IntRange(0, 1000), default=coverage.DEFAULT_SAMPLES, show_default=True,
              help="Rows kept behind each value for drill-down (JSON and the page).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=None,
              help="Worker processes for a large JSONL file (default up to 2; 1 is serial).")
@from_option
@click.option("--include", multiple=True, metavar="GLOB", help="In folders, count only matching files.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="In folders, leave matching files out.")
@encoding_option
@handles_errors
def stats_command(targets: tuple[str, ...], by: tuple[str, ...], output_format: str, html_path: str | None,
                  minimums: tuple[str, ...], fail_on: tuple[str, ...], family_min: int, samples: int,
                  jobs: int | None, from_: str | None, include: tuple[str, ...], exclude: tuple[str, ...],
                  encoding: str | None) -> None:
    """Count a set's rows by slice, list its coverage gaps, and gate on them.

    All files (folders walked) count as one set. Exit 0 ok; 1 when a --min or --fail-on check
    fails or rows are invalid; 2 on usage errors or unreadable files.
    """
    check_outputs(targets, {"--html": html_path}, stdout=True, include=include)
    result = coverage.stats(targets, by=by, from_=from_, encoding=encoding, include=include, exclude=exclude,
                            samples=samples, family_min=family_min, minimums=minimums, fail_on=fail_on,
                            jobs=jobs)
    data = result.to_json()
    written = html_path if html_path is not None and result.exit_code != 2 else None  # a failed run writes nothing
    if written is not None:
        from ..pages.stats_page import render

        write_page(written, render(data))
    for line in result.unreadable:
        click.echo(f"evalconv: error: {line}", err=True)
    if output_format == "json":
        echo_json(data)
    elif output_format == "markdown":
        click.echo(markdown(data))
    else:
        click.echo(text(data))
    say_written(written)
    if result.invalid:
        click.echo(f"evalconv: {coverage.plural(result.invalid, 'row')} invalid, not counted; run evalconv validate",
                   err=True)
    for failure in result.failures:
        click.echo(f"evalconv: gate failed: {failure['check']}: {failure['message']}", err=True)
    sys.exit(result.exit_code)


def _shown(counts: dict[str, int]) -> tuple[list[tuple[str, int]], int, int]:
    """The values a table shows, and how many values and rows it leaves out."""
    items = list(counts.items())
    if len(items) <= SHOWN_VALUES:
        return items, 0, 0
    head, tail = items[:SHOWN_VALUES], items[SHOWN_VALUES:]
    return head, len(tail), sum(n for _, n in tail)


def _bar(count: int, top: int, width: int = BAR_WIDTH) -> str:
    if top <= 0 or count <= 0:
        return ""
    eighths = round(count / top * width * 8)
    full, part = divmod(max(eighths, 1), 8)
    return "█" * full + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[part]


def _share(count: int, rows: int) -> str:
    return f"{count / rows * 100:5.1f}%" if rows else "    -"


def _notes(name: str, data: dict[str, Any]) -> list[str]:
    notes = []
    if name == "case.evaluator" and any(k.endswith(coverage.IMPLIED) for k in data["slices"][name]):
        notes.append(EVALUATOR_NOTE)
    if name in data["multi_valued"]:
        notes.append(MULTI_NOTE)
    if name in data["capped"]:
        notes.append(f"more than {coverage.MAX_VALUES} distinct values: the rest count as {coverage.OTHER}")
    return notes


def _header(data: dict[str, Any]) -> str:
    files = [f for f in data["files"] if "unreadable" not in f]
    head = f"{data['rows']} rows in {len(files)} file{'s' if len(files) != 1 else ''}"
    if data["invalid"]:
        head += f" ({data['invalid']} invalid rows not counted)"
    return head


def text(data: dict[str, Any]) -> str:
    """An aligned table a slice, a bar a count; then the cross-tabs, the gaps and the gate."""
    rows = data["rows"]
    out = [_header(data)]
    for name, counts in data["slices"].items():
        shown, more, more_rows = _shown(counts)
        top = max(counts.values(), default=0)
        out += ["", name] + [f"  # {note}" for note in _notes(name, data)]
        if not counts:
            out.append("  (no rows)")
        out += aligned([[key, str(n), _share(n, rows), _bar(n, top)] for key, n in shown],
                       right={1}, cap=40, cut="…", indent="  ")
        if more:
            out.append(f"  … {more} more values ({more_rows} rows): --format json or --html for all")
    for table in data["crosstabs"]:
        out += ["", " x ".join(table["by"])] + _grid(table)
    out += _retired_lines(data)
    out += ["", "gaps: none" if not data["gaps"] else "gaps:"]
    out += [f"  [{g['code']}] {g['message']}" for g in data["gaps"]]
    if data["gate"]["checks"]:
        gate = data["gate"]
        out += ["", f"gate: {'ok' if gate['ok'] else 'FAILED'} ({', '.join(gate['checks'])})"]
        out += [f"  {f['message']}" for f in gate["failures"]]
    return "\n".join(out)


def _retired_lines(data: dict[str, Any]) -> list[str]:
    retired = data["retired"]
    if not retired["ledgers"]:
        return []
    out = ["", f"retired: {coverage.plural(retired['cases'], 'case')} ({', '.join(retired['ledgers'])})"]
    out += aligned([[reason, str(n)] for reason, n in retired["reasons"].items()], right={1}, cap=60, cut="…",
                   indent="  ")
    out += [f"  interrupted: {path} (its ledger is ahead of it: run `evalconv retire {path}` to finish)"
            for path in retired["interrupted"]]
    return out


def _grid(table: dict[str, Any], limit: int = 12) -> list[str]:
    cols = table["columns"][:limit]
    rows = list(table["counts"].items())[:limit * 2]
    cells = [["", *cols]] + [[a, *(str(counts.get(c, 0)) if counts.get(c) else "·" for c in cols)]
                            for a, counts in rows]
    lines = aligned(cells, right=range(1, len(cells[0])), cap=28, cut="", indent="  ")
    if len(table["columns"]) > limit or len(table["counts"]) > limit * 2:
        lines.append("  … more values: --format json or --html for all")
    return lines


def _md(text_: str) -> str:
    return text_.replace("|", "\\|").replace("\n", " ")


def markdown(data: dict[str, Any]) -> str:
    """Tables that paste into a pull request."""
    rows = data["rows"]
    out = [f"**Coverage**: {_header(data)}", ""]
    if data["gaps"]:
        out += ["**Gaps**", ""] + [f"- `{g['code']}`: {_md(g['message'])}" for g in data["gaps"]] + [""]
    gate = data["gate"]
    if gate["checks"]:
        out += [f"**Gate**: {'ok' if gate['ok'] else 'failed'} ({', '.join(f'`{c}`' for c in gate['checks'])})", ""]
        out += [f"- {_md(f['message'])}" for f in gate["failures"]] + ([""] if gate["failures"] else [])
    retired = data["retired"]
    if retired["ledgers"]:
        out += [f"**Retired**: {coverage.plural(retired['cases'], 'case')}", "", "| reason | cases |", "|---|--:|"]
        out += [f"| {_md(reason)} | {n} |" for reason, n in retired["reasons"].items()] + [""]
    for name, counts in data["slices"].items():
        shown, more, more_rows = _shown(counts)
        top = max(counts.values(), default=0)
        out += [f"#### `{name}`", ""] + [f"_{note}_" for note in _notes(name, data)]
        if _notes(name, data):
            out.append("")
        out += ["| value | rows | share | |", "|---|--:|--:|---|"]
        out += [f"| {_md(k)} | {n} | {_share(n, rows).strip()} | {_bar(n, top, 20)} |" for k, n in shown]
        if more:
            out.append(f"| … {more} more values | {more_rows} | {_share(more_rows, rows).strip()} | |")
        out.append("")
    for table in data["crosstabs"]:
        cols = table["columns"]
        out += [f"#### `{table['by'][0]}` x `{table['by'][1]}`", "",
                "| | " + " | ".join(_md(c) for c in cols) + " |", "|---|" + "--:|" * len(cols)]
        out += [f"| {_md(a)} | " + " | ".join(str(c_.get(c, 0)) for c in cols) + " |"
                for a, c_ in table["counts"].items()]
        out.append("")
    return "\n".join(out).rstrip() + "\n"

"""`evalconv roundtrip PATH... [--via FORMAT]... [--strict]`"""
from __future__ import annotations

import sys
from typing import Sequence

import click

from .. import roundtrip as gate
from ..atomic import together
from .junit import Case, write_junit
from ..output_paths import check_outputs
from .texttable import aligned
from .common import echo_json, encoding_option, from_option, handles_errors, quiet_flag
from . import progress
from .pages import format_option, html_option, say_written, write_page


@click.command("roundtrip")
@click.argument("targets", nargs=-1, required=True, metavar="PATH...")
@click.option("--via", multiple=True, metavar="FORMAT",
              help="Route through this format (repeatable; default: every format that reads and writes).")
@click.option("--strict", is_flag=True, help="Also fail on loss the report declares.")
@from_option
@click.option("--include", multiple=True, metavar="GLOB", help="In folders, check only matching files.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="In folders, leave matching files out.")
@format_option("json")
@click.option("--junit", "junit_path", metavar="PATH", help="Write JUnit XML: a test case per row and route.")
@html_option("Write a self-contained HTML page: formats x fields, and the rows of failing routes.")
@encoding_option
@quiet_flag
@handles_errors
def roundtrip_command(targets: tuple[str, ...], via: tuple[str, ...], strict: bool, from_: str | None,
                      include: tuple[str, ...], exclude: tuple[str, ...], output_format: str,
                      junit_path: str | None, html_path: str | None, encoding: str | None) -> None:
    """Fail when a set stops surviving a format.

    Each set goes canonical -> FORMAT -> canonical. Canonical formats must come back identical;
    a vendor format must differ by exactly what its loss report lists.
    """
    check_outputs(targets, {"--junit": junit_path, "--html": html_path}, stdout=True, include=include)
    with progress.shown():
        report = gate.check(targets, via=via, from_=from_, strict=strict, include=include, exclude=exclude,
                            encoding=encoding)
    written = report.exit_code != 2  # a failed run writes nothing
    if written:
        with together():  # both or neither
            if junit_path:
                write_junit(junit_path, junit_cases(report), name="evalconv roundtrip")
            if html_path:
                from ..pages.roundtrip_page import render

                write_page(html_path, render(report.to_json()))
    for line in report.unreadable:
        click.echo(f"evalconv: error: {line}", err=True)
    if output_format == "json":
        echo_json(report.to_json())
    else:
        click.echo(_table(report))
        for result in report.results:
            for problem in result.problems:
                click.echo(f"{result.file}: via {result.via}: {problem.id or '-'} {problem.path}: {problem.problem}",
                           err=True)
    if written:
        say_written(junit_path, html_path)
    sys.exit(report.exit_code)


def _table(report: gate.RoundtripReport) -> str:
    files = list(dict.fromkeys(r.file for r in report.results))
    routes = list(dict.fromkeys(r.via for r in report.results))
    cell = {(r.file, r.via): r.status + ("!" if report.failed(r) and r.status == "lossy" else "")
            for r in report.results}
    header = ["file", *routes]
    body = [[f, *(cell.get((f, v), "-") for v in routes)] for f in files]
    return "\n".join(aligned([header, *body]))


def junit_cases(report: gate.RoundtripReport) -> list[Case]:
    cases = []
    for result in report.results:
        by_row: dict[str | None, list[str]] = {}
        for problem in result.problems:
            by_row.setdefault(problem.id, []).append(f"{problem.path}: {problem.problem}")
        ids: Sequence[str | None] = result.row_ids or [None]
        for row_id in ids:
            failures = by_row.pop(row_id, [])
            if report.strict and result.status == "lossy":
                failures += [f"{d['path']}: dropped ({d['reason']})" for d in result.dropped if row_id in d["ids"]]
            cases.append(Case(result.file, f"{result.via}: {row_id or '(file)'}", failures))
        for row_id, failures in by_row.items():  # problems not tied to a row of the set
            cases.append(Case(result.file, f"{result.via}: {row_id or '(file)'}", failures))
    return cases

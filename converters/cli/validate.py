"""`evalconv validate IN...`"""
from __future__ import annotations

import shlex
import sys
from typing import Any

import click

from .. import api
from ..authoring.builder import load_packs
from ..canonical.contexts import load_contexts
from ..canonical.errors import UsageError
from ..canonical.schema import LATEST
from ..canonical.suggest import count
from ..registry import REGISTRY
from .junit import Case, write_junit
from ..output_paths import check_outputs
from .common import contexts_flag
from .engine_options import engine_options, opened_engine
from .common import echo_json, encoding_option, from_option, handles_errors, print_findings
from .common import note, print_warnings, quiet_flag
from . import progress
from .format_flags import ReadFlags


@click.command("validate", cls=ReadFlags)
@click.argument("sources", nargs=-1, required=True, metavar="IN...")
@from_option
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json prints exactly what the library returns.")
@encoding_option
@click.option("--require", multiple=True, metavar="FIELD",
              help="Rows that leave FIELD empty fail (repeatable), e.g. --require metadata.reason.")
@click.option("--junit", "junit_path", metavar="PATH", help="Write JUnit XML: a test case per row.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=None,
              help="Worker processes for a large JSONL file (default up to 2; 1 is serial).")
@click.option("--pack", "packs", multiple=True, metavar="FILE",
              help="Also check case families against this task-family pack (repeatable; built-in packs always).")
@contexts_flag
@quiet_flag
@engine_options
@handles_errors
def validate_command(sources: tuple[str, ...], from_: str | None, output_format: str,
                     encoding: str | None, require: tuple[str, ...],
                     junit_path: str | None, jobs: int | None, packs: tuple[str, ...],
                     contexts_path: str | None, engine: str, scheduler: str | None, **options: Any) -> None:
    """Check rows against the schema, the admissibility map and the set rules.

    Exit 0 with no errors (warnings allowed), 1 with any error, 2 when a file cannot be read.
    """
    REGISTRY.check_read_values(options)  # a bad --delimiter: refused before any file is opened
    check_outputs(sources + packs + ((contexts_path,) if contexts_path else ()), {"--junit": junit_path}, stdout=True)
    if engine != "default" and (packs or contexts_path):  # refused before a cluster starts
        raise UsageError(f"{'--pack' if packs else '--contexts'} is checked in one process: leave out --engine dask")
    index = load_packs(packs) if packs else None
    contexts = load_contexts(contexts_path) if contexts_path else None
    with opened_engine(engine, scheduler) as cluster:
        with progress.shown():
            report = api.validate(sources, from_=from_, encoding=encoding, require=require, jobs=jobs,
                                  packs=index, engine=cluster, contexts=contexts, **options)
    if junit_path and report.exit_code != 2:  # a failed run writes nothing
        write_junit(junit_path, junit_cases(report), name="evalconv validate")
    if output_format == "json":
        echo_json(report.to_json())
    else:
        for result in report.files:
            if result.unreadable is not None:
                click.echo(f"evalconv: error: {result.unreadable}", err=True)
                continue
            print_findings(result.log.errors, result.log.error_count, "errors", see_all="--format json lists them all")
            print_warnings(result.log.warnings, result.log.warning_count, see_all="--format json lists them all")
            if from_ is None and _read_as_vendor_by_content(result.path, result.format):
                note(f"{result.path} was read as {result.format} by its content; "
                     f"if it is a canonical set, name it with --from")
            if (old := version_note(result.path, result.versions)) is not None:
                note(old)
            status = "ok" if result.valid else "INVALID"
            starters = result.log.by_code.get("starter-example", 0)
            placeholders = result.log.by_code.get("placeholder-behavior", 0)
            still = f", {count(starters, 'still a starter example', 'still starter examples')}" if starters else ""
            still += f", {count(placeholders, 'placeholder expected behaviour')} to write" if placeholders else ""
            click.echo(f"{result.path} ({result.format}): {count(result.rows, 'row')}, "
                       f"{count(result.log.error_count, 'error')}, {count(result.log.warning_count, 'warning')}"
                       f"{still}: {status}")
    sys.exit(report.exit_code)


def version_note(path: str, versions: Any) -> str | None:
    """What to say of a set with rows at an older schema version: it reads as it always did."""
    older = {v: n for v, n in versions.items() if isinstance(v, int) and v < LATEST}
    if not older:
        return None
    which = ", ".join(f"{count(n, 'row')} at schema version {v}" for v, n in sorted(older.items()))
    return (f"{path}: {which} (read and checked as {'that version' if len(older) == 1 else 'those versions'}); "
            f"`evalconv migrate {shlex.quote(path)} --to {LATEST}` moves the set to version {LATEST}, whose "
            f"evidence fields (contextRefs, targetTurn, permission) it can then use")


def _read_as_vendor_by_content(path: str, fmt: str | None) -> bool:
    """A canonical extension (`set.jsonl`) read as a vendor: a canonical set with a mistake in it
    may look like a vendor file, and should not pass a gate quietly as one."""
    canonical = {"csv", "json", "jsonl"}
    if fmt is None or fmt in canonical:
        return False
    return any(path.lower().endswith(ext) for name in canonical for ext in REGISTRY.get(name).extensions) \
        and not REGISTRY.get(fmt).names_itself(path)


def junit_cases(report: api.ValidationReport) -> list[Case]:
    """One case per row that has findings, and one per file for the rows that passed."""
    cases = []
    for result in report.files:
        if result.unreadable is not None:
            cases.append(Case(result.path, "(file)", [result.unreadable]))
            continue
        by_row: dict[int | None, Case] = {}
        for finding in result.log.errors + result.log.warnings:
            case = by_row.setdefault(finding.row, Case(result.path, f"row {finding.row}" + (
                f" ({finding.id})" if finding.id else "")))
            (case.failures if finding.severity == "error" else case.notes).append(finding.render())
        passing = result.rows - sum(1 for c in by_row.values() if c.failures)
        cases.extend(by_row.values())
        cases.append(Case(result.path, f"{count(passing, 'row')} without errors"))
    return cases

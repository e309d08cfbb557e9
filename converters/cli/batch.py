"""`evalconv DIR --to FORMAT -o OUTDIR`: the folder half of the convert command."""
from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..api import ledger_path_for
from ..atomic import AtomicOutput
from ..batch import FAILED, BatchResult, FileOutcome, convert_tree, plan
from ..canonical import jsonvalue
from ..canonical.suggest import count
from ..output_paths import check_outputs
from .texttable import aligned


WARNINGS_SHOWN = 3  # per file; a folder of many files must stay readable


def run_folder(source: str, outdir: str, *, to: str, summary_path: str | None, include: tuple[str, ...],
               exclude: tuple[str, ...], jobs: int, options: dict[str, Any], **kwargs: Any) -> None:
    pairs = plan(source, outdir, to=to, include=include, exclude=exclude)
    outputs = [out for _, out in pairs]
    ledgers = [ledger_path_for(found.path, out) for found, out in pairs] if kwargs.get("keep_going") else []
    in_outdir = [summary_path] if summary_path and _inside(summary_path, outdir) else []  # a folder the run makes
    check_outputs([source], {"--summary": None if in_outdir else summary_path},
                  created={"-o": outputs, "--keep-going's ledger": ledgers, "--summary": in_outdir},
                  stdout=True, include=include, skip=outdir)
    total = len(pairs)
    bar = None
    if sys.stderr.isatty():
        bar = click.progressbar(length=total, label="converting", file=sys.stderr,
                                show_pos=True, item_show_func=lambda rows: rows)
        bar.__enter__()
    rows_done = 0

    def done(outcome: FileOutcome) -> None:
        nonlocal rows_done
        rows_done += outcome.rows
        if outcome.status in FAILED:
            for message in outcome.messages:
                click.echo(message, err=True)
        elif outcome.warnings:
            click.echo(f"evalconv: {outcome.source}: {count(outcome.warnings, 'warning')}", err=True)
            for message in outcome.messages[:WARNINGS_SHOWN]:
                click.echo(f"  {message}", err=True)
            if outcome.warnings > WARNINGS_SHOWN:
                click.echo(f"  ... and {count(outcome.warnings - WARNINGS_SHOWN, 'more warning')} "
                           f"(convert the file alone, or validate it, for all)", err=True)
        for notice in outcome.notices:
            click.echo(f"evalconv: note: {outcome.source}: {notice}", err=True)
        if bar is not None:
            bar.update(1, f"{rows_done} rows")

    try:
        result = convert_tree(source, outdir, to=to, include=include, exclude=exclude, jobs=jobs,
                              options=options, on_done=done, **kwargs)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    click.echo(summary_table(result))
    if summary_path:
        with AtomicOutput(summary_path) as out:
            out.stream.write(jsonvalue.dumps(result.to_json(), indent=True) + "\n")
            out.commit()
    failed = sum(1 for f in result.files if f.status in FAILED)
    click.echo(f"evalconv: {count(len(result.files), 'file')}, {count(sum(f.rows for f in result.files), 'row')}, "
               f"{failed} failed", err=True)
    sys.exit(result.exit_code)


def _inside(path: str, folder: str) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(folder) + os.sep)


def summary_table(result: BatchResult) -> str:
    header = ("file", "rows", "rejected", "lossy fields", "status")
    body = [(f.source, str(f.rows), str(f.rejected), str(f.lossy_fields), f.status) for f in result.files]
    return "\n".join(aligned([header, *body]))

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
from ..sources import Progress, watching
from .texttable import aligned
from .common import quiet
from . import progress


WARNINGS_SHOWN = 3  # per file; a folder of many files must stay readable


def run_folder(source: str, outdir: str, *, to: str, summary_path: str | None, include: tuple[str, ...],
               exclude: tuple[str, ...], jobs: int, options: dict[str, Any], manifests: tuple[str, ...] = (),
               **kwargs: Any) -> None:
    pairs = plan(source, outdir, to=to, include=include, exclude=exclude)
    outputs = [out for _, out in pairs]
    ledgers = [ledger_path_for(found.path, out) for found, out in pairs] if kwargs.get("keep_going") else []
    in_outdir = [summary_path] if summary_path and _inside(summary_path, outdir) else []  # a folder the run makes
    check_outputs([source, *manifests], {"--summary": None if in_outdir else summary_path},
                  created={"-o": outputs, "--keep-going's ledger": ledgers, "--summary": in_outdir},
                  stdout=True, include=include, skip=outdir)
    total = len(pairs)
    rows_done = files_done = 0

    with progress.shown() as bar:
        say = bar.write if bar is not None else (lambda line: click.echo(line, err=True))

        def done(outcome: FileOutcome) -> None:
            nonlocal rows_done, files_done
            rows_done += outcome.rows
            files_done += 1
            if outcome.status in FAILED:
                for message in outcome.messages:
                    say(message)
            elif outcome.warnings and not quiet():
                say(f"evalconv: {outcome.source}: {count(outcome.warnings, 'warning')}")
                for message in outcome.messages[:WARNINGS_SHOWN]:
                    say(f"  {message}")
                if outcome.warnings > WARNINGS_SHOWN:
                    say(f"  ... and {count(outcome.warnings - WARNINGS_SHOWN, 'more warning')} "
                        f"(convert the file alone, or validate it, for all)")
            for notice in outcome.notices if not quiet() else ():
                say(f"evalconv: note: {outcome.source}: {notice}")
            if bar is not None:
                bar(Progress(f"converting {os.path.basename(source.rstrip(os.sep)) or source}", rows_done, step=files_done, steps=total, unit="file",
                             done=files_done == total))

        with watching(None):  # one bar for the folder, a step a file (not one for each file's read)
            result = convert_tree(source, outdir, to=to, include=include, exclude=exclude, jobs=jobs,
                                  options=options, on_done=done, **kwargs)
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

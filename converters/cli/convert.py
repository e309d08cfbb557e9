"""`evalconv convert IN --to FORMAT [-o OUT]`"""
from __future__ import annotations

import os
import sys
from typing import Any

import click

from .. import api
from ..canonical.contexts import load_contexts
from ..canonical.errors import UsageError
from ..atomic import target_kind
from ..canonical.suggest import count
from ..output_paths import check_outputs
from ..validation import refuse_contexts_on_a_cluster
from ..registry import REGISTRY
from ..sources import folder_format
from .batch import run_folder
from .common import contexts_flag
from .format_flags import ReadAndWriteFlags
from .engine_options import engine_options, opened_engine
from .common import ALL_FINDINGS_VIA_VALIDATE, encoding_option, from_option, handles_errors, main_output, print_findings
from .common import aside, note, print_warnings, quiet_flag
from . import progress


@click.command("convert", cls=ReadAndWriteFlags)
@click.argument("source", metavar="IN")
@click.option("--to", "to", metavar="FORMAT",
              shell_complete=lambda ctx, param, incomplete: sorted(n for n in REGISTRY.names() if n.startswith(incomplete)),
              help="Output format (see `evalconv formats`; default: told by the -o file's extension).")
@click.option("-o", "--output", metavar="OUT", help="Output file (default: standard output).")
@from_option
@click.option("--report", "report_path", metavar="PATH", help="Write the loss report here as JSON.")
@click.option("--keep-going", is_flag=True,
              help="Write the valid rows; send rejected rows to an error ledger beside the output.")
@click.option("--ledger", metavar="PATH", help="Error ledger path (default: OUT.rejected.jsonl).")
@encoding_option
@click.option("--include", multiple=True, metavar="GLOB", help="Folder: convert only matching files.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Folder: leave matching files out.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=None,
              help="Worker processes: files at once for a folder (default 1); chunks of a large "
                   "JSONL file (default up to 2; 1 is serial).")
@click.option("--summary", "summary_path", metavar="PATH", help="Folder: write the summary table as JSON.")
@contexts_flag
@quiet_flag
@engine_options
@handles_errors
def convert_command(source: str, to: str | None, output: str | None, from_: str | None, report_path: str | None,
                    keep_going: bool, ledger: str | None, encoding: str | None,
                    include: tuple[str, ...], exclude: tuple[str, ...], jobs: int,
                    summary_path: str | None, contexts_path: str | None, engine: str, scheduler: str | None,
                    **options: Any) -> None:
    """Convert IN (a file, a folder, or - for standard input) to FORMAT.

    If any row is invalid nothing is written and the exit code is 1, unless --keep-going.
    A folder is mirrored under -o OUTDIR; one bad file never stops the others. With --contexts,
    a context reference the manifest does not list makes its row invalid (evidence-unresolvable).
    """
    to = to or _format_of_output(source, output)
    reading, writing = REGISTRY.split_options(options)
    REGISTRY.check_read_values(reading)  # a bad --delimiter: refused before any file is opened
    REGISTRY.writer_options(REGISTRY.get(to), None, writing)  # another format's option: refused now
    declared = REGISTRY.declared_options()
    file_options = {declared[name].metadata["flag"]: value for name, value in writing.items()
                    if declared[name].metadata["writes_file"] and value is not None}
    manifests = (contexts_path,) if contexts_path else ()
    contexts = load_contexts(contexts_path) if contexts_path else None
    if engine != "default" and (jobs or 1) > 1:
        raise UsageError("-j goes with the default engine: --engine dask's workers are the cluster's")
    refuse_contexts_on_a_cluster(contexts, None if engine == "default" else engine)  # before a cluster starts
    cluster = click.get_current_context().with_resource(opened_engine(engine, scheduler))  # closed on exit
    if os.path.isdir(source) and folder_format(source, from_) is None:
        for flag, given in (*file_options.items(), ("--report", report_path), ("--ledger", ledger)):
            if given:
                raise UsageError(f"{flag} goes with one file, not a folder", source=source)
        if not output:
            raise UsageError("converting a folder needs -o OUTDIR", source=source)
        run_folder(source, output, to=to, from_=from_, include=include, exclude=exclude, jobs=jobs or 1,
                   keep_going=keep_going, encoding=encoding, options=options, summary_path=summary_path,
                   engine=cluster, contexts=contexts, manifests=manifests)
        return
    if include or exclude or summary_path:
        raise UsageError("--include, --exclude and --summary apply to a folder", source=source)
    written, replaced, to_stdout = main_output(output, REGISTRY.get(to).folder)
    default_ledger = keep_going and not ledger and written["-o"] is not None and target_kind(written["-o"]) == "file"
    side = {"--report": report_path, "--ledger": ledger, **file_options}
    if default_ledger:
        side["--keep-going's ledger"] = api.ledger_path_for(source, output or "")
    check_outputs([source, *manifests], {**written, **side}, folders=replaced, stdout=to_stdout)
    with progress.shown(data_to_terminal=to_stdout):
        result = api.convert(source, output, to=to, from_=from_, keep_going=keep_going, encoding=encoding,
                             ledger=ledger, report=report_path, report_ids=bool(report_path), jobs=jobs,
                             engine=cluster, contexts=contexts, **options)
    for notice in result.read.notices():
        aside(f"evalconv: {result.source}: edited in the file: {notice}")
    print_findings(result.log.errors, result.log.error_count, "errors", see_all=ALL_FINDINGS_VIA_VALIDATE)
    print_warnings(result.log.warnings, result.log.warning_count, see_all=ALL_FINDINGS_VIA_VALIDATE)
    for notice in result.loss.notices if result.wrote_output else ():
        note(notice)
    if report_path and not result.wrote_output:
        click.echo(f"evalconv: no loss report written to {report_path}: nothing was converted", err=True)
    click.echo(_summary(result), err=True)
    sys.exit(result.exit_code)


def _summary(result: api.ConversionResult) -> str:
    target = result.output or "<stdout>"
    head = f"evalconv: {result.source} ({result.from_format}) -> {target} ({result.to_format}): "
    if not result.wrote_output:
        refused = result.log.by_code.get("refused-by-target", 0)
        return head + (f"nothing written: {result.rejected} of {count(result.rows_read, 'row')} "
                       f"{'invalid' if not refused else f'rejected, {refused} refused by {result.to_format}'} "
                       f"({count(result.log.error_count, 'error')}); use --keep-going to write the "
                       f"{'valid' if not refused else 'other'} rows")
    parts = [f"{count(result.rows_written, 'row')} written"]
    if result.read.edited:
        parts.append(f"{count(sum(len(ids) for ids in result.read.edited.entries.values()), 'edit')} in the "
                     f"{result.from_format} file taken (listed above)")
    if result.rejected:
        parts.append(f"{result.rejected} rejected to {result.ledger}")
    if result.log.warning_count:
        parts.append(count(result.log.warning_count, "warning"))
    starters = result.log.by_code.get("starter-example", 0)
    if starters:
        parts.append(f"{count(starters, 'starter example')} to replace before use")
    placeholders = result.log.by_code.get("placeholder-behavior", 0)
    if placeholders:
        parts.append(f"{count(placeholders, 'placeholder expected behaviour')} for a reviewer to write")
    loss = result.loss
    if loss.lossy:
        parts.append(f"lossy: {count(len(loss.dropped.entries), 'field')} dropped (see --report)")
    elif loss.carried:
        parts.append(f"{count(len(loss.carried.entries), 'field')} carried in vendor metadata only")
    else:
        parts.append("lossless")
    return head + ", ".join(parts)


def _format_of_output(source: str, output: str | None) -> str:
    """No --to: the format an output file's extension names, as `new` and `import` take it."""
    named = None if output in (None, "-") or os.path.isdir(source) else REGISTRY.for_output(output)
    if named is None:
        where = ("a folder's output is a folder" if os.path.isdir(source) and output
                 else "standard output has no extension" if output in (None, "-")
                 else f"the extension of {output} names no format")
        raise UsageError(f"name the output format with --to FORMAT ({where}; `evalconv formats` lists them)")
    return named

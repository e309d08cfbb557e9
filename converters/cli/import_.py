"""`evalconv import SHEET`: the sheet a team already has (any column names) as canonical rows."""
from __future__ import annotations

import sys

import click

from ..authoring import sheet_import
from ..atomic import AtomicOutput, together
from ..authoring.builder import output_format
from ..canonical import jsonvalue
from ..canonical.admissibility import ADMISSIBILITY
from ..canonical.schema import VERSIONS, enum
from ..output_paths import check_outputs
from ..registry import REGISTRY
from ..canonical.suggest import count
from .common import force_flag, refuse_existing, echo_json, encoding_option, handles_errors, main_output, print_findings
from .common import aside, print_notices, print_warnings, quiet_flag
from . import progress


@click.command("import")
@click.argument("sheet")
@click.option("-o", "--output", metavar="OUT", help="Output file (default: standard output).")
@click.option("--to", metavar="FORMAT", help="Output format (default: from OUT's extension, else jsonl).")
@click.option("--map", "map_path", metavar="MAP",
              help="YAML or JSON: sheet column -> field (input, expected, id, case.<field>, metadata.<key>).")
@click.option("--suggest-map", is_flag=True, help="Print the map the import would use, to edit, and stop.")
@click.option("--oracle-type", type=click.Choice(list(ADMISSIBILITY)), metavar="TYPE",
              help="The oracle type of every row without one (default: reference-answer when the row has "
                   "an answer, else expected-behavior-only).")
@click.option("--provenance", type=click.Choice(list(enum("provenance"))), default="imported", show_default=True,
              metavar="P", help="Where the rows came from.")
@click.option("--report", "report_path", metavar="PATH", help="Write the import summary (with the loss report) as JSON.")
@click.option("--list-sep", "list_sep", multiple=True, metavar="SEP|COLUMN=SEP",
              help="Split list cells at SEP (e.g. ';') instead of '|': every list field's, or COLUMN's "
                   "(then a list whatever its field). Repeatable.")
@click.option("--schema-version", "schema_version", type=click.Choice([str(v) for v in VERSIONS]), default=None,
              help="Write this schema version on every row whose sheet does not say one (default: 2 for a row "
                   "that fills a version-2 field such as case.contextRefs, else none, which means 1).")
@click.option("--excel-safe", is_flag=True, help="CSV: guard cells a spreadsheet would run as formulas.")
@encoding_option
@force_flag
@quiet_flag
@handles_errors
def import_command(sheet: str, output: str | None, to: str | None, map_path: str | None, suggest_map: bool,
                   oracle_type: str | None, provenance: str, report_path: str | None, excel_safe: bool,
                   encoding: str | None, force: bool = False, list_sep: tuple[str, ...] = (),
                   schema_version: str | None = None) -> None:
    """Turn an ad-hoc sheet (CSV, TSV or JSONL, any column names), a Parquet file or a Hugging
    Face dataset folder into canonical rows.

    \b
      evalconv import answers.csv --suggest-map > map.yaml     see (and edit) how columns are matched
      evalconv import answers.csv --map map.yaml -o set.csv     import with your map
    """
    written, replaced, to_stdout = main_output(output, REGISTRY.get(output_format(output, to)).folder)
    if suggest_map:  # prints the map; writes nothing
        written, replaced, to_stdout = {}, {}, True
    check_outputs([sheet, *([map_path] if map_path else [])], {**written, "--report": report_path}, folders=replaced,
                  stdout=to_stdout)
    if suggest_map:
        cmap = sheet_import.plan(sheet_import.read_sheet(sheet, encoding), map_path, need_input=False)
        click.echo(sheet_import.suggested_map(cmap), nl=False)
        return
    options = {"excel_safe": True} if excel_safe else {}
    refuse_existing(output, force, "import")
    with together():  # the rows and the report, both or neither
        with progress.shown(data_to_terminal=to_stdout):
            result = sheet_import.import_sheet(sheet, output, to=to, map_path=map_path, oracle_type=oracle_type,
                                               provenance=provenance, encoding=encoding, list_sep=list_sep,
                                               schema_version=int(schema_version) if schema_version else None,
                                               **options)
        if report_path:
            with AtomicOutput(report_path) as out:
                out.stream.write(jsonvalue.dumps(result.to_json(), indent=True) + "\n")
                out.commit()
    for line in summary_lines(result):
        aside(line)
    print_findings(result.log.errors, result.log.error_count, "errors", see_all="--report FILE lists them all")
    shown = [f for f in result.log.warnings if f.code != "starter-example"]
    print_warnings(shown, len(shown), see_all="--report FILE lists them all")
    print_notices(result.loss, result.wrote_output)
    click.echo(final_line(result), err=True)
    sys.exit(result.exit_code)


def summary_lines(result: sheet_import.ImportResult) -> list[str]:
    cmap = result.cmap
    out = [f"evalconv: import {result.sheet}: {count(result.rows, 'row')}"
           + (f" ({result.blank} blank rows skipped)" if result.blank else "")]
    for how, title in (("matched", "matched"), ("mapped", "from --map"), ("unmapped", "kept as metadata")):
        cols = [f"{c} -> {t[2:]}" for c, t in cmap.targets.items() if cmap.how[c] == how]
        if cols:
            out.append(f"  {title}: " + ", ".join(cols))
    for what, n in result.defaulted.items():
        out.append(f"  defaulted: {what} on {count(n, 'row')}")
    for column, why in cmap.flagged.items():
        out.append(f"  flagged: {column} is kept in user metadata, but the case profile leaves it out on "
                   f"purpose: {why}")
    out += result.lists.lines(result.list_seps)
    out += result.repeats.lines()
    return out


def final_line(result: sheet_import.ImportResult) -> str:
    head = f"evalconv: {result.sheet} -> {result.output or '<stdout>'} ({result.format}): "
    if not result.wrote_output:
        return head + f"nothing written: {count(result.log.error_count, 'error')} (fix the sheet or the map)"
    parts = [f"{count(result.loss.rows, 'row')} written"]
    if result.log.warning_count:
        parts.append(count(result.log.warning_count, "warning"))
    if result.starters:
        parts.append(f"{count(result.starters, 'starter example')} to replace before use")
    placeholders = result.log.by_code.get("placeholder-behavior", 0)
    if placeholders:
        parts.append(f"{count(placeholders, 'placeholder expected behaviour')} for a reviewer to write")
    if result.loss.lossy:
        parts.append(f"lossy: {count(len(result.loss.dropped.entries), 'field')} dropped")
    return head + ", ".join(parts)


__all__ = ["echo_json", "import_command"]

"""`evalconv new FAMILY` and `evalconv new --list`: start a set from a task family's starter rows."""
from __future__ import annotations

import sys

import click

from ..authoring import builder
from ..atomic import AtomicOutput, together
from ..canonical import jsonvalue
from ..canonical.admissibility import ADMISSIBILITY
from ..canonical.errors import UsageError
from ..canonical.pack import PackError
from ..output_paths import check_outputs
from ..authoring.packs_doc import packs_markdown
from ..registry import REGISTRY
from .texttable import aligned
from ..canonical.suggest import count
from .common import force_flag, refuse_existing, ALL_FINDINGS_VIA_VALIDATE, echo_json, fail, handles_errors, main_output, print_findings
from .common import print_notices

EVALUATORS = list(next(iter(ADMISSIBILITY.values())))
LIST_COLUMNS = ["case family", "oracle type", "evaluator", "R B (legend below)"]


@click.command("new")
@click.argument("family", required=False)
@click.option("--list", "list_", is_flag=True, help="List the task families and their case families.")
@click.option("-o", "--output", metavar="OUT", help="Output file (default: standard output).")
@click.option("--to", metavar="FORMAT", help="Output format (default: from OUT's extension, else jsonl).")
@click.option("--pack", "packs", multiple=True, metavar="FILE",
              help="Load a task-family pack of your own (YAML or JSON; see docs/packs.md). Repeatable.")
@click.option("--case-family", "case_families", multiple=True, metavar="ID",
              help="Only these case families (repeatable; default: all of the family's).")
@click.option("--evaluator", type=click.Choice(EVALUATORS), metavar="EVALUATOR",
              help="Grade every row with this evaluator; refused when the oracle type bars it.")
@click.option("--report", "report_path", metavar="PATH", help="Write the loss report here as JSON.")
@click.option("--excel-safe", is_flag=True, help="CSV: guard cells a spreadsheet would run as formulas.")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="--list: text, JSON, or the markdown of docs/packs.md.")
@force_flag
@handles_errors
def new_command(family: str | None, list_: bool, output: str | None, to: str | None, packs: tuple[str, ...],
                case_families: tuple[str, ...], evaluator: str | None, report_path: str | None,
                excel_safe: bool, output_format: str, force: bool = False) -> None:
    """Start a set: write FAMILY's starter rows (edit them, then replace their expected behaviour).

    \b
      evalconv new --list                          the task families
      evalconv new customer-support -o set.csv     a starter set to edit
      evalconv new rag-qa --to promptfoo -o tests.yaml --case-family grounded-fact
    """
    written, replaced, to_stdout = main_output(output, REGISTRY.get(builder.output_format(output, to)).folder)
    if list_:  # prints the list; writes nothing
        written, replaced, to_stdout = {}, {}, True
    check_outputs(packs, {**written, "--report": report_path}, folders=replaced, stdout=to_stdout)
    try:
        index = builder.load_packs(packs)
    except PackError as err:  # every problem of a broken pack, each on its own line
        for line in err.lines():
            click.echo(f"evalconv: error: {line}", err=True)
        sys.exit(err.exit_code)
    if list_:
        if family:
            raise UsageError("--list takes no FAMILY")
        listing = builder.family_list(index)
        if output_format == "json":
            echo_json(listing)
            return
        if output_format == "markdown":
            click.echo(packs_markdown(index), nl=False)
            return
        header = aligned([["task family", "title"]], widths=[22], gap=" ")
        header += aligned([LIST_COLUMNS], widths=[28, 24, 26], indent="  ", gap=" ")
        click.echo("\n".join(header))
        for fam in listing["families"]:
            lines = aligned([[fam["id"], fam["title"]]], widths=[22], gap=" ")
            lines += aligned([[cf["id"], cf["oracleType"], cf["evaluator"],
                               " ".join(c for c in (cf["reversibility"], cf["blastRadius"]) if c)]
                              for cf in fam["caseFamilies"]], widths=[28, 24, 26], indent="  ", gap=" ")
            click.echo("\n".join(lines))
        for name, legend in listing["legend"].items():
            click.echo(f"case.{name}: " + ", ".join(f"{code} {meaning}" for code, meaning in legend.items()))
        return
    if not family:
        fail("name a task family (evalconv new --list shows them)")
    if excel_safe and builder.output_format(output, to) != "csv":
        raise UsageError("--excel-safe guards CSV cells; it goes with a CSV output")
    options = {"excel_safe": True} if excel_safe else {}
    refuse_existing(output, force, "new")
    with together():  # the set and its report, both or neither
        result = builder.new_set(family, output, to=to, pack_files=packs, case_families=case_families,
                                 evaluator=evaluator, **options)
        if report_path and not result.log.error_count:
            with AtomicOutput(report_path) as out:
                out.stream.write(jsonvalue.dumps(result.loss.to_json(), indent=True) + "\n")
                out.commit()
    print_findings(result.log.errors, result.log.error_count, "errors", see_all=ALL_FINDINGS_VIA_VALIDATE)
    shown = [f for f in result.log.warnings if f.code != "starter-example"]
    print_findings(shown, len(shown), "warnings", see_all=ALL_FINDINGS_VIA_VALIDATE)
    print_notices(result.loss, not result.log.error_count)
    for fam, why in result.left_out.items():
        click.echo(f"evalconv: note: --evaluator {evaluator}: case family '{fam}' left out: {why}", err=True)
    click.echo(summary(result), err=True)
    sys.exit(result.exit_code)


def summary(result: builder.BuildResult) -> str:
    head = f"evalconv: new {result.family} -> {result.output or '<stdout>'} ({result.format}): "
    if result.log.error_count:
        return head + f"nothing written: {count(result.log.error_count, 'error')} in the starter rows"
    families = len(result.case_families)
    parts = [f"{count(result.rows, 'row')} written ({count(families, 'case family', 'case families')})",
             f"{count(result.starters, 'starter example')} to replace before use"]
    loss = result.loss
    if loss.lossy:
        parts.append(f"lossy: {count(len(loss.dropped.entries), 'field')} dropped (see --report)")
    elif loss.carried:
        parts.append(f"{count(len(loss.carried.entries), 'field')} carried in vendor metadata only")
    else:
        parts.append("lossless")
    return head + ", ".join(parts)

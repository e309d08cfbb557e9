"""`evalconv explain ORACLE_TYPE [EVALUATOR]`: which evaluators an oracle type admits, and why."""
from __future__ import annotations

import click

from .. import explain as admissibility
from ..output_paths import check_outputs
from .common import echo_json, handles_errors


@click.command("explain")
@click.argument("oracle_type")
@click.argument("evaluator", required=False)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@handles_errors
def explain_command(oracle_type: str, evaluator: str | None, output_format: str) -> None:
    """Print the admissibility map for ORACLE_TYPE (or one pairing), with the reasoning and, for
    conditional pairings, the conditions."""
    check_outputs((), stdout=True)
    result = admissibility.explain(oracle_type, evaluator)
    if output_format == "json":
        echo_json(result)
    else:
        click.echo(admissibility.render(result))

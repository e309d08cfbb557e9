"""`evalconv explain ORACLE_TYPE [EVALUATOR]`: which evaluators an oracle type admits, and why."""
from __future__ import annotations

from typing import Any

import click

from ..authoring import explain as admissibility
from ..output_paths import check_outputs
from .common import echo_json, handles_errors
from .texttable import aligned


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
        click.echo(render(result))


_VERDICT = {"ok": "admitted", "cond": "admitted with conditions", "barred": "barred"}


def render(result: dict[str, Any]) -> str:
    """The text `evalconv explain` prints: each pairing's verdict and reason, then its conditions."""
    rows = []
    for p in result["pairings"]:
        rows.append([p["evaluator"], f"{_VERDICT[p['verdict']]}: {p['reason']}"])
        rows += [["", f"  - {condition}"] for condition in p.get("conditions", ())]
    lines = [f"{result['oracleType']}: {result['description']}", ""]
    return "\n".join(lines + aligned(rows, widths=[26], indent="  ", gap=" "))

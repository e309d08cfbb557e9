"""`evalconv validate IN...`"""
from __future__ import annotations

import sys

import click

from .. import api
from .common import echo_json, encoding_option, from_option, handles_errors, print_findings


@click.command("validate")
@click.argument("sources", nargs=-1, required=True, metavar="IN...")
@from_option
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json prints exactly what the library returns.")
@encoding_option
@handles_errors
def validate_command(sources: tuple[str, ...], from_: str | None, output_format: str,
                     encoding: str | None) -> None:
    """Check rows against the schema, the admissibility map and the set rules.

    Exit 0 with no errors (warnings allowed), 1 with any error, 2 when a file cannot be read.
    """
    report = api.validate(sources, from_=from_, encoding=encoding)
    if output_format == "json":
        echo_json(report.to_json())
    else:
        for result in report.files:
            if result.unreadable is not None:
                click.echo(f"evalconv: error: {result.unreadable}", err=True)
                continue
            print_findings(result.log.errors, result.log.error_count, "errors")
            print_findings(result.log.warnings, result.log.warning_count, "warnings")
            status = "ok" if result.valid else "INVALID"
            click.echo(f"{result.path} ({result.format}): {result.rows} rows, {result.log.error_count} errors, "
                       f"{result.log.warning_count} warnings: {status}")
    sys.exit(report.exit_code)

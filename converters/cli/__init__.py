"""The command line: a thin layer over the library, one module per command.

`evalconv IN --to FORMAT` is short for `evalconv convert IN --to FORMAT`.
Exit codes: 0 ok, 1 the data failed a check, 2 usage or unreadable input.
"""
from __future__ import annotations

import sys
from typing import Any

import click

from .. import __version__
from .convert import convert_command
from .info import formats_command, schema_command
from .roundtrip import roundtrip_command
from .stats import stats_command
from .validate import validate_command


class _DefaultToConvert(click.Group):
    """Routes `evalconv IN ...` to the convert command."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["convert", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToConvert, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalconv")
def cli() -> None:
    """Move LLM evaluation golden sets between formats without losing what they mean.

    \b
      evalconv set.csv --to promptfoo -o tests.yaml     convert (short for `convert`)
      evalconv validate set.jsonl                       check rows against the schema and rules
      evalconv stats set.jsonl --html coverage.html     rows by slice, coverage gaps, a gate on them
      evalconv formats                                  what each format reads, writes and loses
      evalconv schema                                   the published JSON Schema
    """


cli.add_command(convert_command)
cli.add_command(validate_command)
cli.add_command(formats_command)
cli.add_command(schema_command)
cli.add_command(roundtrip_command)
cli.add_command(stats_command)


def main(argv: list[str] | None = None) -> Any:
    try:
        return cli.main(args=argv, prog_name="evalconv")
    except KeyboardInterrupt:  # atomic writes leave nothing half-written
        click.echo("evalconv: interrupted", err=True)
        sys.exit(130)

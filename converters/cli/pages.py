"""What the commands that report on a set share (`stats`, `report`, `roundtrip`): `--format`,
`--by`, `--html PAGE`, and writing the page."""
from __future__ import annotations

from typing import Any, Callable

import click

from ..atomic import AtomicOutput

JSON_HELP = "json prints exactly what the library returns."


def format_option(*choices: str, help: str = JSON_HELP) -> Callable[[Any], Any]:
    """`--format` (as `output_format`), text by default."""
    return click.option("--format", "output_format", type=click.Choice(["text", *choices]), default="text",
                        show_default=True, help=help)


def by_option(help: str, metavar: str = "FIELD") -> Callable[[Any], Any]:
    """`--by` (repeatable): a case.<field> or metadata.<key> to slice by."""
    return click.option("--by", "by", multiple=True, metavar=metavar, help=help)


def html_option(help: str) -> Callable[[Any], Any]:
    """`--html PAGE` (as `html_path`)."""
    return click.option("--html", "html_path", metavar="PAGE", help=help)


def write_page(path: str, html: str) -> None:
    """Write the page whole or not at all; inside `together()`, with the command's other outputs.
    Its path was checked with the command's other outputs before any work (`check_outputs`)."""
    with AtomicOutput(path) as out:
        out.stream.write(html)
        out.commit()


def say_written(*paths: str | None) -> None:
    """Once published: say where each output went, on stderr."""
    for path in paths:
        if path:
            click.echo(f"evalconv: wrote {path}", err=True)

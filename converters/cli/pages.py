"""What the commands that report on a set share (`stats`, `report`, `roundtrip`): `--format`,
`--by`, `--html PAGE`, the checks on the page's path before any work, and writing the page."""
from __future__ import annotations

import os
from typing import Any, Callable

import click

from ..atomic import AtomicOutput
from ..canonical.errors import UsageError

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


def check_page_path(path: str, inputs: tuple[str, ...]) -> None:
    """Refuse a page path that cannot be written, before any work: a folder, a missing folder,
    or one of the inputs."""
    if os.path.isdir(path):
        raise UsageError("--html is a folder, not a file", source=path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"--html: the folder {folder} does not exist", source=path)
    for target in inputs:
        if os.path.exists(target) and os.path.exists(path) and os.path.samefile(target, path):
            raise UsageError("--html is an input; evalconv never overwrites its input", source=path)


def write_page(path: str, html: str) -> None:
    """Write the page whole or not at all, and say so on stderr."""
    with AtomicOutput(path) as out:
        assert out.stream is not None
        out.stream.write(html)
        out.commit()
    click.echo(f"evalconv: wrote {path}", err=True)

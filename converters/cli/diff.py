"""`evalconv diff BASE HEAD` and `evalconv diff --git REF PATH`"""
from __future__ import annotations

import sys
from typing import Any, Iterable

import click

from ..lifecycle import diff as lifecycle_diff
from ..lifecycle.json_stream import chunks, needs_stdlib
from ..lifecycle.render import markdown, text
from .common import encoding_option, from_option, handles_errors, fail

PIECE = 1 << 16  # characters printed at a time


@click.command("diff")
@click.argument("sides", nargs=-1, required=True, metavar="BASE HEAD | --git REF PATH...")
@click.option("--git", "ref", metavar="REF",
              help="Compare each PATH as it is at the git ref REF (read with git, no checkout) with the working tree.")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="json prints exactly what the library returns; markdown is a PR comment.")
@click.option("--fail-on", multiple=True, metavar="CODE",
              help="Exit 1 when a finding with this code is present (repeatable, or CODE,CODE).")
@click.option("--reason-field", default=lifecycle_diff.DEFAULT_REASON_FIELD, show_default=True, metavar="FIELD",
              help="Where an added case says why it exists (new-without-reason).")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=None,
              help="Processes for a large JSONL head: the base is read in a second one (default up to 2; 1 is serial).")
@from_option
@encoding_option
@handles_errors
def diff_command(sides: tuple[str, ...], ref: str | None, output_format: str, fail_on: tuple[str, ...],
                 reason_field: str, jobs: int | None, from_: str | None, encoding: str | None) -> None:
    """What a change did to a set: cases added, removed and changed (matched by id, any format),
    and the review findings (a removal with no retirement record, a behaviour change without a
    version bump, a new case without a reason, ...).

    Exit 0 ok (findings are warnings), 1 when a finding named with --fail-on is present, 2 on
    usage errors or unreadable files.
    """
    options: dict[str, Any] = {"reason_field": reason_field, "fail_on": fail_on, "from_": from_, "encoding": encoding,
                               "jobs": jobs}
    if ref is None and len(sides) != 2:
        fail("diff takes BASE and HEAD (or --git REF PATH)")
    opened = lifecycle_diff.open_diff_git(ref, *sides, **options) if ref is not None \
        else lifecycle_diff.open_diff(sides[0], sides[1], **options)
    with opened as report:  # the report's entries are in a spool until the block ends: printed from it
        data = report.to_json()
        if output_format == "json":
            _echo_pieces(chunks(data, stdlib=report.stdlib or needs_stdlib(data)))
            click.echo()
        elif output_format == "markdown":
            click.echo(markdown(data), nl=False)
        else:
            click.echo(text(data))
        code = report.exit_code
    sys.exit(code)


def _echo_pieces(texts: Iterable[str]) -> None:
    """Print the texts in pieces of about PIECE characters (the JSON report a part at a time)."""
    piece: list[str] = []
    size = 0
    for part in texts:
        piece.append(part)
        size += len(part)
        if size >= PIECE:
            click.echo("".join(piece), nl=False)
            piece, size = [], 0
    click.echo("".join(piece), nl=False)

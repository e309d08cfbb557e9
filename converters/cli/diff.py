"""`evalconv diff BASE HEAD` and `evalconv diff --git REF PATH`"""
from __future__ import annotations

from typing import Any

import click

from ..lifecycle import diff as lifecycle_diff
from ..lifecycle.render import markdown, text
from .common import print_report, encoding_option, from_option, handles_errors, fail


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
@from_option
@encoding_option
@handles_errors
def diff_command(sides: tuple[str, ...], ref: str | None, output_format: str, fail_on: tuple[str, ...],
                 reason_field: str, from_: str | None, encoding: str | None) -> None:
    """What a change did to a set: cases added, removed and changed (matched by id, any format),
    and the review findings (a removal with no retirement record, a behaviour change without a
    version bump, a new case without a reason, ...).

    Exit 0 ok (findings are warnings), 1 when a finding named with --fail-on is present, 2 on
    usage errors or unreadable files.
    """
    options: dict[str, Any] = {"reason_field": reason_field, "fail_on": fail_on, "from_": from_, "encoding": encoding}
    if ref is not None:
        report = lifecycle_diff.diff_git(ref, *sides, **options)
    else:
        if len(sides) != 2:
            fail("diff takes BASE and HEAD (or --git REF PATH)")
        report = lifecycle_diff.diff(sides[0], sides[1], **options)
    print_report(report, output_format, text, markdown)

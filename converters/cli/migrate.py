"""`evalconv migrate SET --to N`"""
from __future__ import annotations

from typing import Any

import click

from ..lifecycle import migrate as lifecycle_migrate
from .common import print_report, encoding_option, from_option, handles_errors


@click.command("migrate")
@click.argument("targets", nargs=-1, required=True, metavar="SET...")
@click.option("--to", "to", type=int, required=True, metavar="N", help="The case-profile version to move the set to.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="json prints exactly what the library returns; markdown is a PR comment.")
@from_option
@encoding_option
@handles_errors
def migrate_command(targets: tuple[str, ...], to: int, dry_run: bool, output_format: str,
                    from_: str | None, encoding: str | None) -> None:
    """Move a canonical set (a file, or every set file in a folder) to schema version N, in place:
    every version-1 row has one version-2 form (schemaVersion 2, nothing else changed). Each
    migration is recorded in SET.migrations.jsonl; a migration that would lose a field is refused
    and nothing is written.

    Exit 0 migrated (or nothing to do), 1 refused (an invalid row, a field the target version does
    not have) or the migrated rows break their new version's rules, 2 on usage errors or
    unreadable files.
    """
    lifecycle_migrate.check_target(to)
    sets = []
    for target in targets:
        sets += lifecycle_migrate.migrate(target, to, from_=from_, encoding=encoding, dry_run=dry_run).sets
    report = lifecycle_migrate.MigrationReport(sets, dry_run)
    print_report(report, output_format, text, markdown)


_STATUS = {"migrated": "migrated", "would-migrate": "would migrate (--dry-run: nothing written)",
           "unchanged": "already at version {to}: nothing to do", "refused": "refused: nothing written"}


def _headline(s: dict[str, Any]) -> str:
    versions = ", ".join(f"{n} at version {v}" for v, n in s["versions_before"].items()) or "no rows"
    status = _STATUS[s["status"]].format(to=s["to"])
    return f"{s['path']} ({s['format']}): {s['rows']} rows ({versions}): {status}"


def _field_line(f: dict[str, Any]) -> str:
    return f"{f['path']} {f['change']} ({f['from']} -> {f['to']}): {f['rows']} rows"


def text(data: dict[str, Any]) -> str:
    lines = []
    for s in data["sets"]:
        lines.append(_headline(s))
        lines += [f"  {_field_line(f)}" for f in s["fields"]]
        if s["ledger"]:
            lines.append(f"  recorded in {s['ledger']}")
        for key, count, what in (("refused", "refused_count", "why"), ("findings_after", "findings_after_count",
                                                                       f"version {s['to']} asks")):
            if s[key]:
                lines.append(f"  {what} ({s[count]}):")
                lines += [f"    {_finding(f)}" for f in s[key]]
                if s[count] > len(s[key]):
                    lines.append(f"    ... and {s[count] - len(s[key])} more")
    return "\n".join(lines)


def _finding(f: dict[str, Any]) -> str:
    where = f"row {f['row']}" + (f" ({f['id']})" if f.get("id") else "") if f.get("row") is not None else ""
    return f"{where} {f['path']}: {f['severity']}[{f['code']}]: {f['message']}".strip()


def markdown(data: dict[str, Any]) -> str:
    out = ["### evalconv migrate" + (" (dry run)" if data["dry_run"] else ""), ""]
    for s in data["sets"]:
        path = s["path"]
        out.append("- " + _headline(s).replace(path, f"`{path}`", 1))
        out += [f"  - `{f['path']}` {f['change']} ({f['from']} -> {f['to']}): {f['rows']} rows" for f in s["fields"]]
        out += [f"  - `{f['code']}` {f['id'] or ''} `{f['path']}`: {f['message']}" for f in s["refused"] + s["findings_after"]]
    return "\n".join(out) + "\n"

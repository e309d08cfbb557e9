"""`evalconv retire SET --id ID ... --why TEXT` and `evalconv retire SET --restore ID ...`"""
from __future__ import annotations

from typing import Any

import click

from ..lifecycle import retire as lifecycle_retire
from .common import print_report, encoding_option, fail, from_option, handles_errors


@click.command("retire")
@click.argument("target", metavar="SET")
@click.option("--id", "ids", multiple=True, metavar="ID", help="A case to retire (repeatable).")
@click.option("--why", metavar="TEXT", help="Why the cases leave the set (required with --id; optional with --restore).")
@click.option("--restore", "restore_ids", multiple=True, metavar="ID",
              help="Put a retired case back where it was, from the ledger (repeatable).")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="json prints exactly what the library returns; markdown is a PR comment.")
@from_option
@encoding_option
@handles_errors
def retire_command(target: str, ids: tuple[str, ...], why: str | None, restore_ids: tuple[str, ...],
                   output_format: str, from_: str | None, encoding: str | None) -> None:
    """Take cases out of a set and keep them in its retirement ledger (SET.retired.jsonl: the
    case as it was, the date, the reason, who), or put them back with --restore.

    SET is a canonical set (CSV, JSON, JSONL, Parquet) or a folder of them; it is rewritten as
    evalconv writes it, atomically with its ledger. With neither --id nor --restore, retire
    finishes a change an interrupted run left half done. Exit 0 ok, 1 the set holds an invalid
    row, 2 usage errors (an id the set does not hold: nothing is written).
    """
    if ids and restore_ids:
        fail("retire takes --id (retire) or --restore (put back), not both at once")
    if ids:
        if not why:
            fail("--why TEXT is required with --id: the ledger keeps why each case left the set")
        report = lifecycle_retire.retire(target, ids, why, from_=from_, encoding=encoding)
    elif restore_ids:
        report = lifecycle_retire.restore(target, restore_ids, why, from_=from_, encoding=encoding)
    else:
        report = lifecycle_retire.finish(target, from_=from_, encoding=encoding)
        if not report.changes:
            fail("retire needs --id ID --why TEXT, or --restore ID (no interrupted change to finish here)")
    print_report(report, output_format, text, markdown)


def _record_line(r: dict[str, Any]) -> str:
    what = f"{r['action']} {r['id']} (row {r['row']})"
    if r.get("reason"):
        what += f": {r['reason']}"
    return what + (f" [{r['by']}]" if r.get("by") else "")


def text(data: dict[str, Any]) -> str:
    out = []
    for s in data["sets"]:
        if s["finished"]:
            out.append(f"{s['set']}: finished an interrupted change: "
                       + ", ".join(f"{r['action']} {r['id']}" for r in s["finished"]))
        if s["records"]:
            out.append(f"{s['set']}: {s['rows_before']} -> {s['rows_after']} rows; recorded in {s['ledger']}")
            out += [f"  {_record_line(r)} at {r['date']}" for r in s["records"]]
        if s["options"]:
            out.append(f"  written as it was: {', '.join('--' + k.replace('_', '-') for k in s['options'])}")
        if s["reformatted"]:
            out.append(f"  note: {s['set']} was not laid out as evalconv writes {s['format']}: the untouched rows are "
                       f"rewritten too (the same cases: `evalconv diff` shows none changed)")
    return "\n".join(out)


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ").replace("`", "'")


def markdown(data: dict[str, Any]) -> str:
    counts = data["counts"]
    out = ["## evalconv retire", "",
           f"**{counts['retired']} retired, {counts['restored']} restored**"
           + (f", {counts['finished']} interrupted change(s) finished" if counts["finished"] else ""), ""]
    for s in data["sets"]:
        out += [f"### `{_cell(s['set'])}`", "", f"{s['rows_before']} -> {s['rows_after']} rows; "
                f"ledger `{_cell(s['ledger'])}`" + ("; untouched rows re-laid out as evalconv writes them "
                                                    "(the same cases)" if s["reformatted"] else ""), ""]
        if s["records"]:
            out += ["| case | action | row | date | reason | by |", "|---|---|--:|---|---|---|"]
            out += [f"| `{_cell(r['id'])}` | {r['action']} | {r['row']} | {r['date']} | {_cell(r.get('reason') or '')} "
                    f"| {_cell(r.get('by') or '')} |" for r in s["records"]]
            out.append("")
    return "\n".join(out).rstrip() + "\n"

"""`evalconv formats` and `evalconv schema`."""
from __future__ import annotations

import click

from ..canonical.schema import case_profile_schema, row_schema
from ..registry import REGISTRY
from .common import echo_json, handles_errors


def format_table() -> list[dict]:
    out = []
    for fmt in REGISTRY.all():
        out.append({
            "name": fmt.name, "title": fmt.title, "read": fmt.can_read, "write": fmt.can_write,
            "extensions": list(fmt.extensions), "streaming": fmt.streaming_read and fmt.streaming_write,
            "lossless": fmt.lossless,
            "loses": [{"path": f.path, "fate": f.fate, "where": f.where, "reason": f.reason}
                      for f in fmt.field_map if f.fate != "native"],
        })
    return out


@click.command("formats")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@handles_errors
def formats_command(output_format: str) -> None:
    """Every format: whether it reads and writes, its extensions, and what it loses."""
    table = format_table()
    if output_format == "json":
        echo_json(table)
        return
    for f in table:
        modes = "/".join(m for m, ok in (("read", f["read"]), ("write", f["write"])) if ok)
        loses = "nothing (lossless)" if f["lossless"] else (
            ", ".join(sorted({x["path"] for x in f["loses"] if x["fate"] == "dropped"})) or "nothing dropped")
        click.echo(f"{f['name']:<11} {modes:<10} {' '.join(f['extensions']):<24} loses: {loses}")


@click.command("schema")
@click.option("--case-profile", is_flag=True, help="Print the case profile's schema on its own.")
@handles_errors
def schema_command(case_profile: bool) -> None:
    """Print the published JSON Schema of a canonical row (draft-07)."""
    echo_json(case_profile_schema() if case_profile else row_schema())

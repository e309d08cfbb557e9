"""`evalconv runs sql STORE --cases SET [QUERY]...`: DuckDB views over the run store (docs/scale.md)."""
from __future__ import annotations

import click

from .common import echo_json, handles_errors, note
from .texttable import aligned


@click.command("sql")
@click.argument("store", metavar="STORE")
@click.argument("queries", nargs=-1, metavar="[QUERY]...")
@click.option("--cases", "cases", multiple=True, required=True, metavar="SET", help="The case set (repeatable).")
@click.option("--by", multiple=True, metavar="FIELD", help="Slices of evalconv_slice_pass_rates (default: the report's).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@handles_errors
def runs_sql_command(store: str, queries: tuple[str, ...], cases: tuple[str, ...], by: tuple[str, ...],
                     output_format: str) -> None:
    """Query the run store with SQL: the evalconv_* views (pass rate overall, by slice, by harness
    and evaluator type, evalconv_newly_failing(BASE_RUN, HEAD_RUN)) over STORE and the cases.
    With no QUERY: the pass rate, and by harness and evaluator type. Needs DuckDB
    (pip install 'evalconv[dask]')."""
    from ..runs import sql

    answers = sql.query(store, list(cases), queries or sql.DEFAULT_QUERIES, by=by or None)
    if any(answer.streamed for answer in answers):
        note(sql.STREAMED_NOTE)
    if output_format == "json":
        echo_json([answer.to_json() for answer in answers])
        return
    for n, answer in enumerate(answers):
        if n:
            click.echo("")
        cells = [answer.columns, *[["" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v) for v in row]
                                   for row in answer.rows]]
        click.echo("\n".join(aligned(cells, cap=40, cut="…")))

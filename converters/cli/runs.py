"""`evalconv runs`: the run store's commands (`import` in report.py, `sql` in runs_sql.py)."""
from __future__ import annotations

import click

from .lazy import LazyCommands


@click.group("runs")
def runs_group() -> None:
    """The run store: attempts and results beside the cases, append-only."""


runs_group.commands = LazyCommands({"import": ".report:import_command", "sql": ".runs_sql:runs_sql_command"})

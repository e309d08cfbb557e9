"""`--engine` and `--scheduler`: the flags validate, stats and convert share (docs/scale.md)."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import click

from ..canonical.errors import UsageError

ENGINES = ("default", "dask")


def engine_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Adds `engine` and `scheduler` to a command's parameters."""
    func = click.option("--scheduler", metavar="ADDRESS",
                        help="With --engine dask: an existing Dask scheduler (tcp://HOST:8786) instead of a "
                             "local two-process cluster.")(func)
    return click.option("--engine", type=click.Choice(ENGINES), default="default", show_default=True,
                        help="dask: Parquet row groups on a Dask cluster, results equal to the default "
                             "engine's (pip install 'evalconv[dask]').")(func)


@contextlib.contextmanager
def opened_engine(engine: str, scheduler: str | None) -> Iterator[Any]:
    """None for the default engine; else the cluster's engine, open for the command."""
    if engine != "dask":
        if scheduler is not None:
            raise UsageError("--scheduler goes with --engine dask")
        yield None
        return
    from ..engine.dask_engine import DaskEngine

    with DaskEngine(scheduler) as opened:
        yield opened

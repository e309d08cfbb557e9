"""`--engine dask`: a Parquet file's row groups checked, counted and written on a Dask cluster.

Only this module knows about workers on other machines. Each task is one row group, read by the
worker from the file itself (the path must be readable there: a local cluster, or a shared file
system), and answered with `evalconv.partitions`: `validate_batch` (and `write_rows` for a
conversion) or a `stats` counter. The parent consumes the answers in file order, a few row groups
ahead at most (flat memory on both sides), and runs the reduce: the set rules, the one file
written, the tallies added up. So the results are those of one process, byte for byte.

A local cluster is two worker processes (`LocalCluster(n_workers=2, threads_per_worker=1)`),
started for the command and closed after it; `--scheduler ADDRESS` uses an existing one instead.
"""
from __future__ import annotations

import logging
from collections import deque
from dataclasses import replace
from typing import Any, Callable, Iterator

from . import partitions
from ..canonical.errors import EvalconvError, UsageError
from ..canonical.format import WriteOptions
from ..canonical.validator import Checked, Validator
from . import parallel
from .pools import Failed
from .row_groups import RowGroup, file_row_groups, read_group

EXTRA = "pip install 'evalconv[dask]'"
LOCAL_WORKERS = 2
AHEAD = 3  # row groups in flight per worker: enough to keep a worker busy, few enough to stay flat


def distributed_module() -> Any:
    """dask.distributed, or a one-line usage error (exit 2) naming the extra."""
    try:
        import distributed
    except ImportError:
        raise UsageError(f"--engine dask needs Dask: {EXTRA}") from None
    return distributed


# What a worker runs ------------------------------------------------------------------------------


def check_group(group: RowGroup, label: str, require: tuple[str, ...], to: str | None, output: str | None,
                options: dict[str, Any]) -> "tuple[partitions.CheckedBatch, partitions.WrittenBatch | None] | Failed":
    """One row group validated (and written by `to`'s writer): what the reduce needs of it."""
    try:
        checked = partitions.validate_batch(read_group(group, label), source=label, first_record=group.first,
                                            require=require)
        if to is None:  # validating: the rows stay here, only their findings and keys travel
            return replace(checked, rows=[None] * checked.count), None
        return checked, partitions.write_rows(checked.rows, to, path=output, **options)
    except EvalconvError as err:
        return Failed.of(err)


def count_group(group: RowGroup, label: str, slices: list[str], crosstabs: list[tuple[str, str]],
                samples: int) -> "tuple[Any, int, int] | Failed":
    """One row group counted for `stats`: its counter (every value's count and sample rows: the
    parent cuts them as one pass would), its rows and its invalid rows."""
    from ..coverage.stats import FileStats, _Counter, count_sources

    counter = _Counter(slices, crosstabs, samples)
    counter.sampled_values = 1 << 30
    for tally in [*counter.tallies.values(), *(c[4] for c in counter.cross)]:
        tally.raw_cap = 1 << 62
    part = FileStats(label)
    try:
        count_sources(counter, partitions.rows_from_arrow(read_group(group, label), source=label,
                                                          first_record=group.first), part)
    except EvalconvError as err:
        return Failed.of(err)
    return counter, part.rows, part.invalid


# The parent --------------------------------------------------------------------------------------


class DaskEngine:
    """A Dask client for one command: `with DaskEngine(scheduler) as engine:`."""

    def __init__(self, scheduler: str | None = None, workers: int = LOCAL_WORKERS) -> None:
        self.scheduler = scheduler
        self.workers = workers
        self._cluster: Any = None
        self.client: Any = None

    def __enter__(self) -> "DaskEngine":
        distributed = distributed_module()
        logging.getLogger("distributed").setLevel(logging.ERROR)
        if self.scheduler is not None:
            try:
                self.client = distributed.Client(self.scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError) as err:
                raise UsageError(f"--scheduler {self.scheduler}: no Dask scheduler answers there ({err})") from None
        else:
            self._cluster = distributed.LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                                     dashboard_address=":0", silence_logs=logging.ERROR)
            self.client = distributed.Client(self._cluster)
        self.workers = max(1, len(self.client.scheduler_info().get("workers", {})) or self.workers)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def in_order(self, task: Callable[..., Any], groups: list[RowGroup], *args: Any) -> Iterator[Any]:
        """`task(group, *args)` for each row group on the cluster, answered in file order, with at
        most AHEAD row groups per worker handed out and not yet consumed."""
        pending: deque[Any] = deque()
        todo = iter(groups)
        while True:
            while len(pending) < AHEAD * self.workers and (group := next(todo, None)) is not None:
                pending.append(self.client.submit(task, group, *args, pure=False))
            if not pending:
                return
            future = pending.popleft()
            answer = future.result()
            future.release()
            if isinstance(answer, Failed):
                answer.raise_again()
            yield answer

    # ---- validate and convert: what `parallel.checked_rows` hands the library
    def checker(self, source: str, fmt_in: str, *, to: str | None, label: str, options: WriteOptions,
                output: str | None = None, require: tuple[str, ...] = ()) -> "DaskRows":
        _parquet_only(source, fmt_in)
        groups = file_row_groups(source, label)
        given: dict[str, Any] = {}
        if to is not None:
            from ..registry import REGISTRY

            fmt = REGISTRY.get(to)
            if not parallel.parts_written(to):  # `Format.write_shape`: a "document" needs the whole set
                raise UsageError(f"--engine dask writes formats whose writer writes a row on its own; {fmt.name} "
                                 f"needs the whole set: leave out --engine dask", source=label)
            given = {name: getattr(options, name) for name in fmt.options.declared()}
        return DaskRows(self, groups, label, require, to, output, given)

    # ---- stats
    def count_file(self, counter: Any, path: str, result: Any) -> None:
        """Add a Parquet file's rows to `counter` and `result` (a `stats.FileStats`), in file order."""
        _parquet_only(path, result.format)
        groups = file_row_groups(path, result.path)
        slices = list(counter.tallies)
        crosstabs = [(a, b) for a, b, *_ in counter.cross]
        for part, rows, invalid in self.in_order(count_group, groups, result.path, slices, crosstabs, counter.samples):
            counter.merge(part, 0)  # record numbers are the file's already
            result.rows += rows
            result.invalid += invalid


def _parquet_only(path: str, fmt_in: str | None) -> None:
    if fmt_in != "parquet":
        raise UsageError(f"--engine dask reads evalconv's Parquet files; this is {fmt_in}: leave out --engine dask",
                         source=path)


class DaskRows:
    """The checked rows of a Parquet file, row group by row group from the cluster: the same
    `Checked` rows and clean runs `parallel.Workers` gives, so `api` consumes either alike."""

    def __init__(self, engine: DaskEngine, groups: list[RowGroup], label: str, require: tuple[str, ...],
                 to: str | None, output: str | None, options: dict[str, Any]) -> None:
        self._engine, self._groups, self._label = engine, groups, label
        self._args = (label, require, to, output, options)

    def checked(self, validator: Validator) -> Iterator[Checked[Any] | parallel.CleanRows]:
        parts = self._engine.in_order(check_group, self._groups, *self._args)
        return partitions.checked_stream(parts, validator)

    def row_writer(self, writer: Any, out: Any, to: str, report: Any) -> Any:
        return parallel.writer_for(out, writer, to, report)

    def finish(self, row_writer: Any) -> None:
        row_writer.finish()

    def __enter__(self) -> "DaskRows":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

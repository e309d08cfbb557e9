"""Parquet sets as row groups: the items an engine maps over, read where the task runs.

`row_groups(PATH, ...)` lists every row group of the evalconv Parquet files named or found in the
folders (the files `evalconv validate FOLDER` checks, in its order), each with the rows of its
file before it; a `RowGroup` is small and picklable, so a Spark RDD, a Ray dataset or Dask's
`client.map` takes the list as it is. `validate_group(group)` is the map (the worker reads its row
group from the file: the path must be readable there) and `reduce_files(parts)` the reduce, file
by file: what `evalconv.validate(PATHS)` gives.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable

from ..canonical import parquet_format
from ..canonical.errors import ReadError, UsageError
from .partitions import CheckedBatch, reduce_validation, validate_batch


@dataclass(frozen=True)
class RowGroup:
    path: str
    index: int  # the row group's number in its file (-1: a file without row groups, read as no rows)
    first: int  # the file's rows before it
    rows: int


def file_row_groups(path: str, label: str) -> list[RowGroup]:
    """A Parquet file's row groups, from its footer, checked as the reader checks a file before
    its first row (not Parquet, damaged, not a canonical set, a page too large to decompress):
    the same one-line `ReadError`."""
    with open(path, "rb") as stream:
        handle = parquet_format.open_file(stream, label)
        layout = parquet_format.Layout(handle.schema_arrow, label)
        parquet_format._check_pages(stream, handle, layout, label)
        meta = handle.metadata
    out, first = [], 0
    for index in range(meta.num_row_groups):
        rows = meta.row_group(index).num_rows
        out.append(RowGroup(path, index, first, rows))
        first += rows
    return out


def read_group(group: RowGroup, label: str | None = None) -> Any:
    """The row group's canonical columns, as a `pyarrow.Table`; a damaged one is the reader's `ReadError`."""
    pa = parquet_format._pyarrow()
    label = group.path if label is None else label
    with open(group.path, "rb") as stream:
        handle = parquet_format.open_file(stream, label)
        names = parquet_format.Layout(handle.schema_arrow, label).names
        if group.index < 0:
            return handle.schema_arrow.empty_table().select(names)
        try:
            return handle.read_row_group(group.index, columns=names, use_threads=False)
        except MemoryError:
            raise
        except (pa.ArrowException, OSError, ValueError) as err:
            raise ReadError(f"the Parquet data cannot be read after row {group.first}, damaged? "
                            f"({parquet_format._first_line(err)})", source=label) from None


def row_groups(*paths: str) -> list[RowGroup]:
    """Every row group of the evalconv Parquet files `paths` name or their folders hold, file by
    file in the order `evalconv validate` takes them (a file without row groups: one empty item).
    A file that cannot be read, or is not Parquet, is a one-line error naming it: never left out."""
    from ..registry import REGISTRY
    from ..walk import Found, collect

    out: list[RowGroup] = []
    for target in paths:
        for found in collect([target]) if os.path.isdir(target) else [Found(target, target)]:
            if found.refused is not None:
                raise ReadError(found.refused, source=found.path)
            if REGISTRY.for_output(found.path) != "parquet":
                raise UsageError("row groups come from evalconv's Parquet files; validate this one without an "
                                 "engine, or convert it first (evalconv FILE --to parquet)", source=found.path)
            groups = file_row_groups(found.path, found.path)
            out += groups or [RowGroup(found.path, -1, 0, 0)]
    return out


def validate_group(group: RowGroup, *, require: Iterable[str] = ()) -> CheckedBatch:
    """The map: one row group read from its file and checked by the row rules (`validate_batch`)."""
    return validate_batch(read_group(group), source=group.path, first_record=group.first, require=require)


def reduce_files(parts: Iterable[CheckedBatch]) -> Any:
    """The reduce: each file's parts (consecutive, in order) through `reduce_validation`, as one
    `ValidationReport`: what `evalconv.validate(PATHS)` gives for the paths `row_groups` listed."""
    from ..validation import ValidationReport

    files: list[list[CheckedBatch]] = []
    for part in parts:
        if files and files[-1][0].source == part.source and part.first_record >= files[-1][-1].first_record:
            files[-1].append(part)
        else:
            files.append([part])
    return ValidationReport([reduce_validation(file, source=file[0].source) for file in files])

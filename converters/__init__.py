"""evalconv: move LLM evaluation golden sets between formats without losing what they mean."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import (ConversionResult, ReadResult, ValidationReport, convert, read, reading, validate,
                      validate_file, write)
    from .canonical.errors import EvalconvError, ReadError, UsageError, WriteError
    from .canonical.findings import Finding
    from .canonical.row import ABSENT, Row
    from .interop.frames import from_dataframe, to_dataframe
    from .interop.ragas_objects import from_ragas_dataset, to_ragas_dataset
    from .partitions import (CheckedBatch, WrittenBatch, assemble, count_batch, loss_report, reduce_validation,
                             rows_from_arrow, rows_to_arrow, stats_from_parts, validate_batch, write_rows)
    from .registry import REGISTRY
    from .reports import LossReport, ReadReport

# Loaded on first use, so that the command line can set its signal handlers before the slow
# imports (see _launch.py); `from evalconv import convert` works as ever.
_EXPORTS = {
    "api": ("ConversionResult", "ReadResult", "ValidationReport", "convert", "read", "reading", "validate",
            "validate_file", "write"),
    "canonical.errors": ("EvalconvError", "ReadError", "UsageError", "WriteError"),
    "canonical.findings": ("Finding",),
    "canonical.row": ("ABSENT", "Row"),
    "interop.frames": ("from_dataframe", "to_dataframe"),
    "interop.ragas_objects": ("from_ragas_dataset", "to_ragas_dataset"),
    "partitions": ("CheckedBatch", "WrittenBatch", "assemble", "count_batch", "loss_report", "reduce_validation",
                   "rows_from_arrow", "rows_to_arrow", "stats_from_parts", "validate_batch", "write_rows"),
    "registry": ("REGISTRY",),
    "reports": ("LossReport", "ReadReport"),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "ABSENT", "ConversionResult", "EvalconvError", "Finding", "LossReport", "REGISTRY", "ReadError",
    "ReadReport", "ReadResult", "Row", "UsageError", "ValidationReport", "WriteError", "convert",
    "from_dataframe", "read", "reading", "to_dataframe", "validate", "validate_file", "write",
    "from_ragas_dataset", "to_ragas_dataset",
    # one Arrow record batch at a time, for Dask, Ray Data, Spark and DuckDB (docs/scale.md)
    "CheckedBatch", "WrittenBatch", "assemble", "count_batch", "loss_report", "reduce_validation",
    "rows_from_arrow", "rows_to_arrow", "stats_from_parts", "validate_batch", "write_rows",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'evalconv' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))

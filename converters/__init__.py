"""evalconv: move LLM evaluation golden sets between formats without losing what they mean."""
from __future__ import annotations

from .api import (ConversionResult, ReadResult, ValidationReport, convert, read, reading, validate,
                  validate_file, write)
from .canonical.errors import EvalconvError, ReadError, UsageError, WriteError
from .canonical.findings import Finding
from .canonical.row import ABSENT, Row
from .frames import from_dataframe, to_dataframe
from .ragas_objects import from_ragas_dataset, to_ragas_dataset
from .registry import REGISTRY
from .reports import LossReport, ReadReport

__all__ = [
    "ABSENT", "ConversionResult", "EvalconvError", "Finding", "LossReport", "REGISTRY", "ReadError",
    "ReadReport", "ReadResult", "Row", "UsageError", "ValidationReport", "WriteError", "convert",
    "from_dataframe", "read", "reading", "to_dataframe", "validate", "validate_file", "write",
    "from_ragas_dataset", "to_ragas_dataset",
]
__version__ = "0.1.0"

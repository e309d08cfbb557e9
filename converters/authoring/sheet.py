"""A sheet as `evalconv import` reads it: its columns and its records, whichever kind of file
it came from (a CSV or JSON sheet, `sheet_import`; a dataset, `dataset_sheet`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Sheet:
    columns: list[str]
    records: list[tuple[int | None, dict[str, Any]]]  # (line, {column: value}) for each non-blank row
    blank: int = 0
    text_cells: bool = True  # CSV: every cell is text; JSONL/JSON: values are JSON already


class Columns:
    """The columns of records whose keys vary, in the order first seen (a dict, not a list
    searched per key: a wide sheet's keys are many)."""

    def __init__(self) -> None:
        self._seen: dict[str, None] = {}

    def add(self, record: dict[str, Any]) -> None:
        if len(record) != len(self._seen) or record.keys() != self._seen.keys():
            self._seen.update(dict.fromkeys(record))

    @property
    def names(self) -> list[str]:
        return list(self._seen)

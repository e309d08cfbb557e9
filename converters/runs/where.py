"""Where each attempt's output is, for the report's failure lists: a few machine words an attempt."""
from __future__ import annotations

from array import array
from typing import Any, Mapping


class OutputPlaces:
    """Per attempt (numbered as the report numbers them): its `outputRef` when the record has one
    (in a dict: few harnesses set it), else the harness's own file and line or entry."""

    def __init__(self) -> None:
        self._files: dict[str, int] = {}
        self._names: list[str] = []
        self._file = array("i")
        self._at = array("i")  # the line (> 0), -(entry + 1) for an entry, 0 for neither
        self._refs: dict[int, str] = {}

    def add(self, record: Mapping[str, Any]) -> None:
        if isinstance(ref := record.get("outputRef"), str):
            self._refs[len(self._file)] = ref
        source = given if isinstance(given := record.get("source"), dict) else {}
        file, line, entry = source.get("file"), source.get("line"), source.get("entry")
        if isinstance(file, str) and file not in self._files:
            self._files[file] = len(self._names)
            self._names.append(file)
        self._file.append(self._files[file] if isinstance(file, str) else -1)
        self._at.append(line if isinstance(line, int) and line > 0 else -(entry + 1) if isinstance(entry, int) else 0)

    def ref(self, attempt: int) -> str | None:
        if attempt in self._refs:
            return self._refs[attempt]
        if self._file[attempt] < 0:
            return None
        file, at = self._names[self._file[attempt]], self._at[attempt]
        return f"{file}:{at}" if at > 0 else f"{file} entry {-at - 1}" if at < 0 else file

"""Readers of each harness's run output, in their own small registry.

Run output is not a case format: detection and round-trip routes never see these readers, and
the format registry never sees run files. Each reader lives in its vendor's package
(`vendors/<tool>/results.py`) and turns the harness's own files into attempt and result records
(`canonical/runs.py`) plus error-ledger entries, one at a time, attempts before their results.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator, Protocol

from .canonical.errors import ReadError, UsageError

Record = tuple[str, dict[str, Any]]  # ("attempt" | "result" | "ledger", record)
HEAD_BYTES = 4096


class ResultsReader(Protocol):
    name: str
    title: str
    files: str  # what the reader reads, for `--help` and errors

    def detect(self, path: str, head: str) -> bool: ...

    def read(self, path: str) -> Iterator[Record]: ...


@dataclass
class ResultsRegistry:
    readers: dict[str, ResultsReader]

    def get(self, name: str) -> ResultsReader:
        try:
            return self.readers[name]
        except KeyError:
            raise UsageError(f"unknown harness '{name}'; known: {', '.join(self.readers)}") from None

    def detect(self, path: str) -> ResultsReader:
        head = read_head(path)
        for reader in self.readers.values():
            if reader.detect(path, head):
                return reader
        known = "; ".join(f"{r.name}: {r.files}" for r in self.readers.values())
        raise UsageError(f"not a run output evalconv knows (use --harness NAME). Known: {known}", source=path)

    def read(self, path: str, harness: str | None = None) -> Iterator[Record]:
        reader = self.get(harness) if harness else self.detect(path)
        return reader.read(path)


def read_head(path: str) -> str:
    if os.path.isdir(path):
        raise UsageError("is a folder, not a run output file", source=path)
    try:
        with open(path, "rb") as stream:
            raw = stream.read(HEAD_BYTES)
    except FileNotFoundError:
        raise ReadError("no such file", source=path) from None
    return raw.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")


def _load() -> dict[str, ResultsReader]:
    from .vendors.braintrust.results import READER as braintrust
    from .vendors.deepeval.results import READER as deepeval
    from .vendors.inspect.results import READER as inspect
    from .vendors.langsmith.results import READER as langsmith
    from .vendors.promptfoo.results import READER as promptfoo
    from .vendors.ragas.results import READER as ragas

    return {r.name: r for r in (promptfoo, deepeval, braintrust, langsmith, inspect, ragas)}


RESULTS_REGISTRY = ResultsRegistry(_load())

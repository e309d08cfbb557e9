"""Validation findings: typed records with a stable code, a message, the row and a `$.path`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .errors import one_line

Severity = Literal["error", "warning"]

ERROR_CODES = ("parse", "schema", "id-mismatch", "duplicate-id", "inadmissible-evaluator",
               "case-family-conflict", "missing-required-field")
WARNING_CODES = ("starter-example", "judge-needs-validation", "rubric-without-criteria",
                 "expert-without-expertise", "expected-on-behavior-only", "expected-shape",
                 "unknown-case-family")


@dataclass(slots=True, frozen=True)
class Finding:
    code: str
    message: str
    path: str = "$"
    row: int | None = None      # 1-based position of the row in its source
    id: str | None = None
    line: int | None = None     # first physical line of the row in the file
    record: int | None = None   # CSV record number (1 = first record after the header)
    source: str | None = None

    @property
    def severity(self) -> Severity:
        return "warning" if self.code in WARNING_CODES else "error"

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "message": self.message,
                "path": self.path, "row": self.row, "id": self.id, "line": self.line,
                "record": self.record}

    def locate(self, *, row: int | None, id: str | None, line: int | None,
               record: int | None, source: str | None) -> "Finding":
        return Finding(self.code, self.message, self.path, row, id, line, record, source)

    def render(self) -> str:
        """`file:line: row 3 (cs-x) $.metadata.case.evaluator: error[code]: message`"""
        where = self.source or ""
        if self.line is not None:
            where += f":{self.line}"
        who = f"row {self.row}" if self.row is not None else ""
        if self.id:
            who += f" ({self.id})"
        head = " ".join(p for p in (where + ":" if where else "", who, self.path) if p)
        return one_line(f"{head}: {self.severity}[{self.code}]: {self.message}")

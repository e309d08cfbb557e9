"""The canonical row: `{id, input, expected?, metadata}` with the case profile at `metadata.case`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

JSONValue = Any  # None | bool | int | float | str | list[JSONValue] | dict[str, JSONValue]


class _Absent:
    """`expected` missing from the row, which is not the same as `expected: null`."""

    _instance: "_Absent | None" = None

    def __new__(cls) -> "_Absent":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

OracleType = Literal["reference-answer", "acceptable-set", "rubric", "expected-tool-calls",
                     "expected-final-state", "expected-behavior-only"]
Evaluator = Literal["exact-or-programmatic", "rubric-human", "llm-judge", "pairwise-preference",
                    "trajectory-or-state-check", "human-expert"]
Provenance = Literal["observed-incident", "production-sample", "expert-authored", "starter-example",
                     "overlay-starter-needs-expert-validation", "synthetic-perturbation", "imported"]


class _RequiredCase(TypedDict):
    caseId: str
    oracleType: OracleType
    expectedBehavior: str
    provenance: Provenance


class CaseProfile(_RequiredCase, total=False):
    """`metadata.case`; the JSON Schema in `schema/row.schema.json` is the source of truth."""

    scenario: str
    actor: str
    unacceptableBehavior: list[str]
    evaluationCriteria: list[str]
    reversibility: Literal["R0", "R1", "R2", "R3"]
    blastRadius: Literal["B0", "B1", "B2", "B3"]
    linkedConcerns: list[str]
    evaluator: Evaluator
    toolActionExpectation: str
    escalationExpectation: str
    reviewerExpertise: str
    passLogic: str
    version: str
    retirementCondition: str
    caseFamily: str
    extensions: dict[str, dict[str, JSONValue]]


@dataclass(slots=True, eq=False)
class Row:
    """A valid canonical row. Values are plain JSON values, held as they were read."""

    id: str
    input: JSONValue
    metadata: dict[str, JSONValue]
    expected: JSONValue = field(default=ABSENT)

    @property
    def case(self) -> CaseProfile:
        return self.metadata["case"]

    @property
    def case_fields(self) -> dict[str, JSONValue]:
        """`case` as a plain dict, for code that walks its fields by name."""
        return self.metadata["case"]

    @property
    def has_expected(self) -> bool:
        return self.expected is not ABSENT

    @classmethod
    def from_json(cls, value: dict[str, JSONValue]) -> "Row":
        """Build from a value the validator passed; nothing is copied or converted."""
        return cls(id=value["id"], input=value["input"], metadata=value["metadata"],
                   expected=value.get("expected", ABSENT))

    def to_json(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {"id": self.id, "input": self.input}
        if self.expected is not ABSENT:
            out["expected"] = self.expected
        out["metadata"] = self.metadata
        return out

    def __eq__(self, other: object) -> bool:
        from .jsonvalue import same
        return isinstance(other, Row) and same(self.to_json(), other.to_json())

    def __repr__(self) -> str:
        return f"Row(id={self.id!r})"

"""Validation findings: typed records with a stable code, a message, the row and a `$.path`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .errors import one_line

Severity = Literal["error", "warning"]

# Every finding code: its severity and what it means. docs/errors.md's code list is generated
# from this table (`codes_markdown`); a finding with a code not in it cannot be made.
CODES: dict[str, tuple[Severity, str]] = {
    "parse": ("error", "the row cannot be read: not JSON, not an object, or a cell that cannot be decoded"),
    "schema": ("error", "the row does not fit the row schema of its version (a missing field, a wrong type, an unknown "
                        "value, a field of a later version, a schemaVersion evalconv does not know)"),
    "id-mismatch": ("error", "metadata.case.caseId differs from the row's id"),
    "duplicate-id": ("error", "another row of the set already uses this id"),
    "inadmissible-evaluator": ("error", "the evaluator cannot grade this oracle type (the admissibility map)"),
    "case-family-conflict": ("error", "rows of one case family disagree on the oracle type or the evaluator, "
                                      "or a row disagrees with the task-family pack that declares its family"),
    "missing-required-field": ("error", "a field named with --require is empty in this row"),
    "refused-by-target": ("error", "the target format cannot hold this valid row (Inspect: an empty input); "
                                   "with --keep-going it goes to the rejected file and the rest is written"),
    # version 2's evidence rules (canonical/evidence.py): reject before execution
    "evidence-without-snapshot": ("error", "a context reference (metadata.case.contextRefs) names no snapshot (the version "
                                           "of the source), or an empty one, or marks it absent"),
    "evidence-unresolvable": ("error", "with --contexts MANIFEST: a context reference's source, or its source at that "
                                       "snapshot, is not in the manifest"),
    "conversation-unordered": ("error", "a chat input's turns are out of order: an assistant turn with nothing before it, a "
                                        "system turn after the first user turn, a tool result that answers no "
                                        "assistant turn, or a turn without a known role"),
    "conversation-without-target-turn": ("error", "a multi-turn chat case has no metadata.case.targetTurn (the turn it "
                                                  "judges), or one past the conversation or on a turn that is not the "
                                                  "assistant's"),
    "permission-without-scope": ("error", "a permission case (linked concern permission, or a metadata.case.permission "
                                          "block) lacks permission.callerRole or permission.resourceScope"),
    "starter-example": ("warning", "the row is a starter example, not a validated gold-standard answer"),
    "placeholder-behavior": ("warning", "expectedBehavior is the placeholder evalconv import wrote for a row "
                                        "with none: a reviewer must write it before the row grades anything"),
    "judge-needs-validation": ("warning", "llm-judge is admitted for this oracle type only with conditions"),
    "rubric-without-criteria": ("warning", "a rubric case has no evaluationCriteria"),
    "expert-without-expertise": ("warning", "a human-expert case does not say what expertise the reviewer needs"),
    "expected-on-behavior-only": ("warning", "an expected-behavior-only case carries expected, which nothing grades"),
    "expected-shape": ("warning", "expected does not have the shape its oracle type needs"),
    "off-vocabulary": ("warning", "a reason field (metadata.severity, origin, gate) holds a value outside its documented "
                                  "vocabulary; the message names the nearest documented value"),
    "unknown-case-family": ("warning", "the row was built from a pack that is not loaded, or names a case family "
                                       "its pack does not declare"),
    "ambiguous-empty": ("warning", "an evidence field (a context reference's field, a chat turn's content, a permission "
                                   "field) is an empty string: write the marker {\"$evidence\": \"absent\"}, "
                                   "\"redacted\" or \"irrelevant\" to say which"),
    "retirement-due": ("warning", "metadata.case.retirementCondition names a date (YYYY-MM-DD) that has passed: "
                                  "retire the case (evalconv retire) or update the condition"),
    # `evalconv diff`: review findings about a change to a set (--fail-on CODE makes one fail the run)
    "removed-without-retirement": ("warning", "diff: a case is gone and no retirement record in the head's "
                                              "<set>.retired.jsonl says why (evalconv retire writes one)"),
    "behavior-changed-without-version": ("warning", "diff: expected, expectedBehavior, oracleType, evaluator or passLogic "
                                                    "changed and metadata.case.version did not"),
    "new-without-reason": ("warning", "diff: an added case has no reason (metadata.reason, or the field named "
                                      "with --reason-field)"),
    "oracle-type-changed": ("warning", "diff: a case's oracle type changed, and with it the evaluators it admits; "
                                       "the message names an evaluator that became barred"),
    "starter-added": ("warning", "diff: an added case is still a starter example or an imported placeholder"),
    "id-reused": ("warning", "diff: an id the retirement ledger says is retired comes back as a different case"),
    "ledger-rewritten": ("warning", "diff: the head's retirement ledger does not begin with the base's: records were "
                                    "edited or removed from an append-only ledger"),
    "schema-migrated": ("warning", "diff: cases changed schema version and nothing else (a migration): one "
                                   "finding for the set, with whether its migrations ledger records it"),
}


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

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown finding code {self.code!r}: add it to canonical.findings.CODES")

    @property
    def severity(self) -> Severity:
        return CODES[self.code][0]

    def __reduce__(self) -> tuple[type["Finding"], tuple[Any, ...]]:
        # Pickled as its arguments (the engine's workers hand their findings to the parent): a
        # slots dataclass's own state asks `fields()` for every object, 2-3x slower both ways.
        return (Finding, (self.code, self.message, self.path, self.row, self.id, self.line, self.record, self.source))

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


def codes_markdown() -> str:
    """The code list in docs/errors.md, generated from CODES."""
    lines = ["| code | severity | meaning |", "|------|----------|---------|"]
    lines += [f"| `{code}` | {severity} | {summary} |" for code, (severity, summary) in CODES.items()]
    return "\n".join(lines) + "\n"

"""The one meaning of each domain word `stats`, `report` and the validator share.

Blank values, the "(none)" label, which `metadata.gate` values gate a release, the severity
order, the starter provenances, the evaluator types, and the documented vocabularies of the
reason fields (design: case-profile.md, "Reasons"). Change a meaning here and every command
follows it.
"""
from __future__ import annotations

import difflib
import functools
from typing import Any

BLUEPRINT = "blueprint"  # rows built from a pack name it in metadata.case.extensions[BLUEPRINT]["pack"]
NONE_LABEL = "(none)"  # the slice of a case whose field holds no value
RELEASE = "release"
# A case's reason fields (the case-reasons seed): severity, worst last.
SEVERITY_ORDER = ("cosmetic", "wrong-answer", "harmful")
ORIGINS = ("hand-written", "production", "synthetic")
GATES = (RELEASE, "trend")
# Reason fields whose values the seed names; other values are allowed, with a warning.
REASON_VOCABULARIES: dict[str, tuple[str, ...]] = {
    "metadata.severity": SEVERITY_ORDER,
    "metadata.origin": ORIGINS,
    "metadata.gate": GATES,
}
STARTER_PROVENANCES = ("starter-example", "overlay-starter-needs-expert-validation")
EVALUATOR_TYPES = ("exact-or-programmatic", "rubric-human", "llm-judge", "pairwise-preference",
                   "trajectory-or-state-check", "human-expert")
HUMAN_TYPES = ("rubric-human", "human-expert")


def is_blank(value: Any) -> bool:
    """No value: absent (None), empty or whitespace-only text, an empty list."""
    return value is None or value == [] or (value.__class__ is str and not value.strip())


def is_release_gate(value: Any) -> bool:
    """`metadata.gate` says the case gates a release: `true`, `"release"`, or a list holding it."""
    return value is True or value == RELEASE or (value.__class__ is list and RELEASE in value)


def is_starter(case: Any) -> bool:
    return isinstance(case, dict) and case.get("provenance") in STARTER_PROVENANCES


def severity_rank(value: Any) -> int:
    """cosmetic 0 < wrong-answer 1 < harmful 2; any other value -1 (shown as it is)."""
    return SEVERITY_ORDER.index(value) if value in SEVERITY_ORDER else -1


@functools.lru_cache(maxsize=4096)  # a set repeats its off-vocabulary values; difflib costs ~50 us a value
def nearest(value: str, vocabulary: tuple[str, ...]) -> str:
    """The documented value closest to `value` (case and spacing ignored first)."""
    folded = value.strip().lower()
    for known in vocabulary:
        if folded == known:
            return known
    return max(vocabulary, key=lambda known: difflib.SequenceMatcher(None, folded, known).ratio())


def off_vocabulary(field: str, value: Any) -> list[str]:
    """The values of a reason field outside its documented vocabulary (blanks and, for the gate,
    `true`/`false` are in it); a list is checked member by member."""
    vocabulary = REASON_VOCABULARIES[field]
    members = value if isinstance(value, list) else [value]
    return [m for m in members if isinstance(m, str) and not is_blank(m) and m not in vocabulary]

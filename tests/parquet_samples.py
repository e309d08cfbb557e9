"""Rows whose differences a columnar format must keep (absent, null, empty, typed values)."""
from __future__ import annotations

import evalconv


def sample_row(row_id: str, **fields) -> evalconv.Row:
    case = {"caseId": row_id, "oracleType": "reference-answer", "expectedBehavior": "Answers.",
            "provenance": "expert-authored", **fields.pop("case", {})}
    return evalconv.Row.from_json({"id": row_id, "input": "q", **fields,
                                   "metadata": {"case": case, **fields.pop("metadata", {})}})


DISTINCTIONS = [
    sample_row("absent"),
    sample_row("null", expected=None),
    sample_row("empty", input="", expected=""),
    sample_row("numbers", input=1, expected=1.0),
    sample_row("big", input=123456789012345678901234567890, expected=-(2 ** 70)),
    sample_row("mixed", input={"messages": [{"role": "user", "content": "hi"}]}, expected=["a", 1, None, True]),
    sample_row("lists", case={"unacceptableBehavior": [], "evaluationCriteria": [""], "linkedConcerns": [" a ", "b|c"]}),
    sample_row("text-that-looks-typed", input="007", expected="null", case={"scenario": "", "actor": "1e5"}),
    sample_row("keys", metadata={"a.b": 1, "c|d": "x", "": None, "nested": {"k": [1.5, "2"]}}),
    sample_row("ext", case={"extensions": {"acme": {"tier": 2, "tags": []}}}),
    sample_row("nul", input="a\x00b", case={"scenario": "tab\tand\r\nCRLF"}),
]

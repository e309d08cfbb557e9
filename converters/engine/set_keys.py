"""The set keys of a chunk's rows, in columns, as they cross from a worker to the parent.

A worker checks its rows by the row rules alone (`Validator.check_row`); the parent applies the
set rules (duplicate ids, case families that disagree) over each chunk's keys in file order
(`Validator.set_findings_many`, which reads any `KeyColumns`)."""
from __future__ import annotations

from typing import Any

from ..canonical.validator import SetKey


class SetKeys:
    """The set keys of consecutive rows, in columns: the ids, and for each row an index into
    the distinct (family, oracle, evaluator) triples, or -1. Far cheaper to send between
    processes than a tuple a row."""

    __slots__ = ("ids", "families", "triples", "_index")

    def __init__(self) -> None:
        self.ids: list[str | None] = []
        self.families: list[int] = []
        self.triples: list[tuple[str, str, Any]] = []
        self._index: dict[tuple[str, str, Any], int] = {}  # (family, oracle, evaluator spelled) -> triple

    def add(self, key: "SetKey | None") -> None:
        row_id, family, oracle, evaluator = key or (None, None, None, None)
        self.ids.append(row_id)
        if family is None:
            self.families.append(-1)
            return
        triple = (family, oracle, evaluator)
        # Spelled as it is: 1, 1.0 and True stay apart (as a row at a time, each row's message
        # names its own value), and an invalid row's list or object evaluator is indexed too.
        spelling = (type(evaluator), evaluator if isinstance(evaluator, (str, int, float, type(None)))
                    else repr(evaluator))
        index = self._index.get((family, oracle, spelling))
        if index is None:
            index = self._index[(family, oracle, spelling)] = len(self.triples)
            self.triples.append(triple)
        self.families.append(index)

    def __len__(self) -> int:
        return len(self.ids)

    def __getstate__(self) -> tuple:
        return self.ids, self.families, self.triples

    def __setstate__(self, state: tuple) -> None:
        self.ids, self.families, self.triples = state
        self._index = {}  # read only: a received batch is not added to

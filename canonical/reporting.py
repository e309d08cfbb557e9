"""What a format needs of the reports it is handed. The reports themselves (`evalconv.reports`)
belong to the application layer; formats see them only through these two protocols."""
from __future__ import annotations

from typing import Iterable, Protocol


class ReadReporter(Protocol):
    """What a reader notes: values it filled in, source fields it did not keep, and values edited
    in the vendor's own field after evalconv wrote the file (`edit`: the CLI prints each one)."""

    notes: list[str]

    def infer(self, path: str, row_id: str, reason: str) -> None: ...
    def ignore(self, path: str, row_id: str, reason: str) -> None: ...
    def edit(self, path: str, row_id: str, reason: str) -> None: ...


class LossReporter(Protocol):
    """What a writer notes: fields the target loses (`drop`) or keeps only in free-form metadata
    it does not act on (`carry`)."""

    notes: list[str]

    def drop(self, path: str, row_id: str, reason: str) -> None: ...
    def carry(self, path: str, row_id: str, reason: str) -> None: ...
    def carry_all(self, keys: Iterable[tuple[str, str]], row_id: str) -> None: ...  # (path, reason) each
    def notice(self, text: str) -> None: ...  # what the target does differently: said on stderr
    # One notice naming the rows it is about, however many rows note it (formula-looking cells).
    def notice_row(self, text: str, row_id: str) -> None: ...


class QuietLoss:
    """A loss report that keeps nothing: a reader's dry run of the writer (to see what an
    untouched file would hold) notes no losses."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def drop(self, path: str, row_id: str, reason: str) -> None:
        pass

    def carry(self, path: str, row_id: str, reason: str) -> None:
        pass

    def carry_all(self, keys: Iterable[tuple[str, str]], row_id: str) -> None:
        pass

    def notice(self, text: str) -> None:
        pass

    def notice_row(self, text: str, row_id: str) -> None:
        pass

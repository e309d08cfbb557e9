"""Loss reports (what a writer could not keep) and read reports (what a reader inferred)."""
from __future__ import annotations

import operator
from array import array
from bisect import bisect_left
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Iterable, Iterator

from .canonical.suggest import count
from .canonical.findings import Finding

# Findings kept in memory per run; the rest are counted (a million warnings help nobody).
FINDINGS_KEPT = 10_000
ROWS_NAMED = 10  # rows a notice about some rows names; the rest are counted


@dataclass
class _FieldIds:
    """(path, reason) -> the ids of the rows it applies to, in the order they were noted.

    With `keep_ids` off only the counts are kept: a million-row conversion whose report nobody
    asked for should not hold a million ids per field."""

    entries: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    keep_ids: bool = True
    counts: dict[tuple[str, str], int] = field(default_factory=dict)  # without ids: rows per entry

    def note(self, path: str, row_id: str, reason: str) -> None:
        self.note_all(((path, reason),), row_id)

    def note_all(self, keys: Iterable[tuple[str, str]], row_id: str) -> None:
        """`note(path, row_id, reason)` for each (path, reason) of one row, in one call."""
        entries = self.entries
        if self.keep_ids:
            for key in keys:
                ids = entries.get(key)
                if ids is None:
                    entries[key] = [row_id]
                elif ids[-1] != row_id:
                    ids.append(row_id)
            return
        counts = self.counts
        for key in keys:
            entries.setdefault(key, [])
            counts[key] = counts.get(key, 0) + 1

    def note_count(self, key: tuple[str, str], rows: int) -> None:
        """`note_ids` of `rows` ids, for a report that keeps counts only."""
        assert not self.keep_ids
        self.entries.setdefault(key, [])
        self.counts[key] = self.counts.get(key, 0) + rows

    def note_ids(self, key: tuple[str, str], ids: list[str]) -> None:
        """`note_all((key,), row_id)` for each of `ids` in turn (consecutive repeats kept once)."""
        if not ids:
            return
        if not self.keep_ids:
            self.entries.setdefault(key, [])
            self.counts[key] = self.counts.get(key, 0) + len(ids)
            return
        have = self.entries.get(key)
        if have is None:
            have = self.entries[key] = []
        if any(map(operator.eq, ids, islice(ids, 1, None))):  # rare: collapse the repeats
            ids = [row_id for k, row_id in enumerate(ids) if k == 0 or ids[k - 1] != row_id]
        have.extend(ids[1:] if have and have[-1] == ids[0] else ids)

    def paths_for(self, row_id: str) -> set[str]:
        return {path for (path, _), ids in self.entries.items() if row_id in ids}

    def to_json(self) -> list[dict[str, Any]]:
        if not self.keep_ids:
            return [{"path": path, "rows": self.counts[(path, reason)], "reason": reason}
                    for (path, reason) in sorted(self.entries)]
        return [{"path": path, "ids": list(ids), "reason": reason}
                for (path, reason), ids in sorted(self.entries.items())]

    def __bool__(self) -> bool:
        return bool(self.entries)


@dataclass
class LossReport:
    """What one write lost. `dropped`: gone from the file. `carried`: kept only in the target's
    free-form metadata, which the target does not act on (reading the file back restores it)."""

    format: str
    output: str | None = None
    rows: int = 0
    dropped: _FieldIds = field(default_factory=_FieldIds)
    carried: _FieldIds = field(default_factory=_FieldIds)
    notes: list[str] = field(default_factory=list)
    # What the target will do differently with these cases (a test that fails until a person
    # grades it, an evaluator evalconv chose): one line each, which the CLI prints on stderr.
    notices: list[str] = field(default_factory=list)

    # text -> (its place in `notices`, the first ROWS_NAMED row ids, how many rows)
    _row_notices: dict[str, tuple[int, list[str], int]] = field(default_factory=dict, repr=False, compare=False)
    # text -> (the ids list it was made from, its length then, the ids as the notice names them)
    _named: dict[str, tuple[list[str], int, str]] = field(default_factory=dict, repr=False, compare=False)

    def notice(self, text: str) -> None:
        self.notices.append(text)

    # while `gathering`: text -> the rows noticed since, for a text noticed before
    _gathered: dict[str, list[str]] | None = field(default=None, repr=False, compare=False)

    def notice_row(self, text: str, row_id: str) -> None:
        """One notice for every row it is about: `text (N rows: 'a', 'b', ...)`."""
        gathered = self._gathered
        if gathered is not None:
            later = gathered.get(text)
            if later is not None:
                later.append(row_id)
                return
            if text in self._row_notices:
                gathered[text] = [row_id]
                return
        at, ids, rows = self._row_notices.get(text, (len(self.notices), [], 0))
        if at == len(self.notices):
            self.notices.append(text)
        elif ids and ids[-1] == row_id:
            return
        if len(ids) < ROWS_NAMED:
            ids.append(row_id)
        self._show(text, at, ids, rows + 1)

    @contextmanager
    def gathering(self) -> Iterator[None]:
        """Within: a row notice of a text noticed before is only gathered, and each text's notice
        is written once at the end (the parent replays a worker's rows by the thousand). The
        notices' order and each one's rows are what `notice_row` a row at a time gives."""
        if self._gathered is not None:  # already gathering
            yield
            return
        gathered: dict[str, list[str]] = {}
        self._gathered = gathered
        try:
            yield
        finally:
            self._gathered = None
            for text, row_ids in gathered.items():
                at, ids, rows = self._row_notices[text]
                for row_id in row_ids:
                    if ids and ids[-1] == row_id:
                        continue
                    if len(ids) < ROWS_NAMED:
                        ids.append(row_id)
                    rows += 1
                self._show(text, at, ids, rows)

    def _show(self, text: str, at: int, ids: list[str], rows: int) -> None:
        self._row_notices[text] = (at, ids, rows)
        named = self._named.get(text)
        if named is None or named[0] is not ids or named[1] != len(ids):  # the names once, not each row
            named = self._named[text] = (ids, len(ids), ", ".join(repr(i) for i in ids))
        more = f" and {rows - len(ids)} more" if rows > len(ids) else ""
        self.notices[at] = f"{text} ({rows} {'row' if rows == 1 else 'rows'}: {named[2]}{more})"

    @classmethod
    def counting(cls, format: str, output: str | None = None) -> "LossReport":
        """A report that counts affected rows per field without keeping their ids."""
        return cls(format, output, dropped=_FieldIds(keep_ids=False), carried=_FieldIds(keep_ids=False))

    def drop(self, path: str, row_id: str, reason: str) -> None:
        self.dropped.note(path, row_id, reason)

    def carry(self, path: str, row_id: str, reason: str) -> None:
        self.carried.note(path, row_id, reason)

    def carry_all(self, keys: Iterable[tuple[str, str]], row_id: str) -> None:
        """`carry` for each (path, reason) of one row (a writer that carries many fields a row)."""
        self.carried.note_all(keys, row_id)

    @property
    def lossy(self) -> bool:
        return bool(self.dropped)

    def dropped_paths(self, row_id: str) -> set[str]:
        return self.dropped.paths_for(row_id)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": self.format, "output": self.output, "rows": self.rows, "lossy": self.lossy,
               "dropped": self.dropped.to_json(), "carried": self.carried.to_json()}
        if self.notes:
            out["notes"] = list(self.notes)
        if self.notices:
            out["notices"] = list(self.notices)
        return out


class LossRecorder:
    """A loss report that records what a writer notes, a row at a time (`take`), so that a
    worker's notes can be replayed into the parent's report (`replay`) with the same effect.
    A row's carried and dropped fields are kept as lists of (path, reason) for one `note_all`
    each; anything else (another row's id, notes, notices) is kept as calls, in order."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self._row_id: str | None = None
        self._carried: list[tuple[str, str]] = []
        self._dropped: list[tuple[str, str]] = []
        self._calls: list[tuple[Any, ...]] = []

    def _same_row(self, row_id: str) -> bool:
        if self._row_id is None:
            self._row_id = row_id
        return row_id == self._row_id and not self._calls

    def drop(self, path: str, row_id: str, reason: str) -> None:
        if self._same_row(row_id):
            self._dropped.append((path, reason))
        else:
            self._calls.append(("drop", path, row_id, reason))

    def carry(self, path: str, row_id: str, reason: str) -> None:
        if self._same_row(row_id):
            self._carried.append((path, reason))
        else:
            self._calls.append(("carry", path, row_id, reason))

    def carry_all(self, keys: Iterable[tuple[str, str]], row_id: str) -> None:
        if self._same_row(row_id):
            self._carried.extend(keys)
        else:
            self._calls.append(("carry_all", tuple(keys), row_id))

    def notice(self, text: str) -> None:
        self._calls.append(("notice", text))

    def notice_row(self, text: str, row_id: str) -> None:
        self._calls.append(("notice_row", text, row_id))

    def take(self) -> "Recorded | None":
        """What was noted since the last `take` (None: nothing)."""
        if self.notes:
            self._calls.extend(("note", text) for text in self.notes)
            self.notes.clear()
        if self._row_id is None and not self._calls:
            return None
        taken = (self._row_id, tuple(self._carried), tuple(self._dropped), tuple(self._calls))
        self._row_id = None
        self._carried.clear()
        self._dropped.clear()
        self._calls.clear()
        return taken


# (row id, its carried (path, reason) pairs, its dropped ones, other calls in order)
Recorded = tuple[Any, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...], tuple[tuple[Any, ...], ...]]


class ChunkLosses:
    """A worker's carried fields for one chunk, a key at a time: (path, reason) -> the rows (by
    their index in the chunk) it was carried under, in order, and each row's id once. The parent
    notes a run of rows it writes with a slice per key (`carry_rows`), not a row at a time; a
    report that counts (no `--report`) takes the slice's length, no ids."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, str], array] = {}
        self.ids: list[str | None] = []  # row index -> the id its fields were carried under
        self.others = False  # did a row record carries beside its own (replay those row by row)?

    def add(self, i: int, recorded: Recorded | None) -> Recorded | None:
        """Row i's carried fields into the index; what else it recorded (None: nothing)."""
        if recorded is None:
            return None
        row_id, carried, dropped, calls = recorded
        if carried:
            ids = self.ids
            if len(ids) < i:
                ids.extend([None] * (i - len(ids)))
            ids.append(row_id)
            index = self.index
            for key in carried:
                rows = index.get(key)
                if rows is None:
                    index[key] = array("I", (i,))
                else:
                    rows.append(i)
        if any(call[0] in ("carry", "carry_all") for call in calls):
            self.others = True
        return (row_id, (), dropped, calls) if dropped or calls else None

    def carry_rows(self, report: LossReport, start: int, stop: int) -> None:
        """Note the fields rows start..stop carried, as their rows' `replay`s would, in order."""
        carried = report.carried
        ids = self.ids
        for key, rows in self.index.items():
            lo = bisect_left(rows, start)
            hi = bisect_left(rows, stop, lo)
            if lo < hi:
                if carried.keep_ids:
                    carried.note_ids(key, [ids[i] for i in rows[lo:hi]])
                else:
                    carried.note_count(key, hi - lo)


def replay(recorded: Recorded, report: LossReport) -> None:
    """Note in `report` what a `LossRecorder` recorded."""
    row_id, carried, dropped, calls = recorded
    if carried:
        report.carried.note_all(carried, row_id)
    if dropped:
        report.dropped.note_all(dropped, row_id)
    for call in calls:
        if call[0] == "note":
            report.notes.append(call[1])
        else:
            getattr(report, call[0])(*call[1:])


@dataclass
class ReadReport:
    """What one read inferred or set aside. `inferred`: values evalconv filled in (an oracle
    type from an assertion, provenance `imported`). `ignored`: source fields not kept as case data
    (system fields such as timestamps), with where they went if anywhere. `edited`: values changed
    in the vendor's own field after evalconv wrote the file; the edit is what the row holds, and
    the CLI prints each one on stderr (an edit is never taken or dropped silently)."""

    format: str
    source: str | None = None
    rows: int = 0
    inferred: _FieldIds = field(default_factory=_FieldIds)
    ignored: _FieldIds = field(default_factory=_FieldIds)
    edited: _FieldIds = field(default_factory=_FieldIds)
    notes: list[str] = field(default_factory=list)

    def infer(self, path: str, row_id: str, reason: str) -> None:
        self.inferred.note(path, row_id, reason)

    def ignore(self, path: str, row_id: str, reason: str) -> None:
        self.ignored.note(path, row_id, reason)

    def edit(self, path: str, row_id: str, reason: str) -> None:
        self.edited.note(path, row_id, reason)

    def notices(self, shown: int = 20) -> list[str]:
        """One stderr line per edited field and row, `row 'id' $.path: reason`, at most `shown`."""
        lines = [f"row '{row_id}' {path}: {reason}" for (path, reason), ids in self.edited.entries.items()
                 for row_id in ids]
        more = len(lines) - shown
        return lines[:shown] + ([f"... and {count(more, 'more edited field')} (see the read report)"] if more > 0 else [])

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": self.format, "source": self.source, "rows": self.rows,
               "inferred": self.inferred.to_json(), "ignored": self.ignored.to_json()}
        if self.edited:
            out["edited"] = self.edited.to_json()
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass
class FindingLog:
    """Every error and warning of a run, up to FINDINGS_KEPT of each, and their full counts."""

    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    error_count: int = 0
    warning_count: int = 0
    by_code: dict[str, int] = field(default_factory=dict)  # every finding counted, kept or not

    def add(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            self.by_code[f.code] = self.by_code.get(f.code, 0) + 1
            if f.severity == "error":
                self.error_count += 1
                if len(self.errors) < FINDINGS_KEPT:
                    self.errors.append(f)
            else:
                self.warning_count += 1
                if len(self.warnings) < FINDINGS_KEPT:
                    self.warnings.append(f)

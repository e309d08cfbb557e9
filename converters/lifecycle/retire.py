"""`evalconv retire SET --id ID ... --why TEXT`: take cases out of a set and keep them, with the
date, the reason and who, in the set's retirement ledger (`<set>.retired.jsonl`); `--restore ID`
puts a case back (a new record: the history is kept).

The set is rewritten as evalconv writes it (a round trip of the untouched rows is exact) in a
temporary file beside it, in flat memory: the rows stream from the old file to the new one. The
ledger is published first, the set second (two renames); a run killed between them leaves the
ledger ahead of the set, which the ledger's `setBefore` hash shows, and the next `retire` on the
set finishes that change before anything else (`ledger.interrupted`). The other order could
lose a case: gone from the set with no record holding it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import AbstractSet, Any, Callable, Iterable, Iterator

from ..atomic import AtomicOutput, together
from ..canonical.errors import EvalconvError, UsageError
from ..canonical.retirement import LedgerRecord, utc_now
from ..canonical.source import SourceRow
from ..canonical.validator import Validator
from ..engine.split_writers import write_row
from ..registry import REGISTRY
from ..reports import LossReport
from ..sources import detect, label, reading
from .gitref import author
from .layout import LayoutCheck
from .ledger import (Retirement, file_hash, interrupted, ledger_bytes, record_line, records, retired_now,
                     retired_path)

CANONICAL_FORMATS = ("csv", "json", "jsonl", "parquet")


class InvalidSet(EvalconvError):
    """The set holds a row the validator rejects: retire rewrites valid sets only (exit 1)."""

    exit_code = 1


@dataclass
class SetChange:
    """What one set file went through: the records appended to its ledger, and the change an
    earlier run left half done that was finished first."""

    set: str
    format: str
    ledger: str
    rows_before: int = 0
    rows_after: int = 0
    records: list[LedgerRecord] = field(default_factory=list)
    finished: list[LedgerRecord] = field(default_factory=list)
    # True: the set was not laid out as evalconv writes it, so untouched rows changed bytes too
    # (the same cases); None: not known
    reformatted: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {"set": self.set, "format": self.format, "ledger": self.ledger, "rows_before": self.rows_before,
                "rows_after": self.rows_after, "reformatted": self.reformatted,
                "records": [_shown(r) for r in self.records], "finished": [_shown(r) for r in self.finished]}


def _shown(record: LedgerRecord) -> dict[str, Any]:
    """A record as the report shows it: the case itself stays in the ledger."""
    return {k: v for k, v in record.to_json().items() if k not in ("case", "setBefore")}


@dataclass
class RetireReport:
    action: str  # "retire", "restore" or "finish"
    changes: list[SetChange]

    @property
    def exit_code(self) -> int:
        return 0

    def to_json(self) -> dict[str, Any]:
        counts = {"retired": 0, "restored": 0, "finished": 0}
        for change in self.changes:
            for record in change.records:
                counts[record.action] += 1
            counts["finished"] += len(change.finished)
        return {"ok": True, "action": self.action, "counts": counts, "sets": [c.to_json() for c in self.changes]}


def retire(target: str, ids: Iterable[str], why: str, *, from_: str | None = None, encoding: str | None = None,
           now: Callable[[], str] = utc_now) -> RetireReport:
    """Remove the cases `ids` from the set (a file, or a folder of set files) and record each in
    its ledger. An id no set holds is a usage error and nothing is written."""
    wanted = _ids(ids, "--id")
    if not why or not why.strip():
        raise UsageError("--why: say why the cases are retired (it goes into the ledger)")
    date = now()
    return _run("retire", target, wanted, from_, encoding,
                lambda path, fmt, todo: _retire_file(path, fmt, todo, why.strip(), date, from_, encoding))


def restore(target: str, ids: Iterable[str], why: str | None = None, *, from_: str | None = None,
            encoding: str | None = None, now: Callable[[], str] = utc_now) -> RetireReport:
    """Put retired cases back where they were (their row when retired, or the end) and record it."""
    wanted = _ids(ids, "--restore")
    reason = why.strip() if why and why.strip() else None
    date = now()
    return _run("restore", target, wanted, from_, encoding,
                lambda path, fmt, todo: _restore_file(path, fmt, todo, reason, date, from_, encoding))


def finish(target: str, *, from_: str | None = None, encoding: str | None = None) -> RetireReport:
    """Finish the changes earlier runs left half done (the ledger written, the set not)."""
    return _run("finish", target, [], from_, encoding, None)


def _ids(ids: Iterable[str], option: str) -> list[str]:
    out = list(dict.fromkeys(i for i in ids))
    if not out:
        raise UsageError(f"{option}: name at least one case id")
    if any(not i for i in out):
        raise UsageError(f"{option}: an id is a non-empty string")
    return out


Work = Callable[[str, str, list[str]], tuple[SetChange, AtomicOutput]]


def _run(action: str, target: str, ids: list[str], from_: str | None, encoding: str | None,
         work: Work | None) -> RetireReport:
    """Finish what earlier runs left half done, then prepare every set file's change and publish
    them all at once: each ledger just before its set. A file that cannot be changed (an invalid
    row, a full disk) stops the run before anything of it is published."""
    files = _set_files(target, from_, encoding)
    changes: dict[str, SetChange] = {}
    for path, fmt in files:
        done = _finish_file(path, fmt, from_, encoding)
        if done is not None:
            changes[path] = done
    if work is None:
        return RetireReport(action, list(changes.values()))
    owners = _owners(files, ids, action, from_, encoding)
    outputs: list[AtomicOutput] = []
    try:
        for path, fmt in files:
            todo = [i for i in ids if owners.get(i) == path]
            if not todo:
                continue
            change, out = work(path, fmt, todo)
            outputs += [_ledger_output(path, change.records), out]
            if path in changes:
                change.finished = changes[path].finished
            changes[path] = change
        with together():
            for out in outputs:
                out.commit()
    finally:
        for out in outputs:
            out.abort()  # nothing, once published
    return RetireReport(action, list(changes.values()))


def _set_files(target: str, from_: str | None, encoding: str | None) -> list[tuple[str, str]]:
    """(path, format) of each canonical set file the target names or holds."""
    from ..walk import collect

    if not os.path.exists(target):
        raise UsageError("no such file or folder", source=target)
    if not os.path.isdir(target):
        return [(target, _canonical_format(target, from_, encoding, named=True))]
    out = []
    for found in collect([target]):
        if found.refused is None and not os.path.isdir(found.path):
            name = _canonical_format(found.path, from_, encoding, named=False)
            if name:
                out.append((found.path, name))
    if not out:
        raise UsageError("no canonical set (CSV, JSON, JSONL, Parquet) in this folder", source=target)
    return out


def _canonical_format(path: str, from_: str | None, encoding: str | None, *, named: bool) -> str:
    with open(path, "rb") as stream:
        head = stream.read(8192)
    fmt = detect(path, head, from_, encoding)
    if fmt.name in CANONICAL_FORMATS:
        return fmt.name
    if not named:
        return ""
    raise UsageError(f"read as format '{fmt.name}': retire rewrites canonical sets "
                     f"({', '.join(CANONICAL_FORMATS)}); convert it first, or give --from if it is canonical",
                     source=path)


def _owners(files: list[tuple[str, str]], ids: list[str], action: str, from_: str | None,
            encoding: str | None) -> dict[str, str]:
    """Which set file each id belongs to: the file that holds it (retire) or whose ledger has it
    retired (restore). An id none has is a usage error, before anything is written."""
    owners: dict[str, str] = {}
    wanted = set(ids)
    if action == "retire" and len(files) == 1:  # one read: the rewrite itself finds the ids
        return {i: files[0][0] for i in ids}
    for path, _ in files:
        if action == "restore":
            found = wanted & retired_now(_existing(retired_path(path))).keys()
        else:
            found = wanted & _live_ids(path, wanted, from_, encoding)
        for i in found:
            owners.setdefault(i, path)
    missing = [i for i in ids if i not in owners]
    if missing:
        raise UsageError(_missing_message(missing, files, action), source=files[0][0] if len(files) == 1 else None)
    return owners


def _existing(path: str) -> str | None:
    return path if os.path.exists(path) else None


def _live_ids(path: str, wanted: set[str], from_: str | None, encoding: str | None) -> set[str]:
    found = set()
    with reading(path, from_=from_, encoding=encoding) as (_, rows, _report):
        for src in rows:
            row_id = _row_id(src.value)
            if row_id in wanted:
                found.add(row_id)
    return found


def _missing_message(missing: list[str], files: list[tuple[str, str]], action: str) -> str:
    names = ", ".join(f"'{i}'" for i in missing)
    where = "the set" if len(files) == 1 else f"any of the {len(files)} sets"
    if action == "restore":
        last = {r.id: r for path, _ in files for r in records(retired_path(path))}
        notes = [f"'{i}' is not retired: it was restored {last[i].date} and is live" for i in missing if i in last]
        return f"no retired case {names} in the ledger of {where}: nothing to restore (nothing written)" + (
            f"; {'; '.join(notes)}" if notes else "")
    retired = {i: r for path, _ in files for i, r in retired_now(_existing(retired_path(path))).items()}
    notes = [f"'{i}' was retired {retired[i].date}: {retired[i].reason}" for i in missing if i in retired]
    return f"no case {names} in {where} (nothing written)" + (f"; {'; '.join(notes)}" if notes else "")


def _row_id(value: Any) -> str | None:
    row_id = value.get("id") if isinstance(value, dict) else None
    return row_id if isinstance(row_id, str) else None


def _retire_file(path: str, fmt: str, ids: list[str], why: str, date: str, from_: str | None,
                 encoding: str | None) -> tuple[SetChange, AtomicOutput]:
    before = file_hash(path)
    by = author(path)
    taken: dict[str, tuple[int, Any]] = {}
    out, change = _rewrite(path, fmt, from_, encoding, remove=set(ids), taken=taken, before=before)
    missing = [i for i in ids if i not in taken]
    if missing:
        out.abort()
        raise UsageError(_missing_message(missing, [(path, fmt)], "retire"), source=label(path))
    records_ = [LedgerRecord("retired", i, date, before, why, by, taken[i][0], taken[i][1]) for i in ids]
    change.records = records_
    return change, out


def _restore_file(path: str, fmt: str, ids: list[str], why: str | None, date: str, from_: str | None,
                  encoding: str | None) -> tuple[SetChange, AtomicOutput]:
    before = file_hash(path)
    by = author(path)
    retired = retired_now(retired_path(path))
    inserts = {i: retired[i] for i in ids}
    placed: dict[str, int] = {}
    out, change = _rewrite(path, fmt, from_, encoding, inserts=inserts, placed=placed, before=before)
    change.records = [LedgerRecord("restored", i, date, before, why, by, placed[i]) for i in ids]
    return change, out


def _in_place_order(inserts: dict[str, Retirement]) -> list[tuple[str, Retirement]]:
    return sorted(inserts.items(), key=lambda kv: kv[1].row or 1 << 62)


def _finish_file(path: str, fmt: str, from_: str | None, encoding: str | None) -> SetChange | None:
    """Finish a change the ledger records and the set does not show (the set is rewritten; the
    ledger already says it all)."""
    held = list(records(retired_path(path)))
    batch = interrupted(path, held)
    if not batch:
        return None
    earlier = held[:len(held) - len(batch)]
    remove = {r.id for r in batch if r.action == "retired"}
    inserts = {}
    for record in batch:
        if record.action == "restored":
            case = _last_retired(earlier, record.id)
            if case is not None:
                inserts[record.id] = case
    out, change = _rewrite(path, fmt, from_, encoding, remove=remove, inserts=inserts)
    change.finished = batch
    with together():
        out.commit()
    return change


def _last_retired(held: list[LedgerRecord], row_id: str) -> Retirement | None:
    for record in reversed(held):
        if record.id == row_id and record.action == "retired" and record.case is not None:
            return Retirement(record.date, record.reason, record.by, None, record.case, record.row)
    return None


def _rewrite(path: str, fmt_name: str, from_: str | None, encoding: str | None, *,
             remove: AbstractSet[str] = frozenset(),
             taken: dict[str, tuple[int, Any]] | None = None,
             inserts: dict[str, Retirement] | None = None,
             placed: dict[str, int] | None = None, before: str | None = None) -> tuple[AtomicOutput, SetChange]:
    """The set without the rows `remove` (kept in `taken`: id -> (row, value)) and with the cases
    `inserts` put back at their rows, written to a temporary file beside it and validated as a
    set; returned prepared, not published. Any invalid row: nothing is kept. `before`: the
    file's hash, to tell whether it was laid out as evalconv writes it (`change.reformatted`)."""
    fmt = REGISTRY.get(fmt_name)
    options = REGISTRY.writer_options(fmt, path, {})
    fmt.load_writer()
    change = SetChange(label(path), fmt.name, retired_path(label(path)))
    taken = {} if taken is None else taken
    placed = {} if placed is None else placed
    pending = [(r.row or 0, i, r.case) for i, r in _in_place_order(inserts or {})]
    out = AtomicOutput(path)
    out.open()
    try:
        writer = fmt.open_writer(out.stream, LossReport(fmt.name, path), options)
        validator = Validator(source=label(path))
        layout = LayoutCheck(fmt, options) if before is not None else None
        with reading(path, from_=from_ or fmt.name, encoding=encoding) as (_, rows, _report):
            for src, old_row in _merged(_seen(rows, layout), remove, taken, pending, placed, change, path):
                checked = validator.check(src)
                if checked.row is None:
                    first = checked.errors[0]
                    first = first.locate(row=old_row, id=first.id, line=first.line, record=first.record,
                                         source=first.source if old_row else f"{retired_path(label(path))} (the case put back)")
                    raise InvalidSet(f"retire rewrites a valid set only: {first.render()}; fix the set first "
                                     f"(evalconv validate lists every problem)")
                write_row(writer, checked.row)
                change.rows_after += 1
        writer.close()
        out.prepare()
    except BaseException:
        out.abort()
        raise
    if layout is not None and before is not None:
        same = layout.same_as(before)
        change.reformatted = None if same is None else not same
    return out, change


def _seen(rows: Iterator[SourceRow], layout: LayoutCheck | None) -> Iterator[SourceRow]:
    """The old rows, each also handed to the layout check."""
    for src in rows:
        if layout is not None:
            layout.add(src.value)
        yield src


def _merged(rows: Iterator[SourceRow], remove: AbstractSet[str], taken: dict[str, tuple[int, Any]],
            pending: list[tuple[int, str, Any]], placed: dict[str, int], change: SetChange,
            path: str) -> Iterator[tuple[SourceRow, int | None]]:
    """The rows of the new set in order, each with its row in the old set (None: put back): the
    old rows less those removed, the restored ones slotted in at their old row (or at the end);
    `placed`: where each restored one went."""
    restored = {i for _, i, _ in pending}
    written = 0
    for src in rows:
        change.rows_before += 1
        row_id = _row_id(src.value)
        if row_id is not None and row_id in remove:
            if row_id in taken:
                raise InvalidSet(f"retire rewrites a valid set only: rows {taken[row_id][0]} and "
                                 f"{change.rows_before} share the id '{row_id}'; fix the set first", source=label(path))
            taken[row_id] = (change.rows_before, src.value)
            continue
        if row_id is not None and row_id in restored:
            raise UsageError(f"'{row_id}' is live in the set (row {change.rows_before}): restoring it would make "
                             f"two; nothing written", source=label(path))
        while pending and pending[0][0] <= written + 1:
            placed[pending[0][1]] = written + 1
            yield SourceRow(pending.pop(0)[2]), None
            written += 1
        yield src, change.rows_before
        written += 1
    for _, row_id, case in pending:
        written += 1
        placed[row_id] = written
        yield SourceRow(case), None


def _ledger_output(path: str, new: list[LedgerRecord]) -> AtomicOutput:
    """The set's ledger with the new records after its old bytes, in a temporary file (an append
    that a kill cannot tear), not published."""
    ledger_path = retired_path(path)
    ledger = AtomicOutput(ledger_path)
    try:
        ledger.open()
        ledger.write_encoded(ledger_bytes(ledger_path))
        ledger.write_encoded("".join(record_line(r) for r in new).encode("utf-8"))
    except BaseException:
        ledger.abort()
        raise
    return ledger


__all__ = ["CANONICAL_FORMATS", "InvalidSet", "RetireReport", "SetChange", "finish", "restore", "retire"]

"""`evalconv migrate SET --to N`: a set moved to another case-profile version, in place.

Version 2 adds only optional fields, so every version-1 row has exactly one version-2 form:
its `metadata.case.schemaVersion` set to 2, nothing else changed. Back to version 1 is lossless
only for rows that use none of version 2's fields; a set with such a row is refused, naming the
rows and the fields, and nothing is written. The rows stream through (memory stays flat), are
written by the set's own canonical format to a temporary file beside it, and replace it in one
rename; then a record of the migration (from, to, when, what changed per field, the tool
version) is appended to `<set>.migrations.jsonl` the same way.

Rows must be valid at their own version before they move (an invalid row is named, nothing is
written). Once moved, version 2's evidence rules apply to them: what those rules find is
reported beside the migration (`validate` shows the same), since the fields that answer them
(targetTurn, contextRefs, permission) can only be written in a version-2 row.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator

from .. import __version__
from ..atomic import SIDE_FILES, AtomicOutput, together
from ..canonical import jsonvalue, schema
from ..canonical.errors import UsageError
from ..canonical.findings import Finding
from ..canonical.row import Row
from ..canonical.source import SourceRow
from ..canonical.validator import Validator
from ..registry import REGISTRY
from ..reports import LossReport
from ..sources import label, reading
from .ledger import MIGRATIONS_SUFFIX, is_ledger, migrations

VERSION_PATH = schema.VERSION_PATH
FINDINGS_KEPT = 50  # findings listed per set (the count is exact)
ABSENT = "(absent)"


@dataclass
class SetMigration:
    """One set file's migration: what changed, what stopped it, what version 2 now asks."""

    path: str
    format: str | None = None
    to: int = schema.LATEST
    rows: int = 0
    before: Counter = field(default_factory=Counter)  # rows by the version they said
    changes: Counter = field(default_factory=Counter)  # (path, change, old, new) -> rows
    refused: list[Finding] = field(default_factory=list)  # invalid rows, or rows that would lose a field
    refused_count: int = 0
    after: list[Finding] = field(default_factory=list)  # findings of the migrated rows at their new version
    after_count: int = 0
    written: bool = False
    record: dict[str, Any] | None = None

    @property
    def changed(self) -> int:
        return sum(self.changes.values())

    @property
    def status(self) -> str:
        if self.refused_count:
            return "refused"
        if not self.changed:
            return "unchanged"
        return "migrated" if self.written else "would-migrate"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "format": self.format, "to": self.to, "status": self.status,
                "rows": self.rows, "changed": self.changed,
                "versions_before": {str(k): v for k, v in sorted(self.before.items(), key=lambda kv: str(kv[0]))},
                "fields": field_changes(self.changes),
                "refused": [_finding_json(f) for f in self.refused], "refused_count": self.refused_count,
                "findings_after": [_finding_json(f) for f in self.after], "findings_after_count": self.after_count,
                "errors_after": sum(1 for f in self.after if f.severity == "error"),
                "ledger": self.path + MIGRATIONS_SUFFIX if self.written else None, "record": self.record}


def _finding_json(f: Finding) -> dict[str, Any]:
    return {**f.to_json(), "source": f.source}


def field_changes(changes: Counter) -> list[dict[str, Any]]:
    return [{"path": path, "change": change, "from": old, "to": new, "rows": n}
            for (path, change, old, new), n in sorted(changes.items(), key=lambda kv: (kv[0][0], kv[0][1], str(kv[0][2])))]


@dataclass
class MigrationReport:
    sets: list[SetMigration]
    dry_run: bool = False

    @property
    def exit_code(self) -> int:
        """1 when a set was refused or its migrated rows break their new version's rules."""
        return 1 if any(s.refused_count or any(f.severity == "error" for f in s.after) for s in self.sets) else 0

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.exit_code == 0, "dry_run": self.dry_run, "sets": [s.to_json() for s in self.sets]}


def check_target(to: int) -> int:
    if to not in schema.VERSIONS:
        raise UsageError(f"--to {to}: there is no schema version {to}; the versions are "
                         f"{', '.join(map(str, schema.VERSIONS))}")
    return to


def migrate(target: str, to: int, *, from_: str | None = None, encoding: str | None = None,
            dry_run: bool = False, now: datetime | None = None) -> MigrationReport:
    """Migrate a set file, or every set file in a folder (ledgers left out), to version `to`."""
    check_target(to)
    if not os.path.exists(target):
        raise UsageError("no such file or folder", source=target)
    files = _set_files(target)
    return MigrationReport([migrate_file(path, to, from_=from_, encoding=encoding, dry_run=dry_run, now=now)
                            for path in files], dry_run)


def _set_files(target: str) -> list[str]:
    if not os.path.isdir(target):
        return [target]
    from ..walk import collect

    found = [f.path for f in collect([target]) if f.refused is None and not is_ledger(f.path)]
    if not found:
        raise UsageError("no set files found in this folder", source=target)
    return found


def _not_canonical(path: str, name: str) -> UsageError:
    canonical = ", ".join(f.name for f in REGISTRY.all() if f.lossless and not f.folder)
    return UsageError(f"migrate rewrites a canonical set file ({canonical}) in place; this is {name}: convert "
                      f"it to a canonical set first (evalconv {path} --to jsonl -o set.jsonl)", source=path)


def migrate_file(path: str, to: int, *, from_: str | None = None, encoding: str | None = None,
                 dry_run: bool = False, now: datetime | None = None) -> SetMigration:
    result = SetMigration(label(path), to=to)
    if os.path.isdir(path):
        raise _not_canonical(path, "a dataset folder")
    with together():  # the set and its ledger are published together, or neither is
        with reading(path, from_=from_, encoding=encoding) as (fmt, rows, _report):
            result.format = fmt.name
            if fmt.folder or not fmt.lossless:
                raise _not_canonical(path, fmt.name)
            fmt.load_writer()
            options = fmt.make_options(path)
            with AtomicOutput(path) as out:
                writer = fmt.open_writer(out.stream, LossReport(fmt.name, path), options)
                for value in _migrated(rows, result, label(path)):
                    writer.write(value)
                writer.close()
                if result.refused_count or not result.changed or dry_run:
                    out.abort()
                    return result
                out.commit()
        result.record = _record(result, now)
        append_record(path + MIGRATIONS_SUFFIX, result.record)
    fmt.committed(writer, options, SIDE_FILES)
    result.written = True
    return result


def _migrated(rows: Iterator[SourceRow], result: SetMigration, source: str) -> Iterator[Any]:
    """The rows at the new version, as `Row`s; refusals and new findings noted in `result`."""
    before, after = Validator(source=source), Validator(source=source)
    for src in rows:
        result.rows += 1
        checked = before.check(src)
        if checked.row is None:
            _refuse(result, checked.errors)
            continue
        value = checked.row.to_json()
        version = schema.version_of(value)
        new, problem = migrate_row(value, version, result.to, result.changes)
        result.before[version] += 1
        if problem is not None:
            _refuse(result, [problem.locate(row=checked.number, id=checked.row.id, line=src.line,
                                            record=src.record, source=source)])
            continue
        moved = after.check(SourceRow(new, src.line, src.record))
        for f in moved.findings:
            if f.code in _NOT_MIGRATION:
                continue  # said already of the row at its own version
            result.after_count += 1
            if len(result.after) < FINDINGS_KEPT:
                result.after.append(f)
        if moved.row is not None:
            yield moved.row
        elif not result.refused_count:  # version 2's evidence rules reject it: written, and named in `after`
            yield Row.from_json(new)


# Findings the migrated row repeats from before (its own version's rules): not news of the migration.
_NOT_MIGRATION = frozenset(("starter-example", "placeholder-behavior", "judge-needs-validation", "rubric-without-criteria",
                            "expert-without-expertise", "expected-on-behavior-only", "expected-shape", "off-vocabulary",
                            "unknown-case-family"))


def _refuse(result: SetMigration, findings: list[Finding]) -> None:
    result.refused_count += len(findings)
    room = FINDINGS_KEPT - len(result.refused)
    result.refused += findings[:max(room, 0)]


def migrate_row(value: dict[str, Any], version: int | None, to: int,
                changes: Counter | None = None) -> tuple[dict[str, Any], Finding | None]:
    """The row at version `to` (a new dict; `value` is not changed), or the finding that says
    why it cannot move without loss. `changes` counts what changed, by field."""
    if version == to:
        return value, None
    case = value["metadata"]["case"]
    if to > (version or 1):
        new_case = {**case, schema.VERSION_FIELD: to}
        if changes is not None:
            changes[(VERSION_PATH, "set", case.get(schema.VERSION_FIELD, ABSENT), to)] += 1
    else:
        lost = [name for v in schema.VERSIONS if v > to for name in schema.ADDED_IN.get(v, ())
                if name != schema.VERSION_FIELD and name in case]
        if lost:
            return value, Finding("schema", f"cannot move to schema version {to} without loss: the row uses "
                                  f"{', '.join(lost)}, which version {to} does not have (remove "
                                  f"{'them' if len(lost) > 1 else 'it'} first, or keep the set at version {version})",
                                  f"$.metadata.case.{lost[0]}")
        new_case = {k: v for k, v in case.items() if k != schema.VERSION_FIELD}
        if to > 1:
            new_case[schema.VERSION_FIELD] = to
        if changes is not None:
            changes[(VERSION_PATH, "set" if to > 1 else "removed", case.get(schema.VERSION_FIELD),
                     to if to > 1 else ABSENT)] += 1
    return {**value, "metadata": {**value["metadata"], "case": new_case}}, None


def _record(result: SetMigration, now: datetime | None) -> dict[str, Any]:
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).replace(microsecond=0)
    from_versions = sorted(v for v in result.before if v != result.to)
    return {"action": "migrated", "from": from_versions[0] if len(from_versions) == 1 else from_versions,
            "to": result.to, "date": when.isoformat().replace("+00:00", "Z"), "tool": f"evalconv {__version__}",
            "format": result.format, "rows": result.rows, "changed": result.changed,
            "fields": field_changes(result.changes)}


def append_record(ledger: str, record: dict[str, Any]) -> None:
    """Append one record to a ledger atomically: the ledger as it was, plus the line, renamed over it."""
    try:
        with open(ledger, "rb") as f:
            old = f.read()
    except FileNotFoundError:
        old = b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    with AtomicOutput(ledger) as out:
        out.write_encoded(old + jsonvalue.dumps(record).encode("utf-8") + b"\n")
        out.commit()


__all__ = ["MigrationReport", "SetMigration", "append_record", "migrate", "migrate_file", "migrate_row", "migrations"]

"""`evalconv diff BASE HEAD`: what a change did to a set, and what a reviewer should ask about it.

Cases are matched by id, whatever the format of each side (a CSV at base and a JSONL at head
compare). Flat memory: the base's ids go into a table of content hashes (`DigestTable`), the
head is streamed against it, and only the rows that changed are read in full (the base a second
time, for their old values). What is found (added, removed and changed cases, findings) goes to a
spool file as it is found (`spool.py`): memory holds counts, and the CLI prints the report from
the spool (`open_diff`, `json_stream`); the library's `diff` reads it back into lists. A large
JSONL head is read while a worker process reads the base (`_in_two_processes`). A removal the
head's retirement ledger records is accepted; a migration (rows that differ only in
`metadata.case.schemaVersion`) is one finding.
"""
from __future__ import annotations

import codecs
import os
from array import array
from collections import Counter
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from ..canonical import jsonvalue, paths
from ..canonical.admissibility import ADMISSIBILITY, verdict
from ..canonical.diff import diff_paths
from ..canonical.errors import ReadError, UsageError
from ..canonical.source import SourceRow
from ..canonical.findings import CODES, Finding
from ..canonical.jsonvalue import same
from ..canonical.review import is_placeholder
from ..canonical.suggest import did_you_mean
from ..canonical.vocabulary import is_starter
from ..sources import reading
from .base_side import BaseSide, SavedBase, read_base, read_base_saved
from .digest import content_digest, id_key, schema_version
from .digest import row_id as _id, version_byte as _version_byte
from .ledger import MIGRATIONS_SUFFIX, Retirement, is_ledger, migrations, retired_now, retired_path
from .spool import Held, Journal, Picked, Spool
from .table import CHANGED, SEEN, DigestTable

# The review findings `diff` makes (all warnings: `--fail-on CODE` makes any of them fail a run).
DIFF_CODES = ("removed-without-retirement", "behavior-changed-without-version", "new-without-reason",
              "oracle-type-changed", "starter-added", "id-reused", "schema-migrated", "ledger-rewritten")
# What a case's behaviour is: a change to any of them needs a new metadata.case.version.
BEHAVIOR_PATHS = ("$.expected", "$.metadata.case.expectedBehavior", "$.metadata.case.oracleType",
                  "$.metadata.case.evaluator", "$.metadata.case.passLogic")
VERSION_PATH = "$.metadata.case.version"
DEFAULT_REASON_FIELD = "metadata.reason"
SHORT = 80  # characters of an old or new value in a change
FIELDS_KEPT = 20  # changed paths listed per case
ABSENT = {"$absent": True}  # what a change shows for a field one side does not have


@dataclass
class Change:
    id: str
    row: int           # in the head
    base_row: int
    fields: list[dict[str, Any]]
    more_fields: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "row": self.row, "base_row": self.base_row, "fields": self.fields,
                "more_fields": self.more_fields}


@dataclass
class SetDiff:
    """One set's diff, held in memory (what the library's `diff` returns)."""
    base: str | None
    head: str | None
    base_format: str | None = None
    head_format: str | None = None
    base_rows: int = 0
    head_rows: int = 0
    unchanged: int = 0
    migrated: int = 0
    added: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    base_versions: Counter = field(default_factory=Counter)
    head_versions: Counter = field(default_factory=Counter)
    without_id: dict[str, int] = field(default_factory=lambda: {"base": 0, "head": 0})

    @property
    def retired(self) -> int:
        return sum(1 for r in self.removed if r.get("retired"))

    def to_json(self) -> dict[str, Any]:
        return _set_json(self, self.retired, self.added, self.removed, [c.to_json() for c in self.changed],
                         [_finding_json(f) for f in self.findings])


class SpooledSet:
    """One set's diff while it runs and until it is printed: counts in memory, the entries (added,
    removed, changed, findings) in the spool as they are found, in the order they are found."""

    def __init__(self, spool: Spool, base: str | None, head: str | None) -> None:
        self.base, self.head = base, head
        self.base_format: str | None = None
        self.head_format: str | None = None
        self.base_rows = self.head_rows = self.unchanged = self.migrated = self.retired = 0
        self.base_versions: Counter = Counter()
        self.head_versions: Counter = Counter()
        self.without_id = {"base": 0, "head": 0}
        self.codes = Counter[str]()  # findings by code
        self.added, self.removed = spool.journal("added"), spool.journal("removed")
        self.changed, self.findings = spool.journal("changed"), spool.journal("findings")

    def remove(self, entry: dict[str, Any]) -> None:
        self.removed.append(entry)
        self.retired += entry["retired"] is not None

    def note(self, found: Iterable[Finding]) -> None:
        for f in found:
            self.findings.append(_finding_json(f))
            self.codes[f.code] += 1

    def finish(self) -> None:
        for journal in self.journals():
            journal.finish()

    def journals(self) -> tuple[Journal, ...]:
        return self.added, self.removed, self.changed, self.findings

    def to_json(self) -> dict[str, Any]:
        return _set_json(self, self.retired, self.added, self.removed, self.changed, self.findings)

    def materialise(self) -> SetDiff:
        return SetDiff(self.base, self.head, self.base_format, self.head_format, self.base_rows, self.head_rows,
                       self.unchanged, self.migrated, list(self.added), list(self.removed),
                       [Change(**c) for c in self.changed], [_finding(f) for f in self.findings],
                       self.base_versions, self.head_versions, dict(self.without_id))


def _set_json(s: SetDiff | SpooledSet, retired: int, added: Sequence[Any], removed: Sequence[Any],
              changed: Sequence[Any], findings: Sequence[Any]) -> dict[str, Any]:
    return {"base": s.base, "head": s.head, "base_format": s.base_format,
            "head_format": s.head_format, "base_rows": s.base_rows, "head_rows": s.head_rows,
            "counts": {"added": len(added), "removed": len(removed), "retired": retired,
                       "changed": len(changed), "unchanged": s.unchanged, "migrated": s.migrated},
            "schema_versions": {"base": _versions(s.base_versions), "head": _versions(s.head_versions)},
            "rows_without_id": s.without_id,
            "added": added, "removed": removed, "changed": changed, "findings": findings}


def _versions(counter: Counter) -> dict[str, int]:
    return {str(k): v for k, v in sorted(counter.items(), key=lambda kv: str(kv[0]))}


def _finding_json(f: Finding) -> dict[str, Any]:
    return {**f.to_json(), "source": f.source}


def _finding(entry: dict[str, Any]) -> Finding:
    return Finding(entry["code"], entry["message"], entry["path"], entry["row"], entry["id"], entry["line"],
                   entry["record"], entry["source"])


def _report_json(fail_on: tuple[str, ...], ok: bool, counts: list[dict[str, int]], by_code: Counter[str],
                 failed: Sequence[Any], sets: list[dict[str, Any]]) -> dict[str, Any]:
    totals = Counter[str]()
    for each in counts:
        for key, value in each.items():
            totals[key] += value
    return {"ok": ok, "fail_on": list(fail_on), "counts": dict(totals),
            "findings_by_code": dict(sorted(by_code.items())), "failed": failed, "sets": sets}


@dataclass
class DiffReport:
    sets: list[SetDiff]
    fail_on: tuple[str, ...] = ()

    @property
    def findings(self) -> list[Finding]:
        return [f for s in self.sets for f in s.findings]

    @property
    def failed(self) -> list[Finding]:
        return [f for f in self.findings if f.code in self.fail_on or f.severity == "error"]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def to_json(self) -> dict[str, Any]:
        sets = [s.to_json() for s in self.sets]
        return _report_json(self.fail_on, self.exit_code == 0, [s["counts"] for s in sets],
                            Counter(f.code for f in self.findings), [_finding_json(f) for f in self.failed], sets)


class SpooledReport:
    """A diff's report whose entries are in a spool (`open_diff`): printed from it a piece at a
    time (`json_stream.chunks(report.to_json(), ...)`, or `render`), or `materialise`d."""

    def __init__(self, spool: Spool, fail_on: tuple[str, ...]) -> None:
        self.spool, self.fail_on = spool, fail_on
        self.sets: list[SpooledSet] = []

    def _fails(self, code: str) -> bool:
        return code in self.fail_on or CODES[code][0] == "error"

    @property
    def codes(self) -> Counter[str]:
        total = Counter[str]()
        for s in self.sets:
            total.update(s.codes)
        return total

    @property
    def exit_code(self) -> int:
        return 1 if any(self._fails(code) for code in self.codes) else 0

    @property
    def stdlib(self) -> bool:
        """Does some entry make `jsonvalue.dumps` fall back to the standard library?"""
        return any(journal.stdlib for s in self.sets for journal in s.journals())

    def to_json(self) -> dict[str, Any]:
        """The report's dict with the spool's journals in place of its lists."""
        codes = self.codes
        failing = {code for code in codes if self._fails(code)}
        failed = Picked([s.findings for s in self.sets], "code", failing, sum(codes[c] for c in failing))
        sets = [s.to_json() for s in self.sets]
        return _report_json(self.fail_on, self.exit_code == 0, [s["counts"] for s in sets], codes, failed, sets)

    def materialise(self) -> DiffReport:
        return DiffReport([s.materialise() for s in self.sets], self.fail_on)


def check_fail_on(codes: Iterable[str]) -> tuple[str, ...]:
    """`--fail-on` codes, repeatable or comma-separated; an unknown code is a usage error."""
    out: list[str] = []
    for given in codes:
        for code in (c.strip() for c in given.split(",")):
            if not code:
                continue
            if code not in CODES:
                raise UsageError(f"--fail-on: unknown finding code '{code}'{did_you_mean(code, DIFF_CODES)}; "
                                 f"diff's codes: {', '.join(DIFF_CODES)}")
            out.append(code)
    return tuple(dict.fromkeys(out))


def diff(base: str | None, head: str | None, **options: Any) -> DiffReport:
    """Compare two sets (files or folders; None: the set does not exist on that side), the report
    held in memory; `open_diff` takes the same arguments. Folders pair their set files by path
    without the extension (`a.csv` at base, `a.jsonl` at head)."""
    with open_diff(base, head, **options) as report:
        return report.materialise()


@contextmanager
def open_diff(base: str | None, head: str | None, *, fail_on: Iterable[str] = (),
              **options: Any) -> Iterator[SpooledReport]:
    """`diff`, its entries in a spool (removed when the block ends) for a report printed a piece
    at a time. Options: `reason_field`, `from_`, `encoding`, `jobs` (1: one process), and
    `base_label`, `head_label`, `base_ledger` (the base set's retirement ledger when it is not
    beside it: a git ref's copy)."""
    fail = check_fail_on(fail_on)
    with Spool() as spool:
        report = SpooledReport(spool, fail)
        report.sets += _diff_sets(spool, base, head, **options)
        yield report


def diff_git(ref: str, *targets: str, **options: Any) -> DiffReport:
    """Each PATH as it was at the git ref REF (read with git, no checkout) against the working tree."""
    with open_diff_git(ref, *targets, **options) as report:
        return report.materialise()


@contextmanager
def open_diff_git(ref: str, *targets: str, fail_on: Iterable[str] = (), **options: Any) -> Iterator[SpooledReport]:
    """`diff_git`, its entries in a spool, as `open_diff`."""
    from .gitref import at_ref

    fail = check_fail_on(fail_on)
    with Spool() as spool:
        report = SpooledReport(spool, fail)
        for path in targets:
            single = not os.path.isdir(path)
            with at_ref(ref, path) as copy, at_ref(ref, retired_path(path)) if single else nullcontext() as ledger:
                if copy is None and not os.path.exists(path):
                    raise UsageError(f"not in the working tree nor at {ref}", source=path)
                report.sets += _diff_sets(spool, copy, path if os.path.exists(path) else None,
                                          base_label=f"{ref}:{path}", head_label=path, base_ledger=ledger, **options)
        yield report


def _diff_sets(spool: Spool, base: str | None, head: str | None, *, reason_field: str = DEFAULT_REASON_FIELD,
               from_: str | None = None, encoding: str | None = None, base_label: str | None = None,
               head_label: str | None = None, base_ledger: str | None = None,
               jobs: int | None = None) -> list[SpooledSet]:
    reason = _reason_path(reason_field)
    pairs = _pairs(base, head)
    return [_diff_pair(spool, b, h, reason_path=reason, from_=from_, encoding=encoding,
                       base_label=_relabel(b, base, base_label), head_label=_relabel(h, head, head_label),
                       base_ledger=base_ledger if len(pairs) == 1 else None, jobs=jobs)
            for b, h in pairs]


def _relabel(found: str | None, top: str | None, label: str | None) -> str | None:
    """How a side is named in the report: a temporary copy of a git ref gets the ref's name."""
    if found is None or label is None or top is None:
        return found
    inside = os.path.relpath(found, top)
    return label if inside == "." else f"{label.rstrip('/')}/{inside.replace(os.sep, '/')}"


def _reason_path(field_name: str) -> str:
    try:
        return paths.normalize(field_name)
    except ValueError:
        raise UsageError(f"--reason-field takes a field path such as metadata.reason, not '{field_name}'") from None


def _set_files(top: str) -> dict[str, str]:
    from ..sources import folder_format
    from ..walk import collect

    if not os.path.isdir(top) or folder_format(top) is not None:
        return {_stem(os.path.basename(top)): top}
    found: dict[str, str] = {}
    for f in collect([top]):
        if f.refused is not None or is_ledger(f.path):
            continue
        found.setdefault(_stem(f.relative), f.path)
    return found


def _stem(relative: str) -> str:
    """A set file's name without its format's extension: `sets/a.csv` and `sets/a.jsonl` pair."""
    from ..registry import REGISTRY

    lower = relative.lower()
    ends = [ext for fmt in REGISTRY.all() for ext in fmt.extensions if lower.endswith(ext.lower())]
    return relative[:-max(map(len, ends))] if ends else relative


def _pairs(base: str | None, head: str | None) -> list[tuple[str | None, str | None]]:
    for side in (base, head):
        if side is not None and not os.path.exists(side):
            raise UsageError("no such file or folder", source=side)
    if base is None and head is None:
        raise UsageError("diff needs a base or a head")
    folder = any(side is not None and os.path.isdir(side) and _set_files(side).get(_stem(os.path.basename(side)))
                 != side for side in (base, head))
    if not folder:
        return [(base, head)]
    for side in (base, head):
        if side is not None and not os.path.isdir(side):
            raise UsageError("diff compares a folder with a folder (or a file with a file)", source=side)
    b, h = _set_files(base) if base else {}, _set_files(head) if head else {}
    pairs = [(b.get(stem), h.get(stem)) for stem in sorted(b.keys() | h.keys())]
    if not pairs:
        raise UsageError("no set files found in this folder", source=head or base)
    return pairs


def _case(value: Any) -> dict[str, Any]:
    metadata = value.get("metadata") if isinstance(value, dict) else None
    case = metadata.get("case") if isinstance(metadata, dict) else None
    return case if isinstance(case, dict) else {}


def get(value: Any, path: str) -> Any:
    """The value at `path`, or ABSENT."""
    node = value
    for part in paths.parse(path):
        if isinstance(part, str) and isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(part, int) and isinstance(node, list) and part < len(node):
            node = node[part]
        else:
            return ABSENT
    return node


def short(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = jsonvalue.dumps(value)
    return text if len(text) <= SHORT else text[:SHORT - 1] + "…"


def diff_pair(base: str | None, head: str | None, *, reason_path: str = "$.metadata.reason",
              from_: str | None = None, encoding: str | None = None,
              base_label: str | None = None, head_label: str | None = None,
              base_ledger: str | None = None, jobs: int | None = None) -> SetDiff:
    """One set at base against the same set at head."""
    with Spool() as spool:
        return _diff_pair(spool, base, head, reason_path=reason_path, from_=from_, encoding=encoding,
                          base_label=base_label, head_label=head_label, base_ledger=base_ledger,
                          jobs=jobs).materialise()


def _diff_pair(spool: Spool, base: str | None, head: str | None, *, reason_path: str, from_: str | None,
               encoding: str | None, base_label: str | None, head_label: str | None,
               base_ledger: str | None, jobs: int | None) -> SpooledSet:
    result = SpooledSet(spool, base_label or base, head_label or head)
    held = spool.held()  # id key -> (head row, line, record, value) of the rows that changed
    try:
        _compare(result, held, spool, base, head, reason_path, from_, encoding, base_label, head_label,
                 base_ledger, jobs)
    finally:
        result.finish()
        held.close()
    return result


def _compare(result: SpooledSet, held: Held, spool: Spool, base: str | None, head: str | None, reason_path: str,
             from_: str | None, encoding: str | None, base_label: str | None, head_label: str | None,
             base_ledger: str | None, jobs: int | None) -> None:
    where = head_label or head or base_label or base
    both = _in_two_processes(result, held, spool, base, head, from_, encoding, jobs, reason_path, where)
    if both is not None:
        side, retired = both
    else:
        side = read_base(base, from_, encoding) if base is not None else BaseSide()
        _took_base(result, side, base)
        retired = retired_now(_ledger(head))
        if head is not None:
            _head_pass(result, held, side, head, from_, encoding, retired, reason_path, where)
    table = side.table
    if base is not None and (len(held) or table.unseen()):
        base_rows = _jsonl_rows(base, table, side.lines) if side.lines else None
        _second_pass(base, from_, encoding, table, held, retired, result, base_label or base, base_rows)
    rewritten = _ledger_rewritten(base_ledger or (_ledger(base) if base is not None else None), _ledger(head))
    if rewritten is not None:
        result.note([rewritten.locate(row=None, id=None, line=None, record=None, source=where)])
    if result.migrated:
        result.note([_migration_finding(result, head).locate(row=None, id=None, line=None, record=None,
                                                             source=where)])


def _took_base(result: SpooledSet, side: BaseSide, base: str | None) -> None:
    if base is not None:
        result.base_format, result.base_rows = side.format, len(side.versions)
        result.base_versions, result.without_id["base"] = side.counts, side.without_id


def _in_two_processes(result: SpooledSet, held: Held, spool: Spool, base: str | None, head: str | None,
                      from_: str | None, encoding: str | None, jobs: int | None, reason_path: str,
                      where: str | None) -> tuple[BaseSide, dict[str, Retirement]] | None:
    """The base read in a worker process while this one reads a large JSONL head into per-row
    ids and hashes (`HeadRows`); then the head's added and changed rows are read again by their
    lines. The same report as one process gives. None when it does not apply (one process)."""
    if base is None or head is None or head == "-" or not os.path.isfile(head):
        return None
    from ..engine.background import in_background
    from ..engine.parallel import default_jobs, eligible

    with reading(head, from_=from_, encoding=encoding) as (fmt, rows, _):
        if not eligible(head, fmt.name, None, encoding, default_jobs() if jobs is None else jobs):
            return None
        saved_to = spool.file("base-table")
        background = in_background(read_base_saved, saved_to, base, from_, encoding)
        if background is None:
            return None
        with background:
            result.head_format = fmt.name
            head_rows = HeadRows.read(rows, result)
            saved: SavedBase = background.result()
    side = saved.load(saved_to)
    _took_base(result, side, base)
    retired = retired_now(_ledger(head))
    wanted = head_rows.classify(side, result)
    for number, src in _head_lines(head, head_rows, wanted):
        value = src.value
        found = _id(value)
        assert found is not None  # _head_lines checked it is the id the first read saw
        if side.table.find(id_key(found)) < 0:
            _add(result, found, number, src, reason_path, retired, where)
        else:
            held.put(id_key(found), (number, src.line, src.record, value))
    return side, retired


@dataclass
class HeadRows:
    """A JSONL head read into per-row ids, content hashes, schema versions and lines (21 bytes a
    row), while the base is read elsewhere."""
    keys: "array[int]" = field(default_factory=lambda: array("q"))  # 0: no id
    digests: "array[int]" = field(default_factory=lambda: array("q"))
    versions: bytearray = field(default_factory=bytearray)
    lines: "array[int]" = field(default_factory=lambda: array("I"))

    @classmethod
    def read(cls, rows: Iterable[SourceRow], result: SpooledSet) -> "HeadRows":
        out = cls()
        keys, digests, versions, lines = out.keys, out.digests, out.versions, out.lines
        for src in rows:
            value = src.value
            version = schema_version(value)
            result.head_versions[version] += 1
            versions.append(_version_byte(version))
            lines.append(src.line or 0)
            found = _id(value)
            if found is None:
                result.without_id["head"] += 1
                keys.append(0)
                digests.append(0)
                continue
            keys.append(id_key(found))
            digests.append(content_digest(value))
        result.head_rows = len(versions)
        return out

    def classify(self, side: BaseSide, result: SpooledSet) -> "array[int]":
        """`_head_pass`'s decisions over the saved rows, in order: marks the base's table, counts
        the unchanged and migrated, and returns the rows (by number) added or changed."""
        wanted, unchanged, migrated = side.table.match(self.keys, self.digests, self.versions, side.versions)
        result.unchanged += unchanged
        result.migrated += migrated
        return wanted


def _head_lines(path: str, head: HeadRows, wanted: "array[int]") -> Iterator[tuple[int, SourceRow]]:
    """The head's rows `wanted` (by number, in order), parsed again from their lines; the others
    are skipped as bytes. A line that no longer holds the id read there is refused."""
    numbers = iter(wanted)
    number = next(numbers, None)
    with open(path, "rb") as f:
        for line, raw in enumerate(f, 1):
            if number is None:
                break
            if head.lines[number - 1] != line:
                continue
            value = _parse_line(raw, line)
            found = _id(value)
            if found is None or id_key(found) != head.keys[number - 1]:
                break
            yield number, SourceRow(value, line)
            number = next(numbers, None)
    if number is not None:
        raise ReadError("the file changed while diff read it: run diff again", source=path)


def _parse_line(raw: bytes, line: int) -> Any:
    try:
        return jsonvalue.loads(raw[3:] if line == 1 and raw.startswith(codecs.BOM_UTF8) else raw)
    except (jsonvalue.JSONValueError, UnicodeDecodeError):
        return None


def _head_pass(result: SpooledSet, held: Held, side: BaseSide, head: str, from_: str | None,
               encoding: str | None, retired: dict[str, Retirement], reason_path: str, where: str | None) -> None:
    """The head streamed against the base's table: added cases (and their findings) go to the
    spool at once, changed rows are held (on disk) for the base's second pass."""
    table, versions = side.table, side.versions
    with reading(head, from_=from_, encoding=encoding) as (fmt, rows, _):
        result.head_format = fmt.name
        number = 0
        for number, src in enumerate(rows, 1):
            value = src.value
            version = schema_version(value)
            result.head_versions[version] += 1
            row_id = _id(value)
            if row_id is None:
                result.without_id["head"] += 1
                continue
            key = id_key(row_id)
            slot = table.find(key)
            if slot < 0:
                _add(result, row_id, number, src, reason_path, retired, where)
                continue
            table.mark(slot, SEEN)
            if content_digest(value) != table.digest(slot):
                table.mark(slot, CHANGED)
                held.put(key, (number, src.line, src.record, value))
                continue
            result.unchanged += 1
            if versions[table.row(slot) - 1] != _version_byte(version):
                result.migrated += 1
        result.head_rows = number


def _add(result: SpooledSet, row_id: str, number: int, src: SourceRow, reason_path: str,
         retired: dict[str, Retirement], where: str | None) -> None:
    result.added.append({"id": row_id, "row": number, "line": src.line})
    result.note(_located(_added_findings(src.value, reason_path, retired.get(row_id)), number, row_id, src.line,
                         src.record, where))


def _ledger_rewritten(base_ledger: str | None, head_ledger: str | None) -> Finding | None:
    """`ledger-rewritten` when the head's retirement ledger does not begin with the base's bytes
    (records edited, reordered or removed: the ledger is append-only). Compared in blocks."""
    if base_ledger is None or not os.path.exists(base_ledger):
        return None
    with open(base_ledger, "rb") as old:
        before = old.read(1 << 16)
        if not before.strip():
            return None
        new = open(head_ledger, "rb") if head_ledger is not None else None
        try:
            while before:
                after = new.read(len(before)) if new is not None else b""
                if after != before:
                    break
                before = old.read(1 << 16)
        finally:
            if new is not None:
                new.close()
    if not before:  # the head holds all of the base, then maybe more
        return None
    what = "is gone" if head_ledger is None else "does not begin with the base's records"
    return Finding("ledger-rewritten", f"the retirement ledger {what}: records were edited, reordered or removed, "
                   f"and the ledger is append-only (`evalconv retire --restore` adds a record instead)", "$")


def _ledger(head: str | None) -> str | None:
    if head is None:
        return None
    path = retired_path(head)
    return path if os.path.exists(path) else None


def _second_pass(base: str, from_: str | None, encoding: str | None, table: DigestTable, held: Held,
                 retired: dict[str, Retirement], result: SpooledSet, label: str,
                 base_rows: Iterator[tuple[int, SourceRow]] | None = None) -> None:
    """The base again, for the old values of the rows that changed and the ids that left
    (`base_rows`: just those rows, numbered, when they can be found without reading the others)."""
    if base_rows is not None:
        _revisit(base_rows, table, held, retired, result, label)
        return
    with reading(base, from_=from_, encoding=encoding) as (_, rows, _report):
        _revisit(enumerate(rows, 1), table, held, retired, result, label)


def _revisit(numbered: Iterable[tuple[int, SourceRow]], table: DigestTable, held: Held,
             retired: dict[str, Retirement], result: SpooledSet, label: str) -> None:
    """The base's rows again: the removed cases, and the old values of the changed ones."""
    for number, src in numbered:
        row_id = _id(src.value)
        if row_id is None:
            continue
        key = id_key(row_id)
        slot = table.find(key)
        if slot < 0 or table.row(slot) != number:  # a repeated id: the first row speaks for it
            continue
        flags = table.flags(key) or 0
        if not flags & SEEN:
            record = retired.get(row_id)
            result.remove({"id": row_id, "base_row": number, "line": src.line,
                           "retired": record.to_json() if record else None})
            if record is None:
                result.note([Finding(
                    "removed-without-retirement",
                    f"case '{row_id}' is gone and no retirement record says why: retire it with "
                    f"`evalconv retire SET --id {row_id} --why TEXT`, which keeps it in the set's ledger",
                    "$").locate(row=number, id=row_id, line=src.line, record=src.record, source=label)])
        elif flags & CHANGED and key in held:
            head_row, line, record, new = held.pop(key)
            result.changed.append(_change(row_id, head_row, number, src.value, new).to_json())
            found = _changed_findings(src.value, new)
            if (record_ := retired.get(row_id)) is not None and record_.digest != content_digest(new):
                found.append(_reused(record_))
            result.note(_located(found, head_row, row_id, line, record, result.head or label))


def _jsonl_rows(path: str, table: DigestTable, lines: "array[int]") -> Iterator[tuple[int, SourceRow]]:
    """A JSONL base's rows that the second pass needs, numbered: their lines are parsed, the others
    skipped as bytes (the first pass parsed every line). A line that no longer holds the row the
    first pass read there means the file changed meanwhile: refused, as a read refuses it."""
    wanted = {lines[number - 1]: number for number in table.revisited()}
    found = 0
    with open(path, "rb") as f:
        for line, raw in enumerate(f, 1):
            number = wanted.get(line)
            if number is None:
                continue
            value = _parse_line(raw, line)
            row_id = _id(value)
            slot = table.find(id_key(row_id)) if row_id is not None else -1
            if slot < 0 or table.row(slot) != number:
                break
            found += 1
            yield number, SourceRow(value, line)
    if found != len(wanted):
        raise ReadError("the file changed while diff read it: run diff again", source=path)


def _located(found: list[Finding], row: int, row_id: str, line: int | None, record: int | None,
             source: str | None) -> list[Finding]:
    return [f.locate(row=row, id=row_id, line=line, record=record, source=source) for f in found]


def _change(row_id: str, head_row: int, base_row: int, old: Any, new: Any) -> Change:
    where = diff_paths(old, new)
    fields = [{"path": p, "old": short(get(old, p)), "new": short(get(new, p))} for p in where[:FIELDS_KEPT]]
    return Change(row_id, head_row, base_row, fields, max(0, len(where) - FIELDS_KEPT))


def _empty(value: Any) -> bool:
    return value is ABSENT or value is None or value == [] or value == {} or (
        isinstance(value, str) and not value.strip())


def _added_findings(value: Any, reason_path: str, retirement: Retirement | None) -> list[Finding]:
    out = []
    if _empty(get(value, reason_path)):
        out.append(Finding("new-without-reason", f"a new case with no reason ({reason_path[2:]}): say in one "
                           f"sentence why it exists, so a reviewer can ask whether the reason is real",
                           reason_path))
    case = _case(value)
    if is_starter(case):
        out.append(Finding("starter-added", f"a new case that is still a starter example (provenance "
                           f"{case.get('provenance')}): not a validated gold-standard answer",
                           "$.metadata.case.provenance"))
    elif is_placeholder(case):
        out.append(Finding("starter-added", "a new case whose expectedBehavior is still the placeholder "
                           "`evalconv import` wrote: a reviewer must write it", "$.metadata.case.expectedBehavior"))
    if retirement is not None and retirement.digest != content_digest(value):
        out.append(_reused(retirement))
    return out


def _reused(retirement: Retirement) -> Finding:
    return Finding("id-reused", f"the id was retired ({retirement.date}: {retirement.reason}) and comes "
                   f"back as a different case: give the new case its own id, or restore the old one "
                   f"with `evalconv retire SET --restore ID`", "$.id")


def _changed_findings(old: Any, new: Any) -> list[Finding]:
    out = []
    moved = [p for p in BEHAVIOR_PATHS if not _same(get(old, p), get(new, p))]
    if moved and _same(get(old, VERSION_PATH), get(new, VERSION_PATH)):
        out.append(Finding("behavior-changed-without-version",
                           f"{', '.join(p[2:] for p in moved)} changed and metadata.case.version did not: a "
                           f"result graded against the old behaviour would pass for the new one", moved[0]))
    before, after = _case(old).get("oracleType"), _case(new).get("oracleType")
    if before != after and isinstance(before, str) and isinstance(after, str) \
            and before in ADMISSIBILITY and after in ADMISSIBILITY:
        out.append(Finding("oracle-type-changed", _oracle_message(before, after, _case(new).get("evaluator")),
                           "$.metadata.case.oracleType"))
    return out


def _same(a: Any, b: Any) -> bool:
    return a is b or (a is not ABSENT and b is not ABSENT and same(a, b))


def _oracle_message(before: str, after: str, evaluator: Any) -> str:
    head = f"the oracle type changed from {before} to {after}"
    if isinstance(evaluator, str) and evaluator in ADMISSIBILITY[after]:
        status, why = verdict(after, evaluator)
        was = verdict(before, evaluator)[0] if evaluator in ADMISSIBILITY[before] else "barred"
        if status == "barred" and was != "barred":
            return f"{head}: its evaluator {evaluator} is barred for {after} ({why})"
        return f"{head}; its evaluator {evaluator} is {'admitted' if status == 'ok' else status} for both" \
            if was == status else f"{head}; its evaluator {evaluator} was {was}, now {status}"
    barred = [e for e, (s, _) in ADMISSIBILITY[after].items() if s == "barred" and ADMISSIBILITY[before][e][0] != "barred"]
    opened = [e for e, (s, _) in ADMISSIBILITY[after].items() if s != "barred" and ADMISSIBILITY[before][e][0] == "barred"]
    parts = [head]
    if barred:
        parts.append(f"now barred: {', '.join(barred)}")
    if opened:
        parts.append(f"now admitted: {', '.join(opened)}")
    return "; ".join(parts)


def _migration_finding(result: SpooledSet, head: str | None) -> Finding:
    recorded = None
    if head is not None:
        recorded = list(migrations(head + MIGRATIONS_SUFFIX))
    before = ", ".join(sorted(map(str, result.base_versions)))
    after = ", ".join(sorted(map(str, result.head_versions)))
    note = (f"; the migrations ledger records it ({len(recorded)} migration(s))" if recorded
            else "; no migration record beside the set says so (evalconv migrate writes one)")
    return Finding("schema-migrated", f"{result.migrated} case(s) moved from schema version {before} to {after} and "
                   f"nothing else in them changed{note}", "$.metadata.case.schemaVersion")


__all__ = ["Change", "DiffReport", "SetDiff", "SpooledReport", "check_fail_on", "diff", "diff_git", "diff_pair",
           "open_diff", "open_diff_git"]

"""Coverage: rows counted by slice, the gaps in a set, and a gate on both.

`stats(targets)` reads every file once, a row at a time, and keeps only counters: per slice a
count per distinct value (at most `MAX_VALUES`; later new values count under `(other values)`)
and, per value, the first `samples` rows (id, file, line, a short input) for drill-down, within
a per-slice budget. Memory therefore stays flat however many rows a set has.

A slice is `case.<field>` or `metadata.<key>`. A row counts once under each distinct value it
holds: once under its value for a single-valued field, once under each distinct item of a list
(so a multi-valued slice can add up to more than the row count), and under `(none)` when the
field is absent, null, blank or an empty list. A row that names no evaluator counts under the
evaluator it implies, marked `(implied)` (`admissibility.implied_evaluator`).

Rows are counted once the JSON Schema accepts them; a row it rejects is not counted and is
reported as the `invalid-rows` gap (exit 1). The set rules (duplicate ids, family conflicts,
admissibility) are `validate`'s job.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, cast

from ..canonical import jsonvalue, paths, schema
from ..canonical.admissibility import ADMISSIBILITY, AUTOMATED_NO_MODEL, implied_evaluator
from ..canonical.errors import EvalconvError, UsageError
from ..canonical.suggest import count as plural  # the one plural helper
from ..canonical.slicing import slice_labels
from ..canonical.vocabulary import (NONE_LABEL, REASON_VOCABULARIES, SEVERITY_ORDER, STARTER_PROVENANCES, is_blank,
                                    is_release_gate, nearest)
from ..canonical.review import is_placeholder
from ..engine import parallel
from ..canonical.source import SourceRow
from ..sources import label, reading
from ..walk import collect

NONE = NONE_LABEL
OTHER = "(other values)"
IMPLIED = " (implied)"
MAX_VALUES = 5000      # distinct values kept per slice (and per cross-tab); more count as OTHER
RAW_CAP = 20000        # distinct raw values counted before expanding (multi-valued combinations)
SAMPLED_VALUES = 200   # the first this many raw values of a slice keep their sample rows
DEFAULT_SAMPLES = 20
DEFAULT_FAMILY_MIN = 3
PREVIEW_CHARS = 100

DEFAULT_SLICES = ("case.oracleType", "case.evaluator", "case.provenance", "case.caseFamily",
                  "case.linkedConcerns", "case.reversibility", "case.blastRadius")
REASON_SLICES = ("metadata.reason", "metadata.origin", "metadata.severity", "metadata.gate")
# The values a slice is expected to have, in their natural order: shown even at zero.
KNOWN_VALUES: dict[str, tuple[str, ...]] = {
    "case.oracleType": tuple(ADMISSIBILITY),
    "case.provenance": schema.enum("provenance"),
    "case.reversibility": ("R0", "R1", "R2", "R3"),
    "case.blastRadius": ("B0", "B1", "B2", "B3"),
    "metadata.origin": REASON_VOCABULARIES["metadata.origin"],
    **{name: REASON_VOCABULARIES[name] for name in ("metadata.severity", "metadata.gate")},
}
DETERMINISTIC = AUTOMATED_NO_MODEL
IMPLIED_BY_ORACLE = {oracle: implied_evaluator(oracle) for oracle in ADMISSIBILITY}

GAP_CODES = {
    "invalid-rows": "rows the schema rejects (not counted; run `evalconv validate`)",
    "starter-rows": "starter examples still in the set, not validated gold answers",
    "placeholder-behavior": "rows whose expectedBehavior is still the placeholder evalconv import wrote",
    "thin-family": "case families with fewer cases than the family minimum",
    "missing-oracle-type": "oracle types with no cases",
    "missing-severity": "severities with no cases",
    "off-vocabulary": "reason values (severity, origin, gate) outside the documented vocabulary",
    "no-reason": "cases that do not say why they exist (metadata.reason)",
    "rubric-without-criteria": "rubric cases with no evaluation criteria",
    "judge-needs-validation": "llm-judge cases, which count only once the judge is validated",
    "gate-not-deterministic": "release-gate cases (gate: release or true) whose evaluator is not deterministic",
}


def slice_parts(name: str) -> tuple[str, ...]:
    """`case.oracleType` -> ("metadata", "case", "oracleType"); `metadata.team` -> ("metadata",
    "team"); `$.metadata['a.b']` works too. Anything outside `metadata` is refused."""
    text = name.strip()
    if text.startswith("case.") or text.startswith("case["):
        text = "metadata." + text
    try:
        parts = paths.parse(paths.normalize(text))
    except ValueError:
        parts = []
    if len(parts) < 2 or parts[0] != "metadata" or not all(isinstance(p, str) for p in parts) \
            or (parts[1] == "case" and len(parts) != 3):
        from .slice_hints import did_you_mean

        raise UsageError(f"a slice is case.<field> or metadata.<key>, not '{name}'{did_you_mean(name)}")
    return tuple(cast(list[str], parts))  # all text: checked above


def slice_name(name: str) -> str:
    """The one spelling a slice has in the output: `case.<field>` or `metadata.<key>`."""
    parts = slice_parts(name)
    if parts[1] == "case":
        return f"case.{parts[2]}"
    return paths.to_path(parts)[2:]


bucket_keys = slice_labels  # the values a row counts under for one field: each distinct one once


def preview(value: Any) -> str:
    """A short text for a row's input: the text, the last chat message, else compact JSON."""
    if isinstance(value, dict) and isinstance(value.get("messages"), list) and value["messages"]:
        last = value["messages"][-1]
        if isinstance(last, dict) and isinstance(last.get("content"), str):
            value = last["content"]
    text = value if isinstance(value, str) else jsonvalue.dumps(value)
    text = " ".join(text[:2 * PREVIEW_CHARS].split())
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS - 1] + "…"


class Tally:
    """Counts and sample rows for one slice, or one cross-tab.

    Rows are counted by their raw value (a string, None, or for anything else its JSON text
    under `_JSON`), one dict increment a row; `expand` turns raw values into the values a row
    counts under once, at the end. Past `raw_cap` raw values a new one is expanded at once."""

    __slots__ = ("pair", "samples", "raw", "expanded", "rows", "capped", "multi", "wanted", "raw_cap")

    def __init__(self, samples: int, pair: bool = False) -> None:
        self.pair = pair
        self.samples = samples
        self.raw: dict[Any, int] = {}
        self.expanded: dict[Any, int] = {}
        self.rows: dict[Any, list[dict[str, Any]]] = {}
        self.capped = False
        self.multi = False
        self.wanted: set[Any] | None = None  # in a worker: the only raw values still wanting rows
        self.raw_cap = RAW_CAP  # a worker has none: the parent adds its counts up as one pass would

    def still_wanted(self) -> set[Any] | None:
        """The raw values whose rows a later chunk can still add: None (any) until the budget
        of values is spent, then the kept values short of `samples` rows."""
        if len(self.rows) < SAMPLED_VALUES:
            return None
        return {raw for raw, kept in self.rows.items() if len(kept) < self.samples}

    def full(self) -> bool:
        """No value can be added any more: a value not seen yet counts under `(other values)`."""
        return len(self.raw) >= self.raw_cap and len(self.expanded) >= MAX_VALUES and not self.pair

    def add_counts(self, batch: dict[Any, int]) -> None:
        """Add counts of raw values (keys in order of first appearance, as a row loop sees them)."""
        counts = self.raw
        if self.full():
            return self._add_when_full(batch)
        room = self.raw_cap - len(counts)
        for raw, n in batch.items():
            if raw in counts:
                counts[raw] += n
            elif room > 0:
                counts[raw] = n
                room -= 1
            else:
                self.add_new(raw, n)

    def _add_when_full(self, batch: dict[Any, int]) -> None:
        """`add_counts` once the tally is full, in set operations: nothing is admitted any more,
        so the order no longer matters (a slice of free text spends most of its rows here)."""
        counts, expanded = self.raw, self.expanded
        known = batch.keys() & counts.keys()
        for raw in known:
            counts[raw] += batch[raw]
        new = batch.keys() - known
        if not new:
            return
        if not _STR.issuperset(map(type, new)) or not all(map(str.strip, new)):
            for raw in new:  # lists, other JSON values or blank strings: expanded one by one
                self.add_new(raw, batch[raw])
            return
        hits = new & expanded.keys()
        for key in hits:
            expanded[key] += batch[key]
        other = sum(map(batch.__getitem__, new)) - sum(map(batch.__getitem__, hits))
        if other:
            self.capped = True
            expanded[OTHER] = expanded.get(OTHER, 0) + other

    def add_new(self, raw: Any, n: int = 1) -> None:
        if len(self.raw) < self.raw_cap:
            self.raw[raw] = n
        elif raw.__class__ is str:  # a slice of free text (reasons): counted as it is
            self._count(raw if raw.strip() else NONE, n)
        else:
            for key in self.keys(raw):
                self._count(key, n)

    def _count(self, key: Any, n: int) -> None:
        counts = self.expanded
        if key in counts:
            counts[key] += n
        elif len(counts) < MAX_VALUES or NONE in (key if self.pair else (key,)):
            counts[key] = n
        else:
            self.capped = True
            key = (OTHER, OTHER) if self.pair else OTHER
            counts[key] = counts.get(key, 0) + n

    def keys(self, raw: Any) -> list[Any]:
        if not self.pair:
            return self._keys(raw)
        return [(a, b) for a in self._keys(raw[0]) for b in self._keys(raw[1])]

    def _keys(self, raw: Any) -> list[str]:
        if raw.__class__ is tuple:
            head = raw[0] if raw else None
            if head.__class__ is int and head == _IMPLIED:
                return [implied_evaluator(raw[1]) + IMPLIED]
            value = jsonvalue.loads(raw[1]) if head.__class__ is int else list(raw)
            if isinstance(value, list):
                self.multi = True
            return bucket_keys(value)
        return bucket_keys(raw)

    def merge(self, other: "Tally", adjust: Any) -> None:
        """Add a later part of the file's counts (a worker's chunk); `adjust` fixes its sample rows."""
        self.add_counts(other.raw)
        expanded = self.expanded
        for key, n in other.expanded.items():
            if key in expanded:
                expanded[key] += n
            else:
                self._count(key, n)
        for raw, entries in other.rows.items():
            kept = self.rows.get(raw)
            if kept is None:
                if len(self.rows) >= SAMPLED_VALUES:
                    continue
                kept = self.rows[raw] = []
            kept.extend(adjust(e) for e in entries[:self.samples - len(kept)])
        self.capped |= other.capped
        self.multi |= other.multi

    def counts(self) -> dict[Any, int]:
        """Raw values expanded (once, at the end)."""
        for raw, n in self.raw.items():
            for key in self.keys(raw):
                self._count(key, n)
        self.raw = {}
        return self.expanded

    def sample_rows(self, position: Any) -> dict[Any, list[dict[str, Any]]]:
        """Each value's first rows in file order (a value can gather rows from several raw values)."""
        out: dict[Any, list[dict[str, Any]]] = {}
        for raw, entries in self.rows.items():
            for key in self.keys(raw):
                out.setdefault(key, []).extend(entries)
        return {key: sorted(entries, key=position)[:self.samples] for key, entries in out.items()}


# Tags that start a raw tuple; ints, so no list of strings (a tuple of str) can look like one,
# and they survive pickling (a counter crosses from a worker process).
_IMPLIED = 0  # the raw evaluator of a row that names none: (_IMPLIED, oracle type)
_JSON = 1     # the raw value of anything but a string, None or a list of strings: (_JSON, JSON text)
_PLAIN = {str, type(None)}  # raw values that are their own stand-in
_STR = {str}
_TRUE, _FALSE = (_JSON, "true"), (_JSON, "false")


def _raw(value: Any) -> Any:
    """A hashable stand-in: a list of strings as a tuple of them, anything else as JSON text."""
    if value is None or value.__class__ is str:
        return value
    if value.__class__ is list and _STR.issuperset(map(type, value)):
        return tuple(value)
    if value.__class__ is bool:
        return _TRUE if value else _FALSE
    return (_JSON, jsonvalue.dumps(value))


def _dig(node: Any, parts: tuple[str, ...]) -> Any:
    for part in parts:
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def sample_entry(value: dict[str, Any], file: str, line: int | None) -> dict[str, Any]:
    """One row's drill-down entry (shared by every value the row is kept under)."""
    return {"id": value.get("id"), "file": file, "line": line, "input": preview(value.get("input"))}


@dataclass
class GapTally:
    """Rows behind one gap: how many, and the first ids."""

    count: int = 0
    ids: list[str] = field(default_factory=list)

    def add_many(self, row_ids: list[Any], count: int, limit: int) -> None:
        """`count` more rows, the first of them `row_ids` (only text ids are listed)."""
        self.count += count
        for row_id in row_ids:
            if len(self.ids) >= limit:
                break
            if isinstance(row_id, str):
                self.ids.append(row_id)

    def merge(self, other: "GapTally", limit: int) -> None:
        self.count += other.count
        self.ids.extend(other.ids[:max(0, limit - len(self.ids))])


@dataclass
class FileStats:
    path: str
    format: str | None = None
    rows: int = 0
    invalid: int = 0
    unreadable: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"path": self.path, "format": self.format, "rows": self.rows, "invalid": self.invalid}
        if self.unreadable is not None:
            out["unreadable"] = self.unreadable
        return out


@dataclass
class MinCheck:
    """`--min SLICE=N` (every value of the slice) or `--min SLICE=VALUE:N` (that value)."""

    slice: str
    minimum: int
    value: str | None = None

    @classmethod
    def parse(cls, text: str) -> "MinCheck":
        name, sep, rest = text.partition("=")
        value, _, number = rest.rpartition(":")
        if not sep or not number.strip().isdigit() or (":" in rest and not value):
            raise UsageError(f"--min takes SLICE=N or SLICE=VALUE:N (e.g. case.caseFamily=5, "
                             f"metadata.severity=harmful:10), not '{text}'")
        return cls(slice_name(name), int(number), value if ":" in rest else None)

    def spelled(self) -> str:
        return f"{self.slice}={self.value + ':' if self.value is not None else ''}{self.minimum}"


@dataclass
class Stats:
    """What `stats` found; `to_json()` is exactly what `--format json` prints."""

    rows: int
    files: list[FileStats]
    slices: dict[str, dict[str, int]]
    multi_valued: list[str]
    crosstabs: list[dict[str, Any]]
    gaps: list[dict[str, Any]]
    samples: dict[str, dict[str, list[dict[str, Any]]]]
    sample_size: int
    family_min: int
    capped: list[str] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    retired: dict[str, Any] = field(default_factory=lambda: retired_summary([]))

    @property
    def invalid(self) -> int:
        return sum(f.invalid for f in self.files)

    @property
    def unreadable(self) -> list[str]:
        return [f.unreadable for f in self.files if f.unreadable is not None]

    @property
    def exit_code(self) -> int:
        if self.unreadable:
            return 2
        return 1 if self.failures or self.invalid else 0

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "invalid": self.invalid, "files": [f.to_json() for f in self.files],
                "slices": self.slices, "multi_valued": self.multi_valued, "crosstabs": self.crosstabs,
                "gaps": self.gaps, "gate": {"checks": self.checks, "ok": not self.failures,
                                            "failures": self.failures},
                "samples": self.samples, "sample_size": self.sample_size, "family_min": self.family_min,
                "capped": self.capped, "retired": self.retired}


class _Counter:
    """The one pass over the rows: per slice, one raw lookup and one increment a row."""

    CASE, METADATA, NESTED, EVALUATOR = range(4)

    def __init__(self, slices: list[str], crosstabs: list[tuple[str, str]], samples: int) -> None:
        self.sampled_values = SAMPLED_VALUES  # a worker's chunk keeps rows for all its values
        self.tallies = {n: Tally(samples) for n in slices}
        self.plan = [(self.tallies[n], *self._where(n)) for n in slices]
        # a cross-tab's two slices are always slices too: it reuses their raw values
        self.cross = [(a, b, slices.index(a), slices.index(b), Tally(samples, pair=True)) for a, b in crosstabs]
        self.samples = samples
        self.gaps = {code: GapTally() for code in GAP_CODES}
        self.starter_families: dict[str, int] = {}
        self.judge_implied = 0
        self.rows = 0

    def merge(self, other: "_Counter", line_base: int) -> None:
        """Add a worker's counter for the next chunk of the file; its lines start at `line_base`."""
        moved: dict[int, dict[str, Any]] = {}

        def adjust(entry: dict[str, Any]) -> dict[str, Any]:  # entries are shared between slices
            if id(entry) not in moved:
                moved[id(entry)] = {**entry, "line": entry["line"] + line_base if entry["line"] else None}
            return moved[id(entry)]

        for name, tally in self.tallies.items():
            tally.merge(other.tallies[name], adjust)
        for mine, theirs in zip(self.cross, other.cross):
            mine[4].merge(theirs[4], adjust)
        for code, gap in self.gaps.items():
            gap.merge(other.gaps[code], self.samples)
        for family, n in other.starter_families.items():
            self.starter_families[family] = self.starter_families.get(family, 0) + n
        self.judge_implied += other.judge_implied
        self.rows += other.rows

    def _where(self, name: str) -> tuple[int, Any]:
        parts = slice_parts(name)
        if name == "case.evaluator":
            return self.EVALUATOR, None
        if parts[1] == "case":
            return self.CASE, parts[2]
        if len(parts) == 2:
            return self.METADATA, parts[1]
        return self.NESTED, parts[1:]

    def add_rows(self, values: list[dict[str, Any]], lines: list[int | None], file: str) -> None:
        """Count a batch of rows (in file order): per slice, its column of raw values is built
        and counted at C speed, then each distinct value is looked at once; only values still
        short of sample rows send a second look down the column."""
        self.rows += len(values)
        metas = [v["metadata"] for v in values]
        cases = [m["case"] for m in metas]
        entries: list[dict[str, Any] | None] = [None] * len(values)
        batch = (values, lines, file, entries)
        columns = []
        for tally, where, key in self.plan:
            if where == self.CASE:
                raws = [c.get(key) for c in cases]
            elif where == self.METADATA:
                raws = [m.get(key) for m in metas]
            elif where == self.EVALUATOR:  # a string when present (the schema says so)
                raws = [(_IMPLIED, c["oracleType"]) if (e := c.get("evaluator")) is None else e for c in cases]
            else:
                raws = [_dig(m, key) for m in metas]
            if where != self.EVALUATOR and not _PLAIN.issuperset(map(type, raws)):
                raws = [r if r is None or r.__class__ is str else _raw(r) for r in raws]
            columns.append(raws)
            self._tally(tally, raws, batch)
        for _, _, ia, ib, tally in self.cross:
            self._tally(tally, list(zip(columns[ia], columns[ib])), batch)
        self._gaps(values, metas, cases)

    def _tally(self, tally: Tally, raws: list[Any], batch: tuple[Any, ...]) -> None:
        counts, rows, limit = tally.raw, tally.rows, self.samples
        wanted, room = tally.wanted, self.sampled_values - len(rows)
        short: dict[Any, list[dict[str, Any]]] = {}  # values still short of sample rows
        batch_counts = Counter(raws)
        if tally.full() and (room <= 0 or not limit):  # nothing is new any more: only kept values want rows
            tally.add_counts(batch_counts)
            short = {raw: rows[raw] for raw in batch_counts.keys() & rows.keys() if len(rows[raw]) < limit}
            batch_counts = Counter()
        for raw, n in batch_counts.items():  # in order of first appearance, as a row loop would
            before = counts.get(raw)
            if before is None:
                tally.add_new(raw, n)
                before = 0
            else:
                counts[raw] = before + n
            if before < limit:
                kept = rows.get(raw)
                if kept is None:
                    if before or room <= 0 or (wanted is not None and raw not in wanted):
                        continue
                    kept = rows[raw] = []
                    room -= 1
                if len(kept) < limit:
                    short[raw] = kept
        if short:
            values, lines, file, entries = batch
            for i, raw in enumerate(raws):
                kept = short.get(raw)
                if kept is None:
                    continue
                entry = entries[i]
                if entry is None:
                    entry = entries[i] = sample_entry(values[i], file, lines[i])
                kept.append(entry)
                if len(kept) >= limit:
                    del short[raw]
                    if not short:
                        break

    def _gaps(self, values: list[dict[str, Any]], metas: list[dict[str, Any]], cases: list[dict[str, Any]]) -> None:
        """The rows of a batch behind each gap (a list of row positions a gap)."""
        gaps, limit = self.gaps, self.samples

        def add(code: str, found: list[int]) -> None:
            if found:
                gaps[code].add_many([values[i].get("id") for i in found[:limit]], len(found), limit)

        starters = [i for i, c in enumerate(cases) if c["provenance"] in STARTER_PROVENANCES]
        add("starter-rows", starters)
        for i in starters:
            family = cases[i].get("caseFamily")
            family = family if isinstance(family, str) else NONE
            self.starter_families[family] = self.starter_families.get(family, 0) + 1
        add("placeholder-behavior", [i for i, c in enumerate(cases) if is_placeholder(c)])
        add("no-reason", [i for i, m in enumerate(metas) if is_blank(m.get("reason"))])
        add("rubric-without-criteria", [i for i, c in enumerate(cases)
                                        if c["oracleType"] == "rubric" and not c.get("evaluationCriteria")])
        evaluators = [e if (e := c.get("evaluator")) is not None else IMPLIED_BY_ORACLE[c["oracleType"]]
                      for c in cases]
        judged = [i for i, e in enumerate(evaluators) if e == "llm-judge"]
        add("judge-needs-validation", judged)
        self.judge_implied += sum(cases[i].get("evaluator") is None for i in judged)
        add("gate-not-deterministic", [
            i for i, m in enumerate(metas) if is_release_gate(m.get("gate")) and evaluators[i] not in DETERMINISTIC])


def _ordered(name: str, counts: dict[str, int]) -> dict[str, int]:
    """Known values first in their natural order (zeros included), then the rest by count, then
    `(other values)` and `(none)` last."""
    known = KNOWN_VALUES.get(name, ())
    if not any(k in counts for k in known):  # the set spells this field its own way (gate: true)
        known = ()
    if name == "case.evaluator":
        rank = {e: i for i, e in enumerate(next(iter(ADMISSIBILITY.values())))}
        keys = sorted(counts, key=lambda k: (rank.get(k.removesuffix(IMPLIED), 99), k.endswith(IMPLIED), k))
        return {k: counts[k] for k in keys}
    out = {k: counts.get(k, 0) for k in known}
    rest = sorted((k for k in counts if k not in out and k not in (NONE, OTHER)), key=lambda k: (-counts[k], k))
    out.update((k, counts[k]) for k in rest)
    for tail in (OTHER, NONE):
        if tail in counts:
            out[tail] = counts[tail]
    return out


def _listing(values: dict[str, int], limit: int = 8) -> str:
    shown = [f"{k} ({n})" for k, n in list(values.items())[:limit]]
    more = len(values) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _gap(code: str, message: str, count: int, ids: list[str] | None = None,
         values: dict[str, int] | None = None, slice_: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"code": code, "message": message, "count": count}
    if slice_ is not None:
        out["slice"] = slice_
    if values is not None:
        out["values"] = values
    if ids is not None:
        out["ids"] = ids
    return out


def _off_vocabulary(slices: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Per reason field, the values its rows hold outside the documented vocabulary, with counts
    (blanks and, for the gate, true/false are inside it)."""
    out: dict[str, dict[str, int]] = {}
    for name, vocabulary in REASON_VOCABULARIES.items():
        inside = {*vocabulary, NONE, OTHER, *(("true", "false") if name == "metadata.gate" else ())}
        values = {v: n for v, n in slices.get(name, {}).items() if n and v not in inside}
        if values:
            out[name] = values
    return out


def _gap_list(counter: _Counter, slices: dict[str, dict[str, int]], families: dict[str, int],
              family_min: int, invalid: list[tuple[str, int]]) -> list[dict[str, Any]]:
    gaps: list[dict[str, Any]] = []
    if invalid:
        total = sum(n for _, n in invalid)
        gaps.append(_gap("invalid-rows", f"{plural(total, 'row')} invalid, not counted "
                                         f"({', '.join(f'{p}: {n}' for p, n in invalid)}); run evalconv validate",
                         total))
    g = counter.gaps
    if g["starter-rows"].count:
        fams = dict(sorted(counter.starter_families.items(), key=lambda kv: (-kv[1], kv[0])))
        gaps.append(_gap("starter-rows", f"{plural(g['starter-rows'].count, 'row')} from starter examples, not "
                                         f"validated gold answers; families: {_listing(fams)}",
                         g["starter-rows"].count, g["starter-rows"].ids, fams, "case.caseFamily"))
    thin = {k: n for k, n in families.items() if k not in (NONE, OTHER) and n < family_min}
    if thin:
        thin = dict(sorted(thin.items(), key=lambda kv: (kv[1], kv[0])))
        families_text = plural(len(thin), "case family", "case families")
        gaps.append(_gap("thin-family", f"{families_text} with fewer than {plural(family_min, 'case')}: {_listing(thin)}",
                         len(thin), None, thin, "case.caseFamily"))
    oracle = slices.get("case.oracleType", {})
    missing = [k for k in KNOWN_VALUES["case.oracleType"] if not oracle.get(k)]
    if missing and counter.rows:
        gaps.append(_gap("missing-oracle-type",
                         f"no cases for {plural(len(missing), 'oracle type')}: {', '.join(missing)}",
                         len(missing), None, {k: 0 for k in missing}, "case.oracleType"))
    severity = slices.get("metadata.severity", {})
    missing = [k for k in SEVERITY_ORDER if not severity.get(k)]
    off = _off_vocabulary(slices)
    if missing and counter.rows:
        others = sum(off.get("metadata.severity", {}).values())
        also = (f"; {plural(others, 'row holds', 'rows hold')} another severity, which counts as none of them "
                f"(see off-vocabulary)" if others else "")
        gaps.append(_gap("missing-severity", f"no cases of severity {', '.join(missing)} (metadata.severity: "
                                             f"{' < '.join(SEVERITY_ORDER)}){also}",
                         len(missing), None, {k: 0 for k in missing}, "metadata.severity"))
    for name, values in off.items():
        total = sum(values.values())
        listed = ", ".join(f"'{v}' ({n}; did you mean '{nearest(v, REASON_VOCABULARIES[name])}'?)"
                           for v, n in values.items())
        gaps.append(_gap("off-vocabulary", f"{plural(total, 'row')} with a {name} outside its documented vocabulary "
                                           f"({', '.join(REASON_VOCABULARIES[name])}): {listed}; evalconv validate "
                                           f"warns on each", total, None, values, name))
    messages = {
        "placeholder-behavior": "{n} imported without an expected behaviour: a reviewer must replace the "
                                "placeholder before the cases grade anything",
        "no-reason": "{n} with no reason (metadata.reason): nothing says why the case exists",
        "rubric-without-criteria": "{n} of oracle type rubric with no evaluationCriteria to grade against",
        "judge-needs-validation": "{n} graded by llm-judge{implied}: the verdicts count only once "
                                  "the judge is validated against human labels on a sample of these cases",
        "gate-not-deterministic": "{n} gating a release (metadata.gate: release or true) but their evaluator is not "
                                  "deterministic (only {det} are); watch them as a trend or make them checkable",
    }
    for code, text in messages.items():
        tally = g[code]
        if tally.count:
            implied = f" ({counter.judge_implied} implied, naming no evaluator)" if counter.judge_implied else ""
            message = text.format(n=plural(tally.count, "row"), implied=implied, det=" and ".join(DETERMINISTIC))
            gaps.append(_gap(code, message, tally.count, tally.ids))
    return gaps


def _min_failures(check: MinCheck, slices: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    counts = slices.get(check.slice, {})
    if check.value is not None:
        wanted = {check.value: counts.get(check.value, 0)}
    else:
        wanted = {k: n for k, n in counts.items() if k not in (NONE, OTHER)}
        if not wanted:
            wanted = {NONE: 0}
    out = []
    for value, count in wanted.items():
        if count < check.minimum:
            shown = f"{check.slice}={value}" if value != NONE else f"{check.slice} (no values at all)"
            out.append({"check": f"--min {check.spelled()}", "slice": check.slice, "value": value,
                        "count": count, "min": check.minimum,
                        "message": f"{shown} has {plural(count, 'row')}, fewer than {check.minimum}"})
    return out


def parse_by(by: Iterable[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """`--by A` adds a slice; `--by A,B` adds both and their cross-tab."""
    slices: list[str] = []
    crosstabs: list[tuple[str, str]] = []
    for item in by:
        names = [slice_name(n) for n in item.split(",") if n.strip()]
        if len(names) == 2:
            crosstabs.append((names[0], names[1]))
        elif len(names) != 1:
            raise UsageError(f"--by takes one field or two joined by a comma (A,B), not '{item}'")
        slices += names
    return slices, crosstabs


def countable(src: SourceRow) -> bool:
    """A row the schema accepts (and that JSON can hold)."""
    return not src.problems and (src.plain_json or jsonvalue.value_problem(src.value) is None) \
        and schema.is_valid(src.value)


BATCH_ROWS = 128  # rows counted together (a column a slice); larger batches fall out of the CPU's cache
                  # and keep the collector busy with rows that are about to go


def count_sources(counter: _Counter, sources: Iterable[SourceRow], result: FileStats) -> None:
    """Count the rows the schema accepts, a batch at a time, into `counter` and `result` (the
    rows read before a read error are counted too)."""
    values: list[dict[str, Any]] = []
    lines: list[int | None] = []

    def flush() -> None:
        counter.add_rows(values, lines, result.path)
        result.rows += len(values)
        values.clear()
        lines.clear()

    try:
        for src in sources:
            if not countable(src):
                result.invalid += 1
                continue
            values.append(src.value)
            lines.append(src.line if src.line is not None else src.record)
            if len(values) == BATCH_ROWS:
                flush()
    finally:
        if values:  # the end, or a read error: count what was read before it
            flush()


def chunk_counter(label: str, slices: list[str], crosstabs: list[tuple[str, str]], samples: int,
                  wanted: list[Any]) -> tuple[_Counter, FileStats]:
    """A worker's counter for one chunk of a file, and the chunk's file stats. Rows for every
    value the parent may still keep rows for (its state when the chunk was handed out only
    grows, so this is never too few), and no cap on the values (a chunk is small): the parent
    adds the chunks up in file order exactly as one pass would count."""
    counter = _Counter(slices, crosstabs, samples)
    counter.sampled_values = 1 << 30
    for tally, values in zip([*counter.tallies.values(), *(c[4] for c in counter.cross)], wanted):
        tally.wanted = values
        tally.raw_cap = 1 << 62
    return counter, FileStats(label)


def _count_file(counter: _Counter, path: str, from_: str | None, encoding: str | None, jobs: int | None,
                result: FileStats, engine: Any = None) -> None:
    with reading(path, from_=from_, encoding=encoding) as (fmt, rows, _report):
        result.format = fmt.name
        if engine is not None:
            engine.count_file(counter, path, result)
            return
        if parallel.eligible(path, fmt.name, None, encoding, parallel.default_jobs() if jobs is None else jobs):
            from ..engine.counting import Counting, count_in_chunks  # large JSONL files only

            count_in_chunks(counter, path, result, jobs or parallel.default_jobs(), Counting(chunk_counter, count_sources))
            return
        count_sources(counter, rows, result)


def stats(targets: Iterable[str], *, by: Iterable[str] = (), from_: str | None = None,
          encoding: str | None = None, include: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
          samples: int = DEFAULT_SAMPLES, family_min: int = DEFAULT_FAMILY_MIN,
          minimums: Iterable[str] = (), fail_on: Iterable[str] = (), jobs: int | None = None,
          engine: Any = None) -> Stats:
    """Count the rows of every file (folders walked) as one set, by the default slices, the
    reason slices the set uses and `by`; list the gaps; apply the gate (`minimums`, `fail_on`).
    `jobs`: worker processes for a large JSONL file (default: up to 2; 1 is serial).
    `engine`: a cluster's engine that counts Parquet files (`--engine dask`: docs/scale.md)."""
    by, minimums, fail_on = tuple(by), tuple(minimums), tuple(fail_on)
    wanted, _, crosstabs = plan_slices(by, minimums)
    _gate(minimums, fail_on)  # a bad --min or --fail-on: refused before anything is read
    counter = _Counter(wanted, crosstabs, samples)
    files: list[FileStats] = []
    targets = list(targets)
    found = collect(targets, include=include, exclude=exclude)
    if not found:
        files.append(FileStats(", ".join(targets), unreadable=f"no set files found in {', '.join(targets)}"))
    for item in found:
        result = FileStats(label(item.path), unreadable=item.refusal_line())
        files.append(result)
        if item.refused is not None:  # a FIFO in the folder: never opened
            continue
        try:
            _count_file(counter, item.path, from_, encoding, jobs, result, engine)
        except EvalconvError as err:
            result.unreadable = err.render()
    from .slice_hints import refuse_unmatched  # a --by typo: exit 2 with the closest field

    extra, _ = parse_by(by)
    refuse_unmatched(extra, {name: counter.tallies[name].counts() for name in extra if name in counter.tallies},
                     [item.path for item in found if item.refused is None], from_=from_, encoding=encoding)
    out = finish(counter, files, by=by, minimums=minimums, fail_on=fail_on, samples=samples,
                 family_min=family_min)
    out.retired = retired_summary([item.path for item in found if item.refused is None], files)
    return out


def retired_summary(paths: list[str], files: list[FileStats] | None = None) -> dict[str, Any]:
    """The cases the sets' retirement ledgers (`<set>.retired.jsonl`) say are retired now, by
    reason; a ledger that cannot be read is an unreadable file of the run (in `files`)."""
    from ..lifecycle.ledger import interrupted, records, retired_now, retired_path

    reasons: Counter[str] = Counter()
    ledgers, halted = [], []
    for path in paths:
        ledger = retired_path(path)
        if path == "-" or not os.path.isfile(ledger):
            continue
        try:
            now = retired_now(ledger)
            if interrupted(path, list(records(ledger))):
                halted.append(label(path))
        except EvalconvError as err:
            if files is not None:
                files.append(FileStats(label(ledger), unreadable=err.render()))
            continue
        ledgers.append(label(ledger))
        reasons.update(r.reason if isinstance(r.reason, str) else NONE for r in now.values())
    return {"cases": sum(reasons.values()), "reasons": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
            "ledgers": ledgers, "interrupted": halted}


def plan_slices(by: Iterable[str], minimums: Iterable[str]) -> tuple[list[str], set[str], list[tuple[str, str]]]:
    """The slices a run counts (the defaults, the reason slices, `by`, the `--min` slices), the
    reason slices it shows only when the set uses them, and the cross-tabs."""
    extra, crosstabs = parse_by(by)
    checks = [MinCheck.parse(m) for m in minimums]
    wanted = list(dict.fromkeys([*DEFAULT_SLICES, *REASON_SLICES, *extra, *(c.slice for c in checks)]))
    optional = {s for s in REASON_SLICES if s not in extra and all(c.slice != s for c in checks)}
    return wanted, optional, crosstabs


def _gate(minimums: Iterable[str], fail_on: Iterable[str]) -> tuple[list[MinCheck], list[str]]:
    checks = [MinCheck.parse(m) for m in minimums]
    codes = [c.strip() for item in fail_on for c in item.split(",") if c.strip()]
    for code in codes:
        if code not in GAP_CODES:
            raise UsageError(f"--fail-on: unknown gap code '{code}' (known: {', '.join(sorted(GAP_CODES))})")
    return checks, codes


def finish(counter: _Counter, files: list[FileStats], *, by: Iterable[str], minimums: Iterable[str],
           fail_on: Iterable[str], samples: int, family_min: int) -> Stats:
    """The counted rows as `Stats`: the slices in order, the gaps, the sample rows and the gate
    (one pass, or the parts of `evalconv.partitions` merged)."""
    wanted, optional, _ = plan_slices(by, minimums)
    checks, codes = _gate(minimums, fail_on)
    invalid = [(f.path, f.invalid) for f in files if f.invalid]
    slices = {}
    for name in wanted:
        counts = counter.tallies[name].counts()
        if name in optional and set(counts) <= {NONE}:
            continue  # a reason field the set does not use
        slices[name] = _ordered(name, counts)
    families = counter.tallies["case.caseFamily"].expanded
    gaps = _gap_list(counter, slices, families, family_min, invalid)
    file_order = {f.path: i for i, f in enumerate(files)}

    def position(entry: dict[str, Any]) -> tuple[int, int]:
        return file_order.get(entry["file"], 0), entry["line"] or 0

    sample_rows = {name: counter.tallies[name].sample_rows(position) for name in slices}
    cross_json = []
    for a, b, _, _, tally in counter.cross:
        pair_counts = tally.counts()
        totals_a: dict[str, int] = {}
        totals_b: dict[str, int] = {}
        for (ka, kb), n in pair_counts.items():
            totals_a[ka] = totals_a.get(ka, 0) + n
            totals_b[kb] = totals_b.get(kb, 0) + n
        cols = list(_ordered(b, totals_b))
        table: dict[str, dict[str, int]] = {ka: {} for ka in _ordered(a, totals_a)}
        for (ka, kb), n in pair_counts.items():
            table[ka][kb] = n
        table = {ka: {kb: row[kb] for kb in cols if kb in row} for ka, row in table.items()}
        cells: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for (ka, kb), rows in tally.sample_rows(position).items():
            cells.setdefault(ka, {})[kb] = rows
        cross_json.append({"by": [a, b], "columns": cols, "counts": table, "samples": cells})
    capped = [n for n in slices if counter.tallies[n].capped] + \
             [f"{a},{b}" for a, b, _, _, t in counter.cross if t.capped]
    multi = sorted(n for n in slices if counter.tallies[n].multi)
    out = Stats(counter.rows, files, slices, multi, cross_json, gaps,
                sample_rows, samples, family_min, capped)
    out.checks = [f"--min {c.spelled()}" for c in checks] + [f"--fail-on {c}" for c in codes]
    for check in checks:
        out.failures += _min_failures(check, slices)
    present = {g["code"]: g for g in gaps}
    for code in codes:
        if code in present:
            out.failures.append({"check": f"--fail-on {code}", "code": code,
                                 "message": f"gap {code}: {present[code]['message']}"})
    return out

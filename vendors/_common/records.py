"""What the LangSmith and Braintrust formats share: JSON record files, evalconv's bookkeeping
envelope in vendor metadata, the case profile of an imported row, value guards and the docs table.
"""
from __future__ import annotations

import csv
import hashlib
import itertools
import json
from itertools import chain

import math
from typing import Any, Callable, Iterator

import orjson

from evalconv.canonical import jsonvalue, paths
from evalconv.canonical.errors import ReadError, RowError, RowRefused
from evalconv.canonical.json_format import iter_array
from evalconv.canonical.source import Lines, SourceRow, parse_problem
from evalconv.canonical.reporting import ReadReporter
from evalconv.canonical.row import Row

_WHITESPACE = " \t\r\n"

# evalconv's own bookkeeping inside the vendor's free-form metadata. A user key of the same
# name is moved into the envelope's "shadowed" object and restored on read.
ENVELOPE = "evalconv"


# ---------------------------------------------------------------- reading record files

Build = Callable[[dict[str, Any], int], dict[str, Any]]
Other = Callable[[str, Iterator[str]], Iterator[SourceRow]]


def read_records(lines: Lines, build: Build, other: Other | None = None) -> Iterator[SourceRow]:
    """Each record of a JSON array, a JSONL file, concatenated objects or a `{"rows": [...]}`
    document, turned into a row by `build(record, index)` (which raises RowError). Text that is
    not JSON goes to `other(first_line, rest)` when given (LangSmith's CSV), else is unreadable."""
    it = iter(lines)
    first = next((text for text in it if text.strip()), "")
    start = first.lstrip("\ufeff" + _WHITESPACE)
    if not start:
        return
    if start[0] not in "[{":
        if other is None:
            raise ReadError("expected JSON records: an array of objects or one object per line",
                            source=lines.source, line=lines.number)
        yield from other(first, it)
        return
    for index, src in enumerate(_json_records(first, it, lines), 1):
        if src.problems:
            yield src
            continue
        try:
            yield SourceRow(build(src.value, index), src.line, src.record)
        except RowError as err:
            yield SourceRow.failed(err, src.line, src.record)


def _json_records(first: str, rest: Iterator[str], lines: Lines) -> Iterator[SourceRow]:
    first_line = lines.number
    if first.lstrip("\ufeff" + _WHITESPACE).startswith("["):
        yield from iter_array(chain([first], rest), lines.source)
        return
    try:
        value = jsonvalue.loads(first)
    except jsonvalue.JSONValueError:
        yield from _whole_document(first + "".join(rest), lines.source, first_line)
        return
    yield _object_row(value, first_line)
    for text in rest:
        if not text.strip():
            continue
        try:
            value = jsonvalue.loads(text)
        except jsonvalue.JSONValueError as err:
            message = str(err).replace(" at line 1 column", " at column")
            yield SourceRow(None, lines.number, problems=parse_problem(f"line is not valid JSON: {message}"))
            continue
        yield _object_row(value, lines.number)


def _object_row(value: Any, line: int | None, record: int | None = None) -> SourceRow:
    if isinstance(value, dict):
        return SourceRow(value, line, record)
    return SourceRow(None, line, record, parse_problem("each record must be a JSON object"))


def _whole_document(text: str, source: str, first_line: int) -> Iterator[SourceRow]:
    """Pretty-printed objects one after another, or one `{"rows": [...]}` document (`bt`)."""
    values: list[tuple[Any, int]] = []
    pos = _skip(text, 0)
    while pos < len(text):
        line = first_line + text.count("\n", 0, pos)
        try:
            value, end = jsonvalue.raw_decode(text, pos)
        except jsonvalue.JSONValueError as err:
            raise ReadError(f"invalid JSON: {err}", source=source, line=line) from None
        values.append((value, line))
        pos = _skip(text, end)
    if len(values) == 1 and isinstance(values[0][0], dict) and isinstance(values[0][0].get("rows"), list):
        for index, value in enumerate(values[0][0]["rows"], 1):
            yield _object_row(value, None, index)
        return
    for value, line in values:
        yield _object_row(value, line)


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


# ---------------------------------------------------------------- envelope

def add_envelope(metadata: dict[str, Any], envelope: dict[str, Any]) -> dict[str, Any]:
    """Vendor metadata with evalconv's envelope; a user key named like it is shadowed inside."""
    out = {k: v for k, v in metadata.items() if k != ENVELOPE}
    if ENVELOPE in metadata:
        envelope = {**envelope, "shadowed": {**envelope.get("shadowed", {}), ENVELOPE: metadata[ENVELOPE]}}
    if envelope:
        out[ENVELOPE] = envelope
    return out


SUMS = "sums"  # envelope key: field -> fingerprint of what evalconv wrote there (no other copy)


def fingerprint(value: Any, dumped: bytes | None = None) -> str:
    """A short digest of a JSON value, key order aside (`jsonvalue.same` values agree). Kept in the
    envelope beside a native field that has no other copy, so that a reader can name an edit.
    `dumped`: `sorted_json(value)`, when the caller has it."""
    text = dumped if dumped is not None else sorted_json(value)
    if text is None:  # integers beyond 64 bits, deep nesting
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(text).hexdigest()[:12]


def sorted_json(value: Any) -> bytes | None:
    """orjson's JSON bytes of `value` with its keys sorted (what `fingerprint` digests), or None
    where orjson cannot write it (an integer beyond 64 bits, deep nesting)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


def all_finite(*dumped: bytes | None) -> bool:
    """The quick look of `check_value` over values already written by orjson (`json_bytes`,
    `sorted_json`): True when none is missing and none holds `null` (orjson writes NaN and the
    infinities as `null`), so none holds such a float; False: look closer."""
    for text in dumped:  # a loop, not all() over a generator: this runs for every row
        if text is None or b"null" in text:
            return False
    return True


def edited_fields(record: dict[str, Any], envelope: dict[str, Any]) -> list[str]:
    """The record's keys whose value (None when gone) no longer has the fingerprint the writer kept."""
    sums = envelope.get(SUMS)
    if not isinstance(sums, dict):
        return []
    return [key for key, digest in sums.items()
            if isinstance(digest, str) and fingerprint(record.get(key)) != digest]  # metadata: per key


def metadata_sums(metadata: dict[str, Any], dumped: dict[str, bytes | None] | None = None) -> dict[str, str]:
    """The fingerprint of each metadata key, so that a key added, changed or removed is named.
    `dumped`: each key's `sorted_json`, when the caller has them."""
    if dumped is not None:
        return {key: fingerprint(value, dumped[key]) for key, value in metadata.items()}
    return {key: fingerprint(value) for key, value in metadata.items()}


def name_metadata_edits(metadata: dict[str, Any], envelope: dict[str, Any], vendor: str, row_id: str,
                        report: ReadReporter) -> None:
    """Report each metadata key added, changed or removed in the vendor since evalconv wrote it."""
    sums = envelope.get(SUMS)
    kept = sums.get("metadata") if isinstance(sums, dict) else None
    if not isinstance(kept, dict):
        return  # written before fingerprints were kept
    for key in sorted(metadata.keys() | kept.keys()):
        if key not in metadata or key not in kept or fingerprint(metadata[key]) != kept[key]:
            what = "added" if key not in kept else "removed" if key not in metadata else "changed"
            report.edit(f"$.metadata.{key}", row_id, f"metadata.{key} {what} in {vendor} after export; the edit is kept")


def restore_shadowed(metadata: dict[str, Any], envelope: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Put back the user keys the writer moved into the envelope (only those it can move)."""
    shadowed = envelope.get("shadowed")
    if isinstance(shadowed, dict):
        metadata.update((k, v) for k, v in shadowed.items() if k in keys)


# ---------------------------------------------------------------- imported rows

def imported_case(row_id: str, expected: Any, has_expected: bool, report: ReadReporter,
                  vendor: str) -> dict[str, Any]:
    """The case profile of a row evalconv did not write, every value noted as inferred."""
    oracle, why = infer_oracle(expected, has_expected)
    report.infer("$.metadata.case.oracleType", row_id, why)
    report.infer("$.metadata.case.provenance", row_id, f"imported: a {vendor} record evalconv did not write")
    report.infer("$.metadata.case.expectedBehavior", row_id,
                 f"left empty: {vendor} records do not say it in words; fill it in")
    return {"caseId": row_id, "oracleType": oracle, "expectedBehavior": "", "provenance": "imported"}


def infer_oracle(expected: Any, has_expected: bool) -> tuple[str, str]:
    if not has_expected:
        return "expected-behavior-only", "no reference output in the record"
    if _is_calls(expected):
        return "expected-tool-calls", "the reference is a list of tool calls"
    if isinstance(expected, dict) and _is_calls(expected.get("tool_calls"), allow_empty=True):
        return "expected-tool-calls", "the reference holds a tool_calls list"
    return "reference-answer", "the record holds a reference output"


def _is_calls(value: Any, allow_empty: bool = False) -> bool:
    return (isinstance(value, list) and (allow_empty or bool(value))
            and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in value))


def generated_id(vendor: str, index: int) -> str:
    return f"{vendor}-{index}"


def take_native_edit(case: dict[str, Any], name: str, native: Any, where: str, vendor: str, row_id: str,
                     report: ReadReporter) -> None:
    """A case field the vendor also holds natively, at `where`: a value there that differs from
    the carried copy was edited in the vendor, and the edit wins (None removes the field)."""
    if jsonvalue.same(native, case.get(name)):
        return
    if native is None:
        case.pop(name, None)
    else:
        case[name] = native
    report.edit(f"$.metadata.case.{name}", row_id, f"{where} was edited in {vendor}; the edit is kept "
                f"(it differs from the copy in metadata.case.{name})")


def keep_foreign_case(metadata: dict[str, Any], case: dict[str, Any], vendor: str, row_id: str,
                      report: ReadReporter) -> None:
    """A vendor metadata key `case` that is not a case profile moves to the case's extensions."""
    if "case" in metadata:
        case.setdefault("extensions", {}).setdefault(vendor, {})["metadata.case"] = metadata.pop("case")
        report.infer(f"$.metadata.case.extensions.{vendor}", row_id,
                     "the record's own metadata.case moved here (metadata.case is the case profile)")


def ignore_fields(record: dict[str, Any], fields: dict[str, str], row_id: str, report: ReadReporter) -> None:
    """Report vendor system fields that hold something, with why they are not case data."""
    for name, reason in fields.items():
        value = record.get(name)
        if value is not None and value is not False and value != [] and value != {}:
            report.ignore(f"$.{name}", row_id, reason)


# ---------------------------------------------------------------- writing

class CSVLines:
    """A `csv.writer` whose rows come back as text, for a writer that encodes a row at a time."""

    def __init__(self, **fmtparams: Any) -> None:
        self._parts: list[str] = []
        self._writer = csv.writer(self, **fmtparams)

    def write(self, text: str) -> int:
        self._parts.append(text)
        return len(text)

    def line(self, cells: Any) -> str:
        self._writer.writerow(cells)
        text = "".join(self._parts)
        self._parts.clear()
        return text


def json_bytes(value: Any) -> bytes | None:
    """orjson's JSON bytes of `value`, or None where orjson cannot write it (an integer beyond 64
    bits, deep nesting)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return None


def check_value(value: Any, row_id: str, path: str, vendor: str, max_depth: int | None = None, *,
                dumped: bytes | None = None) -> None:
    """Refuse what the vendor would silently change: NaN, infinities, and (Braintrust) nesting
    deeper than its copier keeps. `dumped`: `json_bytes(value)`, when the caller has it."""
    if _finite(value, dumped) and (max_depth is None or _within(value, max_depth)):
        return  # the usual case, found without building a path for every value; else say where
    todo: list[tuple[Any, str, int]] = [(value, path, 1)]
    while todo:
        item, at, depth = todo.pop()
        if isinstance(item, float) and (math.isnan(item) or math.isinf(item)):
            raise RowRefused(row_id, f"{item!r} is not JSON and {vendor} would change it; use a string or null",
                             field=at)
        if isinstance(item, (dict, list)):
            if max_depth is not None and depth > max_depth:
                raise RowRefused(row_id, f"nested deeper than the {max_depth} levels {vendor} keeps (it would "
                                         "store a placeholder string)", field=at)
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            todo.extend((v, paths.join(at, k), depth + 1) for k, v in pairs)


def check_row(row: Row, vendor: str, input_json: bytes | None, expected_json: bytes | None,
              metadata_json: dict[str, bytes | None]) -> None:
    """`check_value(row.to_json(), row.id, "$", vendor)` for a row whose input, expected and
    metadata values orjson has written (`sorted_json`, `json_bytes`): only a part whose JSON holds
    `null` is looked at closer, and a part that is null itself (a null expected) needs no look."""
    if all_finite(input_json, expected_json if row.has_expected else b"", *metadata_json.values()):
        return
    parts = [(row.input, input_json, "$.input")]
    if row.has_expected:
        parts.append((row.expected, expected_json, "$.expected"))
    parts += [(value, metadata_json[key], paths.join("$.metadata", key)) for key, value in row.metadata.items()]
    for value, dumped, path in parts:
        if value is not None and not all_finite(dumped):
            check_value(value, row.id, path, vendor, dumped=dumped)


def _finite(value: Any, dumped: bytes | None = None) -> bool:
    """A quick look (orjson writes NaN and infinities as `null`): no `null` in the JSON text means
    no such float anywhere in `value`; otherwise (or with no JSON text: an integer beyond 64 bits,
    deep nesting) look closer."""
    return all_finite(json_bytes(value) if dumped is None else dumped)


def _within(value: Any, max_depth: int) -> bool:
    """No list or object nested deeper than `max_depth` levels (`value` is level 1)."""
    level, depth = [value], 1
    while True:
        containers = [item for item in level if isinstance(item, (dict, list))]
        if not containers:
            return True
        if depth > max_depth:
            return False
        level = [child for item in containers for child in (item.values() if isinstance(item, dict) else item)]
        depth += 1


def csv_records(first: str, rest: Iterator[str], lines: Lines, build: Build,
                required: str | None = None, vendor: str = "") -> Iterator[SourceRow]:
    """Each record of a CSV file as a `{column: cell}` dict turned into a row by
    `build(record, index)` (which raises RowError); a ragged record is a parse finding."""
    reader = csv.reader(itertools.chain([first.lstrip("\ufeff")], rest), strict=True)
    start = lines.number
    try:
        header = next(reader)
        if required and required not in header:
            raise ReadError(f"not a {vendor} dataset: no {required} column", source=lines.source, line=start)
        if len(set(header)) != len(header):
            raise ReadError("a column appears twice in the header", source=lines.source, line=start)
        start = lines.number + 1
        for index, cells in enumerate((c for c in reader if c), 1):
            if len(cells) != len(header):
                yield SourceRow(None, start, index, parse_problem(
                    f"record has {len(cells)} cells but the header has {len(header)}"))
            else:
                try:
                    yield SourceRow(build(dict(zip(header, cells)), index), start, index)
                except RowError as err:
                    yield SourceRow.failed(err, start, index)
            start = lines.number + 1
    except csv.Error as err:
        raise ReadError(f"malformed CSV ({err})", source=lines.source, line=start) from None

"""`evalconv import SHEET`: the sheet a team already has (any column names) as canonical rows.

Columns are matched by the names people use; `--map` overrides and extends the matching. No cell
is lost: a column that matches nothing goes to `metadata.<column>`. Every row gets a stable id,
a provenance, an oracle type and an expected behaviour; what was defaulted is reported.
"""
from __future__ import annotations

import csv
import hashlib
import itertools
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, cast

import yaml

from .. import api
from . import dataset_sheet, evidence_cells, list_cells
from .sheet import Columns, Sheet
from .repeats import RepeatedInputs
from .builder import count_starters, output_format
from ..canonical import jsonvalue, paths
from ..canonical.admissibility import ADMISSIBILITY, OMITTED_FIELDS
from ..canonical.errors import ReadError, RowError, UsageError
from ..canonical.opening import read_regular
from ..canonical.safe_yaml import load_yaml
from ..canonical.review import PLACEHOLDER
from ..canonical.row import Row
from ..canonical.schema import CASE_FIELD_KINDS, enum
from ..canonical.source import MAX_LINE_BYTES, Lines, SourceRow
from ..canonical.validator import Validator
from ..reports import FindingLog, LossReport
from ..sources import STDIO, TELL_EVERY, Progress, size_of, tell, watched

csv.field_size_limit(MAX_LINE_BYTES)

# Canonical path -> the column names people use for it (compared after normalising: lowercase,
# runs of anything but letters and digits become "_").
SYNONYMS: dict[str, tuple[str, ...]] = {
    "$.id": ("id", "case_id", "caseid", "name", "key", "test_id", "example_id", "uid"),
    "$.input": ("input", "question", "prompt", "query", "user_input", "user_message", "message",
                "instruction", "request", "problem"),
    "$.expected": ("expected", "answer", "expected_output", "ideal", "reference", "target", "gold",
                   "ground_truth", "expected_answer", "reference_answer", "correct_answer", "ideal_answer",
                   "golden_answer", "label", "completion", "output", "solution"),
    "$.metadata.case.expectedBehavior": ("expected_behavior", "expected_behaviour", "behavior", "behaviour"),
    "$.metadata.case.oracleType": ("oracle_type", "oracle", "oracletype"),
    "$.metadata.case.evaluator": ("evaluator", "grader"),
    "$.metadata.case.provenance": ("provenance",),
    "$.metadata.case.scenario": ("scenario",),
    "$.metadata.case.actor": ("actor", "persona"),
    "$.metadata.case.unacceptableBehavior": ("unacceptable_behavior", "unacceptable_behaviour", "must_not",
                                             "should_not", "unacceptable"),
    "$.metadata.case.evaluationCriteria": ("evaluation_criteria", "criteria", "rubric"),
    "$.metadata.case.caseFamily": ("case_family", "family"),
    "$.metadata.case.linkedConcerns": ("linked_concerns", "concerns"),
    "$.metadata.case.passLogic": ("pass_logic", "pass_criteria"),
    "$.metadata.case.reviewerExpertise": ("reviewer_expertise",),
    # schema version 2's evidence fields (evidence_cells.py reads their cells): names that say so,
    # never a bare "scope" or "doc_id", which a version-1 sheet may use for something else
    "$.metadata.case.schemaVersion": ("schema_version", "schemaversion"),
    "$.metadata.case.contextRefs": ("context_refs", "contextrefs", "context_ref", "context_references",
                                    "evidence_refs", "source_refs", "doc_refs", "document_refs"),
    "$.metadata.case.contextRefs.source": ("context_source", "source_doc", "source_document", "evidence_source"),
    "$.metadata.case.contextRefs.snapshot": ("snapshot", "context_snapshot", "doc_version", "document_version",
                                             "source_version", "snapshot_id"),
    "$.metadata.case.contextRefs.span": ("span", "context_span", "passage_span", "source_span"),
    "$.metadata.case.targetTurn": ("target_turn", "targetturn", "turn_under_test", "judged_turn"),
    "$.metadata.case.permission.callerRole": ("caller_role", "callerrole", "requester_role"),
    "$.metadata.case.permission.resourceScope": ("resource_scope", "resourcescope", "allowed_resources",
                                                 "permission_scope"),
    "$.metadata.reason": ("reason", "why", "rationale"),
    "$.metadata.notes": ("notes", "note", "comment", "comments"),
    "$.metadata.category": ("category", "type", "topic"),
    "$.metadata.tags": ("tags", "tag", "labels"),
    "$.metadata.origin": ("origin",),
    "$.metadata.severity": ("severity",),
    "$.metadata.gate": ("gate",),
}
_LISTS = {"$.metadata.tags"}
ORACLE_TYPES = list(ADMISSIBILITY)


_NOT_WORD = re.compile(r"[^0-9a-z]+")


def normalise(name: str) -> str:
    return _NOT_WORD.sub("_", name.strip().lower()).strip("_")


_BY_NAME = {name: target for target, names in SYNONYMS.items() for name in names}


# ---------------------------------------------------------------- reading the sheet

def read_sheet(path: str, encoding: str | None = None) -> Sheet:
    if path != "-" and dataset_sheet.is_dataset(path):  # a Parquet file or a Hugging Face dataset folder
        return dataset_sheet.read_dataset(path)
    if path.lower().endswith((".xlsx", ".xls", ".ods")):
        raise ReadError("spreadsheet files are read as CSV: save the sheet as CSV (UTF-8) first", source=path)
    try:  # standard input: a CSV, TSV or JSONL sheet piped in
        stream = os.fdopen(os.dup(sys.stdin.fileno()), "rb") if path == "-" else open(path, "rb")
    except OSError as err:
        raise ReadError(f"cannot read the sheet: {err.strerror or err}", source=path) from None
    with stream:  # a line at a time, each at most MAX_LINE_BYTES (as the CSV and JSON readers)
        lines = iter(Lines(stream, source=path, encoding=encoding or "utf-8"))
        blank = []
        for line in lines:
            if line.strip():
                break
            blank.append(line)
        else:
            line = ""
        text: Iterator[str] = itertools.chain(blank, [line.lstrip("\ufeff")] if line else [], lines)
        if watched():
            text = _told(text, path, stream)
        if path.lower().endswith((".jsonl", ".json")) or line.lstrip("\ufeff \t")[:1] in ("{", "["):
            return _json_sheet(text, path, array=line.lstrip("\ufeff \t")[:1] == "[")
        return _csv_sheet(text, line, path)


def _told(lines: Iterator[str], path: str, stream: IO[bytes]) -> Iterator[str]:
    """The sheet's lines, a watcher told how far the read is (lines stand for rows here)."""
    size = size_of(path) if path != "-" else None
    n = 0
    for n, line in enumerate(lines, 1):
        if n % TELL_EVERY == 0:
            tell(Progress(path, n, stream.tell() if size is not None else None, size))
        yield line
    tell(Progress(path, n, size, size, done=True))


def _csv_sheet(lines: Iterator[str], first: str, path: str) -> Sheet:
    delimiter = max((",", ";", "\t"), key=first.count)
    reader = csv.reader(lines, delimiter=delimiter)
    header: list[str] | None = None
    sheet = Sheet([], [])
    while True:
        line = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            why = (f"a cell is larger than {MAX_LINE_BYTES // (1024 * 1024)} MiB" if "field limit" in str(err)
                   else f"not a readable CSV record: {err}")
            raise ReadError(why, source=path, line=line) from None
        if not any(c.strip() for c in cells):
            if header is not None:
                sheet.blank += 1
            continue
        if header is None:
            header = _header(cells, path, line)
            sheet.columns = header
            continue
        if len(cells) > len(header) and any(c.strip() for c in cells[len(header):]):
            raise ReadError(f"the row has {len(cells)} cells but the header has {len(header)} columns",
                            source=path, line=line)
        sheet.records.append((line, {col: cells[i] if i < len(cells) else "" for i, col in enumerate(header)}))
    if header is None:
        raise ReadError("the sheet is empty: no header row", source=path)
    return sheet


def _header(cells: list[str], path: str, line: int) -> list[str]:
    names = [c.strip() or f"column_{i + 1}" for i, c in enumerate(cells)]
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise ReadError(f"two columns are named '{name}' (columns {seen[name] + 1} and {i + 1}); "
                            f"rename one", source=path, line=line)
        seen[name] = i
    while names and names[-1].startswith("column_") and not cells[len(names) - 1].strip():
        names.pop()  # trailing empty header cells (a sheet's stray delimiters)
    return names


def _json_sheet(lines: Iterator[str], path: str, *, array: bool) -> Sheet:
    sheet = Sheet([], [], text_cells=False)
    if array:
        try:
            items = jsonvalue.loads("".join(lines))
        except jsonvalue.JSONValueError as err:
            raise ReadError(f"not valid JSON: {err}", source=path) from None
        if not isinstance(items, list):
            raise ReadError("a JSON sheet must be an array of objects, or one object a line (JSONL)", source=path)
        records: list[tuple[int | None, Any]] = [(None, item) for item in items]
    else:
        records = []
        for number, text_line in enumerate(lines, 1):
            if not text_line.strip():
                sheet.blank += 1
                continue
            try:
                records.append((number, jsonvalue.loads(text_line)))
            except jsonvalue.JSONValueError as err:
                raise ReadError(f"line is not valid JSON: {err}", source=path, line=number) from None
    columns = Columns()
    for line, record in records:
        if not isinstance(record, dict):
            raise ReadError("each record must be a JSON object (one sheet row)", source=path, line=line)
        if not record:
            sheet.blank += 1
            continue
        columns.add(record)
        sheet.records.append((line, record))
    sheet.columns = columns.names
    return sheet


# ---------------------------------------------------------------- the column map

@dataclass
class ColumnMap:
    targets: dict[str, str]  # column -> canonical path
    how: dict[str, str]      # column -> "matched" | "mapped" | "unmapped"
    flagged: dict[str, str] = field(default_factory=dict)  # column -> why the case profile leaves it out


def read_map(path: str) -> dict[str, str]:
    try:
        text = read_regular(path).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror or err if isinstance(err, OSError) else f"not UTF-8 text ({err.reason})"
        raise ReadError(f"cannot read the map: {why}", source=path) from None
    try:  # the guarded loader: bounded nesting and aliases
        value = load_yaml(text, path)[1]
    except ReadError as err:
        raise ReadError(f"the map is not valid YAML or JSON: {err.message.removeprefix('invalid YAML: ')}",
                        source=path, line=err.line) from None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ReadError("the map must be an object of column name -> field path (input, expected, id, "
                        "case.oracleType, metadata.notes, ...)", source=path)
    return value


def target_path(user: str, *, source: str, column: str) -> str:
    """`input`, `case.oracleType`, `metadata.x` or `$.metadata.x` -> the canonical path (checked)."""
    text = user.strip()
    if text.startswith("case."):
        text = "metadata." + text
    try:
        path = paths.normalize(text)
    except ValueError:
        raise UsageError(f"column '{column}': '{user}' is not a field path (input, expected, id, "
                         f"case.<field>, metadata.<key>)", source=source) from None
    parts = paths.parse(path)
    if path in ("$.id", "$.input", "$.expected"):
        return path
    if len(parts) >= 2 and parts[0] == "metadata" and isinstance(parts[1], str):
        if not all(isinstance(part, str) for part in parts):  # the import builds objects, not lists
            raise UsageError(f"column '{column}': '{user}' names a list item; a column goes in an object "
                             f"key (metadata.<key>)", source=source)
        if parts[1] != "case":
            return paths.to_path(parts[:2]) if len(parts) == 2 else path
        if len(parts) == 3 and parts[2] in CASE_FIELD_KINDS and parts[2] not in ("caseId", "extensions"):
            return path
        if path in evidence_cells.PART_TARGETS:  # case.contextRefs.snapshot, case.permission.callerRole
            return path
        if len(parts) == 3 and parts[2] in OMITTED_FIELDS:
            raise UsageError(f"column '{column}': '{parts[2]}' is deliberately not a field of a case: "
                             f"{OMITTED_FIELDS[parts[2]]}; map it to metadata.{parts[2]}", source=source)
        raise UsageError(f"column '{column}': '{user}' is not a case-profile field", source=source)
    raise UsageError(f"column '{column}': '{user}' is not a place for a column (input, expected, id, "
                     f"case.<field>, metadata.<key>)", source=source)


def listed(columns: list[str], shown: int = 20) -> str:
    """The first columns of a sheet, for a message (a wide sheet has a million)."""
    more = f", ... ({len(columns) - shown:,} more)" if len(columns) > shown else ""
    return ", ".join(columns[:shown]) + more


def column_map(columns: list[str], user_map: dict[str, str] | None = None, map_source: str = "--map") -> ColumnMap:
    user_map = user_map or {}
    known = set(columns)
    for column in user_map:
        if column not in known:
            raise UsageError(f"the map names column '{column}', which the sheet does not have "
                             f"(columns: {listed(columns)})", source=map_source)
    targets: dict[str, str] = {}
    how: dict[str, str] = {}
    for column in columns:  # the user's map first: it wins any target it names
        if column in user_map:
            targets[column] = target_path(user_map[column], source=map_source, column=column)
            how[column] = "mapped"
    taken = {t: c for c, t in targets.items()}
    normalised = {column: normalise(column) for column in columns}
    for column in columns:
        if column in targets:
            continue
        target = _BY_NAME.get(normalised[column])
        if target is not None and target not in taken:
            targets[column], how[column] = target, "matched"
        else:
            key = column if column != "case" else "case (sheet column)"  # metadata.case is the profile
            targets[column], how[column] = paths.join("$.metadata", key), "unmapped"
        taken.setdefault(targets[column], column)
    seen: dict[str, str] = {}
    for column, target in targets.items():
        if target in seen:
            raise UsageError(f"columns '{seen[target]}' and '{column}' both go to {target}; map one elsewhere",
                             source=map_source)
        seen[target] = column
    flagged = {c: OMITTED_FIELDS[normalised[c]] for c in columns if normalised[c] in OMITTED_FIELDS}
    return ColumnMap(targets, how, flagged)


def suggested_map(cmap: ColumnMap) -> str:
    """The map `--suggest-map` prints: YAML the user can edit and pass back with --map."""
    lines = ["# evalconv import --map: sheet column -> field (input, expected, id, case.<field>, metadata.<key>)"]
    for column, target in cmap.targets.items():
        shown = target[2:].replace("metadata.case.", "case.", 1) if target.startswith("$.") else target
        note = {"matched": "matched by name", "mapped": "from your map",
                "unmapped": "no match: kept as user metadata"}[cmap.how[column]]
        if column in cmap.flagged:
            note += f"; flagged: {cmap.flagged[column]}"
        lines.append(f"{_flow_item(column, shown)}  # {note}")
    return "\n".join(lines) + "\n"


# Text YAML writes as it is (no quotes) and reads back as the same text: a word, or words, of
# letters, digits, "_" and ".", starting with a letter or "_", and not one YAML reads as a bool or null.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*(?: [A-Za-z0-9_.]+)*\Z")
_YAML_WORDS = frozenset({"yes", "no", "y", "n", "true", "false", "on", "off", "null"})


def _plain(text: str) -> bool:
    return _PLAIN.match(text) is not None and text.lower() not in _YAML_WORDS


def _scalar(text: str) -> str:
    """Text as a YAML scalar that reads back as itself: plain, single-quoted when printable, else
    as yaml.safe_dump writes it (a dump costs about 90 us: a million-column header took 90 s)."""
    if _plain(text):
        return text
    if text.isprintable():  # YAML's single quotes hold any printable text; a quote is doubled
        return "'" + text.replace("'", "''") + "'"
    return yaml.safe_dump(text, default_style='"', width=10**6).strip().removesuffix("...").strip()


def _flow_item(key: str, value: str) -> str:
    return f"{_scalar(key)}: {_scalar(value)}"


# ---------------------------------------------------------------- rows

@dataclass
class ImportResult:
    sheet: str
    output: str | None
    format: str
    cmap: ColumnMap
    rows: int
    blank: int
    defaulted: dict[str, int]
    log: FindingLog
    loss: LossReport
    wrote_output: bool
    starters: int = 0
    list_seps: list_cells.ListSeps = field(default_factory=list_cells.ListSeps)
    lists: list_cells.ListTally = field(default_factory=list_cells.ListTally)
    repeats: RepeatedInputs = field(default_factory=RepeatedInputs)

    @property
    def exit_code(self) -> int:
        return 1 if self.log.error_count else 0

    def to_json(self) -> dict[str, Any]:
        return {"sheet": self.sheet, "output": self.output, "format": self.format, "rows": self.rows,
                "blankRowsSkipped": self.blank, "wrote_output": self.wrote_output,
                "columns": [{"column": c, "to": t, "how": self.cmap.how[c],
                             **({"flagged": self.cmap.flagged[c]} if c in self.cmap.flagged else {})}
                            for c, t in self.cmap.targets.items()],
                "defaulted": self.defaulted, "lists": self.lists.to_json(),
                "repeatedInputs": self.repeats.to_json(), "errors": [f.to_json() for f in self.log.errors],
                "warnings": [f.to_json() for f in self.log.warnings], "loss": self.loss.to_json()}


def _slug(value: Any) -> str:
    text = value if isinstance(value, str) else jsonvalue.dumps(value)
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = ""
    for word in words:
        if len(slug) + len(word) + 1 > 40:
            break
        slug = f"{slug}-{word}" if slug else word
    digest = hashlib.sha1(jsonvalue.dumps(value).encode("utf-8")).hexdigest()[:6]
    return f"{slug or 'row'}-{digest}"


def is_list(target: str) -> bool:
    kind = CASE_FIELD_KINDS.get(target.rsplit(".", 1)[-1]) if target.startswith("$.metadata.case.") else None
    return kind == "list" or target in _LISTS


def _cell(value: Any, target: str, text_cells: bool, sep: str | None = None,
          tally: list_cells.ListTally | None = None, column: str = "") -> Any:
    """A cell as the value its field holds; None for a blank text cell (left out). `sep`: the
    column's --list-sep (a string cell of any sheet splits at it; `$.expected` is split later).
    An evidence field's cell (version 2) is read by evidence_cells, which raises RowError."""
    if evidence_cells.is_evidence(target):
        return evidence_cells.cell(value, target, column, sep)
    if sep is not None and isinstance(value, str) and target != "$.expected":
        if not value.strip():
            return None
        items = list_cells.split(value, sep)
        if tally is not None:
            tally.add(column, value, sep, items)
        return items
    if text_cells and isinstance(value, str):
        if not value.strip():
            return None
        if is_list(target):
            items = list_cells.split(value, None)
            if tally is not None:
                tally.add(column, value, None, items)
            return items
        if target in ("$.metadata.case.oracleType", "$.metadata.case.evaluator", "$.metadata.case.provenance"):
            return re.sub(r"[\s_]+", "-", value.strip().lower())
        return value.strip() if target != "$.input" and target != "$.expected" else value
    return value


def _expected(value: Any, oracle: Any, text_cells: bool, sep: str | None = None,
              tally: list_cells.ListTally | None = None, column: str = "") -> Any:
    if oracle == "acceptable-set" and sep is not None and isinstance(value, str):
        items = list_cells.split(value, sep)
        if tally is not None:
            tally.add(column, value, sep, items)
        return items
    if not (text_cells and isinstance(value, str)):
        return value
    if oracle == "acceptable-set":
        items = list_cells.split(value, "|")
        if tally is not None:
            tally.add(column, value, None, items)
        return items
    if oracle in ("expected-tool-calls", "expected-final-state") and value.lstrip()[:1] in ("[", "{"):
        try:
            return jsonvalue.loads(value)
        except jsonvalue.JSONValueError:
            return value  # the validator says what shape it needs
    return value


def sheet_rows(sheet: Sheet, cmap: ColumnMap, *, source: str, oracle_type: str | None = None,
               provenance: str = "imported", defaulted: dict[str, int] | None = None,
               list_seps: list_cells.ListSeps | None = None,
               tally: list_cells.ListTally | None = None, schema_version: int | None = None) -> Iterator[SourceRow]:
    """The sheet's records as rows. A cell that cannot be read (an evidence field's) makes its row
    a `parse` finding naming the column. `schema_version`: written on every row without a
    `case.schemaVersion` cell; without it, a row that fills a version-2 field is version 2."""
    defaulted = {} if defaulted is None else defaulted
    list_seps = list_seps or list_cells.ListSeps()
    seps = {column: list_seps.of(column, is_list(target) or target == "$.expected")
            for column, target in cmap.targets.items()}
    expected_column = next((c for c, t in cmap.targets.items() if t == "$.expected"), "")
    used: dict[str, int] = {}

    def count(what: str) -> None:
        defaulted[what] = defaulted.get(what, 0) + 1

    # Once per column, not per cell: its place in the sheet and its target's parts.
    position = {column: i for i, column in enumerate(cmap.targets)}
    places = [(column, target, cast(list[str], paths.parse(target)))  # object keys only (`target_path`)
              for column, target in cmap.targets.items()]
    part_columns = {t: c for c, t in cmap.targets.items() if t in evidence_cells.PART_TARGETS}
    id_column = next((c for c, t in cmap.targets.items() if t == "$.id"), None)
    for line, record in sheet.records:
        try:
            value, case, meta = _cells(record, places, position, seps, sheet.text_cells, tally, part_columns)
        except RowError as err:
            named = record.get(id_column) if id_column else None
            yield SourceRow.failed(err, line, partial={"id": named.strip()} if isinstance(named, str) and named.strip()
                                   else {})
            continue
        _version(case, schema_version, count)
        _fill_in(value, case, sheet, source=source, oracle_type=oracle_type, provenance=provenance, count=count,
                 used=used, expected_sep=seps.get(expected_column), tally=tally, expected_column=expected_column)
        ordered = {"caseId": value["id"], "oracleType": case.pop("oracleType"),
                   "expectedBehavior": case.pop("expectedBehavior"), "provenance": case.pop("provenance"), **case}
        row = {"id": value["id"], "input": value["input"]}
        if "expected" in value:
            row["expected"] = value["expected"]
        row["metadata"] = {"case": ordered, **meta}
        yield SourceRow(row, line)


def _version(case: dict[str, Any], schema_version: int | None, count: Any) -> None:
    if "schemaVersion" in case:
        return
    if schema_version is not None:
        case["schemaVersion"] = schema_version
    elif evidence_cells.uses_version_2(case):
        case["schemaVersion"] = 2
        count("schemaVersion: 2 (the row fills a version-2 field: contextRefs, targetTurn or permission)")


def _cells(record: dict[str, Any], places: list[tuple[str, str, list[str]]], position: dict[str, int],
           seps: dict[str, Any], text_cells: bool, tally: Any,
           part_columns: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """One sheet record's cells, by the map: (id/input/expected, case fields, other metadata)."""
    value: dict[str, Any] = {}
    case: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    evidence_parts: dict[str, dict[str, Any]] = {}
    # the row's own cells in column order: a sparse row of a wide sheet costs its cells only
    for column, target, parts in (places if len(record) == len(places) else
                                  (places[i] for i in sorted(position[c] for c in record if c in position))):
        cell = _cell(record.get(column), target, text_cells, seps[column], tally,
                     column) if column in record else None
        if cell is None:
            continue
        if target in ("$.id", "$.input", "$.expected"):
            if target == "$.id" and isinstance(cell, int) and not isinstance(cell, bool):
                cell = str(cell)  # a dataset's integer ids
            value[target[2:]] = cell.strip() if target == "$.id" and isinstance(cell, str) else cell
        elif parts[1] == "case" and len(parts) == 4:  # a reference's or the permission's part
            evidence_parts.setdefault(parts[2], {})[parts[3]] = cell
        elif parts[1] == "case":
            case[parts[2]] = cell
        else:
            node = meta
            for part in parts[1:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = cell
    if evidence_parts:
        evidence_cells.assemble(case, evidence_parts, part_columns)
    return value, case, meta


def _fill_in(value: dict[str, Any], case: dict[str, Any], sheet: Sheet, *, source: str, oracle_type: str | None,
             provenance: str, count: Any, used: dict[str, int], expected_sep: Any, tally: Any,
             expected_column: str) -> None:
    """What the sheet does not say, filled in (each default counted): an empty input, the oracle
    type, an id from the input, the placeholder behaviour, the provenance."""
    if "input" not in value:
        value["input"] = ""
        count("input: empty (the row has no input cell)")
    if "oracleType" not in case:
        case["oracleType"] = oracle_type or ("reference-answer" if "expected" in value else "expected-behavior-only")
        if not oracle_type:
            count(f"oracleType: {case['oracleType']} (no --oracle-type or oracle column)")
    if "expected" in value:
        value["expected"] = _expected(value["expected"], case["oracleType"], sheet.text_cells,
                                      expected_sep, tally, expected_column)
    if not value.get("id"):
        base = _slug(value["input"])
        used[base] = used.get(base, 0) + 1
        value["id"] = base if used[base] == 1 else f"{base}-{used[base]}"
        count("id: slug of the input with a short hash")
    if "expectedBehavior" not in case:
        case["expectedBehavior"] = PLACEHOLDER.format(sheet=source)
        count("expectedBehavior: placeholder for a reviewer's words")
    if "provenance" not in case:
        case["provenance"] = provenance
        count(f"provenance: {provenance}")


def import_sheet(sheet_path: str, output: str | None, *, to: str | None = None, map_path: str | None = None,
                 oracle_type: str | None = None, provenance: str = "imported", encoding: str | None = None,
                 list_sep: tuple[str, ...] = (), schema_version: int | None = None, **options: Any) -> ImportResult:
    """Read the sheet, map its columns, validate the rows and (when none is invalid) write them."""
    if output == STDIO:
        output = None
    if oracle_type is not None and oracle_type not in ORACLE_TYPES:
        raise UsageError(f"--oracle-type: '{oracle_type}' is not one of {', '.join(ORACLE_TYPES)}")
    if provenance not in enum("provenance"):
        raise UsageError(f"--provenance: '{provenance}' is not one of {', '.join(enum('provenance'))}")
    fmt = output_format(output, to)
    api.check_written_paths(sheet_path, {"-o": output})
    sheet = read_sheet(sheet_path, encoding)
    cmap = plan(sheet, map_path)
    seps = list_cells.parse(list_sep, sheet.columns)
    label = sheet_path
    defaulted: dict[str, int] = {}
    log, rows = FindingLog(), []
    tally, repeats = list_cells.ListTally(), RepeatedInputs()
    checker = Validator(source=label)
    steps = len(sheet.records)
    for checked in checker.check_all(sheet_rows(sheet, cmap, source=label, oracle_type=oracle_type,
                                                provenance=provenance, defaulted=defaulted, list_seps=seps,
                                                tally=tally, schema_version=schema_version)):
        if checker.count % TELL_EVERY == 0 or checker.count == steps:
            tell(Progress(f"{label}: checking", checker.count, step=checker.count, steps=steps,
                          done=checker.count == steps))
        value = checked.source.value
        if isinstance(value, dict) and "input" in value:
            repeats.add(checked.number, str(value.get("id", "")), value["input"])
        log.add(checked.findings)
        if checked.row is not None:
            rows.append(checked.row)
    loss, wrote = LossReport(fmt, output), False
    if not log.error_count:
        loss, wrote = api.write(rows, output, fmt, **options), True
    return ImportResult(label, output, fmt, cmap, checker.count, sheet.blank, defaulted, log, loss, wrote,
                        count_starters(rows), seps, tally, repeats)


def plan(sheet: Sheet, map_path: str | None, *, need_input: bool = True) -> ColumnMap:
    cmap = column_map(sheet.columns, read_map(map_path) if map_path else None, map_path or "--map")
    if need_input and "$.input" not in cmap.targets.values():
        raise UsageError("no input column: name one question, prompt or input, or map one with --map "
                         f"(columns: {listed(sheet.columns)}; --suggest-map prints a map to edit)")
    return cmap


__all__ = ["ImportResult", "Row", "column_map", "import_sheet", "plan", "read_sheet", "suggested_map"]

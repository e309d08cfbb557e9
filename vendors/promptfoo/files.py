"""Reading promptfoo files: test lists in YAML / JSON / JSONL / CSV, and whole configs
(`tests:` with inline tests and `file://` references, `defaultTest` merged in as promptfoo does)."""
from __future__ import annotations

import csv
from itertools import chain
from typing import Any, Iterable, Iterator

import yaml
from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import ReadError, RowError
from evalconv.canonical.json_format import iter_array
from evalconv.canonical.opening import open_regular
from evalconv.canonical.source import MAX_LINE_BYTES, Lines, SourceRow, parse_problem
from evalconv.canonical.reporting import ReadReporter

from .csv_tests import test_from_cells
from .edits import take_edits
from .read import evalconv_row, imported_row, is_evalconv_test
from .refs import FILE_URL, PromptfooReadOptions, Scope
from evalconv.canonical.safe_yaml import iter_yaml_list
from evalconv.canonical.safe_yaml import load_yaml as _load_yaml

Located = tuple[Any, "int | None", str]  # (test, line, source label)


def read_rows(lines: Lines, kind: str, report: ReadReporter) -> Iterator[SourceRow]:
    scope = Scope(lines.path, lines.told(PromptfooReadOptions).allow_outside_refs)
    if kind == "yaml":
        located = _yaml_tests(lines, report, scope)
    else:
        flat = {"csv": _csv_tests, "jsonl": _jsonl_tests, "json": _json_tests}[kind](lines, report)
        located = _vars_followed(flat, lines.path, scope, report)
    taken: set[str] = set()
    for number, (test, line, where) in enumerate(located, start=1):
        yield to_source_row(test, line, where, number, taken, report, lines.source)


def to_source_row(test: Any, line: int | None, where: str, number: int, taken: set[str],
                  report: ReadReporter, source: str) -> SourceRow:
    prefix = "" if where == source else f"{where}: "
    if isinstance(test, SourceRow):
        return test
    if not isinstance(test, dict):
        return SourceRow(None, line, problems=parse_problem(f"{prefix}a test must be a mapping, got {type(test).__name__}"))
    metadata = test.get("metadata") or {}
    if not isinstance(metadata, dict):
        return SourceRow(None, line, problems=parse_problem(f"{prefix}metadata must be a mapping", "$.metadata"))
    try:
        if is_evalconv_test(metadata):
            return SourceRow(take_edits(test, evalconv_row(test, metadata), report), line)
        return SourceRow(imported_row(test, number, taken, report), line)
    except RowError as err:
        return SourceRow.failed(err, line, prefix=prefix)


# --- YAML: a test list, or a whole config --------------------------------------------------------

def _vars_followed(located: Iterable[Located], base: str | None, scope: Scope,
                   report: ReadReporter) -> Iterator[Located]:
    for test, line, where in located:
        yield scope.with_vars(test, base, where, line, report), line, where


def _yaml_tests(lines: Lines, report: ReadReporter, scope: Scope | None = None) -> Iterator[Located]:
    scope = scope or Scope(lines.path, lines.told(PromptfooReadOptions).allow_outside_refs)
    head, rest = [], iter(lines)
    for line in rest:  # the first line that is not blank or a comment says what the file is
        head.append(line)
        if line.strip() and not line.lstrip().startswith("#"):
            break
    if head and head[-1].startswith("-") and head[-1][1:2] in (" ", "\n", "\r", ""):
        for line_number, test in iter_yaml_list(chain(head, rest), lines.source):  # a test list
            yield from _expand([test], [line_number], lines.path, lines.source, report, scope)
        return
    node, data = _load_yaml(lines.text(chain(head, rest)), lines.source)
    if data is None:
        return
    if isinstance(data, dict):
        yield from _config_tests(data, node, lines, report, scope)
    elif isinstance(data, list):
        yield from _expand(data, _item_lines(node), lines.path, lines.source, report, scope)
    else:
        raise ReadError("a promptfoo YAML file is a list of tests or a config with `tests:`", source=lines.source, line=1)


def _item_lines(node: Any, key: str | None = None) -> list[int | None]:
    if key is not None and isinstance(node, yaml.MappingNode):
        node = next((v for k, v in node.value if getattr(k, "value", None) == key), None)
    if isinstance(node, yaml.SequenceNode):
        return [item.start_mark.line + 1 for item in node.value]
    return []


def _config_tests(config: dict[str, Any], node: Any, lines: Lines, report: ReadReporter, scope: Scope) -> Iterator[Located]:
    if "tests" not in config:
        raise ReadError("this YAML mapping has no `tests:`; a promptfoo tests file is a list of tests",
                        source=lines.source, line=1)
    for key in sorted(set(config) - {"tests", "defaultTest"}):
        report.notes.append(f"config key `{key}` is not case data and is not read")
    default = config.get("defaultTest") or {}
    if isinstance(default, str) and default.startswith(FILE_URL):
        default = scope.default_test(default, lines.path, lines.source, report)
    elif isinstance(default, dict):
        default = scope.with_vars(default, lines.path, lines.source, None, report)
    else:
        raise ReadError("defaultTest must be a mapping or a file:// reference to one",
                        source=lines.source, field="defaultTest")
    tests = config["tests"]
    tests = tests if isinstance(tests, list) else [tests]
    for test, line, where in _expand(tests, _item_lines(node, "tests"), lines.path, lines.source, report, scope):
        yield (merge_default(default, test) if isinstance(test, dict) and default else test), line, where


def merge_default(default: dict[str, Any], test: dict[str, Any]) -> dict[str, Any]:
    """What promptfoo runs: defaultTest's assertions first, its maps merged under the test's."""
    merged = {**{k: v for k, v in default.items() if k != "description"}, **test}
    for key in ("vars", "options", "metadata"):
        if isinstance(default.get(key), dict) or isinstance(test.get(key), dict):
            merged[key] = {**(default.get(key) or {}), **(test.get(key) or {})}
    disable = isinstance(test.get("options"), dict) and test["options"].get("disableDefaultAsserts")
    if isinstance(default.get("assert"), list) and not disable:
        merged["assert"] = default["assert"] + (test.get("assert") or [])
    return merged


def _expand(items: list[Any], item_lines: list[int | None], base: str | None, source: str,
            report: ReadReporter, scope: Scope) -> Iterator[Located]:
    """Inline tests with their vars files followed; `file://` strings replaced by the tests of
    the files they name (a glob, relative to the file naming it)."""
    for i, item in enumerate(items):
        line = item_lines[i] if i < len(item_lines) else None
        if not isinstance(item, str):
            yield scope.with_vars(item, base, source, line, report), line, source
            continue
        for path in scope.paths(item, base, "tests file", source, line):
            report.notes.append(f"tests read from {path}")
            yield from _file_tests(path, source, line, report, scope)


def _file_tests(path: str, source: str, line: int | None, report: ReadReporter, scope: Scope) -> Iterator[Located]:
    try:
        with open_regular(path) as stream:
            lines = Lines(stream, source=path, path=path)
            kind = next((k for e, k in ((".jsonl", "jsonl"), (".json", "json"), (".csv", "csv"))
                         if path.lower().endswith(e)), "yaml")
            if kind == "yaml":
                node, data = _load_yaml(lines.text(), path)
                data = data if isinstance(data, list) else [data] if data is not None else []
                yield from _expand(data, _item_lines(node), path, path, report, scope)
            else:
                flat = {"csv": _csv_tests, "jsonl": _jsonl_tests, "json": _json_tests}[kind](lines, report)
                yield from _vars_followed(flat, path, scope, report)
    except OSError as err:
        raise ReadError(f"cannot read the tests file {path}: {err.strerror}", source=source, line=line) from None


# --- JSON, JSONL ---------------------------------------------------------------------------------

def _json_tests(lines: Lines, report: ReadReporter) -> Iterator[Located]:
    text = lines.text()
    if not text.strip() or text.lstrip().startswith("["):
        for row in iter_array([text if text.strip() else "[]"], lines.source):
            yield (row.value if row.problems is None else row), row.line, lines.source
        return
    try:  # promptfoo also takes a single test object
        yield jsonvalue.loads(text), 1, lines.source
    except jsonvalue.JSONValueError as err:
        raise ReadError(f"invalid JSON: {err}", source=lines.source) from None


def _jsonl_tests(lines: Lines, report: ReadReporter) -> Iterator[Located]:
    for text in lines:
        if not text.strip():
            continue
        try:
            yield jsonvalue.loads(text), lines.number, lines.source
        except jsonvalue.JSONValueError as err:
            yield SourceRow(None, lines.number, problems=parse_problem(f"line is not valid JSON: {err}")), None, lines.source


# --- CSV -----------------------------------------------------------------------------------------

def _csv_tests(lines: Lines, report: ReadReporter) -> Iterator[Located]:
    csv.field_size_limit(MAX_LINE_BYTES)  # process-wide: every reader keeps the same bound
    counted = _Counting(lines)
    try:
        yield from _csv_records(csv.reader(counted), counted, lines.source)
    except csv.Error as err:
        raise ReadError(f"invalid CSV: {err}", source=lines.source, line=counted.number) from None


def _csv_records(reader: Any, counted: "_Counting", source: str) -> Iterator[Located]:
    header = next(reader, None)
    if header is None:
        return
    start = counted.number + 1
    for record in reader:
        line, start = start, counted.number + 1
        if not any(cell.strip() for cell in record) and len(record) <= 1:
            continue
        if len(record) != len(header):
            yield SourceRow(None, line, problems=parse_problem(
                f"the record has {len(record)} cells, the header {len(header)}")), line, source
            continue
        try:
            yield test_from_cells(dict(zip(header, record))), line, source
        except RowError as err:
            yield SourceRow.failed(err, line), line, source


class _Counting:
    """Lines handed to the csv module one at a time, counted, so records know their first line."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines, self.number = iter(lines), 0

    def __iter__(self) -> "_Counting":
        return self

    def __next__(self) -> str:
        text = next(self._lines)
        self.number += 1
        return text

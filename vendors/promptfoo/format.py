"""Promptfoo test files: YAML (a test list, or a whole promptfooconfig.yaml when reading), JSON,
JSONL and CSV, chosen by the file's extension (YAML on standard output; a writer refuses an
extension that names none of them).

Only the input goes into `vars`; references go into assertions; the case profile and the
user's metadata stay verbatim in `metadata`; what promptfoo cannot hold exactly travels in
`metadata.evalconv` (JSON text). Mapping rules: docs/vendors/promptfoo.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, TextIO

from evalconv.canonical import jsonvalue
from evalconv.canonical.cells import formula_looking, unguarded_formulas
from evalconv.canonical.format import (JSON_ARRAY_JOINS, FieldLoss, Format, LineWriter, RowWriter, SideFiles,
                                       SpreadsheetOptions, Variant, WriteOptions, option)
from evalconv.canonical.head import header_cells, record_keys
from evalconv.canonical.paths import key_segment
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.row import Row
from evalconv.canonical.schema import CASE_FIELDS
from evalconv.canonical.review import is_placeholder
from evalconv.canonical.source import Lines, SourceRow
from evalconv.canonical.suggest import count as count_of
from evalconv.canonical.vocabulary import is_starter

from .._common.records import CSVLines
from .._common.yaml_emit import yaml_item
from . import files
from .refs import PromptfooReadOptions
from .config import check_config_option, shape_of, write_config
from .csv_tests import HEADER, csv_assertion, place_csv
from .oracle import oracle_table
from .write import Placement, attach_metadata, place

_NEEDS_PERSON = re.compile(r"\Athis case needs [\w-]+ grading")
_CARRY_WHY = "promptfoo keeps it in the test's free-form metadata and does not act on it"
_FIELDS: dict[str, FieldLoss] = {
    "id": FieldLoss("$.id", "carried", "metadata.case.caseId, and the description",
                    "promptfoo tests have no id field"),
    "input:native": FieldLoss("$.input", "native", "vars.input, or one var per key of an object input", ""),
    "input": FieldLoss("$.input", "carried", "metadata.evalconv (JSON text)",
                       "promptfoo would not pass this input to the prompt unchanged as vars (a null var, a "
                       "`$ref` key, which promptfoo dereferences, a file:// string inside a list or object "
                       "var, which it loads, a number JavaScript changes: 25.0, an integer past 2^53; or "
                       "CSV's text-only vars): the prompt gets the input's exact JSON text in vars.input, "
                       "and the value itself travels in metadata.evalconv"),
    "expected:native": FieldLoss("$.expected", "native",
                                 "assert[i].value: equals, or factuality for llm-judge; javascript "
                                 "`[...].includes(output)` for an acceptable set; tool-call-f1 for tool names "
                                 "(table: oracle type to assertion)", ""),
    "expected": FieldLoss("$.expected", "carried", "metadata.evalconv (JSON text)",
                          "no promptfoo assertion holds this value exactly (it may still grade it: an "
                          "llm-rubric, tool arguments), or a person grades the case"),
    "case.evaluationCriteria:native": FieldLoss("$.metadata.case.evaluationCriteria", "native",
                                                "one llm-rubric assertion per criterion (llm-judge rows)", ""),
    "case.unacceptableBehavior:native": FieldLoss("$.metadata.case.unacceptableBehavior", "native",
                                                  "one not-llm-rubric assertion per item (llm-judge rows)", ""),
    **{f"case.{name}": FieldLoss(f"$.metadata.case.{name}", "carried",
                                 "metadata.case (CSV: metadata.evalconv)", _CARRY_WHY)
       for name in CASE_FIELDS},
    "meta": FieldLoss("$.metadata.<key>", "carried", "metadata.<key> (CSV: metadata.evalconv)", _CARRY_WHY),
}
FIELD_MAP = tuple(_FIELDS.values())


def oracle_to_assertion_table() -> str:
    """The docs' table: what each oracle type and evaluator becomes, rendered from the code."""
    return oracle_table(lambda row: csv_assertion(row)[0])

_TEST_KEYS = {"description", "vars", "assert", "threshold", "metadata", "options", "provider",
              "providers", "prompts", "providerOutput", "assertScoringFunction"}
_CONFIG_KEYS = {"prompts", "providers", "tests", "defaultTest", "scenarios"}
_YAML_ITEM = re.compile(r"^-\s+(\w+)\s*:", re.M)
_YAML_KEY = re.compile(r"^(\w+)\s*:", re.M)
_YAML_BODY = re.compile(r"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)+")  # comment and blank lines before the first key
_YAML_ITEM_KEY = re.compile(r"^  (\w+)\s*:", re.M)  # a later key of a top-level list item (`- description:` first)


CSV_FORMULAS = unguarded_formulas("promptfoo", "csv-parse, in readStandaloneTestsFile")


@dataclass(frozen=True)
class PromptfooOptions(SpreadsheetOptions):
    config: str | None = option(None, flag="--config", metavar="PATH", writes_file=True,
                                goes_with="writes a promptfoo config; it goes with --to promptfoo",
                                help="promptfoo: also write a runnable promptfooconfig.yaml here, "
                                     "pointing at the tests.")


class PromptfooFormat(Format):
    name = "promptfoo"
    title = "Promptfoo test cases (YAML, JSON, JSONL, CSV)"
    extensions = (".yaml", ".yml", ".json", ".jsonl", ".csv")
    variants = (Variant("yaml", "YAML", (".yaml", ".yml")), Variant("json", "JSON", (".json",)),
                Variant("jsonl", "JSONL", (".jsonl",)), Variant("csv", "CSV", (".csv",)))
    options = PromptfooOptions
    read_options = PromptfooReadOptions
    streaming_read = False  # a config and a JSON test list are read whole; YAML test lists, JSONL, CSV stream
    streaming_write = True
    write_shape = "line-per-row"
    field_map = FIELD_MAP

    def detect(self, head: str) -> float:
        return 1.0 if self._looks_like_tests(head) else 0.0

    def _looks_like_tests(self, head: str) -> bool:
        text = head.lstrip("\ufeff \t\r\n")
        if text.startswith(("{", "[")):
            record = record_keys(text)
            keys = record.top if record else frozenset()
            return keys <= _TEST_KEYS and bool({"vars", "assert"} & keys)
        first_line = text.split("\n", 1)[0]
        if ("," in first_line or first_line.startswith("__")) and not first_line.startswith("#"):  # a YAML comment
            header = header_cells(first_line) or ()  # None: a stray "\r", say; not a CSV header
            return any(h.strip().startswith(("__expected", "__description", "__metadata:")) for h in header)
        item_keys = set(_YAML_ITEM.findall(text)) | {k for k in _YAML_KEY.findall(text)}
        if _YAML_BODY.sub("", text).startswith("-"):  # comments before the list are still a list
            item_keys |= set(_YAML_ITEM_KEY.findall(text))
        top_keys = set(_YAML_KEY.findall(text))  # `tests:` alone is a promptfoo config (pydantic-evals says `cases:`)
        return bool(item_keys & {"vars", "assert"}) or len(item_keys & _CONFIG_KEYS) >= 2 or "tests" in top_keys

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        return files.read_rows(lines, self.variant_named(lines.path) or self.variants[0].name, report)

    def open_writer(self, out: TextIO, report: LossReporter, options: WriteOptions) -> "PromptfooWriter":
        config = options.config if isinstance(options, PromptfooOptions) else None
        check_config_option(config, options.path)
        return PromptfooWriter(out, report, options.variant or self.write_variant(options.path),
                               options.path, config)

    def committed(self, writer: RowWriter, options: WriteOptions, files: SideFiles) -> None:
        """The tests file is in place: only now write a config that points at it."""
        if isinstance(writer, PromptfooWriter):
            writer.write_config(files)


class PromptfooWriter(LineWriter):
    """One test a row, in the variant's syntax; the config (`--config`) is written once the tests are."""

    def __init__(self, out: TextIO, report: LossReporter, kind: str, path: str | None = None,
                 config: str | None = None) -> None:
        super().__init__(out)
        self._report, self._kind = report, kind
        self._path, self._config = path, config
        self._count = 0
        self._var_names: dict[str, None] = {}
        self._shapes: set[str] = set()
        self._names_seen: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._last_names: tuple[str, ...] | None = None
        self._notes = _Notes()
        self.joins = JSON_ARRAY_JOINS if kind == "json" else None
        if kind == "csv":
            self._csv = CSVLines(lineterminator="\r\n")  # "\r\n" makes a lone "\r" quoted
            out.write(self._csv.line(HEADER))

    def encode(self, row: Row) -> tuple[str, "_Kept"]:
        """The row's test as text; kept: its var names and prompt shape (for a config) and what
        the notes count."""
        names: tuple[str, ...] | None = None
        if self._kind == "csv":
            cells, placed = place_csv(row)
            text = self._csv.line(cells)
        else:
            placed = place(row)
            attach_metadata(placed, row, verbatim=True)
            text = self._render(placed.test)
            names = tuple(placed.test["vars"])
            names = self._names_seen.setdefault(names, names)  # one object for the rows that share them
            if len(self._names_seen) > 1000:  # var names are the input's keys: keep memory flat
                self._names_seen.clear()
        carried = [_CARRIED.get(key) or _carried(key) for key in placed.carried]
        self._report.carry_all(carried, row.id)
        if self._kind == "csv" and formula_looking(cells):
            self._report.notice_row(CSV_FORMULAS, row.id)
        return text, (names, _Notes.facts(row, placed))

    def keep(self, kept: "_Kept") -> None:
        names, facts = kept
        if names is not None and names is not self._last_names:
            self._var_names.update(dict.fromkeys(names))
            self._shapes.add(shape_of(names))
            self._last_names = names
        self._count += 1
        self._notes.add(facts)

    def _render(self, test: dict[str, Any]) -> str:
        if self._kind == "jsonl":
            return jsonvalue.dumps(test) + "\n"
        if self._kind == "json":
            return JSON_ARRAY_JOINS[1] + jsonvalue.dumps(test, indent=True).replace("\n", "\n  ")
        return yaml_item(test)

    def close(self) -> None:
        if self._kind == "json":
            self._out.write("\n]\n" if self._count else "[]\n")
        elif self._kind == "yaml" and not self._count:
            self._out.write("[]\n")
        self._report.notes.extend(self._notes.render(self._kind))
        for text in self._notes.notices():
            self._report.notice(text)

    def write_config(self, files: SideFiles) -> None:
        if self._config and self._path:
            write_config(files, self._config, self._path, self._var_names or {"input": None}, self._shapes)
            self._report.notes.append(f"promptfoo config written to {self._config}: replace the `echo` "
                                      "provider with the target before a real run")


# What a row leaves the writer: (its var names, None for CSV; its facts for the notes).
_Kept = tuple[tuple[str, ...] | None, tuple[Any, ...]]

_CARRIED: dict[str, tuple[str, str]] = {}  # field-map key -> (path, reason), for the loss report


def _carried(key: str) -> tuple[str, str]:
    entry = _FIELDS["meta" if key.startswith("meta:") else key]
    found = (f"$.metadata{key_segment(key[5:])}" if key.startswith("meta:") else entry.path, entry.reason)
    if len(_CARRIED) >= 10_000:  # metadata keys are the user's: keep memory flat
        _CARRIED.clear()
    _CARRIED[key] = found
    return found


class _Notes:
    """What the loss report says once for the whole file: rows that cannot pass, evaluators
    evalconv chose, starter rows. Counts and the first few ids, so memory stays flat."""

    SHOWN = 5

    def __init__(self) -> None:
        self._groups: dict[str, list[Any]] = {}
        self._blocked: list[Any] = [0, []]  # rows promptfoo will fail until a person grades them
        self._unchecked: list[Any] = [0, []]  # rows promptfoo will fail: no assertion can check them
        self._chosen: dict[str, list[Any]] = {}  # evaluator evalconv chose -> rows
        self._traced: list[Any] = [0, []]  # rows whose checks need promptfoo tracing
        self._reasons: dict[str, list[Any]] = {}  # why no assertion checks them -> rows

    def _note(self, key: str, row_id: str, into: dict[str, list[Any]] | None = None) -> None:
        count_ids = (self._groups if into is None else into).setdefault(key, [0, []])
        count_ids[0] += 1
        if len(count_ids[1]) < self.SHOWN:
            count_ids[1].append(row_id)

    @staticmethod
    def facts(row: Row, placed: Placement) -> tuple[Any, ...]:
        """What the notes need of a row: (id, why it cannot pass, the evaluator evalconv chose,
        its oracle type, whether its checks need tracing, whether it is a starter row, whether its
        expected behaviour is an import's placeholder)."""
        plan = placed.plan
        blocked = plan.blocked if plan is not None else None
        chosen = plan.evaluator if plan is not None and not blocked and plan.chosen else None
        return (row.id, blocked, chosen, row.case["oracleType"], plan is not None and plan.traced,
                is_starter(row.case), is_placeholder(row.case))

    def add(self, facts: tuple[Any, ...]) -> None:
        row_id, blocked, chosen, oracle_type, traced, starter, placeholder = facts
        if blocked:
            if not _NEEDS_PERSON.search(blocked):
                self._note(blocked, row_id, self._reasons)
            self._note(f"written with an assertion that always fails ({blocked}), so promptfoo "
                       "never counts them as passed; the row reads back exactly", row_id)
            self._note("", row_id, {"": self._blocked if _NEEDS_PERSON.search(blocked) else self._unchecked})
        elif chosen is not None:
            self._note(f"name no evaluator; graded as {chosen}, the admissible automated "
                       f"evaluator for {oracle_type}", row_id)
            self._note(f"{chosen} for {oracle_type}", row_id, self._chosen)
        if traced:
            self._note("hold trajectory assertions (trajectory:tool-sequence in exact mode for the order of the "
                       "calls, trajectory:tool-args-match for their arguments, not-trajectory:tool-used for a "
                       "case expecting no tool call) that need promptfoo tracing (tracing.enabled and a target "
                       "that emits OpenTelemetry spans); without a trace they fail, never pass. tool-call-f1 "
                       "checks the set of tool names from the output alone", row_id)
            self._note("", row_id, {"": self._traced})
        if starter:
            self._note("are starter rows: their description says they are examples, not validated answers", row_id)
        elif placeholder:
            self._note("have the placeholder expected behaviour evalconv import wrote: their description says "
                       "a reviewer must write it", row_id)

    def notices(self) -> list[str]:
        """What changes in promptfoo's hands, said on the terminal (the notes have the detail)."""
        out = []
        traced, traced_ids = self._traced
        if traced:
            out.append(f"promptfoo needs tracing to check the tool calls of {count_of(traced, 'test')} "
                       f"({_shown_ids(traced, traced_ids)}): their order and absence checks (trajectory "
                       f"assertions) fail without a trace (the loss report's notes say which)")
        count, ids = self._blocked
        if count:
            out.append(f"promptfoo will fail {count_of(count, 'test')} until a person grades "
                       f"{'it' if count == 1 else 'them'} ({_shown_ids(count, ids)}): the case profile asks for "
                       f"a person's grading, so evalconv wrote an assertion that always fails rather than one "
                       f"that would pass unread")
        count, ids = self._unchecked
        if count:
            reasons = "; ".join(f"{_shown_ids(n, rows)}: {why}" for why, (n, rows) in self._reasons.items())
            out.append(f"promptfoo will fail {count_of(count, 'test')} that no promptfoo assertion can check "
                       f"({reasons}): evalconv wrote an assertion that always fails, saying why")
        for what, (n, ids) in self._chosen.items():
            out.append(f"{count_of(n, 'row')} ({_shown_ids(n, ids)}) named no evaluator; promptfoo will "
                       f"grade {'it' if n == 1 else 'them'} with {what}, the admissible automated choice")
        return out

    def render(self, kind: str) -> list[str]:
        out = []
        for text, (count, ids) in self._groups.items():
            more = f" and {count - len(ids)} more" if count > len(ids) else ""
            out.append(f"{count_of(count, 'row')} ({', '.join(ids)}{more}) {text}")
        if kind == "csv":
            out.append("promptfoo CSV cells are text, flat and trimmed (no nesting, types, leading or trailing "
                       "whitespace in __expected, weights, or more than one assertion column here): evalconv "
                       "keeps each whole row in __metadata:evalconv (JSON text, which promptfoo keeps "
                       "verbatim), so nothing is dropped; what promptfoo does not act on is listed as carried")
        return out


def _shown_ids(count: int, ids: list[str]) -> str:
    return ", ".join(ids) + (f" and {count - len(ids)} more" if count > len(ids) else "")


FORMAT = PromptfooFormat()

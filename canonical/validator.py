"""The validator: the JSON Schema, then the rules a schema cannot say.

Row rules: caseId = id, admissibility, and the warnings; for a version-2 row, the evidence
rules (`evidence.py`). Set rules: duplicate ids and case families that disagree. Each row is
checked against the schema of its own version (`metadata.case.schemaVersion`, absent: 1).
Findings carry the row, its id, its line and a `$.path`.
"""
from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Iterable, Iterator, Protocol, Sequence, TypeVar, cast

from . import jsonvalue, paths, schema
from .idtable import IdTable
from .jsonvalue import value_problem
from .admissibility import ADMISSIBILITY, admitted, verdict
from .evidence import ContextIndex, evidence_findings
from .findings import Finding
from .retirement import retirement_due
from .review import PLACEHOLDER_MARK, is_placeholder
from .row import Row
from .source import SourceRow
from .vocabulary import BLUEPRINT as BLUEPRINT  # rows built from a pack name it in extensions[BLUEPRINT]["pack"]
from .vocabulary import REASON_VOCABULARIES, STARTER_PROVENANCES, nearest, off_vocabulary
from .vocabulary import is_starter as is_starter  # the writers import it from here

# What every written format says about a starter row, where that tool's user sees it.
STARTER_MARK = "starter example, not a validated gold-standard answer: replace it before grading"


def review_mark(case: Any) -> str | None:
    """What every written format says about a row that is not a validated answer (a starter
    example, an imported placeholder behaviour), or None."""
    if is_starter(case):
        return STARTER_MARK
    return PLACEHOLDER_MARK if is_placeholder(case) else None


Payload = TypeVar("Payload")


@dataclass(slots=True)
class Checked(Generic[Payload]):
    """A row after validation: `row` is set when no finding is an error. `key` is what the set
    rules look at (None: a row they do not look at). `row` is a `Row` here; a caller that
    checks elsewhere may carry its own payload (the text a writer wrote for it)."""

    source: SourceRow
    number: int
    findings: list[Finding]
    row: Payload | None
    key: "SetKey | None" = None
    count: ClassVar[int] = 1  # rows it stands for (a run of clean rows from workers stands for more)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]


@dataclass
class Validator:
    """Checks rows one at a time, keeping what the set rules need (ids and case families).
    `check` applies every rule; `check_row` only the rules on the row itself, leaving its `key`
    for `set_findings` (or, for many rows at once, `set_findings_many`) in row order."""

    source: str | None = None
    require: tuple[str, ...] = ()  # paths every row must fill, e.g. "$.metadata.reason"
    packs: Any = None  # the PackIndex case families are checked against; None: the built-in packs
    contexts: ContextIndex | None = None  # --contexts: the sources a context reference must resolve in
    count: int = 0
    versions: Counter = field(default_factory=Counter)  # rows by the schema version they say (absent: 1)
    _ids: IdTable = field(default_factory=IdTable)
    _families: dict[str, tuple[int, str, Any]] = field(default_factory=dict)

    def check(self, src: SourceRow) -> Checked[Row]:
        checked = self.check_row(src)
        if checked.key is None:
            return checked
        later = self.set_findings(checked.key, checked.number)
        if not later:
            return checked
        value = src.value
        row_id = value.get("id") if isinstance(value, dict) else None
        checked.findings += [f.locate(row=checked.number, id=row_id if isinstance(row_id, str) else None, line=src.line,
                                      record=src.record, source=self.source) for f in later]
        if any(f.severity == "error" for f in later):
            checked.row = None
        return checked

    def check_row(self, src: SourceRow) -> Checked[Row]:
        """The row rules (the schema, admissibility, the warnings, `require`, the packs)."""
        self.count += 1
        number = self.count
        value = src.value
        findings: list[Finding] = list(src.problems) if src.problems else []
        key = None
        if not findings and not src.plain_json and (problem := value_problem(value)) is not None:
            findings.append(Finding("schema", problem[1], problem[0]))
        if not findings:
            case = _case(value) if isinstance(value, dict) else {}
            says = schema.VERSION_FIELD in case
            version = schema.known_version(case[schema.VERSION_FIELD]) if says else 1
            self.versions[version if version is not None else "unknown"] += 1
            if not schema.valid_at(value, version, says):
                findings.extend(Finding("schema", msg, path) for path, msg in schema.explain(value))
            if isinstance(value, dict):
                findings += row_findings(value, case)
                if version == 2 and case:
                    findings += evidence_findings(value, case, self.contexts)
                if self.require:
                    findings += required_findings(value, self.require)
                key = set_key(value, case)
                if key[1] is not None:
                    pack_rule = pack_findings(case, self._pack_index())
                    if pack_rule:
                        findings += pack_rule
                        if pack_rule[0].code == "case-family-conflict":  # the pack, not this row, sets the family up
                            key = (key[0], None, None, None)
        if not findings:  # the common case: a valid row with nothing to say
            return Checked(src, number, findings, Row.from_json(value), key)
        row_id = value.get("id") if isinstance(value, dict) else None
        row_id = row_id if isinstance(row_id, str) else None
        located = [f.locate(row=number, id=row_id, line=src.line, record=src.record, source=self.source)
                   for f in findings]
        ok = not any(f.severity == "error" for f in located)
        return Checked(src, number, located, Row.from_json(value) if ok else None, key)

    def _pack_index(self) -> Any:
        if self.packs is None:
            from .pack import builtin_packs
            self.packs = builtin_packs()
        return self.packs

    def check_all(self, rows: Iterable[SourceRow]) -> Iterator[Checked[Row]]:
        for src in rows:
            yield self.check(src)

    def set_findings(self, key: "SetKey", number: int) -> list[Finding]:
        """Duplicate ids and case-family conflicts, for rows taken in order."""
        out: list[Finding] = []
        row_id, family, oracle, evaluator = key
        if row_id is not None and (first_row := self._ids.first_use(row_id, number)) != number:
            out.append(_duplicate_id(row_id, first_row))
        if family is not None:
            first_seen = self._families.setdefault(family, (number, oracle, evaluator))
            if first_seen[1:] != (oracle, evaluator):
                out.append(_family_conflict((family, oracle, evaluator), first_seen))
        return out

    def set_findings_many(self, keys: "KeyColumns", first: int) -> dict[int, list[Finding]]:
        """`set_findings` for rows `first`, `first + 1`, ...: {index in keys: findings}, for
        the rows that have any. One call for many rows instead of one a row (a property test
        holds the two to the same answers)."""
        out: dict[int, list[Finding]] = {}
        for i, first_row in self._ids.first_uses(keys.ids, first):
            out[i] = [_duplicate_id(cast(str, keys.ids[i]), first_row)]  # only rows with an id come back
        families, triples = self._families, keys.triples
        agrees: dict[int, Any] = {}  # triple -> True, or how its family was first set up
        for i, triple in enumerate(keys.families):
            if triple < 0:
                continue
            verdict = agrees.get(triple)
            if verdict is None:
                family, oracle, evaluator = triples[triple]
                first_seen = families.setdefault(family, (first + i, oracle, evaluator))
                verdict = agrees[triple] = first_seen[1:] == (oracle, evaluator) or first_seen
            if verdict is not True:
                out.setdefault(i, []).append(_family_conflict(triples[triple], verdict))
        return out


def pack_findings(case: dict[str, Any], index: Any) -> list[Finding]:
    """A row of a case family some pack declares must agree with that pack; a row built from a
    pack (metadata.case.extensions.blueprint.pack) must name a family that pack declares."""
    family, oracle, evaluator = case["caseFamily"], case.get("oracleType"), case.get("evaluator")
    extensions = case.get("extensions")
    blueprint = extensions.get(BLUEPRINT) if isinstance(extensions, dict) else None
    tag = blueprint.get("pack") if isinstance(blueprint, dict) else None
    found = index.family(family)
    if isinstance(tag, str):
        pack = index.get(tag)
        if pack is None:
            return [Finding("unknown-case-family", f"the row was built from pack '{tag}', which is not loaded; "
                            f"pass --pack FILE to check its case families",
                            f"$.metadata.case.extensions.{BLUEPRINT}.pack")]
        fam = pack.family(family)
        if fam is None:
            names = [f.id for f in pack.case_families]
            close = difflib.get_close_matches(family, names, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            return [Finding("unknown-case-family", f"case family '{family}' is not declared by {pack.label}; "
                            f"{hint}its case families: {', '.join(names)}", "$.metadata.case.caseFamily")]
        found = (pack, fam)
    if found is None:
        return []
    pack, fam = found
    if oracle == fam.oracle_type and (evaluator is None or evaluator in fam.evaluators):
        return []
    return [Finding("case-family-conflict",
                    f"case family '{family}' is declared by {pack.label} as {fam.oracle_type} graded by "
                    f"{' or '.join(fam.evaluators)}; this row is {oracle} graded by "
                    f"{evaluator or '(any admissible evaluator)'}", "$.metadata.case.caseFamily")]


def _duplicate_id(row_id: str, first_row: int) -> Finding:
    return Finding("duplicate-id", f"id '{row_id}' is already used by row {first_row}", "$.id")


def _family_conflict(triple: tuple[str, str, Any], first_seen: tuple[int, str, Any]) -> Finding:
    family, oracle, evaluator = triple
    first_row, first_oracle, first_eval = first_seen
    return Finding(
        "case-family-conflict",
        f"case family '{family}' was set up by row {first_row} as {first_oracle} graded by "
        f"{first_eval or '(any admissible evaluator)'}; this row is {oracle} graded by "
        f"{evaluator or '(any admissible evaluator)'}. Rows sharing a case family share "
        f"the oracle type and the evaluator",
        "$.metadata.case.caseFamily")


class KeyColumns(Protocol):
    """The set keys of consecutive rows, in columns: `ids[i]` row i's id (None: none), and
    `families[i]` an index into `triples`, the distinct (family, oracle, evaluator) triples, or -1."""

    @property
    def ids(self) -> Sequence[str | None]: ...
    @property
    def families(self) -> Sequence[int]: ...
    @property
    def triples(self) -> Sequence[tuple[str, str, Any]]: ...


SetKey = tuple  # (row id, case family, oracle type, evaluator): what the set rules look at


def set_key(value: dict[str, Any], case: dict[str, Any]) -> SetKey:
    row_id = value.get("id")
    family, oracle = case.get("caseFamily"), case.get("oracleType")
    if not (isinstance(family, str) and isinstance(oracle, str) and oracle in ADMISSIBILITY):
        family = oracle = None
    evaluator = case.get("evaluator") if family is not None else None
    return (row_id if isinstance(row_id, str) else None, family, oracle, evaluator)


def _case(value: dict[str, Any]) -> dict[str, Any]:
    metadata = value.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    return case if isinstance(case, dict) else {}


def row_findings(value: dict[str, Any], case: dict[str, Any] | None = None) -> list[Finding]:
    """The rules on one row that the schema cannot express."""
    case = _case(value) if case is None else case
    if not case:
        return []
    out: list[Finding] = []
    row_id, case_id = value.get("id"), case.get("caseId")
    if isinstance(row_id, str) and isinstance(case_id, str) and row_id != case_id:
        out.append(Finding("id-mismatch", f"caseId '{case_id}' differs from the row's id '{row_id}'",
                           "$.metadata.case.caseId"))
    oracle, evaluator = case.get("oracleType"), case.get("evaluator")
    known_oracle = oracle if isinstance(oracle, str) and oracle in ADMISSIBILITY else None
    if known_oracle is not None and isinstance(evaluator, str) and evaluator in ADMISSIBILITY[known_oracle]:
        status, why = verdict(known_oracle, evaluator)
        if status == "barred":
            out.append(Finding(
                "inadmissible-evaluator",
                f"{evaluator} cannot grade a {oracle} case: {why}. Admissible: {', '.join(admitted(known_oracle))}",
                "$.metadata.case.evaluator"))
        elif status == "cond":
            out.append(Finding("judge-needs-validation",
                               f"llm-judge is admitted for {oracle} only with conditions: {why}",
                               "$.metadata.case.evaluator"))
    if case.get("provenance") in STARTER_PROVENANCES:
        out.append(Finding("starter-example",
                           f"provenance {case['provenance']}: this row is an example, not a validated "
                           f"gold-standard answer", "$.metadata.case.provenance"))
    if is_placeholder(case):
        out.append(Finding("placeholder-behavior", "expectedBehavior is the placeholder evalconv import wrote: "
                           "a reviewer must write what the system should do here", "$.metadata.case.expectedBehavior"))
    if oracle == "rubric" and not case.get("evaluationCriteria"):
        out.append(Finding("rubric-without-criteria",
                           "a rubric case without evaluationCriteria is incomplete (the criteria may "
                           "live in the rubric itself)", "$.metadata.case.evaluationCriteria"))
    expertise = case.get("reviewerExpertise")
    if evaluator == "human-expert" and not (isinstance(expertise, str) and expertise.strip()):
        out.append(Finding("expert-without-expertise",
                           "a case graded by human-expert should say what expertise the reviewer needs",
                           "$.metadata.case.reviewerExpertise"))
    if oracle == "expected-behavior-only" and "expected" in value:
        out.append(Finding("expected-on-behavior-only",
                           "an expected-behavior-only case carries expected, which no evaluator may "
                           "grade against; make it a checkable oracle type or drop expected", "$.expected"))
    if known_oracle is not None:
        out.extend(expected_shape(known_oracle, value))
    if isinstance(metadata := value.get("metadata"), dict):
        out.extend(vocabulary_findings(metadata))
    if "retirementCondition" in case:
        out.extend(retirement_due(case))
    return out


def vocabulary_findings(metadata: dict[str, Any]) -> list[Finding]:
    """Reason-field values outside the documented vocabulary: allowed, but a typo (`Harmful`)
    would leave the case out of its slice, so each is named with the nearest documented value."""
    out = []
    for field_name, key, known in _REASON_KEYS:
        given = metadata.get(key)
        if given is None or given is True or (given.__class__ is str and given in known):
            continue  # the common case, a row at a time
        vocabulary = REASON_VOCABULARIES[field_name]
        for value in off_vocabulary(field_name, given):
            out.append(Finding("off-vocabulary",
                               f"{key} {value!r} is not one of {', '.join(vocabulary)}: did you mean "
                               f"{nearest(value, vocabulary)!r}?", f"$.{field_name}"))
    return out


_REASON_KEYS = [(name, name.split(".", 1)[1], frozenset(vocabulary)) for name, vocabulary in REASON_VOCABULARIES.items()]


def _not_a_set(present: bool, expected: Any) -> str:
    """What is wrong with an acceptable-set's expected, and how to write the set (a sheet's `a|b`
    cell is one text: cells are never split)."""
    what = "has no expected" if not present else (
        f"has expected {jsonvalue.dumps(expected)}, one {'text' if isinstance(expected, str) else 'value'}"
        if expected != [] else "has an empty expected")
    members = [m for m in expected.split("|") if m.strip()] if isinstance(expected, str) else []
    example = jsonvalue.dumps(members if len(members) > 1 else ["first answer", "second answer"])
    return (f"an acceptable-set case {what}, so no check can test membership: expected must be a "
            f"non-empty array of the acceptable outputs, e.g. {example} (in a sheet, in the expected:json "
            f"column; a plain expected cell is one text, never split at |); or, if there is one right "
            f"answer, set case.oracleType to reference-answer")


def expected_shape(oracle: str, value: dict[str, Any]) -> list[Finding]:
    present = "expected" in value
    expected = value.get("expected")
    if oracle == "reference-answer" and not present:
        return [Finding("expected-shape", "a reference-answer case has no expected: the reference "
                                          "answer belongs there", "$.expected")]
    if oracle == "expected-final-state" and not present:
        return [Finding("expected-shape", "an expected-final-state case has no expected describing "
                                          "the state or the check that inspects it", "$.expected")]
    if oracle == "acceptable-set" and not (isinstance(expected, list) and expected):
        return [Finding("expected-shape", _not_a_set(present, expected), "$.expected")]
    if oracle == "expected-tool-calls":
        if not isinstance(expected, list):
            return [Finding("expected-shape", "an expected-tool-calls case needs expected to be an "
                                              "array of calls, each {name, arguments?}", "$.expected")]
        return [f for i, call in enumerate(expected) for f in _call_shape(i, call)]
    return []


def _call_shape(i: int, call: Any) -> list[Finding]:
    at = f"$.expected[{i}]"
    if not isinstance(call, dict):
        return [Finding("expected-shape", "a tool call must be an object {name, arguments?}", at)]
    out = []
    if not isinstance(call.get("name"), str) or not call.get("name"):
        out.append(Finding("expected-shape", "a tool call needs a non-empty string name", at + ".name"))
    if "arguments" in call and not isinstance(call["arguments"], dict):
        out.append(Finding("expected-shape", "a tool call's arguments must be an object", at + ".arguments"))
    return out


def required_findings(value: dict[str, Any], required: Iterable[str]) -> list[Finding]:
    """`--require`: the path must hold something (not absent, null, blank text or an empty list)."""
    out = []
    for path in required:
        node: Any = value
        for part in paths.parse(path):
            if isinstance(part, str) and isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(part, int) and isinstance(node, list) and part < len(node):
                node = node[part]
            else:
                node = None
                break
        if node is None or node == [] or node == {} or (isinstance(node, str) and not node.strip()):
            out.append(Finding("missing-required-field", f"{path} is required (--require) but the row "
                                                         f"does not fill it", path))
    return out

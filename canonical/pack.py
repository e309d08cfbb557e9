"""Task-family packs: a task family, its case families and their starter rows, as data.

A pack is a YAML (or JSON) file checked against `schema/pack.schema.json` when it is loaded,
then against the rules a schema cannot say (unique ids, admissible evaluators, starter rows that
make valid canonical rows). Problems are located like a broken set's: file, line, `$.path`.
The built-in packs live in `packs/`; docs/packs.md is generated from them.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable, TypeAlias

import yaml

from . import paths
from .admissibility import ADMISSIBILITY, admitted, verdict
from .errors import EvalconvError, one_line
from .jsonvalue import value_problem
from .vocabulary import BLUEPRINT  # rows built from a pack name it in metadata.case.extensions[BLUEPRINT]

SCHEMA_FILE = "pack.schema.json"
STARTER_NOTE = "Starter example to replace with what is correct for your system: "
BUILTIN = "built-in"


class PackError(EvalconvError):
    """A pack that cannot be used: the first problem, located; `problems` holds them all."""

    def __init__(self, problems: list[tuple[int | None, str, str]], *, source: str) -> None:
        self.problems = problems
        line, path, message = problems[0]
        more = f" ({len(problems) - 1} more problem(s) in this pack)" if len(problems) > 1 else ""
        super().__init__(message + more, source=source, line=line, field=path)

    def lines(self) -> list[str]:
        return [EvalconvError(m, source=self.source, line=line, field=p).render()
                for line, p, m in self.problems]


@dataclass(frozen=True)
class CaseFamily:
    id: str
    title: str
    oracle_type: str
    evaluator: str
    alternatives: tuple[str, ...]
    severity: str
    gate: str
    linked_concerns: tuple[str, ...]
    why: str
    rows: tuple[dict[str, Any], ...]
    reversibility: str | None = None
    blast_radius: str | None = None
    reviewer_expertise: str | None = None
    pass_logic: str | None = None

    @property
    def evaluators(self) -> tuple[str, ...]:
        """The evaluator its rows name by default, then the alternatives the pack allows."""
        return (self.evaluator, *self.alternatives)


@dataclass(frozen=True)
class Pack:
    id: str
    title: str
    description: str
    case_families: tuple[CaseFamily, ...]
    origin: str = BUILTIN  # "built-in" or the file it came from

    @property
    def label(self) -> str:
        return f"pack '{self.id}' ({self.origin})"

    def family(self, family_id: str) -> CaseFamily | None:
        return next((f for f in self.case_families if f.id == family_id), None)

    def rows(self, families: Iterable[CaseFamily] | None = None, evaluator: str | None = None) -> list[dict[str, Any]]:
        """The starter rows as canonical row values (`evaluator` replaces each family's own)."""
        return [starter_row(self, fam, row, evaluator or fam.evaluator)
                for fam in (self.case_families if families is None else families) for row in fam.rows]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "description": self.description, "origin": self.origin,
                "caseFamilies": [{"id": f.id, "title": f.title, "oracleType": f.oracle_type,
                                  "evaluator": f.evaluator, "alternativeEvaluators": list(f.alternatives),
                                  "severity": f.severity, "gate": f.gate, "why": f.why, "rows": len(f.rows)}
                                 for f in self.case_families]}


_CASE_KEYS = ("scenario", "actor", "unacceptableBehavior", "evaluationCriteria", "toolActionExpectation",
              "escalationExpectation", "reviewerExpertise", "passLogic")


def starter_row(pack: Pack, fam: CaseFamily, row: dict[str, Any], evaluator: str) -> dict[str, Any]:
    case: dict[str, Any] = {"caseId": row["id"], "oracleType": fam.oracle_type,
                            "expectedBehavior": STARTER_NOTE + row["expectedBehavior"],
                            "provenance": "starter-example", "evaluator": evaluator, "caseFamily": fam.id,
                            "linkedConcerns": list(fam.linked_concerns)}
    for key, setting in (("reversibility", fam.reversibility), ("blastRadius", fam.blast_radius),
                         ("reviewerExpertise", fam.reviewer_expertise), ("passLogic", fam.pass_logic)):
        if setting is not None:
            case[key] = setting
    for key in _CASE_KEYS:
        if key in row:
            case[key] = list(row[key]) if isinstance(row[key], list) else row[key]
    case["extensions"] = {BLUEPRINT: {"pack": pack.id}}
    value: dict[str, Any] = {"id": row["id"], "input": row["input"]}
    if "expected" in row:
        value["expected"] = row["expected"]
    value["metadata"] = {"case": case, "reason": row["reason"], "severity": fam.severity, "gate": fam.gate}
    return value


# ---------------------------------------------------------------- loading

if TYPE_CHECKING:
    _SafeLoader: TypeAlias = yaml.SafeLoader
else:  # libyaml's when there is one
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):
    """YAML without implicit timestamps: a date in a pack stays the text it was written as."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


@cache
def pack_schema() -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("schema", SCHEMA_FILE).read_text("utf-8"))


def parse_pack(raw: bytes, *, source: str, origin: str, check_rows: RowCheck | None = None) -> Pack:
    """A pack from its bytes; `check_rows` checks its starter rows (`pack_files.load_pack`)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise PackError([(line, "", f"invalid utf-8 at byte {err.start + 1}")], source=source) from None
    try:
        value = yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        raise PackError([(mark.line + 1 if mark else None, "", f"not valid YAML or JSON: {err.problem}")],
                        source=source) from None
    except yaml.YAMLError as err:
        raise PackError([(None, "", f"not valid YAML or JSON: {one_line(str(err))}")], source=source) from None
    problems = list(_problems(value, origin, check_rows))
    if problems:
        node = yaml.compose(text, Loader=_Loader)  # only now: line numbers for the messages
        raise PackError([(_line_of(node, path), path, message) for path, message in problems], source=source)
    return _build(value, origin)


def _problems(value: Any, origin: str, check_rows: RowCheck | None) -> Iterator[tuple[str, str]]:
    if (problem := value_problem(value)) is not None:
        yield problem
        return
    import jsonschema_rs

    if jsonschema_rs.Draft7Validator(pack_schema()).is_valid(value):
        yield from _rule_problems(value, origin, check_rows)
        return
    import jsonschema  # only a broken pack needs explaining

    errors = sorted(jsonschema.Draft7Validator(pack_schema()).iter_errors(value),
                    key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        for err in errors:
            yield _schema_message(err)
        return
    yield from _rule_problems(value, origin, check_rows)


def _schema_message(err: Any) -> tuple[str, str]:
    where = list(err.absolute_path)
    at = paths.to_path(where)
    if err.validator == "required":
        missing = err.message.split("'")[1]
        return paths.join(at, missing), f"missing required field '{missing}'"
    if err.validator == "additionalProperties":
        allowed = err.schema.get("properties", {})
        extra = [k for k in err.instance if k not in allowed]
        return paths.join(at, extra[0]), f"unknown key '{extra[0]}'; allowed: {', '.join(allowed)}"
    if err.validator == "enum":
        return at, f"{json.dumps(err.instance)} is not one of: {', '.join(err.validator_value)}"
    if err.validator == "pattern":
        return at, f"{json.dumps(err.instance)} is not a kebab-case id (lowercase words joined by '-')"
    return at, err.message


# Each starter row must make a valid canonical row: `pack_files.starter_row_problems`, the
# validator's answer, for a pack someone wrote (the built-in packs' rows are checked by a test).
RowCheck: TypeAlias = "Callable[[Pack], Iterable[tuple[str, str]]]"


def _rule_problems(value: dict[str, Any], origin: str, check_rows: RowCheck | None) -> Iterator[tuple[str, str]]:
    problems = list(_id_and_evaluator_problems(value))
    if problems:
        yield from problems
        return
    if check_rows is not None:
        yield from check_rows(_build(value, origin))


def _id_and_evaluator_problems(value: dict[str, Any]) -> Iterator[tuple[str, str]]:
    families: dict[str, int] = {}
    row_ids: dict[str, str] = {}
    for i, fam in enumerate(value["caseFamilies"]):
        at = f"$.caseFamilies[{i}]"
        if fam["id"] in families:
            yield at + ".id", f"case family '{fam['id']}' is declared twice (first at $.caseFamilies[{families[fam['id']]}])"
        families.setdefault(fam["id"], i)
        for key, evaluator in [("evaluator", fam["evaluator"])] + [
                (f"alternativeEvaluators[{j}]", e) for j, e in enumerate(fam.get("alternativeEvaluators", []))]:
            status, why = verdict(fam["oracleType"], evaluator)
            if status == "barred":
                yield (f"{at}.{key}", (f"{evaluator} cannot grade a {fam['oracleType']} case: {why}. "
                                       f"Admissible: {', '.join(admitted(fam['oracleType']))}"))
        for j, row in enumerate(fam["rows"]):
            if row["id"] in row_ids:
                yield f"{at}.rows[{j}].id", f"row id '{row['id']}' is already used at {row_ids[row['id']]}"
            row_ids.setdefault(row["id"], f"{at}.rows[{j}]")


def _build(value: dict[str, Any], origin: str) -> Pack:
    return Pack(value["id"], value["title"], value["description"], tuple(
        CaseFamily(f["id"], f["title"], f["oracleType"], f["evaluator"], tuple(f.get("alternativeEvaluators", ())),
                   f["severity"]["level"], f["severity"]["gate"], tuple(f["linkedConcerns"]), f["why"],
                   tuple(f["rows"]), f.get("reversibility"), f.get("blastRadius"), f.get("reviewerExpertise"),
                   f.get("passLogic"))
        for f in value["caseFamilies"]), origin)


def _line_of(node: Any, path: str) -> int | None:
    """The 1-based line of `path` in the composed YAML, or of its nearest existing parent."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in paths.parse(path):
        child = None
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            child = next((v for k, v in node.value if k.value == part), None)
            if child is None:  # a missing key: point at the mapping
                break
            key = next(k for k, v in node.value if k.value == part)
            line = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        else:
            break
        node = child
    return line


# ---------------------------------------------------------------- the packs a validator knows

@dataclass(frozen=True)
class PackIndex:
    """Packs by task-family id, in precedence order (a later pack replaces an earlier one of the
    same id), and the case families they declare."""

    packs: tuple[Pack, ...] = ()
    _by_id: dict[str, Pack] = field(init=False, repr=False, compare=False)
    _families: dict[str, tuple[Pack, CaseFamily]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_id = {p.id: p for p in self.packs}
        object.__setattr__(self, "_by_id", by_id)
        families: dict[str, tuple[Pack, CaseFamily]] = {}
        for pack in by_id.values():
            for fam in pack.case_families:
                families[fam.id] = (pack, fam)
        object.__setattr__(self, "_families", families)

    def get(self, pack_id: str) -> Pack | None:
        return self._by_id.get(pack_id)

    def all(self) -> list[Pack]:
        return list(self._by_id.values())

    def family(self, family_id: str) -> tuple[Pack, CaseFamily] | None:
        return self._families.get(family_id)

    def with_packs(self, extra: Iterable[Pack]) -> PackIndex:
        return PackIndex((*self.packs, *extra))


@cache
def builtin_packs() -> PackIndex:
    folder = resources.files(__package__).joinpath("packs")
    packs = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yaml", ".yml", ".json")):
            packs.append(parse_pack(entry.read_bytes(), source=f"built-in pack {entry.name}", origin=BUILTIN))
    return PackIndex(tuple(packs))


def admissible_override(fam: CaseFamily, evaluator: str) -> str | None:
    """Why `evaluator` may not grade `fam`'s rows, or None when it may."""
    status, why = ADMISSIBILITY[fam.oracle_type][evaluator]
    if status == "barred":
        return (f"{evaluator} cannot grade a {fam.oracle_type} case: {why}. "
                f"Admissible: {', '.join(admitted(fam.oracle_type))}")
    if evaluator not in fam.evaluators:
        return (f"case family '{fam.id}' is graded by {' or '.join(fam.evaluators)}; {evaluator} is admissible "
                f"for {fam.oracle_type} but the pack does not offer it (copy the pack, add it to "
                f"alternativeEvaluators and pass --pack)")
    return None

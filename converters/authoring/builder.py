"""The set builder (`evalconv new`): a task family's starter rows, validated, written atomically."""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import api
from ..canonical.errors import UsageError
from ..canonical.pack import CaseFamily, Pack, PackIndex, admissible_override, builtin_packs
from ..canonical.pack_files import load_pack
from ..canonical.row import Row
from ..canonical.schema import row_schema
from ..canonical.source import SourceRow
from ..canonical.validator import Validator
from ..canonical.vocabulary import STARTER_PROVENANCES
from ..registry import REGISTRY
from ..reports import FindingLog, LossReport
from ..sources import STDIO

DEFAULT_FORMAT = "jsonl"


def load_packs(pack_files: Iterable[str] = ()) -> PackIndex:
    """The built-in packs, then the user's (a user pack replaces a built-in one of the same id)."""
    return builtin_packs().with_packs(load_pack(path) for path in pack_files)


def family_list(index: PackIndex) -> dict[str, Any]:
    """What `evalconv new --list --format json` prints."""
    return {"families": [{"id": p.id, "title": p.title,
                          "caseFamilies": [{"id": f.id, "oracleType": f.oracle_type, "evaluator": f.evaluator,
                                            "reversibility": f.reversibility, "blastRadius": f.blast_radius}
                                           for f in p.case_families]}
                         for p in index.all()],
            "legend": {name: code_legend(name) for name in LEGEND_FIELDS}}


LEGEND_FIELDS = ("reversibility", "blastRadius")
_CODE_MEANING = re.compile(r"\b([A-Z]\d) ([^,.]+)")


def code_legend(field: str) -> dict[str, str]:
    """{"R0": "no state change", ...}: what each code of a case field means (its schema description)."""
    spec = row_schema()["definitions"]["caseProfile"]["properties"][field]
    meanings = dict(_CODE_MEANING.findall(spec["description"]))
    return {code: meanings[code] for code in spec["enum"]}


def find_pack(index: PackIndex, family_id: str) -> Pack:
    pack = index.get(family_id)
    if pack is None:
        names = sorted(p.id for p in index.all())
        close = difflib.get_close_matches(family_id, names, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise UsageError(f"no task family '{family_id}'; {hint}known: {', '.join(names)} "
                         f"(`evalconv new --list`, or load your own with --pack FILE)")
    return pack


def select_families(pack: Pack, wanted: Iterable[str]) -> list[CaseFamily]:
    wanted = list(dict.fromkeys(wanted))
    if not wanted:
        return list(pack.case_families)
    out = []
    for family_id in wanted:
        fam = pack.family(family_id)
        if fam is None:
            names = [f.id for f in pack.case_families]
            close = difflib.get_close_matches(family_id, names, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise UsageError(f"--case-family: {pack.label} has no case family '{family_id}'; {hint}"
                             f"its case families: {', '.join(names)}")
        out.append(fam)
    return out


def check_evaluator(families: list[CaseFamily], evaluator: str | None) -> None:
    """Refuse an evaluator the oracle type bars (with the seed's reason) or the family does not offer."""
    if evaluator is None:
        return
    for fam in families:
        why = admissible_override(fam, evaluator)
        if why is not None:
            raise UsageError(f"--evaluator {evaluator} refused for case family '{fam.id}': {why}")


def output_format(path: str | None, to: str | None) -> str:
    """--to, else the output's extension (the canonical format wins a tie), else JSONL."""
    if to:
        return to
    if path is None:
        return DEFAULT_FORMAT
    name = REGISTRY.for_output(path)
    if name is None:
        raise UsageError("cannot tell the output format from the extension; name it with --to "
                         f"({', '.join(REGISTRY.names())})", source=path)
    return name


@dataclass
class BuildResult:
    family: str
    pack: str
    output: str | None
    format: str
    case_families: list[str]
    rows: int
    starters: int
    log: FindingLog
    loss: LossReport
    left_out: dict[str, str] = field(default_factory=dict)  # case family -> why --evaluator left it out

    @property
    def exit_code(self) -> int:
        return 1 if self.log.error_count else 0

    def to_json(self) -> dict[str, Any]:
        return {"family": self.family, "pack": self.pack, "output": self.output, "format": self.format,
                "caseFamilies": self.case_families, "rows": self.rows, "starters": self.starters,
                "errors": [f.to_json() for f in self.log.errors],
                "warnings": [f.to_json() for f in self.log.warnings], "loss": self.loss.to_json(),
                "leftOut": self.left_out}


def starter_values(index: PackIndex, family_id: str, case_families: Iterable[str] = (),
                   evaluator: str | None = None) -> tuple[Pack, list[CaseFamily], list[dict[str, Any]]]:
    pack, families, _left_out = offering(index, family_id, case_families, evaluator)
    return pack, families, pack.rows(families, evaluator)


def offering(index: PackIndex, family_id: str, case_families: Iterable[str] = (), evaluator: str | None = None
             ) -> tuple[Pack, list[CaseFamily], dict[str, str]]:
    """The case families to write and those left out, with why. `--evaluator` with no
    `--case-family` keeps the families whose oracle type and pack allow it (refused only when
    none does); a case family named with `--case-family` is refused if it does not allow it."""
    pack = find_pack(index, family_id)
    chosen = list(case_families)
    families = select_families(pack, chosen)
    left_out: dict[str, str] = {}
    if evaluator is not None and not chosen:
        left_out = {f.id: why for f in families if (why := admissible_override(f, evaluator)) is not None}
        if len(left_out) < len(families):
            families = [f for f in families if f.id not in left_out]
        else:
            left_out = {}  # none offers it: refused below, with the first family's reason
    check_evaluator(families, evaluator)
    return pack, families, left_out


def new_set(family_id: str, output: str | None, *, to: str | None = None, pack_files: Iterable[str] = (),
            case_families: Iterable[str] = (), evaluator: str | None = None, **options: Any) -> BuildResult:
    """Build a task family's starter set, validate it, write it atomically (`output=None`: stdout)."""
    if output == STDIO:
        output = None
    index = load_packs(pack_files)
    fmt = output_format(output, to)
    pack, families, left_out = offering(index, family_id, case_families, evaluator)
    values = pack.rows(families, evaluator)
    api.check_written_paths(STDIO, {"-o": output})
    log, rows = FindingLog(), []
    for checked in Validator(source=pack.label, packs=index).check_all(SourceRow(v) for v in values):
        log.add(checked.findings)
        if checked.row is not None:
            rows.append(checked.row)
    loss = LossReport(fmt, output)
    if not log.error_count:
        loss = api.write(rows, output, fmt, **options)
    return BuildResult(pack.id, pack.label, output, fmt, [f.id for f in families], len(values),
                       count_starters(rows), log, loss, left_out)


def count_starters(rows: Iterable[Row]) -> int:
    return sum(1 for r in rows if r.case.get("provenance") in STARTER_PROVENANCES)

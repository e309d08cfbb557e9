"""A pack file someone wrote (`--pack FILE`): read, and each starter row checked as a canonical
row by the validator (which itself knows the built-in packs, so this is not in `pack`)."""
from __future__ import annotations

from typing import Iterator

from .errors import EvalconvError
from .pack import Pack, PackIndex, parse_pack
from .source import SourceRow
from .validator import Validator


def load_pack(path: str) -> Pack:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as err:
        raise EvalconvError(f"cannot read the pack: {err.strerror or err}", source=path) from None
    return parse_pack(raw, source=path, origin=path, check_rows=starter_row_problems)


def starter_row_problems(pack: Pack) -> Iterator[tuple[str, str]]:
    """Each starter row must make a valid canonical row (the evaluators allowed differ only in name)."""
    checker = Validator(packs=PackIndex((pack,)))
    for i, fam in enumerate(pack.case_families):
        for j, row in enumerate(pack.rows([fam])):
            for finding in checker.check(SourceRow(row)).errors:
                yield (f"$.caseFamilies[{i}].rows[{j}]",
                       f"the starter row does not make a valid row: {finding.path}: {finding.message}")

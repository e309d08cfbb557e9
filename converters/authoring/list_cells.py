"""`evalconv import --list-sep`: how the cells of a team's sheet split into lists.

Without the flag a list field's cell (`case.unacceptableBehavior`, `case.evaluationCriteria`,
`case.linkedConcerns`, `metadata.tags`, and `expected` on an acceptable-set row) splits at `|` as
the canonical CSV writes it (`\\|` a literal pipe), else one item a line. `--list-sep SEP` splits
every such cell at SEP instead; `--list-sep COLUMN=SEP` splits one sheet column at SEP, and makes
that column a list whatever field it goes to (an `expected` column: on acceptable-set rows only,
where expected is a set). Items are trimmed, blank items left out. What was split, and the cells
that look like lists the flag would split, are counted for the import's summary.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..canonical.csv_format import split_list
from ..canonical.errors import UsageError

WORDS = {"semicolon": ";", "comma": ",", "pipe": "|", "tab": "\t", "\\t": "\t", "newline": "\n", "\\n": "\n"}
LOOKS_LISTED = ";"  # a one-item list cell holding it is probably a list written another way


def _separator(text: str, spec: str) -> str:
    sep = WORDS.get(text.lower(), text)
    if not sep or sep.isspace() and sep not in "\t\n":
        raise UsageError(f"--list-sep '{spec}': a separator is a character or a word "
                         f"({', '.join(sorted(WORDS))}), not blank")
    return sep


def shown(sep: str) -> str:
    return {"\t": "tab", "\n": "newline"}.get(sep, sep)


@dataclass
class ListSeps:
    every: str | None = None  # for every list field
    columns: dict[str, str] = field(default_factory=dict)  # sheet column -> its separator

    def of(self, column: str, is_list: bool) -> str | None:
        """The separator a column's cells split at (None: the default, `|` else lines, or not a list)."""
        if column in self.columns:
            return self.columns[column]
        return self.every if is_list else None


def parse(specs: tuple[str, ...] | list[str], columns: list[str]) -> ListSeps:
    """`SEP` (one for every list field) or `COLUMN=SEP` (one column), each at most once."""
    seps = ListSeps()
    known = set(columns)
    for spec in specs:
        column, eq, sep = spec.rpartition("=")
        if eq and column:
            if column not in known:
                from ..canonical.suggest import did_you_mean

                raise UsageError(f"--list-sep '{spec}': the sheet has no column '{column}'"
                                 f"{did_you_mean(column, sorted(known))}")
            if column in seps.columns:
                raise UsageError(f"--list-sep: column '{column}' is given twice")
            seps.columns[column] = _separator(sep, spec)
            continue
        if seps.every is not None:
            raise UsageError(f"--list-sep '{spec}': one separator for every list field is given already "
                             f"('{shown(seps.every)}'); name a column for another (COLUMN=SEP)")
        seps.every = _separator(spec, spec)
    return seps


def split(cell: str, sep: str | None) -> list[str]:
    """A list cell's items: at `sep`, else at `|` (with its escapes) or, with no `|`, a line each."""
    if sep is None:
        items = split_list(cell) if "|" in cell else cell.splitlines()
    elif sep == "|":
        items = split_list(cell)
    else:
        items = cell.split(sep)
    return [item.strip() for item in items if item.strip()]


@dataclass
class ListTally:
    """Per sheet column: cells split by --list-sep, and one-item cells that look like lists."""
    split: dict[str, int] = field(default_factory=dict)
    looks_listed: dict[str, int] = field(default_factory=dict)

    def add(self, column: str, cell: str, sep: str | None, items: list[str]) -> None:
        if sep is not None:
            if len(items) > 1:
                self.split[column] = self.split.get(column, 0) + 1
        elif len(items) == 1 and LOOKS_LISTED in items[0]:
            self.looks_listed[column] = self.looks_listed.get(column, 0) + 1

    def lines(self, seps: ListSeps) -> list[str]:
        from ..canonical.suggest import count

        out = [f"  lists: {column} split at '{shown(seps.of(column, True) or '|')}' in {count(n, 'cell')}"
               for column, n in self.split.items()]
        out += [f"  hint: {count(n, 'cell')} of {column} {'holds' if n == 1 else 'hold'} '{LOOKS_LISTED}' but "
                f"{'was' if n == 1 else 'were'} read as one item (a list cell splits at '|'): if "
                f"{'it is a list' if n == 1 else 'they are lists'}, import again with --list-sep '{column}={LOOKS_LISTED}'"
                for column, n in self.looks_listed.items()]
        return out

    def to_json(self) -> dict[str, dict[str, int]]:
        return {"split": dict(self.split), "looksListed": dict(self.looks_listed)}

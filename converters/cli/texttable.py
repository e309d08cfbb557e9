"""Aligned plain-text tables: the one printer behind every table the command line shows."""
from __future__ import annotations

from typing import Collection, Sequence


def aligned(rows: Sequence[Sequence[str]], *, widths: Sequence[int] = (), cap: int | None = None,
            cut: str | None = None, right: Collection[int] = (), indent: str = "", gap: str = "  ") -> list[str]:
    """Each row as one line: `indent`, then its cells padded to their column's width with `gap`
    between, trailing spaces dropped. Column i is `widths[i]` wide when given, else as wide as its
    widest cell but at most `cap`. A cell wider than its column runs over, or with `cut` is cut
    to fit, ending in `cut` ("…", or "" for a plain cut). Columns numbered in `right` are
    right-aligned."""
    count = max((len(row) for row in rows), default=0)
    sizes = []
    for i in range(count):
        widest = max((len(row[i]) for row in rows if i < len(row)), default=0)
        sizes.append(widths[i] if i < len(widths) else widest if cap is None else min(widest, cap))

    def fit(cell: str, size: int) -> str:
        return cell if cut is None or len(cell) <= size else cell[:size - len(cut)] + cut

    return [(indent + gap.join(fit(cell, size).rjust(size) if i in right else fit(cell, size).ljust(size)
                               for i, (cell, size) in enumerate(zip(row, sizes)))).rstrip()
            for row in rows]

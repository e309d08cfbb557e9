"""Where two JSON values differ, as `$.paths`, compared type-strictly (`1` is not `1.0`)."""
from __future__ import annotations

from typing import Any, Iterable

from . import paths
from .jsonvalue import same


def diff_paths(a: Any, b: Any, at: str = "$") -> list[str]:
    """The smallest paths at which `a` and `b` differ. A list of another length differs as a whole."""
    if type(a) is not type(b):
        return [at]
    if isinstance(a, dict):
        out = []
        for key in a.keys() | b.keys():
            sub = paths.join(at, key)
            if key not in a or key not in b:
                out.append(sub)
            else:
                out.extend(diff_paths(a[key], b[key], sub))
        return sorted(out)
    if isinstance(a, list):
        if len(a) != len(b):
            return [at]
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in diff_paths(x, y, f"{at}[{i}]")]
    return [] if same(a, b) else [at]


def unexplained(differences: Iterable[str], reported: Iterable[str]) -> tuple[list[str], list[str]]:
    """Differences no reported path covers, and reported paths that show no difference.

    A loss report is exact when both lists are empty.
    """
    differences, reported = list(differences), list(reported)
    extra = [d for d in differences if not any(paths.covers(r, d) or paths.covers(d, r) for r in reported)]
    idle = [r for r in reported if not any(paths.covers(r, d) or paths.covers(d, r) for d in differences)]
    return extra, idle

""""Did you mean": the known name closest to what a person typed."""
from __future__ import annotations

import difflib
from typing import Iterable


def _squash(name: str) -> str:
    """`case.oracle_type`, `Case.OracleType` and `case.oracletype` all look alike."""
    return "".join(ch for ch in name.lower() if ch not in "_- ")


def closest(word: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The known name `word` most likely meant, or None when none is close."""
    ranked = by_closeness(word, known)
    if not ranked:
        return None
    best = ranked[0]
    if _squash(best) == _squash(word):
        return best
    return best if difflib.SequenceMatcher(None, _squash(word), _squash(best)).ratio() >= cutoff else None


def by_closeness(word: str, known: Iterable[str]) -> list[str]:
    """Every known name, the closest to `word` first (ties keep their given order)."""
    names = list(dict.fromkeys(known))
    target = _squash(word)

    def score(name: str) -> float:
        squashed = _squash(name)
        if squashed == target:
            return 2.0
        ratio = difflib.SequenceMatcher(None, target, squashed).ratio()
        return ratio + (0.5 if target and (squashed.startswith(target) or target.startswith(squashed)) else 0)

    return sorted(names, key=lambda name: -score(name))


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """` (did you mean 'x'?)`, or "" when nothing known is close."""
    match = closest(word, known)
    return f" (did you mean '{match}'?)" if match is not None else ""


def count(n: int, noun: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """`1 row`, `2 rows`, `0 errors` (`12,000 rows` when `grouped`): plain English wherever a count is
    printed, the one plural helper of the CLI, the reports and the pages (tests/cli/test_plurals.py)."""
    return (f"{n:,}" if grouped else str(n)) + f" {noun if n == 1 else plural or noun + 's'}"

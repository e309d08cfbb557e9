"""One path syntax everywhere: `$.metadata.case.oracleType`, `$.input[0]`, `$.metadata['a.b']`."""
from __future__ import annotations

import re
from typing import Iterable

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def key_segment(key: str) -> str:
    if _PLAIN_KEY.match(key):
        return f".{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"['{escaped}']"


def join(base: str, *parts: str | int) -> str:
    out = base
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else key_segment(part)
    return out


def to_path(parts: Iterable[str | int]) -> str:
    return join("$", *parts)


_SEGMENT = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")


def parse(path: str) -> list[str | int]:
    """Inverse of `to_path`."""
    if not path.startswith("$"):
        raise ValueError(f"not a path: {path!r}")
    parts: list[str | int] = []
    pos = 1
    while pos < len(path):
        m = _SEGMENT.match(path, pos)
        if not m:
            raise ValueError(f"bad path segment at {pos} in {path!r}")
        if m.group(1) is not None:
            parts.append(m.group(1))
        elif m.group(2) is not None:
            parts.append(int(m.group(2)))
        else:
            parts.append(re.sub(r"\\(.)", r"\1", m.group(3)))
        pos = m.end()
    return parts


def normalize(user_path: str) -> str:
    """`metadata.reason` or `$.metadata.reason` -> `$.metadata.reason` (validated)."""
    path = user_path if user_path.startswith("$") else "$." + user_path
    return to_path(parse(path))


def covers(outer: str, inner: str) -> bool:
    """True when `inner` is `outer` or lies beneath it."""
    if inner == outer:
        return True
    return inner.startswith(outer) and inner[len(outer)] in ".["

"""The one renderer of a field map as a Markdown table, for docs/formats.md and the vendor pages:
generated from the declarations, so the docs and the code cannot drift."""
from __future__ import annotations

from typing import Iterable

from .format import FieldLoss


def field_table(field_map: Iterable[FieldLoss], where: str = "where it goes") -> str:
    """`where` heads the column saying where a field lands (a page may name the vendor's place)."""
    lines = [f"| canonical field | fate | {where} | why |", "|---|---|---|---|"]
    lines += [f"| `{_cell(f.path)}` | {f.fate} | {_cell(f.where)} | {_cell(f.reason)} |" for f in field_map]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")

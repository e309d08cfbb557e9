"""The one renderer of field maps for the docs (canonical/field_table.py)."""
from __future__ import annotations

import re

from conftest import ROOT
from evalconv.canonical.field_table import field_table
from evalconv.canonical.format import FieldLoss
from evalconv.registry import REGISTRY


def test_cells_that_would_break_the_table_are_escaped():
    table = field_table([FieldLoss("$.metadata.a|b", "carried", "x | y", "one\ntwo")], "DeepEval place")
    assert table.splitlines() == ["| canonical field | fate | DeepEval place | why |", "|---|---|---|---|",
                                  "| `$.metadata.a\\|b` | carried | x \\| y | one two |"]


def test_every_vendor_page_holds_its_format_field_map_as_rendered():
    pages = 0
    for fmt in REGISTRY.all():
        page = ROOT / "docs" / "vendors" / f"{fmt.name}.md"
        if not fmt.field_map or not page.exists():
            continue
        text = page.read_text(encoding="utf-8")
        header = re.search(r"^\| canonical field \| fate \| (.+?) \| why \|$", text, re.M)
        assert header, f"{page.name} has no field table"
        assert field_table(fmt.field_map, header.group(1)) in text, f"{page.name}: regenerate its field table"
        pages += 1
    assert pages >= 5

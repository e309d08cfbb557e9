"""The one renderer of field maps for the docs (canonical/field_table.py); tests/formats/test_every_format.py
checks every format's page against it."""
from __future__ import annotations

from evalconv.canonical.field_table import field_table
from evalconv.canonical.format import FieldLoss


def test_cells_that_would_break_the_table_are_escaped():
    table = field_table([FieldLoss("$.metadata.a|b", "carried", "x | y", "one\ntwo")], "DeepEval place")
    assert table.splitlines() == ["| canonical field | fate | DeepEval place | why |", "|---|---|---|---|",
                                  "| `$.metadata.a\\|b` | carried | x \\| y | one two |"]

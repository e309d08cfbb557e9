"""Canonical CSV stays lossless with --excel-safe (that every format, canonical ones included, reads
back what it wrote: tests/test_every_format.py)."""
from __future__ import annotations

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings

from roundtrip_helpers import roundtrip
from strategies import row_sets

def assert_identical(rows, checked):
    assert [c.findings for c in checked if c.row is None] == []
    back = [c.row.to_json() for c in checked]
    want = [r.to_json() for r in rows]
    diff = DeepDiff(want, back, ignore_order=False, ignore_numeric_type_changes=False,
                    ignore_string_type_changes=False)
    assert diff == {}, diff
    assert [r for r in rows] == [c.row for c in checked]  # Row equality is type-strict too


@pytest.mark.parametrize("fmt", ["csv"])
@settings(max_examples=200)
@given(rows=row_sets())
def test_roundtrip_property_excel_safe(fmt, rows):
    text, checked = roundtrip(fmt, rows, excel_safe=True)
    assert_identical(rows, checked)
    import csv
    import io
    for record in list(csv.reader(io.StringIO(text, newline="")))[1:]:
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in record)

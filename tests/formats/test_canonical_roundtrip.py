"""Canonical CSV stays lossless with --excel-safe (that every format, canonical ones included, reads
back what it wrote: tests/formats/test_every_format.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from roundtrip_helpers import assert_identical, roundtrip
from strategies import row_sets


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

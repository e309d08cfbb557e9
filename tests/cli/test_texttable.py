"""The one plain-text table printer every command's table goes through (converters/cli/texttable.py)."""
from __future__ import annotations

from evalconv.cli.texttable import aligned


def test_columns_as_wide_as_their_widest_cell_and_no_trailing_spaces():
    assert aligned([["file", "rows", "status"], ["a.jsonl", "10", "ok"]]) == [
        "file     rows  status",
        "a.jsonl  10    ok"]


def test_right_aligned_columns_a_cap_and_a_marked_cut():
    rows = [["a-long-label", "7", "x"], ["b", "123", ""]]
    assert aligned(rows, right={1}, cap=6, cut="…", indent="  ") == [
        "  a-lon…    7  x",
        "  b       123"]
    assert aligned(rows, cap=6, cut="") == ["a-long  7    x", "b       123"]


def test_given_widths_let_a_longer_cell_run_over_unless_cut():
    rows = [["short", "x"], ["much-longer", "y"]]
    assert aligned(rows, widths=[8], gap=" ") == ["short    x", "much-longer y"]
    assert aligned(rows, widths=[8], gap=" ", cut="…") == ["short    x", "much-lo… y"]


def test_rows_of_different_lengths_and_no_rows():
    assert aligned([["name", "unavailable: boom"], ["csv", "read/write", "loses: nothing"]], widths=[5, 11], gap=" ") == [
        "name  unavailable: boom",
        "csv   read/write  loses: nothing"]
    assert aligned([]) == []

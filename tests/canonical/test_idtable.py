"""The id table behind duplicate-id: exact answers across growth, flat memory."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalconv.canonical.idtable import IdTable


def test_first_use_survives_many_growths():
    table = IdTable(capacity=4)
    for i in range(1, 20_001):
        assert table.first_use(f"cs-{i}", i) == i
    assert len(table) == 20_000
    assert [table.first_use(f"cs-{i}", 99_999) for i in (1, 777, 20_000)] == [1, 777, 20_000]
    assert table.first_use("cs-20001", 20_001) == 20_001


@settings(max_examples=200)
@given(st.lists(st.text(min_size=1, max_size=6), max_size=60))
def test_agrees_with_a_dict(ids):
    table, reference = IdTable(capacity=4), {}
    for row, row_id in enumerate(ids, 1):
        assert table.first_use(row_id, row) == reference.setdefault(row_id, row)


def test_lone_surrogates_and_empty_strings_are_ids_too():
    table = IdTable()
    assert table.first_use("\ud800", 1) == 1 and table.first_use("\ud800", 2) == 1
    assert table.first_use("", 3) == 3


@settings(max_examples=200)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "c"]), st.text(max_size=4)), max_size=80),
       st.integers(min_value=1, max_value=7))
def test_ids_in_batches_agree_with_a_dict(ids, batch):
    bulk, reference = IdTable(capacity=4), {}
    expected = [(i, reference.setdefault(x, i + 1)) for i, x in enumerate(ids) if x is not None]
    expected = [(i, first) for i, first in expected if first != i + 1]
    got = [(start + i, first) for start in range(0, len(ids), batch)
           for i, first in bulk.first_uses(ids[start:start + batch], start + 1)]
    assert got == expected


def test_regression_a_growth_holds_one_table_of_64_twice_not_the_whole_table():
    """At a million ids the table's last growth held the old arrays (16 MB) beside the new ones
    (32 MB) and a zeroed bytes object as large as each new array: the parent's peak memory. Now
    a growth copies one of 64 tables, so the peak is barely above what the table holds."""
    import tracemalloc

    ids = [f"case-{i:06d}" for i in range(100_000)]
    tracemalloc.start()
    try:
        table = IdTable()
        for start in range(0, len(ids), 1000):
            table.first_uses(ids[start:start + 1000], start + 1)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(table) == 100_000
    assert peak - held < held / 8, (held, peak)  # one table of 64 twice, not half the whole again

"""diff's open tables (`lifecycle/table.py`) answer what a dict answers, through every growth."""
from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from evalconv.lifecycle.table import DigestTable, OffsetTable

_KEYS = st.integers(min_value=1, max_value=3000)  # few enough that ids repeat, past every first capacity


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_KEYS, st.integers(0, 2 ** 62)), max_size=2500))
def test_digest_table_keeps_the_first_row_of_each_id_and_saves_and_loads(adds):
    table, first = DigestTable(), {}
    for row, (key, digest) in enumerate(adds):
        assert table.add(key, digest, row) == first.setdefault(key, row)
    assert len(table) == len(first)
    out = io.BytesIO()
    capacity, size = table.save(out)
    loaded = DigestTable.load(io.BytesIO(out.getvalue()), capacity, size)
    for key, row in first.items():
        assert loaded.add(key, 0, -1) == row


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["put", "pop"]), _KEYS, st.integers(0, 2 ** 62)), max_size=2500))
def test_offset_table_puts_replaces_and_pops_as_a_dict_does(calls):
    table, ref = OffsetTable(), {}
    for kind, key, offset in calls:
        if kind == "put":
            table.put(key, offset)
            ref[key] = offset
        else:
            assert table.pop(key) == ref.pop(key, -1)
    assert len(table) == len(ref)
    assert all(table.get(key) == offset for key, offset in ref.items())

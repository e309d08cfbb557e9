"""The report's attempt table: the same answers as a dict of attempt ids, in a few words each."""
from __future__ import annotations

from evalconv.runs.attempt_table import AttemptTable
from evalconv.canonical import runs
from hypothesis import given
from hypothesis import strategies as st

hex_ids = st.text("0123456789abcdef", min_size=20, max_size=20).map(lambda h: f"att-{h}")
other_ids = st.text(max_size=30)  # a store edited by hand: any id at all


@given(st.lists(st.one_of(hex_ids, other_ids), max_size=300), st.lists(st.one_of(hex_ids, other_ids), max_size=50))
def test_it_answers_as_a_dict_does(added, asked):
    table, expected = AttemptTable(), {}
    for attempt_id in added:
        if attempt_id not in expected:
            expected[attempt_id] = table.add(attempt_id)
    assert list(expected.values()) == list(range(len(expected))) and len(table) == len(expected)
    for attempt_id in added + asked:
        assert table.get(attempt_id) == expected.get(attempt_id)
        assert (attempt_id in table) == (attempt_id in expected)


def test_ids_that_share_their_first_64_bits_stay_apart():
    """The slot comes from the first 64 bits; the last 16 still tell the ids apart."""
    table = AttemptTable()
    ids = [f"att-{'0123456789abcdef'}{n:04x}" for n in range(300)]
    numbers = [table.add(i) for i in ids]
    assert [table.get(i) for i in ids] == numbers == list(range(300))
    assert table.get("att-0123456789abcdefffff") is None
    assert table.get("ATT-0123456789ABCDEF0000") is None  # not evalconv's form: looked up as it is


def test_twenty_thousand_real_attempt_ids():
    table = AttemptTable()
    ids = [runs.attempt_id("bench", run, case) for run in range(4) for case in range(5_000)]
    for n, attempt_id in enumerate(ids):
        assert table.add(attempt_id) == n
    assert all(table.get(ids[n]) == n for n in range(0, len(ids), 97))
    assert table.get(runs.attempt_id("bench", 4, 0)) is None

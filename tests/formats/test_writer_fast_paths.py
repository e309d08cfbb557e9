"""Issue 15 (speed): the vendor writers' quick paths answer exactly what the slow ones answer.

A quick look at a value's orjson text decides the usual case (no NaN, no `file://`, no `$ref`);
anything it cannot rule out goes the old way. A uuid5 is built without a UUID object."""
from __future__ import annotations

import math
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalconv.canonical.errors import WriteError
from evalconv.vendors._common import records as rec
from evalconv.vendors.langsmith.format import ID_NAMESPACE, example_id, uuid5
from evalconv.vendors.promptfoo import text

_TEXT = st.one_of(st.sampled_from(["file://x.txt", "$ref", "null", "a file://b", "FILE://x", "é", ""]), st.text(max_size=8))
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=12)


@settings(max_examples=300)
@given(_VALUES)
def test_the_quick_looks_answer_what_the_walks_answer(value):
    assert text.loads_at_load_time(value) == text._loads_at_load_time(value)
    assert text.has_ref_key(value) == text._has_ref_key(value)


def _walk_refuses(value, max_depth):
    """The check as it was: every value visited, with its path."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return True
        if isinstance(item, (dict, list)):
            if max_depth is not None and depth > max_depth:
                return True
            todo.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


@settings(max_examples=300)
@given(_VALUES, st.sampled_from([None, 1, 2, 3]))
def test_check_value_refuses_exactly_what_the_full_walk_refuses(value, max_depth):
    if _walk_refuses(value, max_depth):
        with pytest.raises(WriteError):
            rec.check_value(value, "r1", "$", "Vendor", max_depth)
    else:
        rec.check_value(value, "r1", "$", "Vendor", max_depth)


def test_a_refusal_still_names_the_path():
    with pytest.raises(WriteError) as err:
        rec.check_value({"a": [1, {"b": float("nan")}]}, "r1", "$", "Vendor")
    assert err.value.field == "$.a[1].b"
    with pytest.raises(WriteError) as err:
        rec.check_value({"a": [[1]]}, "r1", "$", "Vendor", max_depth=2)
    assert err.value.field == "$.a[0]"


def _row_with(input_value, expected, metadata):
    from evalconv.canonical.row import Row
    return Row.from_json({"id": "r1", "input": input_value, **({} if expected is ... else {"expected": expected}),
                          "metadata": {"case": {"caseId": "r1", "oracleType": "rubric", "expectedBehavior": "x",
                                                "provenance": "synthetic"}, **metadata}})


def _refusal(check):
    try:
        check()
    except WriteError as err:
        return err.field
    return None


@settings(max_examples=300)
@given(_VALUES, st.one_of(st.just(...), _VALUES), st.dictionaries(_TEXT.filter(lambda k: k != "case"), _VALUES, max_size=3))
def test_check_row_refuses_what_check_value_refuses_of_the_whole_row(input_value, expected, metadata):
    # pydantic-evals' writer looks at the JSON its fingerprints digest, a part at a time, instead of
    # the whole row's: a part that holds null (a null expected, say) was the whole row walked
    row = _row_with(input_value, expected, metadata)
    parts = {key: rec.sorted_json(value) for key, value in row.metadata.items()}
    quick = _refusal(lambda: rec.check_row(row, "Vendor", rec.sorted_json(row.input),
                                           rec.sorted_json(row.expected) if row.has_expected else None, parts))
    whole = _refusal(lambda: rec.check_value(row.to_json(), "r1", "$", "Vendor"))
    assert (quick is None) == (whole is None)


def test_check_row_names_the_part_and_the_path():
    row = _row_with({"a": [1.5, float("inf")]}, None, {"score": {"x": float("nan")}})
    parts = {key: rec.sorted_json(value) for key, value in row.metadata.items()}
    with pytest.raises(WriteError) as err:
        rec.check_row(row, "Vendor", rec.sorted_json(row.input), rec.sorted_json(None), parts)
    assert err.value.field == "$.input.a[1]"
    row = _row_with("q", None, {"score": {"x": float("nan")}})
    with pytest.raises(WriteError) as err:
        rec.check_row(row, "Vendor", rec.sorted_json(row.input), rec.sorted_json(None),
                      {key: rec.sorted_json(value) for key, value in row.metadata.items()})
    assert err.value.field == "$.metadata.score.x"


@settings(max_examples=300)
@given(st.text())
def test_uuid5_is_the_standard_librarys(name):
    assert uuid5(name) == str(uuid.uuid5(ID_NAMESPACE, name))


def test_a_row_id_that_is_a_canonical_uuid_is_kept():
    kept = str(uuid.uuid4())
    assert example_id(kept) == kept
    assert example_id(kept.upper()) == str(uuid.uuid5(ID_NAMESPACE, kept.upper()))  # not canonical form
    assert example_id("{" + kept + "}") == str(uuid.uuid5(ID_NAMESPACE, "{" + kept + "}"))


@pytest.mark.parametrize("counting", [False, True], ids=["ids", "counts"])
def test_carry_all_notes_what_carry_a_field_at_a_time_notes(counting):
    from evalconv.reports import LossReport

    rows = [("r1", [("$.id", "a"), ("$.metadata.x", "b")]), ("r1", [("$.id", "a")]),
            ("r2", [("$.id", "a"), ("$.id", "a"), ("$.metadata.y", "b")])]
    one, bulk = (LossReport.counting("x") if counting else LossReport("x") for _ in range(2))
    for row_id, keys in rows:
        for path, reason in keys:
            one.carry(path, row_id, reason)
        bulk.carry_all(keys, row_id)
    assert bulk.to_json() == one.to_json()


# What a writer notes for one row: carries (one at a time or all at once), drops, notes and
# notices, sometimes under another row's id; fields drawn from a few so that rows share them.
_FIELD = st.sampled_from([("$.id", "a"), ("$.metadata.x", "b"), ("$.metadata.case.rubric", "c"), ("$.input", "d")])
_CALL = st.one_of(
    st.tuples(st.just("carry"), _FIELD), st.tuples(st.just("drop"), _FIELD),
    st.tuples(st.just("carry_all"), st.lists(_FIELD, max_size=4)),
    st.tuples(st.just("note"), st.sampled_from(["n1", "n2"])), st.tuples(st.just("notice"), st.just("t")),
    st.tuples(st.just("notice_row"), st.sampled_from(["t1", "t2"])), st.tuples(st.just("other-row"), _FIELD))
_ROWS = st.lists(st.tuples(st.sampled_from(["r1", "r2", "r3", "r4"]), st.lists(_CALL, max_size=5)), max_size=12)


def _note(report, row_id, call):
    kind, what = call
    if kind in ("carry", "drop"):
        getattr(report, kind)(what[0], row_id, what[1])
    elif kind == "carry_all":
        report.carry_all(what, row_id)
    elif kind == "note":
        report.notes.append(what)
    elif kind == "notice":
        report.notice(what)
    elif kind == "notice_row":
        report.notice_row(what, row_id)
    else:
        report.carry(what[0], "elsewhere", what[1])


@pytest.mark.parametrize("counting", [False, True], ids=["ids", "counts"])
@settings(max_examples=300)
@given(rows=_ROWS, cut=st.integers(min_value=0, max_value=12))
def test_a_workers_recorded_losses_replay_into_the_same_report(counting, rows, cut):
    """The parallel path: a split writer's losses recorded a row at a time in a worker (carried
    fields gathered a key at a time for the chunk), then noted in the parent for two runs of
    rows, give the report the writer would have noted directly."""
    from evalconv.engine.parallel import CleanRows
    from evalconv.engine.split_writers import ReplayWriter
    from evalconv.reports import ChunkLosses, LossRecorder, LossReport

    class Out:
        def write_encoded(self, data):
            pass

    class Keeper:
        joins = None

        def keep(self, kept):
            pass

    direct, replayed = (LossReport.counting("x") if counting else LossReport("x") for _ in range(2))
    recorder, losses, parts = LossRecorder(), ChunkLosses(), []
    for row_id, calls in rows:
        for call in calls:
            _note(direct, row_id, call)
            _note(recorder, row_id, call)
        parts.append((losses.add(len(parts), recorder.take()), None))
    cut = min(cut, len(parts))  # two runs of clean rows, as the parent gets them
    writer = ReplayWriter(Out(), Keeper(), replayed)
    writer.write(CleanRows(cut, b"", parts=parts[:cut], losses=(losses, 0, cut)))
    writer.write(CleanRows(len(parts) - cut, b"", parts=parts[cut:], losses=(losses, cut, len(parts))))
    writer.finish()  # the carried fields of a run are noted when the run ends
    assert replayed.to_json() == direct.to_json()
    assert replayed.notices == direct.notices


_NOTICES = st.lists(st.one_of(st.tuples(st.sampled_from(["t1", "t2", "t3"]), st.sampled_from([f"r{i}" for i in range(14)])),
                              st.tuples(st.just(None), st.sampled_from(["plain", "other"]))), max_size=60)


@settings(max_examples=400)
@given(calls=_NOTICES, cuts=st.lists(st.integers(0, 60), max_size=4))
def test_row_notices_gathered_in_stretches_read_as_noticed_a_row_at_a_time(calls, cuts):
    """The parent gathers a stretch's row notices and writes each notice once (`gathering`): the
    notices, their order, counts and named rows are what a call a row at a time gives, whatever
    the stretches (a text first seen in one, a row noticed twice in a row, more rows than named)."""
    from evalconv.reports import LossReport

    def note(report, notice, row_id):
        if notice is None:
            report.notice(row_id)
        else:
            report.notice_row(notice, row_id)

    direct, gathered = LossReport("x"), LossReport("x")
    for notice, row_id in calls:
        note(direct, notice, row_id)
    bounds = sorted({0, len(calls), *(min(c, len(calls)) for c in cuts)})
    for start, stop in zip(bounds, bounds[1:]):
        with gathered.gathering():
            for notice, row_id in calls[start:stop]:
                note(gathered, notice, row_id)
    assert gathered.notices == direct.notices
    assert gathered._row_notices == direct._row_notices


def _runs_in_by_scan(runs, start, end):
    """`payloads.runs_in` as it was written first: a scan of every run."""
    out = []
    for i, (at, what) in enumerate(runs):
        until = runs[i + 1][0] if i + 1 < len(runs) else None
        if until is not None and until <= start:
            continue
        if at >= end:
            break
        out.append((max(at - start, 0), what))
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=8), st.integers(0, 45), st.integers(0, 45))
def test_runs_in_cuts_the_runs_as_a_scan_of_every_run_does(offsets, a, b):
    """Issue 27 (speed): the runs of a stretch of a chunk are found by bisection (a chunk is cut
    into as many stretches as it has rows with findings); empty runs and a stretch before the
    first run included."""
    from evalconv.engine.payloads import runs_in

    runs = [(at, f"layout{i}") for i, at in enumerate(sorted(offsets))]
    start, end = min(a, b), max(a, b)
    assert runs_in(runs, start, end) == _runs_in_by_scan(runs, start, end)
    assert runs_in(None, start, end) is None


def _notices_as_before(calls):
    """`LossReport.notice_row` as it was: each call names the first ROWS_NAMED rows anew."""
    from evalconv.reports import ROWS_NAMED

    notices, seen = [], {}
    for notice, row_id in calls:
        at, ids, rows = seen.get(notice, (len(notices), [], 0))
        if at == len(notices):
            notices.append(notice)
        elif ids and ids[-1] == row_id:
            continue
        if len(ids) < ROWS_NAMED:
            ids.append(row_id)
        rows += 1
        seen[notice] = (at, ids, rows)
        named = ", ".join(repr(i) for i in ids) + (f" and {rows - len(ids)} more" if rows > len(ids) else "")
        notices[at] = f"{notice} ({rows} {'row' if rows == 1 else 'rows'}: {named})"
    return notices


@settings(max_examples=300)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["r1", "r2", "r'3", "r4"])), max_size=40))
def test_issue29_speed_row_notices_name_their_rows_as_before(calls):
    """The parent notes a row notice for most rows of some sets (pydantic-evals' unacceptable
    behaviour); the names of a notice's first rows are joined once, not for every row."""
    from evalconv.reports import LossReport

    report = LossReport("x")
    for notice, row_id in calls:
        report.notice_row(notice, row_id)
    assert report.notices == _notices_as_before(calls)

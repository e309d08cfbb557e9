"""Issue 29 (speed): the shared YAML emitter (pydantic-evals and promptfoo YAML) tells the strings
it writes as they are with one match (`_PLAIN_AS_IS`) and writes each mapping and sequence in one
loop. Not one byte may change: the emitter as it was is kept in `tests/yaml_emit_reference.py`,
and both must give the same text for any JSON item, and `yaml.dump`'s."""
from __future__ import annotations

import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import yaml_emit_reference as reference
from evalconv.vendors._common import yaml_emit as emit
from evalconv.vendors._common.yaml_emit import DUMPER, YAML_BREAKS, yaml_item

# Strings near every edge of the one-match test: numbers and their look-alikes (ints, floats, dates,
# hex and binary, sexagesimal), the words that resolve to bools and null, indicators, `:` and `#`,
# spaces at the ends, characters libyaml escapes or does not print, and breaks.
_EDGES = ["", "a", "ab", "yes", "Yes!", "No", "none", "nulls", "Nullx", "off", "Off_", "True", "falsey", "FALSE1",
          "y", "n", "on", "ON ", "tone", "open", "~", "~x", "0", "1", "09", "0_1", "123456789012", "1e62b3ee1aac",
          "0b101", "0b2", "0x1F", "0xZZ", "0o17", "017", "1_000", "1e3", "1.5", "1.", ".5", "-1", "+1", "+x",
          "1:20", "190:20:30", "2020-01-01", "2020-1-1 1:2:3", "2020", "12-34", "5 apples", "50% off", "7 x",
          "-", "- a", "-a", "--", "---", "--- x", "...", "..x", ".inf", "?", "? x", "?x", ":", ":x", "a:", "a: b",
          "a:b", "#", "#c", "a #c", "a#c", "'q'", "it's", '"q"', "=", "<<", "<x", "!", "&a", "*a", "%", "@", "`",
          "|", ">", ",", "[x]", "{y}", " lead", "trail ", " ", "a\tb", "\t", "a\nb", "a\x85b", "x\u2028y", "\ufeff",
          "\ufffe", "\x7f", "\x00", "\xa0", "é", "日本", "🙂 x", "x 🙂", "\\", "back\\slash", "{{ name }}"]
_PIECES = st.one_of(st.sampled_from(_EDGES), st.text(max_size=6),
                    st.text(alphabet="0123456789abcdefxob_.:-+# eE", max_size=8))
_TEXT = st.one_of(st.sampled_from(_EDGES), st.text(max_size=30), st.lists(_PIECES, min_size=1, max_size=4).map("".join))
_KEY = _TEXT.filter(lambda t: not any(c in t for c in "\n\r\x85\u2028\u2029"))
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEY, inner, max_size=4),
                     max_leaves=30)


def _plain_dump(item: object) -> str:
    return yaml.dump([item], Dumper=DUMPER, allow_unicode=True, sort_keys=False, width=1_000_000)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(_KEY, _JSON, max_size=6))
def test_issue29_speed_the_emitter_writes_what_it_wrote_before(item):
    assert yaml_item(item) == reference.yaml_item(item) == _plain_dump(item)


@settings(max_examples=1000, deadline=None)
@given(_TEXT)
def test_issue29_speed_a_string_the_one_match_passes_is_one_libyaml_writes_as_it_is(text):
    """The match may send a string written as it is the long way (the old rules), never the reverse."""
    if emit._PLAIN_AS_IS(text):
        assert reference._texts_for(YAML_BREAKS).scalar(text) == text
        assert _plain_dump({"k": text}) == f"- k: {text}\n"


@pytest.mark.parametrize("text", _EDGES)
def test_issue29_speed_each_edge_string_is_written_as_before(text):
    item = {"k": text, "l": [text, {text.replace("\n", " ") or "e": text}]}
    assert yaml_item(item) == reference.yaml_item(item) == _plain_dump(item)


def test_issue29_speed_the_letters_the_match_lets_start_a_string_resolve_only_short_words():
    """`_PLAIN_AS_IS` lets a string of 6 or more characters start with F, N, O, T, Y, f, n, o, t
    or y, because PyYAML's resolvers starting there (bool, null) match words of 5 at most."""
    for first in emit._WORDS_FIRST:
        for _, regexp in yaml.resolver.Resolver.yaml_implicit_resolvers[first]:
            body = re.sub(r"\s", "", regexp.pattern).removeprefix("^(?:").removesuffix(")$")
            words = body.split("|")
            assert all(re.fullmatch(r"[~A-Za-z]{0,5}", w) for w in words), (first, words)


def test_issue29_speed_a_bench_like_case_takes_the_direct_path_and_reads_back(monkeypatch):
    monkeypatch.setattr(emit, "dump_item_by_events", lambda *a: pytest.fail("took the events path"))
    case = {"name": "ticket-carrier-077-0000001",
            "inputs": {"messages": [{"role": "system", "content": "You are Trailhead's support agent."},
                                    {"role": "user", "content": "50% off stove ticket order number"}]},
            "metadata": {"case": {"caseId": "ticket-carrier-077-0000001", "oracleType": "reference-answer",
                                  "evaluationCriteria": ["\U0001F642 pack", "Tent apology back\\slash"],
                                  "escalationExpectation": "Gear tab\there", "passLogic": "Number one\ntwo"},
                         "gate": False, "tags": ["march-incident", "ja"], "n": [1, 2.5, None, True, [], {}],
                         "evalconv": {"sums": {"inputs": "f887e9acca77", "gate": "123456789012", "x": "0944"}}},
            "expected_output": "Missing rain", "evaluators": ["EqualsExpected", {"IsInstance": {
                "type_name": "evalconv: no class has this name", "evaluation_name": "not checked: a person"}}]}
    text = yaml_item(case)
    assert text == reference.yaml_item(case) == _plain_dump(case)
    assert yaml.safe_load(text) == [case]


def _plain(value: object) -> object:
    """`value` with every Reused list a plain list (what yaml.dump is given)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEY, _JSON, max_size=4), st.lists(_JSON, max_size=3), st.integers(0, 2))
def test_a_reused_list_is_written_as_the_same_plain_list_at_any_column(item, shared_items, depth):
    """A Reused list (one object a writer shares between rows) is written from the text kept for
    its column: the same as the list's, wherever it sits, the second time as the first; inside a
    sequence it takes the events path, which writes it as a list too."""
    shared = emit.Reused(shared_items)
    nested: dict = {"evaluators": shared, **item}
    for _ in range(depth):
        nested = {"k": nested, "also": shared}
    wrapped = {"seq": [shared], **nested}
    for value in (nested, nested, wrapped):
        assert yaml_item(value) == _plain_dump(_plain(value))


def test_a_reused_list_cannot_be_changed_in_place():
    shared = emit.Reused(["EqualsExpected"])
    for change in (lambda: shared.append("x"), lambda: shared.extend(["x"]), lambda: shared.__setitem__(0, "x"),
                   lambda: shared.__delitem__(0), lambda: shared.pop(), lambda: shared.clear(), lambda: shared.sort()):
        with pytest.raises(TypeError, match="shared by many rows"):
            change()
    shared_too = shared
    with pytest.raises(TypeError):
        shared_too += ["x"]
    assert shared == ["EqualsExpected"] and list(shared) + ["x"] == ["EqualsExpected", "x"]
    import copy
    import pickle

    for made in (copy.copy(shared), copy.deepcopy(shared), pickle.loads(pickle.dumps(shared))):
        assert type(made) is emit.Reused and made == shared

"""Issue 15 (speed): the promptfoo YAML writer builds YAML events itself instead of going through
PyYAML's representer; the text must be exactly what `yaml.dump` gives, for any JSON value."""
from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evalconv.vendors.promptfoo import format as promptfoo
from evalconv.vendors.promptfoo.emit import dump_item

# Text that exercises YAML's quoting rules: indicators, tags' look-alikes, breaks, spaces, BOM.
_TRICKY = st.sampled_from(["", "yes", "No", "on", "~", "null", "012", "0x1F", "1e3", ".inf", "-.5", "2020-01-01",
                           "=", "<<", "- a", "? x", ": y", "a: b", "#c", "'q'", '"', "\t", " lead", "trail ",
                           "a\x85b", "x\u2028y", "\ufeffbom", "multi\nline\n", "é", "\x00"])
_TEXT = st.one_of(_TRICKY, st.text(max_size=30))
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=25)


def _plain_dump(test: object) -> str:
    return yaml.dump([test], Dumper=promptfoo._FAST_DUMPER, allow_unicode=True, sort_keys=False, width=1_000_000)


@settings(max_examples=300)
@given(st.dictionaries(_TEXT, _JSON, max_size=6))
def test_events_give_the_text_yaml_dump_gives(test):
    assert dump_item(test, promptfoo._FAST_DUMPER, promptfoo._YAML_BREAKS) == _plain_dump(test)


def test_a_value_of_another_type_falls_back_to_yaml_dump():
    test = {"vars": {"when": (1, 2)}}  # a tuple: not a JSON value, still written as yaml.dump would
    assert dump_item(test, promptfoo._FAST_DUMPER, promptfoo._YAML_BREAKS) == _plain_dump(test)

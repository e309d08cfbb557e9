"""Issue 15 (speed): the promptfoo YAML writer writes a test's YAML itself instead of going through
PyYAML; the text must be exactly what `yaml.dump` gives with the writer's (libyaml) dumper, for
any JSON value, on the direct path and on the events path it falls back to."""
from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evalconv.vendors._common import yaml_emit as emit
from evalconv.vendors._common.yaml_emit import DUMPER, YAML_BREAKS, dump_item_by_events, yaml_item

# Text that exercises YAML's quoting rules: indicators, tags' look-alikes, breaks next to spaces
# and quotes, escapes, characters outside the BMP, BOM.
_TRICKY = st.sampled_from(["", "yes", "No", "on", "~", "null", "012", "0x1F", "1e3", ".inf", "-.5", "2020-01-01",
                           "=", "<<", "- a", "-", "-a", "? x", "?", ": y", ":", "a:", "a: b", "a:b", "#c", "a #c",
                           "a#c", "'q'", "it's", '"', "\t", " lead", "trail ", " ", "a\x85b", "x\u2028y", "\ufeffbom",
                           "multi\nline\n", "\n", "\n\nx", "a\n\n\nb", "a \nb", "a\n b", "'\n'", "é", "\x00", "\x7f",
                           "\xa0", "🙂 x", "\ufffe", "---", "--- x", "...", "a,b", "[x]", "{y}", "&a", "*a", "!t",
                           "|", ">", "%", "@", "`", "a\rb", "\x1b", "\\", "back\\slash"])
_PIECES = st.one_of(_TRICKY, st.text(max_size=8))
_TEXT = st.one_of(_TRICKY, st.text(max_size=30), st.lists(_PIECES, min_size=2, max_size=4).map("".join))
_LONG_KEY = st.text(min_size=60, max_size=140)  # multi-byte keys pass 128 bytes sooner


def _json(keys: st.SearchStrategy[str]) -> st.SearchStrategy[object]:
    return st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
                        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
                        max_leaves=25)


# Keys a simple key can hold (libyaml writes a key with a line break as `? key`, a fallback).
_ONE_LINE = _TEXT.filter(lambda t: not any(c in t for c in "\n\r\x85\u2028\u2029"))
_JSON = _json(_ONE_LINE)
_JSON_LONG_KEYS = _json(st.one_of(_TEXT, _LONG_KEY))


def _plain_dump(test: object) -> str:
    return yaml.dump([test], Dumper=DUMPER, allow_unicode=True, sort_keys=False, width=1_000_000)


def _dump(test: object) -> str:
    return yaml_item(test)


@settings(max_examples=400)
@given(st.dictionaries(_ONE_LINE, _JSON, max_size=6))
def test_the_direct_text_is_what_yaml_dump_gives(test):
    assert _dump(test) == _plain_dump(test)


@settings(max_examples=150)
@given(st.dictionaries(st.one_of(_TEXT, _LONG_KEY), _JSON_LONG_KEYS, max_size=6))
def test_the_events_path_gives_the_text_yaml_dump_gives(test):
    assert dump_item_by_events(test, DUMPER, YAML_BREAKS) == _plain_dump(test)


def test_an_ordinary_test_takes_the_direct_path(monkeypatch):
    """Every kind of string and nesting a test holds, written without libyaml (a property that
    only ever compared fallbacks would prove nothing)."""
    test = {"description": "c-1: it's a #1 case: refund", "vars": {"input": "line one\n\nline 'two'\n",
                                                                   "messages": [{"role": "user", "content": "hi 🙂"}]},
            "assert": [{"type": "equals", "value": "- a"}, {"type": "javascript", "value": "x \n y"}],
            "metadata": {"case": {"caseId": "007", "tags": [["a", "yes"], [], {}], "n": [1, -2.5, True, None]},
                         "": "", "evalconv": '{"expectedFrom":0}'}}
    monkeypatch.setattr(emit, "dump_item_by_events", lambda *a: pytest.fail("took the events path"))
    assert _dump(test) == _plain_dump(test)


@pytest.mark.parametrize("test", [
    {"k" * 129: 1},                  # a key over 128 bytes: libyaml writes `? key`
    {"é" * 65: 1},                   # 130 bytes in 65 characters
    {"two\nlines": 1},               # a multi-line key
    {"nel\x85key": 1},
    {"v": "x " * 30_000},            # long enough to be folded at the emitter's width
    {"v": "\U0001F642 " * 60_000},   # escapes count toward the width
    {"v": "ls\u2028raw", "w": 1},    # printable breaks (only when the dumper does not quote them)
    {"v": (1, 2)},                   # not a JSON value: yaml.dump itself
], ids=["long-key", "long-multibyte-key", "multiline-key", "nel-key", "folded", "folded-escapes", "ls", "tuple"])
def test_what_the_direct_path_leaves_to_libyaml_still_gives_yaml_dumps_text(test):
    assert _dump(test) == _plain_dump(test)

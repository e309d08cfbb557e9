"""One promptfoo test as a YAML block-sequence item, fast: the same text `yaml.dump([test])`
gives with the writer's dumper, about twice as fast.

PyYAML's representer and serializer spend most of a row's time in Python: a dispatch per value,
two tag resolutions per scalar. Here the events are built directly from the JSON values a test
holds (str, int, float, bool, None, list, dict), with the implicit-tag flags the serializer
would compute, and handed to the same (C) emitter. Any other type falls back to `yaml.dump`.
"""
from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.events import (DocumentEndEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent, ScalarEvent,
                         SequenceEndEvent, SequenceStartEvent, StreamEndEvent, StreamStartEvent)

_TAG = "tag:yaml.org,2002:"
_STR, _SEQ, _MAP = _TAG + "str", _TAG + "seq", _TAG + "map"
_RESOLVER = yaml.resolver.Resolver()
_REPRESENTER = yaml.representer.SafeRepresenter()
# A plain scalar can only resolve to a non-string tag when it starts with one of these.
_RESOLVING_FIRST = frozenset(k for k in yaml.resolver.Resolver.yaml_implicit_resolvers if k is not None)


class _Unsupported(Exception):
    pass


def dump_item(test: dict[str, Any], dumper: Any, breaks: re.Pattern[str]) -> str:
    """`yaml.dump([test], Dumper=dumper, allow_unicode=True, sort_keys=False, width=1_000_000)`,
    where `dumper` double-quotes strings that `breaks` finds and makes no aliases."""
    events: list[Any] = [StreamStartEvent(), DocumentStartEvent(explicit=False),
                         SequenceStartEvent(None, _SEQ, True, flow_style=False)]
    try:
        _events(test, events, breaks)
    except _Unsupported:
        return yaml.dump([test], Dumper=dumper, allow_unicode=True, sort_keys=False, width=1_000_000)
    events += [SequenceEndEvent(), DocumentEndEvent(explicit=False), StreamEndEvent()]
    return yaml.emit(events, Dumper=dumper, allow_unicode=True, width=1_000_000)


def _events(value: Any, out: list[Any], breaks: re.Pattern[str]) -> None:
    kind = type(value)
    if kind is str:
        plain_is_str = (value and value[0] not in _RESOLVING_FIRST) or _plain_tag(value) == _STR
        out.append(ScalarEvent(None, _STR, (bool(plain_is_str), True), value,
                               style='"' if breaks.search(value) else None))
    elif kind is dict:
        out.append(MappingStartEvent(None, _MAP, True, flow_style=False))
        for key, item in value.items():
            _events(key, out, breaks)
            _events(item, out, breaks)
        out.append(MappingEndEvent())
    elif kind is list:
        out.append(SequenceStartEvent(None, _SEQ, True, flow_style=False))
        for item in value:
            _events(item, out, breaks)
        out.append(SequenceEndEvent())
    elif kind in (bool, int, float) or value is None:
        node = _REPRESENTER.represent_data(value)
        out.append(ScalarEvent(None, node.tag, (node.tag == _plain_tag(node.value), node.tag == _STR),
                               node.value, style=None))
    else:
        raise _Unsupported


def _plain_tag(text: str) -> str:
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))

"""One item of a YAML block sequence (a promptfoo test, a pydantic-evals case), fast: the same
text `yaml.dump([item])` gives with `DUMPER` (libyaml's emitter), written directly.

PyYAML spends most of a row's time in Python (a representer dispatch per value, two tag
resolutions per scalar) and in handing each event to libyaml. An item is JSON values in block
style at a width nobody reaches, so its text follows from a few rules, written here as libyaml
0.2.5 applies them (`yaml_emitter_analyze_scalar`, `select_scalar_style`, the scalar writers):

- a string is written plain when it has no leading or trailing space, no line break, no
  character libyaml escapes, no block indicator (`- `, `: `, ` #`, a leading `#`, `[`, `'`, ...)
  and reads back as a string; otherwise single-quoted (a `'` doubled, a run of n line breaks
  written as n + 1 with the continuation indented), or double-quoted with libyaml's escapes when
  it holds a character libyaml does not print (a control character, one outside the BMP, a BOM),
  a line break next to a space, or a break the dumper asks to quote (NEL, LS, PS);
- a sequence under a mapping key is not indented (`key:` then `- item` at the key's column);
- an empty list or mapping is written in flow style (`[]`, `{}`).

Whatever falls outside those rules (a key too long or multi-line for a simple key, a string long
enough for libyaml to fold, a lone surrogate, a non-JSON value) takes the events path: events
built from the JSON values, with the implicit-tag flags the serializer would compute, handed to
the same C emitter; a non-JSON value goes through `yaml.dump` itself. `tests/formats/test_promptfoo_emit.py`
holds all three to `yaml.dump`'s text.

Speed (issue 29): most strings of an item are written as they are, and one regular-expression
match (`_PLAIN_AS_IS`) tells most of them so; only the others go through the rules above (and are
remembered when short). Each mapping and sequence is written in one loop, with its keys kept as
written at their column. A `Reused` list (one constant object a writer shares between rows, as
the pydantic-evals writer's evaluators) is written once per column and its text kept.
`tests/formats/test_yaml_emit_speed.py` holds the text to the emitter's before this
(`tests/yaml_emit_reference.py`) and to `yaml.dump`.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import yaml
from yaml.events import (DocumentEndEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent, ScalarEvent,
                         SequenceEndEvent, SequenceStartEvent, StreamEndEvent, StreamStartEvent)

_TAG = "tag:yaml.org,2002:"
_STR, _SEQ, _MAP, _FLOAT = _TAG + "str", _TAG + "seq", _TAG + "map", _TAG + "float"
_RESOLVER = yaml.resolver.Resolver()
_REPRESENTER = yaml.representer.SafeRepresenter()
# A plain scalar can only resolve to a non-string tag when it starts with one of these.
_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
_RESOLVING_FIRST = frozenset(k for k in _IMPLICIT if k is not None)
# first character -> the patterns `Resolver.resolve` tries (none apply to any character: None)
_RESOLVERS = None if _IMPLICIT.get(None) or any(tag == _STR for rs in _IMPLICIT.values() for tag, _ in rs) else {
    first: tuple(regexp.match for _, regexp in _IMPLICIT[first]) for first in _RESOLVING_FIRST}

# libyaml's IS_PRINTABLE, less "\n" (a break, escaped in double quotes): what it writes as is.
_PRINTABLE = "\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd"
# The patterns over these ranges take 30 ms to compile, and every command imports this module
# (the registry loads the formats): they are compiled when the first item is written (`_compile`).
_SPECIAL: re.Pattern[str]
_UNUSUAL: re.Pattern[str]
_ESCAPED: re.Pattern[str]
_PLAIN_AS_IS: Callable[[str], object]
_ESCAPES = {"\x00": "\\0", "\x07": "\\a", "\x08": "\\b", "\t": "\\t", "\n": "\\n", "\x0b": "\\v", "\x0c": "\\f",
            "\r": "\\r", "\x1b": "\\e", '"': '\\"', "\\": "\\\\", "\x85": "\\N", "\u2028": "\\L", "\u2029": "\\P"}
_SURROGATE = re.compile("[\ud800-\udfff]")
# What keeps a single-line string out of plain style in block context (libyaml's block_indicators).
_BLOCK_INDICATOR = re.compile(r"\A(?:---|\.\.\.|[#,\[\]{}&*!|>'\"%@`]|[?:-](?: |\Z))|: |:\Z| #")
_INDICATOR_FIRST = frozenset(" #,[]{}&*!|>'\"%@`")  # and a leading space
# A string written as it is, told by one match: printable, one line, no `:` or `#` (so no `: `,
# ` #` or trailing `:`), no trailing space, at most _LONGEST characters, and a first character
# that is no indicator and starts no plain scalar of another type; or one of the letters that
# start only `null`, `No`, `off`, `True`... (5 characters at most) in a string of 6 or more; or a
# digit, with no `.` or `-` after it (no float, no date), not all digits and `_` (an int) and not
# `0x` or `0b` (a hex or binary int).
_WIDE = r"\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"  # printable, not ASCII, not a break
_BODY = r"\x20-\x22\x24-\x39\x3b-\x7e" + _WIDE
_LAST = r"\x21-\x22\x24-\x39\x3b-\x7e" + _WIDE
_NUMBERLESS = r"\x20-\x22\x24-\x2c\x2f-\x39\x3b-\x7e" + _WIDE  # and no `.` or `-`
_NUMBERLESS_LAST = r"\x21-\x22\x24-\x2c\x2f-\x39\x3b-\x7e" + _WIDE
_WORDS_FIRST = "".join(sorted(c for c in _RESOLVING_FIRST if c.isalpha()))  # FNOTYfnoty
_FIRST = "".join(re.escape(c) for c in map(chr, range(0x21, 0x7F))
                 if c not in _INDICATOR_FIRST and c not in "?:-#" and c not in _RESOLVING_FIRST) + _WIDE


def _compile() -> None:
    global _SPECIAL, _UNUSUAL, _ESCAPED, _PLAIN_AS_IS
    _SPECIAL = re.compile(f"[^\n{_PRINTABLE}]")
    _UNUSUAL = re.compile("[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
    _ESCAPED = re.compile(f'[^{_PRINTABLE}]|["\\\\\u2028\u2029]')
    _PLAIN_AS_IS = re.compile(f"[{_FIRST}](?:[{_BODY}]{{0,49998}}[{_LAST}])?"
                              f"|[{_WORDS_FIRST}][{_BODY}]{{4,49997}}[{_LAST}]"
                              f"|(?!0[xb]|[0-9_]*\\Z)[0-9][{_NUMBERLESS}]{{0,49998}}[{_NUMBERLESS_LAST}]").fullmatch


def _ordinary_text() -> str:
    """One line of text libyaml writes as it is: printable, no line break (LS and PS are breaks).
    (Made when needed, as one string: a list of its 63,000 code points held 2.5 MB.)"""
    return "".join(map(chr, (*range(0x20, 0x7F), *range(0xA0, 0x2028), *range(0x202A, 0xD800),
                             *range(0xE000, 0xFEFF), *range(0xFF00, 0xFFFE))))


_BREAK_RUN = re.compile("\n+")
_LINE_BREAK = re.compile("[\n\r\x85\u2028\u2029]")
# Beyond this many characters a line could pass the emitter's width (1,000,000 columns, escapes
# counted) and be folded: such a row takes the events path.
_LONGEST = 50_000
_CACHED_UP_TO = 200  # characters; longer strings are rarely repeated
_CACHE_SIZE = 20_000


class _Unsupported(Exception):
    pass


class _Multiline(str):
    """A single-quoted scalar's text with its line breaks; the continuation indent comes later."""


class Reused(list):
    """A list a writer hands over for row after row, one constant object (the evaluators a plan
    shares): written once per column, its text kept. It cannot be changed in place (its kept text
    would no longer be its own, and every row shares it): copy it first."""

    def _shared(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a Reused list is shared by many rows: copy it (list(...)) to change it")

    def __reduce__(self) -> tuple[Any, ...]:  # a copy or a pickle is made whole, not appended to
        return (Reused, (list(self),))

    append = extend = insert = remove = pop = clear = sort = reverse = _shared
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _shared


class _Dumper(yaml.SafeDumper):
    """Safe YAML whose strings holding YAML line breaks (NEL, LS, PS) are double-quoted, so the
    breaks are written as escapes and read back as the characters they were. No anchors or
    aliases: a value an item holds twice is written out twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


YAML_BREAKS = re.compile("[\x85\u2028\u2029]")


def _represent_str(dumper: yaml.representer.SafeRepresenter, text: str) -> yaml.ScalarNode:
    style = '"' if YAML_BREAKS.search(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(Reused, yaml.representer.SafeRepresenter.represent_list)

if hasattr(yaml, "CSafeDumper"):  # libyaml's emitter: the same YAML, several times faster
    class _CDumper(yaml.CSafeDumper):
        ignore_aliases = _Dumper.ignore_aliases

    _CDumper.add_representer(str, _represent_str)
    _CDumper.add_representer(Reused, yaml.representer.SafeRepresenter.represent_list)
    DUMPER: Any = _CDumper
else:  # pragma: no cover
    DUMPER = _Dumper


def yaml_item(item: Any) -> str:
    """`item` as one item of a block sequence (`- key: ...`): `yaml.dump([item], Dumper=DUMPER,
    allow_unicode=True, sort_keys=False, width=1_000_000)`, byte for byte."""
    return dump_item(item, DUMPER, YAML_BREAKS)


def dump_item(test: Any, dumper: Any, breaks: re.Pattern[str]) -> str:
    """`yaml.dump([test], Dumper=dumper, allow_unicode=True, sort_keys=False, width=1_000_000)`,
    where `dumper` is libyaml's safe dumper that double-quotes strings `breaks` finds and makes
    no aliases."""
    if type(test) is dict:
        out = ["-"]
        try:
            if test:
                _mapping(test, 2, True, out, _texts_for(breaks))
            else:
                out.append(" {}")
        except _Unsupported:
            pass
        else:
            out.append("\n")
            return "".join(out)
    return dump_item_by_events(test, dumper, breaks)


def _never(text: str) -> None:
    return None


class _Texts:
    """Scalars as they are written, each with the space before it; keys with the line break and
    indent before them and their colon, by column. Most strings are written as they are, which
    one match tells (`plain`); the others are remembered when short (keys, evaluator names with a
    colon, numbers' look-alikes), bounded so that memory stays flat."""

    def __init__(self, breaks: re.Pattern[str]) -> None:
        self.breaks = breaks
        self.values: dict[str, str] = {}
        self.columns: dict[int, dict[str, str]] = {}
        self.reused: dict[tuple[int, int], tuple[Reused, str]] = {}  # (id, column) -> (the list, its text)
        # The quick tests below assume that `breaks` finds nothing in a line of printable text.
        self.quick = not breaks.search(_ordinary_text())
        self.plain: Callable[[str], object] = _PLAIN_AS_IS if self.quick else _never

    def value(self, text: str, indent: int) -> str:
        """" " + `text` as written at `indent` (where a multi-line scalar's continuation lines
        start), for a string `plain` does not pass."""
        found = self.scalar(text)
        if type(found) is _Multiline:
            return " " + _BREAK_RUN.sub(lambda m: "\n" * (len(m.group()) + 1) + " " * indent, found)
        found = " " + found
        if len(text) <= _CACHED_UP_TO:
            if len(self.values) >= _CACHE_SIZE:
                self.values.clear()
            self.values[text] = found
        return found

    def column(self, col: int) -> dict[str, str]:
        return self.columns.setdefault(col, {})

    def key(self, text: Any, col: int) -> str:
        """`text` as a key at column `col`, after the line break that starts its line."""
        # libyaml writes a multi-line key or one over 128 bytes as a complex key (`? key`).
        if type(text) is not str or _LINE_BREAK.search(text) or len(text.encode("utf-8", "surrogatepass")) > 128:
            raise _Unsupported
        found = "\n" + " " * col + self.scalar(text) + ":"
        keys = self.columns[col]
        if len(keys) >= _CACHE_SIZE:
            keys.clear()
        keys[text] = found
        return found

    def reused_text(self, value: Reused, col: int) -> str:
        """A Reused list's lines under a key at column `col` (" []" when empty), kept."""
        found = self.reused.get((id(value), col))
        if found is not None and found[0] is value:
            return found[1]
        out: list[str] = []
        if value:
            _sequence(value, col, False, out, self)
        text = "".join(out) or " []"
        if len(self.reused) >= _CACHE_SIZE:
            self.reused.clear()
        self.reused[(id(value), col)] = (value, text)  # the list kept alive: its id stays its own
        return text

    def scalar(self, text: str) -> str:
        """A string as libyaml writes it in block context (a `_Multiline` when it spans lines)."""
        if self.quick and text and len(text) <= _LONGEST and _plain(text):
            return text
        return _scalar(text, self.breaks)


_TEXTS: dict[re.Pattern[str], _Texts] = {}


def _texts_for(breaks: re.Pattern[str]) -> _Texts:
    texts = _TEXTS.get(breaks)
    if texts is None:
        if not _TEXTS:
            _compile()
        texts = _TEXTS[breaks] = _Texts(breaks)
    return texts


def _mapping(value: dict[Any, Any], col: int, dash: bool, out: list[str], texts: _Texts) -> None:
    """A mapping (not empty) with its keys at column `col`, the first right after a `-` when
    `dash`. Strings, most of an item, are written in the loop without a call."""
    keys = texts.columns.get(col) or texts.column(col)
    values, plain, append = texts.values, texts.plain, out.append
    start = len(out)
    for key, item in value.items():
        line = keys.get(key) or texts.key(key, col)
        kind = type(item)
        if kind is str:
            text = " " + item if plain(item) else values.get(item) or texts.value(item, col + 2)
            append(line + text)
        elif kind is dict:
            append(line)
            if item:
                _mapping(item, col + 2, False, out, texts)
            else:
                append(" {}")
        elif kind is list:
            append(line)  # under a key, a sequence is not indented
            if item:
                _sequence(item, col, False, out, texts)
            else:
                append(" []")
        elif kind is bool:
            append(line + (" true" if item else " false"))
        elif kind is Reused:
            append(line + texts.reused_text(item, col))
        else:
            append(line + _other(item))
    if dash:  # the first key goes on the dash's line
        out[start] = " " + out[start][col + 1:]


def _sequence(value: list[Any], col: int, dash: bool, out: list[str], texts: _Texts) -> None:
    """A sequence (not empty) with its dashes at column `col`, the first right after a `-` when `dash`."""
    between = "\n" + " " * col + "-"
    values, plain, append = texts.values, texts.plain, out.append
    start = len(out)
    for item in value:
        kind = type(item)
        if kind is str:
            text = " " + item if plain(item) else values.get(item) or texts.value(item, col + 2)
            append(between + text)
        elif kind is dict:
            append(between)
            if item:
                _mapping(item, col + 2, True, out, texts)
            else:
                append(" {}")
        elif kind is list:
            append(between)
            if item:
                _sequence(item, col + 2, True, out, texts)
            else:
                append(" []")
        else:
            append(between + _other(item))
    if dash:  # the first item goes on the dash's line
        out[start] = " -" + out[start][col + 2:]


def _other(value: Any) -> str:
    """A scalar that is not a string, with the space before it."""
    kind = type(value)
    if kind is bool:
        return " true" if value else " false"
    if value is None:
        return " null"
    if kind is int:
        return " " + str(value)
    if kind is float:
        text = _REPRESENTER.represent_float(value).value
        if _plain_tag(text) != _FLOAT:
            raise _Unsupported
        return " " + text
    raise _Unsupported


def _scalar(text: str, breaks: re.Pattern[str]) -> str:
    """`_Texts.scalar` for any string."""
    if len(text) > _LONGEST:
        raise _Unsupported
    if breaks.search(text) or _SPECIAL.search(text):
        if _SURROGATE.search(text):  # not UTF-8: let the events path fail as it does
            raise _Unsupported
        return _double_quoted(text)
    if "\u2028" in text or "\u2029" in text:  # printable breaks libyaml writes raw: rare, left to it
        raise _Unsupported
    if "\n" in text:
        if " \n" in text or "\n " in text:
            return _double_quoted(text)
        return _Multiline("'" + text.replace("'", "''") + "'")
    if text and text[0] != " " and text[-1] != " " and not _BLOCK_INDICATOR.search(text) and _plain_is_str(text):
        return text  # (printable: `_plain` answers the same, faster)
    return "'" + text.replace("'", "''") + "'"


def _plain(text: str) -> bool:
    """Does libyaml write `text` (one line, not empty, not in `breaks`) plain? The same answer as
    `_BLOCK_INDICATOR` and `_UNUSUAL`, several times faster on ordinary text."""
    if text.isascii():
        if not text.isprintable():
            return False
    elif _UNUSUAL.search(text):
        return False
    first, last = text[0], text[-1]
    if first in _INDICATOR_FIRST or last == " " or last == ":" or ": " in text or " #" in text:
        return False
    if first in "?:-" and (len(text) == 1 or text[1] == " "):
        return False
    if (first == "-" or first == ".") and text.startswith(("---", "...")):
        return False
    return first not in _RESOLVING_FIRST or _plain_is_str(text)


def _plain_is_str(text: str) -> bool:
    """Does `text` (not empty), written plain, read back as a string (not a number, bool, null...)?"""
    if _RESOLVERS is None:
        return _plain_tag(text) == _STR
    matchers = _RESOLVERS.get(text[0])
    if matchers is None:
        return True
    for match in matchers:
        if match(text):
            return False
    return True


def _double_quoted(text: str) -> str:
    return '"' + _ESCAPED.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    known = _ESCAPES.get(char)
    if known is not None:
        return known
    code = ord(char)
    return f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def dump_item_by_events(test: Any, dumper: Any, breaks: re.Pattern[str]) -> str:
    """The same text through libyaml: events built from the JSON values; any other type through
    `yaml.dump`."""
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
    elif kind is list or kind is Reused:
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

"""Text rules promptfoo imposes on the values it loads, checked against promptfoo 0.121.20.

- Top-level strings in `vars` and in assertion values are Nunjucks templates: `{{`, `{%` and `{#`
  are live (an unbalanced `{{` is a render error), so such text is spelled (`spell`) in both.
- A string var is changed before it reaches the prompt: one trailing newline is cut, the first
  `{{ w }}` is replaced textually by var `w` when `w` is defined (inside a raw block too), and a
  var that mentions a variable the test does not define is not rendered at all. `spell` writes
  var text none of these rules can touch (promptfoo's `renderPrompt`, text prompts; JSON prompts
  render differently); tests/vendors/test_promptfoo_exact_input.py checks it with promptfoo.
- An assertion string beginning with `package:` is loaded as a package.
- A string beginning with `file://` is loaded as a file (anywhere outside `vars` at load time,
  top-level vars at render time), and a `$ref` key is dereferenced anywhere in a test. Both make
  promptfoo fail when the file or target does not exist, and neither has an escape, so such
  values are never written where promptfoo looks (raw-wrapping a top-level string hides it).
"""
from __future__ import annotations

import re
from typing import Any

import orjson

RAW_OPEN, RAW_CLOSE = "{% raw %}", "{% endraw %}"
_TEMPLATE = re.compile(r"\{[{%#]")
_RAW_TAG = re.compile(r"\{%-?\s*(end)?(raw|verbatim)\s*-?%\}")
FILE_PREFIX = "file://"
_LOADED_PREFIXES = (FILE_PREFIX, "package:")
_RESOLVED = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_TEMPLATE_VARIABLES = re.compile(r"\{\{\s*([^{}\s|]+)\s*(?:\|[^}]+)?\}\}|\{%\s*(?:if|for)\s+([^{}\s]+)\s*.*?%\}")
_FOR_LOOP = re.compile(r"\{%\s*for\s+(\w+)\s+in\s+(\w+)\s*%\}")
_COMMENT = re.compile(r"\{#[\s\S]*?#\}")
_ROOT_NAME = re.compile(r"[A-Za-z_]\w*")


def needs_escape(text: str) -> bool:
    return bool(_TEMPLATE.search(text)) or text.startswith(_LOADED_PREFIXES)


def escape(text: str) -> str:
    """An assertion string that renders to `text` (the caller's round trip confirms it): spelled as
    var text is, since a plain raw wrapper is ended early by an `{% endraw %}` inside the text
    (`{% raw %}{% endraw %}{{ 7*7 }}` renders to `49`)."""
    return spell(text) if needs_escape(text) else text


def _template_variables(text: str) -> set[str]:
    """promptfoo's `extractVariablesFromTemplate`."""
    text = _COMMENT.sub("", text)
    found = {m.group(1) or m.group(2) for m in _TEMPLATE_VARIABLES.finditer(text)} - {None, ""}
    for m in _FOR_LOOP.finditer(text):
        found.discard(m.group(1))
        found.add(m.group(2))
    return found


def _references_undefined(text: str, defined: set[str]) -> bool:
    roots = (_ROOT_NAME.match(name) for name in _template_variables(text))
    return any(r and r.group(0) != "env" and r.group(0) not in defined for r in roots)


def var_text(text: str, defined: set[str]) -> tuple[str, bool]:
    """(the var value to write, whether promptfoo renders it back to exactly `text`)."""
    value = spell(text) if needs_escape(text) or text.endswith("\n") else text
    exact = (unescape(value) == text and not value.startswith(_LOADED_PREFIXES) and not value.endswith("\n")
             and not any(m.group(1) in defined for m in _RESOLVED.finditer(value))
             and (value == text or not _references_undefined(value, defined)))
    return value, exact


# `{{` and `{%` outside raw blocks, as Nunjucks string expressions.
_LITERALS = {"{{": '{{ "{{" }}', "{%": '{{ "{%" }}'}
_OPENERS = re.compile(r"\{\{|\{%")
_SPELLING = re.compile(r'\{% raw %\}(.*?)\{% endraw %\}|\{\{ "(\{\{|\{%)" \}\}', re.S)


def spell(text: str) -> str:
    """A var value promptfoo renders to exactly `text`. Text runs go in `{% raw %}` blocks and every
    `{{` / `{%` becomes a string expression outside them, so no `{{ name }}` is left for promptfoo's
    textual var substitution (`resolveVariables`), no `{% endraw %}` can be forged, and the value
    never ends in a newline (which promptfoo cuts) or starts with `file://` / `package:`."""
    parts, pos = [], 0
    for match in _OPENERS.finditer(text):
        if match.start() > pos:
            parts.append(RAW_OPEN + text[pos:match.start()] + RAW_CLOSE)
        parts.append(_LITERALS[match.group()])
        pos = match.end()
    if pos < len(text) or not any(p.startswith(RAW_OPEN) for p in parts):
        parts.append(RAW_OPEN + text[pos:] + RAW_CLOSE)  # a raw block stops promptfoo auto-wrapping it
    return "".join(parts)


def unescape(text: str) -> str:
    """What a template string renders to, when it is spelled the way evalconv spells text (raw
    blocks and `{{ "{{" }}` / `{{ "{%" }}`); any other string stays as it is."""
    out, pos = [], 0
    for match in _SPELLING.finditer(text):
        if match.start() != pos or (match.group(1) is not None and _RAW_TAG.search(match.group(1))):
            return text
        out.append(match.group(2) or match.group(1) or "")
        pos = match.end()
    return "".join(out) if pos == len(text) and pos else text


def unescape_top(value: Any) -> Any:
    return unescape(value) if isinstance(value, str) else value


def loads_at_load_time(value: Any) -> bool:
    """Would promptfoo try to load or dereference something inside `value` (outside vars)?"""
    if (type(value) is dict or type(value) is list) and not _may_hold(value, (b"file://", b'"$ref"')):
        return False
    return _loads_at_load_time(value)


def _loads_at_load_time(value: Any) -> bool:
    if isinstance(value, str):
        return value.startswith(FILE_PREFIX)
    if isinstance(value, dict):
        return any(k == "$ref" or _loads_at_load_time(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_loads_at_load_time(v) for v in value)
    return False


def has_ref_key(value: Any) -> bool:
    if (type(value) is dict or type(value) is list) and not _may_hold(value, (b'"$ref"',)):
        return False
    return _has_ref_key(value)


def _may_hold(value: Any, needles: tuple[bytes, ...]) -> bool:
    """A quick look at `value`'s JSON text (orjson writes `/`, `$` and non-ASCII as they are):
    when no needle is in it, no string or key in `value` holds one (False is exact; True means
    look closer)."""
    try:
        text = orjson.dumps(value)
    except TypeError:  # an integer beyond 64 bits, deep nesting
        return True
    return any(needle in text for needle in needles)


def _has_ref_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k == "$ref" or _has_ref_key(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_ref_key(v) for v in value)
    return False

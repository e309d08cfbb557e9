"""Text rules promptfoo imposes on the values it loads, checked against promptfoo 0.121.20.

- Top-level strings in `vars` and in assertion values are Nunjucks templates: `{{`, `{%` and `{#`
  are live (an unbalanced `{{` is a render error), so such text is wrapped in `{% raw %}`.
- A string beginning with `file://` is loaded as a file (anywhere outside `vars` at load time,
  top-level vars at render time), and a `$ref` key is dereferenced anywhere in a test. Both make
  promptfoo fail when the file or target does not exist, and neither has an escape, so such
  values are never written where promptfoo looks (raw-wrapping a top-level string hides it).
"""
from __future__ import annotations

import re
from typing import Any

RAW_OPEN, RAW_CLOSE = "{% raw %}", "{% endraw %}"
_TEMPLATE = re.compile(r"\{[{%#]")
_RAW_TAG = re.compile(r"\{%-?\s*(end)?(raw|verbatim)\s*-?%\}")
FILE_PREFIX = "file://"


def escape(text: str) -> str:
    """`text` as a template that renders to itself, when the caller's round trip confirms it."""
    if _TEMPLATE.search(text) or text.startswith(FILE_PREFIX):
        return RAW_OPEN + text + RAW_CLOSE
    return text


def unescape(text: str) -> str:
    """What a template string renders to, for the one escape evalconv writes; others stay as is."""
    if text.startswith(RAW_OPEN) and text.endswith(RAW_CLOSE) and len(text) >= len(RAW_OPEN + RAW_CLOSE):
        inner = text[len(RAW_OPEN):-len(RAW_CLOSE)]
        if not _RAW_TAG.search(inner):
            return inner
    return text


def unescape_top(value: Any) -> Any:
    return unescape(value) if isinstance(value, str) else value


def loads_at_load_time(value: Any) -> bool:
    """Would promptfoo try to load or dereference something inside `value` (outside vars)?"""
    if isinstance(value, str):
        return value.startswith(FILE_PREFIX)
    if isinstance(value, dict):
        return any(k == "$ref" or loads_at_load_time(v) for k, v in value.items())
    if isinstance(value, list):
        return any(loads_at_load_time(v) for v in value)
    return False


def has_ref_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k == "$ref" or has_ref_key(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_ref_key(v) for v in value)
    return False

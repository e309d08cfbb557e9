"""Strict JSON in and out: `1` stays `1`, `1.0` stays `1.0`, big integers survive, NaN is refused.

orjson is the fast path; the standard library takes over for what orjson refuses
(integers beyond 64 bits) so that no valid JSON value is lost.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from .paths import to_path


class JSONValueError(ValueError):
    """Not strict JSON; `str(err)` is a short message with the position when known.
    `pos` is the index in the text where decoding failed, when known."""

    def __init__(self, message: str, *, pos: int | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.pos = pos
        self.detail = detail or message  # the message without a position


def _refuse_constant(name: str) -> Any:
    raise JSONValueError(f"{name} is not valid JSON (use a string or null)")


def _strict_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JSONValueError(f"number {text} is too large for a float")
    return value


_decoder = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_strict_float)

# Deeper values parse, but writers (the stdlib encoder, YAML emitters) run out of stack on
# them; real golden sets nest a dozen levels at most.
MAX_DEPTH = 200
# An escaped lone surrogate (`"\ud800"`) is valid JSON text but no Unicode string: it cannot
# be written as UTF-8. orjson refuses it; the standard library, our fallback, does not.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


# orjson reads integers beyond 64 bits as floats, silently; 19 digits in a row may be one.
# For bytes, one translate maps every digit to "0", "[" and "{" to "[" and the rest to " ": 19
# zeros in a row may be such an integer, and more than MAX_DEPTH "[" may be nesting too deep.
# Far faster than a regex, and one pass over the line instead of three.
_LONG_DIGITS_STR = re.compile(r"\d{19}")
_SHAPE = bytes(48 if 48 <= i <= 57 else 91 if i in (91, 123) else 32 for i in range(256))
_NINETEEN_ZEROS = b"0" * 19


def loads(text: str | bytes) -> Any:
    if isinstance(text, bytes):
        shape = text.translate(_SHAPE)
        if _NINETEEN_ZEROS not in shape:
            try:
                value = orjson.loads(text)
            except orjson.JSONDecodeError:
                pass
            else:
                if shape.count(b"[") > MAX_DEPTH:
                    _walk(value, check_strings=False)
                return value
        text = text.decode("utf-8")
    elif _LONG_DIGITS_STR.search(text) is None:
        try:
            return _checked(orjson.loads(text), text, 0, len(text), stdlib=False)
        except orjson.JSONDecodeError:
            pass
    try:
        return _checked(_decoder.decode(text), text, 0, len(text), stdlib=True)
    except JSONValueError:
        raise
    except json.JSONDecodeError as err:
        raise JSONValueError(_where(err)) from None
    except RecursionError:
        raise JSONValueError(f"nesting is too deep (more than {MAX_DEPTH} levels)") from None


def raw_decode(text: str, pos: int) -> tuple[Any, int]:
    """Decode one value starting at `pos`; returns it and the index after it."""
    try:
        value, end = _decoder.raw_decode(text, pos)
    except JSONValueError:
        raise
    except json.JSONDecodeError as err:
        raise JSONValueError(_where(err), pos=err.pos, detail=err.msg) from None
    except RecursionError:
        raise JSONValueError(f"nesting is too deep (more than {MAX_DEPTH} levels)") from None
    return _checked(value, text, pos, end, stdlib=True), end


def _where(err: json.JSONDecodeError) -> str:
    # Some stdlib messages end in "at" already ("Unterminated string starting at").
    joint = " line" if err.msg.endswith(" at") else " at line"
    return f"{err.msg}{joint} {err.lineno} column {err.colno}"


def _checked(value: Any, text: str, start: int, end: int, *, stdlib: bool) -> Any:
    """Refuse values nested deeper than MAX_DEPTH, and strings holding a lone surrogate.
    Both checks walk the value only when the text makes them possible, so a row pays two
    C-speed scans of its text."""
    deep = text.count("[", start, end) + text.count("{", start, end) > MAX_DEPTH
    escapes = stdlib and _SURROGATE_ESCAPE.search(text, start, end) is not None
    if deep or escapes:
        _walk(value, check_strings=escapes)
    return value


def _walk(value: Any, *, check_strings: bool) -> None:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > MAX_DEPTH:
                raise JSONValueError(f"nesting is too deep (more than {MAX_DEPTH} levels)")
            if check_strings:
                for key in item:
                    _refuse_surrogates(key)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            if depth > MAX_DEPTH:
                raise JSONValueError(f"nesting is too deep (more than {MAX_DEPTH} levels)")
            stack.extend((v, depth + 1) for v in item)
        elif check_strings and isinstance(item, str):
            _refuse_surrogates(item)


def value_problem(value: Any) -> tuple[str, str] | None:
    """(`$.path`, message) for the first part of `value` that no writer can put out as strict
    JSON text, or None. For values that did not come through `loads` (YAML, vendor SDKs): nesting
    past MAX_DEPTH, lone surrogates, NaN and infinities, non-string keys, non-JSON types (bytes,
    dates, sets)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        if isinstance(item, (dict, list)) and len(where) >= MAX_DEPTH:
            return to_path(where[:3]), f"nesting is too deep (more than {MAX_DEPTH} levels)"
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return to_path(where), f"a key is {type(key).__name__}, not text"
                if (problem := _text_problem(key)) is not None:
                    return to_path(where), problem
                stack.append((child, (*where, key)))
        elif isinstance(item, list):
            stack.extend((child, (*where, i)) for i, child in enumerate(item))
        elif isinstance(item, str):
            if (problem := _text_problem(item)) is not None:
                return to_path(where), problem
        elif isinstance(item, float):
            if not math.isfinite(item):
                return to_path(where), f"{item} is not valid JSON (use a string or null)"
        elif item is not None and not isinstance(item, (bool, int)):
            return to_path(where), f"a {type(item).__name__} value is not JSON (quote it to keep it as text)"
    return None


def _text_problem(text: str) -> str | None:
    try:
        _refuse_surrogates(text)
    except JSONValueError as err:
        return str(err)
    return None


def _refuse_surrogates(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise JSONValueError(f"a string holds a lone surrogate \\u{ord(text[err.start]):04x} "
                             f"(not a Unicode character)") from None


def dumps(value: Any, *, indent: bool = False) -> str:
    """Compact (or 2-space indented) JSON text, keys in their given order, non-ASCII kept.
    NaN and infinities are refused (orjson would write them as null)."""
    try:
        out = orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0)
    except TypeError:
        pass  # orjson refuses integers beyond 64 bits and deep nesting
    else:
        if b"null" in out:
            _refuse_non_finite(value)
        return out.decode("utf-8")
    try:
        if indent:
            return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as err:
        raise JSONValueError(str(err)) from None
    except RecursionError:
        raise JSONValueError("nesting is too deep") from None


_LEAVES = frozenset({str, int, bool, type(None)})


def _refuse_non_finite(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _LEAVES:  # most values: nothing to look at (exact types first, for speed)
            continue
        if kind is dict or isinstance(item, dict):
            stack.extend(item.values())
        elif kind is list or isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise JSONValueError(f"{item} is not valid JSON (use a string or null)")


def same(a: Any, b: Any) -> bool:
    """Type-strict equality: `1 != 1.0`, `True != 1`, list order matters, key order does not."""
    if a is b:  # the same object is the same value (a NaN too, as below)
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b

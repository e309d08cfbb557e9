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


class JSONValueError(ValueError):
    """Not strict JSON; `str(err)` is a short message with the position when known."""


def _refuse_constant(name: str) -> Any:
    raise JSONValueError(f"{name} is not valid JSON (use a string or null)")


def _strict_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JSONValueError(f"number {text} is too large for a float")
    return value


_decoder = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_strict_float)


# orjson reads integers beyond 64 bits as floats, silently; 19 digits in a row may be one.
_LONG_DIGITS_STR = re.compile(r"\d{19}")
_LONG_DIGITS_BYTES = re.compile(rb"\d{19}")


def loads(text: str | bytes) -> Any:
    long_digits = _LONG_DIGITS_BYTES if isinstance(text, bytes) else _LONG_DIGITS_STR
    if long_digits.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        return _decoder.decode(text)
    except JSONValueError:
        raise
    except json.JSONDecodeError as err:
        raise JSONValueError(f"{err.msg} at line {err.lineno} column {err.colno}") from None
    except RecursionError:
        raise JSONValueError("nesting is too deep") from None


def raw_decode(text: str, pos: int) -> tuple[Any, int]:
    """Decode one value starting at `pos`; returns it and the index after it."""
    try:
        return _decoder.raw_decode(text, pos)
    except JSONValueError:
        raise
    except json.JSONDecodeError as err:
        raise JSONValueError(f"{err.msg} at line {err.lineno} column {err.colno}") from None
    except RecursionError:
        raise JSONValueError("nesting is too deep") from None


def dumps(value: Any, *, indent: bool = False) -> str:
    """Compact (or 2-space indented) JSON text, keys in their given order, non-ASCII kept."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0).decode("utf-8")
    except TypeError:
        pass  # orjson refuses integers beyond 64 bits and deep nesting
    try:
        if indent:
            return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as err:
        raise JSONValueError(str(err)) from None
    except RecursionError:
        raise JSONValueError("nesting is too deep") from None


def same(a: Any, b: Any) -> bool:
    """Type-strict equality: `1 != 1.0`, `True != 1`, list order matters, key order does not."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b

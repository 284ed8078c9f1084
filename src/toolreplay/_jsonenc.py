"""Deterministic JSON text and bytes.

Everything toolreplay sends or derives ids from goes through these two functions, so the bytes are the
same on every run and every machine: compact separators, non-ASCII kept as UTF-8, key order as built
(dicts keep insertion order; the renderers build keys in a fixed order).

orjson produces exactly the bytes of ``json.dumps(v, ensure_ascii=False, separators=(",", ":"))`` for the
values we send (strings, ints within 64 bits, bools, None, lists, dicts with string keys, floats whose
repr has no exponent); a test checks that. Values orjson refuses (integers beyond 64 bits, non-string
keys) go through the standard library. Floats in exponent form are spelled ``1e16`` (orjson), not
``1e+16``: still one fixed spelling, so the bytes stay stable.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_STD = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode(body: Any) -> bytes:
    """The exact bytes sent for a request body (compact, UTF-8, key order as built)."""
    try:
        return orjson.dumps(body)
    except (TypeError, orjson.JSONEncodeError):
        return _STD.encode(body).encode("utf-8")


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (the text form of :func:`encode`)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return _STD.encode(value)


_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def loads(data: str | bytes) -> Any:
    """Parse JSON text exactly: orjson, except where it would lose precision.

    orjson reads integers beyond 64 bits as floats (silently), so text holding a run of 19 or more digits
    goes through the standard library, which keeps every integer exact. Text orjson refuses (e.g. NaN)
    goes there too.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _LONG_DIGITS.search(raw) is None:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw)

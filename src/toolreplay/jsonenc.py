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
import math
import re
import sys
from collections.abc import Iterable
from typing import Any

import orjson

_STD = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class Spliced:
    """A value's exact JSON as pieces (bytes, or views of bytes), for a body's top level: :func:`encode`
    writes them where the value stands, so a long list kept as JSON is copied once, into the body's bytes
    (an ``orjson.Fragment`` is copied into the fragment, then again into the body)."""

    __slots__ = ("parts",)

    def __init__(self, parts: Iterable[bytes | memoryview]) -> None:
        self.parts = tuple(parts)


def encode(body: Any) -> bytes:
    """The exact bytes sent for a request body (compact, UTF-8, key order as built). A top-level value
    may be :class:`Spliced`; a value orjson refuses beside one raises ``TypeError`` (nothing else writes
    the pieces)."""
    if type(body) is dict and any(type(v) is Spliced for v in body.values()):
        return _spliced(body)
    try:
        return orjson.dumps(body)
    except (TypeError, orjson.JSONEncodeError):
        return _STD.encode(body).encode("utf-8")


def _spliced(body: dict[Any, Any]) -> bytes:
    out: list[bytes | memoryview] = [b"{"]
    for k, v in body.items():
        if len(out) > 1:
            out.append(b",")
        out += (orjson.dumps(k), b":")  # a key orjson refuses (not a string) raises TypeError
        if type(v) is Spliced:
            out += v.parts
        else:
            out.append(orjson.dumps(v))
    out.append(b"}")
    return b"".join(out)


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (the text form of :func:`encode`)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return _STD.encode(value)


_LONG_DIGITS = re.compile(rb"[0-9]{19}")
#: Deeper JSON is refused: nothing toolreplay reads is legitimately nested that far, and deeper values
#: would overflow the recursion of the readers and writers that walk them (orjson writes at most 254).
MAX_DEPTH = 200
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def _check_depth(raw: bytes) -> None:
    """ValueError when ``raw`` nests arrays and objects deeper than :data:`MAX_DEPTH` (strings skipped)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return  # too few brackets to be that deep: no scan
    depth = 0
    for m in _TOKENS.finditer(raw):
        c = m.group()
        if c in (b"[", b"{"):
            depth += 1
            if depth > MAX_DEPTH:
                _syntax_error_before(raw, m.start())
                raise ValueError(f"JSON nested more than {MAX_DEPTH} levels deep")
        elif c in (b"]", b"}"):
            depth -= 1


def _syntax_error_before(raw: bytes, at: int) -> None:
    """Raise the reader's own JSONDecodeError when ``raw`` is broken before byte ``at``.

    The depth count sees brackets, not syntax: braces that are never closed (a line cut short and written
    again and again, ``{"type":"user"{"type":"user"...``) count as depth, but what is wrong is the syntax,
    and saying "nested too deep" sent people looking for a nesting that is not there. Only a refused text
    pays for this parse; a real nesting stops the reader's recursion at its own limit (RecursionError).
    """
    try:
        json.loads(raw)
    except json.JSONDecodeError as exc:
        if exc.pos < len(raw[:at].decode("utf-8", "replace")):
            raise
    except (RecursionError, ValueError):
        pass


def scrub(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD.

    JSON may spell half a surrogate pair (``"\\ud800"``); Python reads it into a string that cannot be
    printed, stored or encoded as UTF-8. Valid pairs are joined by the reader before this runs.
    """
    if isinstance(value, str):
        return _LONE.sub(REPLACEMENT, value)
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    return value


def parse(text: str | bytes, **kwargs: Any) -> Any:
    """The standard library's reader within toolreplay's limits: :data:`MAX_DEPTH`, numbers of at most
    4,300 digits, lone surrogates replaced (:func:`scrub`). Each limit is a one-line ValueError;
    ``kwargs`` go to :func:`json.loads` (``parse_constant``); a syntax error is its JSONDecodeError."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    _check_depth(raw)
    try:
        value = json.loads(raw, **kwargs)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ValueError(f"JSON nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        if "digits" in str(exc):  # Python's int-size guard: "Exceeds the limit (4300 digits) ..."
            raise ValueError(f"a number with more than {sys.get_int_max_str_digits()} digits") from None
        raise
    return scrub(value) if _SURROGATE_ESCAPE.search(raw) else value


def loads(data: str | bytes) -> Any:
    """Parse JSON text exactly: orjson, except where it would lose precision; within :func:`parse`'s limits.

    orjson reads integers beyond 64 bits as floats (silently), so text holding a run of 19 or more digits
    goes through the standard library, which keeps every integer exact. Text orjson refuses (e.g. NaN,
    a lone surrogate) goes there too.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _LONG_DIGITS.search(raw) is None:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            _check_depth(raw)
            return value
    return parse(raw)


def finite(value: Any) -> bool:
    """False when ``value`` holds a float JSON cannot carry: NaN or an infinity (``1e999`` reads as one).

    Such a number would be written out as ``null`` (orjson, the store): a value holding one cannot be
    stored, sent or run as it was given."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(finite(v) for v in value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    return True


def loose_text(value: Any) -> str:
    """Compact JSON text of ``value`` with NaN and infinities spelled ``NaN``, ``Infinity`` (not JSON: for
    keeping a value :func:`finite` refused as the text it was, never for sending)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)


def common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix of two encoded bodies (or any byte strings)."""
    lo, hi = 0, min(len(a), len(b))
    # Binary search on slice equality: memcmp speed even for multi-megabyte bodies.
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo

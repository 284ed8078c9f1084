"""Which stored messages render exactly alike: how far an incremental render may reuse what it cached.

Used by :mod:`toolreplay._render_cache`; kept apart because it is about the stored values, not the cache.
"""

from __future__ import annotations

import operator
from dataclasses import fields
from typing import Any

from toolreplay._history import Message, ToolCall


def _strict(a: Any, b: Any) -> bool:
    """Equal and alike in everything that changes bytes: types (``1``, ``1.0``, ``True``) and key order."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_strict(v, b[k]) for k, v in a.items())
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_strict(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


#: Every field but those compared apart below; read as one tuple each (a field added later is included).
_MESSAGE_PLAIN = operator.attrgetter(
    *(f.name for f in fields(Message) if f.name not in ("tool_uses", "provider_data"))
)
_CALL_PLAIN = operator.attrgetter(
    *(f.name for f in fields(ToolCall) if f.name not in ("input", "provider_data"))
)


def same(a: Message, b: Message) -> bool:
    """``b`` renders exactly as ``a`` does. Dataclass equality is not enough: ``{"a": 1, "b": 2}`` equals
    ``{"b": 2, "a": 1}`` and ``1`` equals ``1.0``, yet they are sent as different bytes. A call's input
    is compared by its type and its JSON text (``input_text``, which every wire sends or parses), which is
    also cheaper than comparing the values."""
    if _MESSAGE_PLAIN(a) != _MESSAGE_PLAIN(b) or not _strict(a.provider_data, b.provider_data):
        return False
    ta, tb = a.tool_uses, b.tool_uses
    if ta is tb:
        return True
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb, strict=True):
        if x is y:
            continue
        if _CALL_PLAIN(x) != _CALL_PLAIN(y) or type(x.input) is not type(y.input):
            return False
        if x.provider_data is not y.provider_data and not _strict(x.provider_data, y.provider_data):
            return False
    return True


def first_difference(old: tuple[Message, ...], new: tuple[Message, ...]) -> int:
    """How many leading messages ``old`` and ``new`` share by content (the same object, or one that
    renders exactly alike)."""
    n = min(len(old), len(new))
    try:  # the same objects (a conversation held in memory): one scan at C speed
        first = operator.indexOf(map(operator.is_, old[:n], new[:n]), False)
    except ValueError:
        return n
    for i in range(first, n):
        a, b = old[i], new[i]
        if a is not b and not same(a, b):
            return i
    return n


__all__ = ["first_difference", "same"]

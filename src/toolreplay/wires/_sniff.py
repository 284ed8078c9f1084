"""What the wires' sniffers share: reading the objects inside a body's messages.

Used by each wire's ``detect.py`` (the audit's body detection and ``import --from auto``); nothing
outside ``wires/`` imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Blocks that only Anthropic's Messages API has (a Chat content part is never one of these).
ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking")


def inner(messages: Sequence[Any], key: str) -> list[Mapping[str, Any]]:
    """The objects in each message's ``key`` list (``content`` blocks, ``tool_calls``)."""
    out: list[Mapping[str, Any]] = []
    for m in messages:
        if isinstance(m, Mapping) and isinstance(m.get(key), list):
            out.extend(x for x in m[key] if isinstance(x, Mapping))
    return out


def messages_of(body: Mapping[str, Any], key: str = "messages") -> list[Any] | None:
    """The body's message list, or None when it has none."""
    value = body.get(key)
    return value if isinstance(value, list) else None


__all__ = ["ANTHROPIC_BLOCKS", "inner", "messages_of"]

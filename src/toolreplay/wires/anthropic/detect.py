"""Recognising Anthropic Messages bodies: the audit's sniffing and ``import --from auto``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires._sniff import ANTHROPIC_BLOCKS, inner
from toolreplay.wires.anthropic.render import LIST_KEY


def sniff(body: Mapping[str, Any]) -> float:
    """Anthropic's own blocks, tools with ``input_schema`` or a top-level ``system``: 0.9 (above every
    other ``messages`` wire). Text or image blocks with no tool messages and no ``tool_calls``: 0.5 (Chat
    allows content parts too; with no calls the two read alike, and Ollama's own marks win)."""
    messages = body.get(LIST_KEY)
    if not isinstance(messages, list):
        return 0.0
    kinds = {b.get("type") for b in inner(messages, "content")}
    tools = body.get("tools")
    tool_list: list[Any] = tools if isinstance(tools, list) else []
    if kinds & set(ANTHROPIC_BLOCKS) or "system" in body:
        return 0.9
    if any(isinstance(t, Mapping) and "input_schema" in t for t in tool_list):
        return 0.9
    tool_messages = any(isinstance(m, Mapping) and m.get("role") == "tool" for m in messages)
    if kinds & {"text", "image"} and not tool_messages and not inner(messages, "tool_calls"):
        return 0.5
    return 0.0


def is_element(value: Any) -> bool:
    return isinstance(value, Mapping) and "role" in value


def marks(body: Any, els: Sequence[Any]) -> str | None:
    """Anthropic blocks or a top-level ``system``, and no Chat message (role system/tool, tool_calls)."""
    for i, m in enumerate(els):
        if isinstance(m, Mapping) and (m.get("role") in ("system", "tool") or m.get("tool_calls")):
            return f"messages[{i}] is a Chat message (role {m.get('role')!r} or tool_calls)"
    if isinstance(body, Mapping) and "system" in body:
        return None
    if any(b.get("type") in ANTHROPIC_BLOCKS for b in inner(els, "content")):
        return None
    return "no Anthropic blocks (tool_use, tool_result, thinking) and no top-level 'system'"


__all__ = ["is_element", "marks", "sniff"]

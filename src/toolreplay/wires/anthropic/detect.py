"""Recognising Anthropic Messages bodies: the audit's sniffing and ``import --from auto``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires._sniff import (
    ANTHROPIC_FIELDS,
    BLOCKS,
    OWN,
    anthropic_block,
    chat_marks,
    function_tools,
    inner,
)
from toolreplay.wires.anthropic.render import LIST_KEY

#: The ``thinking`` parameter's types (Chat servers that take a ``thinking`` object, Kimi and GLM among
#: them, use the same words, so the parameter alone is a weak mark; a ``budget_tokens`` is Anthropic's).
_THINKING_TYPES = ("enabled", "disabled", "adaptive")


def _own(body: Mapping[str, Any], messages: Sequence[Any]) -> bool:
    """Marks no other wire's body carries (design 27)."""
    if "system" in body or any(k in body for k in ANTHROPIC_FIELDS):
        return True
    if any(anthropic_block(b) for b in inner(messages, "content")):
        return True
    tools = body.get("tools")
    if isinstance(tools, list) and any(isinstance(t, Mapping) and "input_schema" in t for t in tools):
        return True
    thinking = body.get("thinking")
    return isinstance(thinking, Mapping) and "budget_tokens" in thinking


def _chat_shaped(body: Mapping[str, Any], messages: Sequence[Any]) -> bool:
    """Chat's or Ollama's shapes, which an Anthropic body never has: tool messages, ``tool_calls``,
    function tools, Chat's own marks."""
    if any(isinstance(m, Mapping) and m.get("role") == "tool" for m in messages):
        return True
    return bool(inner(messages, "tool_calls")) or function_tools(body) or chat_marks(body, messages)


def _weak(body: Mapping[str, Any], messages: Sequence[Any]) -> bool:
    kinds = {b.get("type") for b in inner(messages, "content")}
    if kinds & {"text", "image", "document"}:
        return True
    thinking = body.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in _THINKING_TYPES


def sniff(body: Mapping[str, Any]) -> float:
    """Anthropic's own marks (blocks, top-level ``system``, ``input_schema`` tools, a thinking budget,
    Anthropic-only fields): 0.9, above every other ``messages`` wire, whatever else the list holds (the
    API accepts ``role: "system"`` entries inside ``messages``). Else, with nothing of Chat's or Ollama's
    shapes, text/image/document blocks or a ``thinking`` parameter: 0.5 (Chat takes content parts too;
    Chat's and Ollama's own marks win)."""
    messages = body.get(LIST_KEY)
    if not isinstance(messages, list):
        return 0.0
    if _own(body, messages):
        return OWN
    if not _chat_shaped(body, messages) and _weak(body, messages):
        return BLOCKS
    return 0.0


def is_element(value: Any) -> bool:
    return isinstance(value, Mapping) and "role" in value


def marks(body: Any, els: Sequence[Any]) -> str | None:
    """Anthropic's own marks (see :func:`sniff`), for a bare message list or a body."""
    as_body: Mapping[str, Any] = body if isinstance(body, Mapping) else {}
    if _own(as_body, els):
        return None
    return "no Anthropic marks (tool_use, tool_result or thinking blocks, input_schema tools, 'system')"


__all__ = ["is_element", "marks", "sniff"]

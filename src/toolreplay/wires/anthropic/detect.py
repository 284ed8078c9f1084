"""Recognising Anthropic Messages bodies: the audit's sniffing and ``import --from auto``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires._sniff import ANTHROPIC_FIELDS, anthropic_block, chat_marks, function_tools, inner
from toolreplay.wires.anthropic.render import LIST_KEY
from toolreplay.wires.evidence import Evidence, Proof

#: The ``thinking`` parameter's types (Chat servers that take a ``thinking`` object, Kimi and GLM among
#: them, use the same words, so the parameter alone is a weak mark; a ``budget_tokens`` is Anthropic's).
_THINKING_TYPES = ("enabled", "disabled", "adaptive")


def _own(body: Mapping[str, Any], messages: Sequence[Any]) -> str | None:
    """The first mark no other wire's body carries (design 27), named for people, or None."""
    if "system" in body:
        return "a top-level 'system'"
    field = next((k for k in ANTHROPIC_FIELDS if k in body), None)
    if field is not None:
        return f"a {field!r} field"
    block = next((b for b in inner(messages, "content") if anthropic_block(b)), None)
    if block is not None:
        return f"a {block.get('type')!r} block"
    tools = body.get("tools")
    if isinstance(tools, list) and any(isinstance(t, Mapping) and "input_schema" in t for t in tools):
        return "input_schema tools"
    thinking = body.get("thinking")
    return "a thinking budget" if isinstance(thinking, Mapping) and "budget_tokens" in thinking else None


def _chat_shaped(body: Mapping[str, Any], messages: Sequence[Any]) -> bool:
    """Chat's or Ollama's shapes, which an Anthropic body never has: tool messages, ``tool_calls``,
    function tools, Chat's own marks."""
    if any(isinstance(m, Mapping) and m.get("role") == "tool" for m in messages):
        return True
    return (
        bool(inner(messages, "tool_calls")) or function_tools(body) or chat_marks(body, messages) is not None
    )


def _weak(body: Mapping[str, Any], messages: Sequence[Any]) -> str | None:
    kinds = {b.get("type") for b in inner(messages, "content")} & {"text", "image", "document"}
    if kinds:
        return f"{'/'.join(sorted(str(k) for k in kinds))} blocks"
    thinking = body.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") in _THINKING_TYPES:
        return "a 'thinking' parameter"
    return None


#: Anthropic's own marks are blocks and fields no Chat or Ollama server reads: a body carrying them is
#: Anthropic's whatever Chat's or Ollama's marks it also holds (a client's extras).
_RULES_OUT = ("ollama", "openai-chat")


def sniff(body: Mapping[str, Any]) -> Evidence | None:
    """Anthropic's own marks (blocks, top-level ``system``, ``input_schema`` tools, a thinking budget,
    Anthropic-only fields): a mark that rules out Chat and Ollama, whatever else the list holds (the API
    accepts ``role: "system"`` entries inside ``messages``). Else, with nothing of Chat's or Ollama's
    shapes, text/image/document blocks or a ``thinking`` parameter: a habit (Chat takes content parts
    too; Chat's and Ollama's own marks prove more)."""
    messages = body.get(LIST_KEY)
    if not isinstance(messages, list):
        return None
    own = _own(body, messages)
    if own is not None:
        return Evidence(Proof.MARK, (own,), rules_out=_RULES_OUT)
    weak = None if _chat_shaped(body, messages) else _weak(body, messages)
    return None if weak is None else Evidence(Proof.HABIT, (weak,))


def is_element(value: Any) -> bool:
    return isinstance(value, Mapping) and "role" in value


def marks(body: Any, els: Sequence[Any]) -> str | None:
    """Anthropic's own marks (see :func:`sniff`), for a bare message list or a body."""
    as_body: Mapping[str, Any] = body if isinstance(body, Mapping) else {}
    if _own(as_body, els) is not None:
        return None
    return "no Anthropic marks (tool_use, tool_result or thinking blocks, input_schema tools, 'system')"


__all__ = ["is_element", "marks", "sniff"]

"""Recognising Ollama ``/api/chat`` bodies: the audit's sniffing and ``import --from auto``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires._sniff import inner
from toolreplay.wires.ollama.render import LIST_KEY

#: Top-level fields only Ollama's body has.
OLLAMA_BODY_KEYS = ("options", "keep_alive", "think", "format")
#: Top-level fields of a Chat body that an Ollama body keeps under ``options`` or lacks.
_CHAT_FIELDS = (
    "temperature", "top_p", "max_tokens", "max_completion_tokens", "n", "stop", "stream_options",
    "tool_choice", "response_format", "presence_penalty", "frequency_penalty", "seed", "user",
)  # fmt: skip


def _object_arguments(messages: Sequence[Any]) -> bool:
    fns = [c.get("function") for c in inner(messages, "tool_calls")]
    return any(isinstance(f, Mapping) and isinstance(f.get("arguments"), Mapping) for f in fns)


def sniff(body: Mapping[str, Any]) -> float:
    """Object ``arguments``, ``tool_name`` on tool messages, Ollama's own body fields, or ``"stream":
    false`` with none of Chat's own top-level fields: 0.8 (above Chat; below Anthropic's own blocks)."""
    messages = body.get(LIST_KEY)
    if not isinstance(messages, list):
        return 0.0
    if _object_arguments(messages) or any(isinstance(m, Mapping) and "tool_name" in m for m in messages):
        return 0.8
    if any(k in body for k in OLLAMA_BODY_KEYS):
        return 0.8
    if body.get("stream") is False and not any(k in body for k in _CHAT_FIELDS):
        # Ollama streams unless told not to, so its bodies say "stream": false; Chat clients rarely do
        # and then usually send sampling fields Ollama keeps under "options".
        return 0.8
    return 0.0


def is_element(value: Any) -> bool:
    return isinstance(value, Mapping) and "role" in value


def marks(body: Any, els: Sequence[Any]) -> str | None:
    """Object arguments, ``tool_name``, ``images``, ``thinking`` or Ollama's own body keys."""
    if isinstance(body, Mapping) and any(k in body for k in OLLAMA_BODY_KEYS):
        return None
    for m in els:
        if isinstance(m, Mapping) and ("tool_name" in m or "images" in m or "thinking" in m):
            return None
    if _object_arguments(els):
        return None
    return "no Ollama marks (object arguments, tool_name, images, thinking, options)"


__all__ = ["OLLAMA_BODY_KEYS", "is_element", "marks", "sniff"]

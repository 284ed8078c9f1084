"""Recognising Ollama ``/api/chat`` bodies: the audit's sniffing and ``import --from auto``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires._sniff import HABIT, NATIVE, chat_marks, inner
from toolreplay.wires.ollama.render import LIST_KEY

#: Top-level fields only Ollama's body has.
OLLAMA_BODY_KEYS = ("options", "keep_alive", "think", "format")
#: Top-level fields of other wires' bodies that an Ollama body keeps under ``options`` or lacks.
_FOREIGN_FIELDS = ("temperature", "top_p", "max_tokens", "tool_choice")


def _object_arguments(messages: Sequence[Any]) -> bool:
    fns = [c.get("function") for c in inner(messages, "tool_calls")]
    return any(isinstance(f, Mapping) and isinstance(f.get("arguments"), Mapping) for f in fns)


def _native(body: Mapping[str, Any], messages: Sequence[Any]) -> bool:
    """Ollama's own marks: object ``arguments``, ``tool_name``, ``images`` or a ``thinking`` string on a
    message, its own body fields."""
    if _object_arguments(messages) or any(k in body for k in OLLAMA_BODY_KEYS):
        return True
    for m in messages:
        if isinstance(m, Mapping) and ("tool_name" in m or isinstance(m.get("images"), list)):
            return True
        if isinstance(m, Mapping) and isinstance(m.get("thinking"), str):
            return True
    return False


def sniff(body: Mapping[str, Any]) -> float:
    """Ollama's own marks: 0.8 (above Chat's; below Anthropic's own blocks). ``"stream": false`` with
    nothing of Chat's: 0.6 (Ollama streams unless told not to, so its bodies say so; Chat clients rarely
    do, and then usually send a field or a model that is Chat's own, which wins at 0.7)."""
    messages = body.get(LIST_KEY)
    if not isinstance(messages, list):
        return 0.0
    if _native(body, messages):
        return NATIVE
    if body.get("stream") is not False or any(k in body for k in _FOREIGN_FIELDS):
        return 0.0
    if any(isinstance(m, Mapping) and isinstance(m.get("content"), list) for m in messages):
        return 0.0  # Ollama's content is a string (images go in ``images``)
    if not chat_marks(body, messages):
        return HABIT
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

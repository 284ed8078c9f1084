"""Recognising Ollama ``/api/chat`` bodies: the audit's sniffing and ``import --from auto``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires._sniff import chat_marks, inner
from toolreplay.wires.evidence import Evidence, Proof
from toolreplay.wires.ollama.render import LIST_KEY

#: Top-level fields only Ollama's body has.
OLLAMA_BODY_KEYS = ("options", "keep_alive", "think", "format")
#: Top-level fields of other wires' bodies that an Ollama body keeps under ``options`` or lacks.
_FOREIGN_FIELDS = ("temperature", "top_p", "max_tokens", "tool_choice")


def _object_arguments(messages: Sequence[Any]) -> bool:
    fns = [c.get("function") for c in inner(messages, "tool_calls")]
    return any(isinstance(f, Mapping) and isinstance(f.get("arguments"), Mapping) for f in fns)


def _native(body: Mapping[str, Any], messages: Sequence[Any]) -> str | None:
    """Ollama's own marks, the first named for people: object ``arguments``, ``tool_name``, ``images``
    or a ``thinking`` string on a message, its own body fields."""
    if _object_arguments(messages):
        return "object tool-call arguments"
    field = next((k for k in OLLAMA_BODY_KEYS if k in body), None)
    if field is not None:
        return f"a {field!r} field"
    for m in messages:
        if isinstance(m, Mapping) and ("tool_name" in m or isinstance(m.get("images"), list)):
            return "'tool_name' on a message" if "tool_name" in m else "'images' on a message"
        if isinstance(m, Mapping) and isinstance(m.get("thinking"), str):
            return "a 'thinking' string on a message"
    return None


def sniff(body: Mapping[str, Any]) -> Evidence | None:
    """Ollama's own marks: a mark, which rules out Chat (object arguments are no Chat call; Chat's own
    marks are fields Ollama clients send too). ``"stream": false`` with nothing of Chat's: a habit (Ollama
    streams unless told not to, so its bodies say so; Chat clients rarely do, and then usually send a
    field or a model that is Chat's own, a mark)."""
    messages = body.get(LIST_KEY)
    if not isinstance(messages, list):
        return None
    native = _native(body, messages)
    if native is not None:
        return Evidence(Proof.MARK, (native,), rules_out=("openai-chat",))
    if body.get("stream") is not False or any(k in body for k in _FOREIGN_FIELDS):
        return None
    if any(isinstance(m, Mapping) and isinstance(m.get("content"), list) for m in messages):
        return None  # Ollama's content is a string (images go in ``images``)
    if chat_marks(body, messages) is None:
        return Evidence(Proof.HABIT, ('"stream": false',))
    return None


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

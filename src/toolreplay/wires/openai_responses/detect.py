"""Recognising OpenAI Responses bodies: the audit's sniffing and ``import --from auto``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires._sniff import inner
from toolreplay.wires.evidence import Evidence, Proof
from toolreplay.wires.openai_responses.render import LIST_KEY

RESPONSES_ITEMS = (
    "function_call",
    "function_call_output",
    "reasoning",
    "message",
    "custom_tool_call",
    "custom_tool_call_output",
)


def sniff(body: Mapping[str, Any]) -> Evidence | None:
    """An ``input`` (list or string) and no ``messages`` list."""
    if LIST_KEY not in body or isinstance(body.get("messages"), list):
        return None
    return Evidence(Proof.KEY, ("an 'input'",))


def holds(obj: Mapping[str, Any]) -> bool:
    """A body, not a wrapper: ``input`` alone is a common word, so the model or instructions too."""
    return isinstance(obj.get(LIST_KEY), (list, str)) and ("model" in obj or "instructions" in obj)


def elements(body: Any) -> Sequence[Any] | None:
    """The items of a body or bare list (a plain string input is one user message)."""
    if isinstance(body, list):
        return body
    if isinstance(body, Mapping):
        value = body.get(LIST_KEY)
        if isinstance(value, list):
            return value
        if isinstance(value, str):
            return [{"role": "user", "content": value}]
    return None


def is_element(value: Any) -> bool:
    return isinstance(value, Mapping) and ("type" in value or "role" in value)


def marks(body: Any, els: Sequence[Any]) -> str | None:
    """``input``, typed items, or ``input_text``/``output_text`` content parts."""
    if isinstance(body, Mapping) and LIST_KEY in body:
        return None
    for it in els:
        if isinstance(it, Mapping) and (it.get("type") in RESPONSES_ITEMS):
            return None
    if any(b.get("type") in ("input_text", "output_text") for b in inner(els, "content")):
        return None
    return "no 'input' and no Responses items (function_call, function_call_output, reasoning, message)"


__all__ = ["RESPONSES_ITEMS", "elements", "holds", "is_element", "marks", "sniff"]

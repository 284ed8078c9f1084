"""Recognising OpenAI Chat bodies: the audit's sniffing and ``import --from auto``.

Chat is every ``messages`` wire's common ground: a plain-text chat list reads the same in several wires,
so a body with none of Chat's own marks fits Chat and proves nothing more (the weakest evidence of all)
and Chat's import form ranks last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires._sniff import anthropic_block, chat_marks, inner
from toolreplay.wires.evidence import Evidence, Proof
from toolreplay.wires.openai_chat.render import LIST_KEY
from toolreplay.wires.turns import kind_of

# Tuples, not sets: the values looked up come from the input and may be lists or objects, which a set
# lookup refuses with a TypeError instead of saying no.
CHAT_ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def sniff(body: Mapping[str, Any]) -> Evidence | None:
    """Chat's own marks (string ``arguments``, Chat-only content parts and fields, reasoning fields on
    messages, a model of OpenAI's own): a mark, above Ollama's ``"stream": false`` habit and Anthropic's
    text blocks. Else any ``messages`` list fits (design 27)."""
    messages = body.get(LIST_KEY)
    if not isinstance(messages, list):
        return None
    mark = chat_marks(body, messages)
    if mark is not None:
        return Evidence(Proof.MARK, (mark,))
    return Evidence(Proof.FITS, ("a 'messages' list",))


def is_element(value: Any) -> bool:
    return isinstance(value, Mapping) and "role" in value


def marks(body: Any, els: Sequence[Any]) -> str | None:
    """Chat takes any list of Chat messages (roles it knows, no Anthropic blocks)."""
    for i, m in enumerate(els):
        if not isinstance(m, Mapping):
            return f"messages[{i}] is {kind_of(m)}, not a message object"
        if m.get("role") not in CHAT_ROLES:
            return f"messages[{i}].role is {m.get('role')!r}, not a Chat role"
    for b in inner(els, "content"):
        if anthropic_block(b):
            return f"a {b.get('type')!r} block (Anthropic's, not a Chat content part)"
    return None


__all__ = ["CHAT_ROLES", "is_element", "marks", "sniff"]

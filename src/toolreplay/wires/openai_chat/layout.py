"""How a Chat body's elements stood beyond what the neutral model holds (design 37): read by
``request.py`` into ``sent["openai-chat"]``, given back by ``as_sent.py``. One owner for these keys.

A message's ``sent`` (``Message.sent``; for a reply of several body messages, one mapping per message
under ``"messages"``, in order; a tool message's under ``ToolCall.sent[...]["result"]``):

* ``"role"``: ``"developer"`` where the body said so (the model stores it as a system message);
* ``"content"``: the content verbatim where it is not a non-empty string (``""``, null, a list of parts
  of a system, assistant or tool message); ``"no_content": true`` where the key was absent;
* ``"extra"``: the message's keys the model does not read (``name``, ``refusal``, ``audio``...);
* ``"empty": true``: an assistant message that made nothing (no words, no calls, no reasoning).

A call's ``sent``: ``"arguments"``, its arguments as sent where the compact JSON of its input is not
them (spaces, an object instead of a string). A user message's list content is its parts
(``Message.parts``), each part's type alias and extra keys in ``Part.sent`` (``"type"``, ``"extra"``,
``"inner"``: the extra keys of its ``image_url`` / ``file`` object). A tool declaration is kept whole:
``ToolSpec.sent[...]["tool"]`` (a ``tools`` entry) or ``["function"]`` (a legacy ``functions`` entry).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from toolreplay.model import Sent

WIRE = "openai-chat"
_REASONING = ("reasoning_content", "reasoning", "reasoning_details")
#: The keys of a message the neutral model reads, per role; any other key is kept as sent.
_READ: dict[str, frozenset[str]] = {
    "system": frozenset({"role", "content"}),
    "developer": frozenset({"role", "content"}),
    "user": frozenset({"role", "content"}),
    "assistant": frozenset({"role", "content", "tool_calls", "function_call", *_REASONING}),
    "tool": frozenset({"role", "content", "tool_call_id"}),
    "function": frozenset({"role", "content", "name"}),
}


def message_layout(msg: Mapping[str, Any], *, content: bool = True) -> dict[str, Any]:
    """What of ``msg`` the neutral fields do not say (see the module docstring); ``content`` False when
    its content is held elsewhere (a user message's parts)."""
    role = str(msg.get("role"))
    out: dict[str, Any] = {}
    if role == "developer":
        out["role"] = "developer"
    if "content" not in msg:
        out["no_content"] = True
    elif content and not (isinstance(msg["content"], str) and msg["content"]):
        out["content"] = msg["content"]
    extra = {k: v for k, v in msg.items() if k not in _READ.get(role, frozenset())}
    if extra:
        out["extra"] = extra
    return out


def sent_of(layout: Mapping[str, Any]) -> Sent | None:
    """A layout as a ``sent`` value (None when there is nothing to keep)."""
    return {WIRE: dict(layout)} if layout else None


def layout_of(sent: Sent | None, key: str | None = None) -> Mapping[str, Any]:
    """The Chat layout of a ``sent`` value (under ``key`` when given), or an empty one."""
    d: Any = sent.get(WIRE) if sent else None
    if key is not None and isinstance(d, Mapping):
        d = d.get(key)
    return cast(Mapping[str, Any], d) if isinstance(d, Mapping) else {}


def laid_out(msg: dict[str, Any], layout: Mapping[str, Any]) -> dict[str, Any]:
    """``msg`` as rendered from the neutral fields, then laid out as the body had it."""
    if layout.get("no_content"):
        msg.pop("content", None)
    elif "content" in layout:
        msg["content"] = layout["content"]
    if "role" in layout:
        msg["role"] = layout["role"]
    extra = layout.get("extra")
    if isinstance(extra, Mapping):
        msg.update(cast(Mapping[str, Any], extra))
    return msg


__all__ = ["WIRE", "laid_out", "layout_of", "message_layout", "sent_of"]

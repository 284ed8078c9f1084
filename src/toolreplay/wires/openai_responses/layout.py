"""How a Responses item stood in its body beyond the neutral fields: the ``sent`` this wire keeps.

Everything here lives under ``sent["openai-responses"]`` of a stored element (design 37) and is read by
the as-sent render alone (:mod:`~toolreplay.wires.openai_responses.as_sent`); every other render ignores
it. The keys:

* a message (system, developer, user; ``Message.sent``): ``item``, the item's keys the model does not
  read (``type: "message"``, its ``msg_`` ``id``, ``status``); ``role``, a system turn's role as sent
  (``developer`` or ``system``); ``at: "instructions"`` for the body's ``instructions``; ``input:
  "string"`` for a body whose ``input`` was a plain string; ``content``: ``"string"`` (a string),
  ``"none"`` (absent), ``"null"``, ``"parts"`` (a user message of media, each :class:`~toolreplay.model.Part`
  with its own ``sent``: ``extra`` keys and the ``raw`` URL when rebuilding it would differ) or a list
  of part layouts (``type``, ``extra`` keys, ``len`` of its text) for text parts kept apart;
* a reply (``Message.sent["openai-responses"]["messages"]``: one entry per run of model items the body
  carried between two outputs): ``items``, one slot per item in order: ``{"kind": "said"}`` (a reasoning
  or hosted-tool item, itself kept whole in its step), ``{"kind": "call"}``, or ``{"kind": "text",
  "len": n, "easy": true?, "item": {...}, "content": ...}`` (an assistant message);
* a call (``ToolCall.sent``): ``call``, the call item's keys beyond ``type``, ``id``, ``call_id``,
  ``name`` and ``arguments`` / ``input`` (``status``); ``arguments`` as sent when they are not the
  compact JSON of the stored input; ``output``, the output item's keys beyond ``type``, ``call_id`` and
  ``output`` (its ``fco_`` ``id``), present whenever an output answered it; ``output_content``, the
  output's part layouts when it was a list.

Tool declarations keep their whole declaration as ``sent["openai-responses"]["tool"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from toolreplay.model import Sent

WIRE = "openai-responses"
#: Items of tools OpenAI (or the agent, for OpenAI's own tool kinds) ran outside our calls: kept whole as
#: server-tool pieces of their step, replayed verbatim to their issuer only, never answered by us.
HOSTED_ITEMS = frozenset(
    {"web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call",
     "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "local_shell_call",
     "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call",
     "apply_patch_call_output", "computer_call", "computer_call_output", "tool_search_call",
     "tool_search_output"}
)  # fmt: skip
#: The keys of a content part the neutral model reads, per part type.
_VALUE_KEY = {"refusal": "refusal"}
#: The item keys the model reads, per item type; the others are kept as sent.
_CALL_READ = frozenset({"type", "id", "call_id", "name", "arguments", "input"})
_OUTPUT_READ = frozenset({"type", "call_id", "output"})
_MESSAGE_READ = frozenset({"role", "content"})


def sent_of(layout: Mapping[str, Any] | None) -> Sent | None:
    """``layout`` under this wire's name (None when there is nothing to keep)."""
    return {WIRE: dict(layout)} if layout else None


def layout_of(sent: Sent | None) -> Mapping[str, Any]:
    """This wire's layout in a stored ``sent`` ({} when none)."""
    got = sent.get(WIRE) if sent else None
    return got if isinstance(got, Mapping) else {}


def extras(item: Mapping[str, Any], read: frozenset[str]) -> dict[str, Any]:
    """The keys of ``item`` the model does not read, verbatim."""
    return {k: v for k, v in item.items() if k not in read}


def part_layout(p: Mapping[str, Any], text: str | None) -> dict[str, Any]:
    """One content part's layout: its type, its other keys, the length of its text (text parts)."""
    key = _VALUE_KEY.get(str(p.get("type")), "text")
    out: dict[str, Any] = {"type": p.get("type")}
    extra = {k: v for k, v in p.items() if k not in ("type", key)}
    if extra:
        out["extra"] = extra
    if text is not None:
        out["len"] = len(text)
    return out


def message_layout(item: Mapping[str, Any], content: Any) -> dict[str, Any]:
    """A message item's layout (see the module docstring); ``content`` is the content's own layout."""
    out: dict[str, Any] = {}
    extra = extras(item, _MESSAGE_READ)
    if extra:
        out["item"] = extra
    out["content"] = content
    return out


def call_layout(item: Mapping[str, Any], arguments: str | None) -> dict[str, Any]:
    """A call item's layout: its other keys, its arguments when they are not the stored input's JSON."""
    out: dict[str, Any] = {}
    extra = extras(item, _CALL_READ)
    if extra:
        out["call"] = extra
    if arguments is not None:
        out["arguments"] = arguments
    return out


def output_layout(item: Mapping[str, Any], content: list[dict[str, Any]] | None) -> dict[str, Any]:
    """An output item's layout, kept beside its call (``output`` is there whenever an output was)."""
    out: dict[str, Any] = {"output": extras(item, _OUTPUT_READ)}
    if content is not None:
        out["output_content"] = content
    return out


def content_parts(text: str, layouts: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Text content parts as sent: ``text`` cut by each part's ``len``, each part's type and keys back."""
    out: list[dict[str, Any]] = []
    pos = 0
    for lay in layouts:
        kind = str(lay.get("type"))
        part: dict[str, Any] = {"type": kind}
        if "len" in lay:
            n = int(lay["len"])
            part[_VALUE_KEY.get(kind, "text")] = text[pos : pos + n]
            pos += n
        part.update(cast(Mapping[str, Any], lay.get("extra") or {}))
        out.append(part)
    return out


__all__ = [
    "HOSTED_ITEMS",
    "WIRE",
    "call_layout",
    "content_parts",
    "extras",
    "layout_of",
    "message_layout",
    "output_layout",
    "part_layout",
    "sent_of",
]

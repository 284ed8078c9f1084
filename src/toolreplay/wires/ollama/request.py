"""Ollama native ``/api/chat`` request bodies read back into a stored history (importers, the audit).

Reads a whole body (``messages``, ``tools``) or just its ``messages`` list: ``system``, ``user`` and
``assistant`` messages (``tool_calls`` with ``function.arguments`` an object, or a JSON string as older
clients sent it), and ``tool`` messages (``tool_name``, or the older ``name``; ``tool_call_id`` when
given). Answers pair by ``tool_call_id`` when the calls carry ids, else by position (Ollama's own rule).
An assistant's ``thinking`` is kept as a reasoning piece of its step (replayed only to its issuer). A user
message's ``images`` (base64) are kept as its parts, before its words (the body keeps them apart, so their
order is not known; the type is read from the image's first bytes); images on other messages are reported.
The turn rules are :func:`toolreplay.wires.turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from toolreplay.errors import WireError
from toolreplay.model import History, Part, Reasoning, Sent, ToolSpec, with_words
from toolreplay.wires.common import body_issuer, request_settings
from toolreplay.wires.media import image_type
from toolreplay.wires.request_common import (
    function_calls,
    listed,
    nonempty,
    objects,
    read_tools,
    split_list,
    string,
)
from toolreplay.wires.turns import (
    AgentSaid,
    Answers,
    Call,
    Event,
    Result,
    SaidPart,
    SystemText,
    UserText,
    assemble,
)

WIRE = "ollama"
#: The host of the wire's public API: the issuer of an imported body's replies (design 17) unless the
#: importer is told the URL the requests went to (``--issuer-url``).
PUBLIC_HOST = "127.0.0.1"
#: The top-level keys that hold the conversation, its system prompt and its tools; every other one is
#: a request setting, kept as sent.
CONVERSATION_KEYS = ("messages", "tools")


def _fail(problem: str) -> WireError:
    return WireError(f"{WIRE} request: {problem}")


def _images(msg: Mapping[str, Any], where: str, warnings: list[str]) -> list[Part]:
    out: list[Part] = []
    for k, raw in enumerate(listed(msg.get("images"))):
        if isinstance(raw, str) and raw:
            out.append(Part("image", media_type=image_type(raw), data=raw))
        else:
            warnings.append(f"{where}.images[{k}]: not a base64 string, not kept")
    return out


def _text(msg: Mapping[str, Any], where: str, warnings: list[str]) -> str:
    content = msg.get("content")
    if msg.get("images") and msg.get("role") != "user":
        warnings.append(f"{where}.images: images are not kept (text only)")
    if content is None:
        return ""
    if not isinstance(content, str):
        raise _fail(f"{where}.content is {type(content).__name__}, not a string")
    return content


#: The keys of a message the neutral model reads, per role; the others are kept as sent (``extra``).
_READ = {"system": ("role", "content"), "user": ("role", "content", "images"),
         "assistant": ("role", "content", "thinking", "tool_calls"), "tool": ("role", "content")}  # fmt: skip


def layout(msg: Mapping[str, Any]) -> Sent | None:
    """How an ``/api/chat`` message stood beyond the neutral fields, for the as-sent render
    (``sent["ollama"]``): ``extra``, the keys the model does not read (a tool message's ``tool_name`` and
    ``tool_call_id`` as sent); ``no_content`` where it had none; ``empty``, an assistant message that
    made nothing."""
    out: dict[str, Any] = {}
    extra = {k: v for k, v in msg.items() if k not in _READ.get(str(msg.get("role")), ())}
    if extra:
        out["extra"] = extra
    if "content" not in msg:
        out["no_content"] = True
    return {WIRE: out} if out else None


def _calls(msg: Mapping[str, Any], where: str, warnings: list[str]) -> list[Call]:
    """The message's ``tool_calls``, each with how it stood (``call``: its keys but ``function``;
    ``function``: those but ``name`` and ``arguments``; an absent ``id``)."""
    calls = function_calls(msg.get("tool_calls"), where, warnings, _fail)
    for call, tc in zip(calls, listed(msg.get("tool_calls")), strict=True):
        fn = tc["function"]
        shape: dict[str, Any] = {"call": {k: v for k, v in tc.items() if k not in ("function", "id")},
                 "function": {k: v for k, v in fn.items() if k not in ("name", "arguments")}}  # fmt: skip
        if "id" not in tc:
            shape["no_id"] = True
        if not isinstance(fn.get("arguments"), Mapping):
            shape["arguments"] = fn.get("arguments")
        call.sent = {WIRE: shape}
    return calls


def message_events(msg: Mapping[str, Any], where: str, warnings: list[str]) -> list[Event]:
    """The events of one ``/api/chat`` message."""
    role = msg.get("role")
    text = _text(msg, where, warnings)
    sent = layout(msg)
    if role == "system":
        return [SystemText(text, where, sent)]
    if role == "user":
        images = _images(msg, where, warnings)
        if not images:
            return [UserText(text, where, sent=sent)]
        words, media = with_words(text, images)
        return [UserText(words, where, parts=media, sent=sent)]
    if role == "assistant":
        thinking = msg.get("thinking")
        parts: list[SaidPart] = []
        if isinstance(thinking, str) and thinking:  # kept whole, replayed only to its issuer
            parts.append(Reasoning(thinking, {WIRE: {"thinking": thinking}}))
        if text:
            parts.append(text)
        parts.extend(_calls(msg, where, warnings))
        if not parts:
            sent = {WIRE: {**(sent or {}).get(WIRE, {}), "empty": True}}
        return [AgentSaid(parts, where, sent=sent)]
    if role == "tool":
        name = string(msg.get("tool_name", msg.get("name")))
        result = Result(text, nonempty(msg.get("tool_call_id")), name, where=where,
                        sent={WIRE: {"result": sent[WIRE]}} if sent else None)  # fmt: skip
        return [Answers([result], where)]
    raise _fail(f"{where}.role is {role!r}; expected system, user, assistant or tool")


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """``tools`` (``{"type": "function", "function": {name, description, parameters}}``), each kept
    whole in its ``sent`` (``tool``) for the as-sent render."""
    out: list[ToolSpec] = []
    for t in listed(raw):
        if isinstance(t, Mapping):
            for spec in read_tools([t.get("function")]):
                out.append(replace(spec, sent={WIRE: {"tool": dict(t)}}))
    return tuple(out)


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``messages`` list and the rest of the body (empty when given just the list)."""
    return split_list(body, "messages", "messages", _fail)


def parse_request(body: Any, *, conversation_id: str = "request") -> History:
    """An Ollama ``/api/chat`` body (or its ``messages`` list) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not this wire's
    shape; what it cannot represent is listed in the history's ``warnings``.
    """
    msgs, rest = split_body(body)
    warnings: list[str] = []
    events: list[Event] = []
    for _, where, msg in objects(msgs, "messages", _fail):
        events.extend(message_events(msg, where, warnings))
    tools = parse_tools(rest.get("tools"))
    issuer = body_issuer(WIRE, PUBLIC_HOST, rest.get("model"))
    settings = request_settings(WIRE, body, CONVERSATION_KEYS)
    if settings is not None and "tools" in rest and rest["tools"] in ([], None):
        settings = replace(settings, fields={**settings.fields, "tools": rest["tools"]})  # declares nothing
    return assemble(events, conversation_id=conversation_id, tools=tools, warnings=warnings,
                    issuer=issuer, settings=settings)  # fmt: skip


__all__ = ["WIRE", "message_events", "parse_request", "parse_tools", "split_body"]

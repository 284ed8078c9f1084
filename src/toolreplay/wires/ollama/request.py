"""Ollama native ``/api/chat`` request bodies read back into a stored history (importers, the audit).

Reads a whole body (``messages``, ``tools``) or just its ``messages`` list: ``system``, ``user`` and
``assistant`` messages (``tool_calls`` with ``function.arguments`` an object, or a JSON string as older
clients sent it), and ``tool`` messages (``tool_name``, or the older ``name``; ``tool_call_id`` when
given). Answers pair by ``tool_call_id`` when the calls carry ids, else by position (Ollama's own rule).
An assistant's ``thinking`` is kept as ``{"ollama": {"thinking": ...}}``. Images are reported, not kept.
The turn rules are :func:`toolreplay.wires._turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.errors import WireError
from toolreplay.history import History, ToolSpec
from toolreplay.wires._turns import (
    AgentSaid,
    Answers,
    Call,
    Event,
    Result,
    SystemText,
    UserText,
    arguments_input,
    assemble,
    tool_spec,
)

WIRE = "ollama"


def _fail(problem: str) -> WireError:
    return WireError(f"{WIRE} request: {problem}")


def _text(msg: Mapping[str, Any], where: str, warnings: list[str]) -> str:
    content = msg.get("content")
    if msg.get("images"):
        warnings.append(f"{where}.images: images are not kept (text only)")
    if content is None:
        return ""
    if not isinstance(content, str):
        raise _fail(f"{where}.content is {type(content).__name__}, not a string")
    return content


def _calls(msg: Mapping[str, Any], where: str, warnings: list[str]) -> list[Call]:
    raw = msg.get("tool_calls")
    if raw is not None and not isinstance(raw, list):
        raise _fail(f"{where}.tool_calls is {type(raw).__name__}, not a list")
    out: list[Call] = []
    for k, tc in enumerate(raw or []):
        at = f"{where}.tool_calls[{k}]"
        fn = tc.get("function") if isinstance(tc, Mapping) else None
        if not isinstance(fn, Mapping):
            raise _fail(f"{at}.function is missing or not an object")
        f = cast(Mapping[str, Any], fn)
        name = f.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(f"{at}.function.name is missing or not a string")
        value, problem = arguments_input(f.get("arguments"))
        if problem:
            warnings.append(f"{at}: {problem}")
        cid = cast(Mapping[str, Any], tc).get("id")
        out.append(Call(name, value, cid if isinstance(cid, str) and cid else None))
    return out


def message_events(msg: Mapping[str, Any], where: str, warnings: list[str]) -> list[Event]:
    """The events of one ``/api/chat`` message."""
    role = msg.get("role")
    text = _text(msg, where, warnings)
    if role == "system":
        return [SystemText(text, where)]
    if role == "user":
        return [UserText(text, where)]
    if role == "assistant":
        parts: list[str | Call] = [text] if text else []
        parts.extend(_calls(msg, where, warnings))
        thinking = msg.get("thinking")
        data = {WIRE: {"thinking": thinking}} if isinstance(thinking, str) and thinking else None
        return [AgentSaid(parts, where, data)]
    if role == "tool":
        cid = msg.get("tool_call_id")
        name = msg.get("tool_name", msg.get("name"))
        res = Result(
            text,
            cid if isinstance(cid, str) and cid else None,
            name if isinstance(name, str) else None,
            where=where,
        )
        return [Answers([res], where)]
    raise _fail(f"{where}.role is {role!r}; expected system, user, assistant or tool")


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """``tools`` (``{"type": "function", "function": {name, description, parameters}}``)."""
    out: list[ToolSpec] = []
    for t in raw if isinstance(raw, list) else []:
        fn = t.get("function") if isinstance(t, Mapping) else None
        if isinstance(fn, Mapping):
            f = cast(Mapping[str, Any], fn)
            spec = tool_spec(f.get("name"), f.get("description"), f.get("parameters"))
            if spec is not None:
                out.append(spec)
    return tuple(out)


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``messages`` list and the rest of the body (empty when given just the list)."""
    if isinstance(body, list):
        return body, {}
    if isinstance(body, Mapping):
        b = cast(Mapping[str, Any], body)
        msgs = b.get("messages")
        if not isinstance(msgs, list):
            raise _fail("no 'messages' list in the body")
        return msgs, b
    raise _fail(f"the body is {type(body).__name__}, not an object or a list of messages")


def parse_request(body: Any, *, conversation_id: str = "request") -> History:
    """An Ollama ``/api/chat`` body (or its ``messages`` list) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not this wire's
    shape; what it cannot represent is listed in the history's ``warnings``.
    """
    msgs, rest = split_body(body)
    warnings: list[str] = []
    events: list[Event] = []
    for i, raw in enumerate(msgs):
        where = f"messages[{i}]"
        if not isinstance(raw, Mapping):
            raise _fail(f"{where} is {type(raw).__name__}, not an object")
        events.extend(message_events(cast(Mapping[str, Any], raw), where, warnings))
    tools = parse_tools(rest.get("tools"))
    return assemble(events, conversation_id=conversation_id, tools=tools, warnings=warnings)


__all__ = ["WIRE", "message_events", "parse_request", "parse_tools", "split_body"]

"""Anthropic Messages request bodies read back into a stored history (importers, the audit).

Reads a whole body (``system``, ``messages``, ``tools``) or just its ``messages`` list. Assistant content:
``text`` blocks, ``tool_use`` blocks (``id``, ``name``, ``input``), ``thinking`` / ``redacted_thinking``
blocks (kept whole, signatures included, as provider data ``{"anthropic": {"thinking": [...]}}`` on the
message's first call), other blocks (server tools) kept under ``other_blocks`` and reported. User content:
``tool_result`` blocks (answers by ``tool_use_id``, ``is_error`` kept) and the user's own text (text blocks
joined with a blank line). Images and documents are reported, not kept.

The renderer's ``(continued)`` user message in front of a history that opens with a reply (see
:data:`toolreplay.wires._common.SEPARATOR`) is the wire's role rule, not the user's words: it is not
stored. The turn rules are :func:`toolreplay.wires._turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.errors import WireError
from toolreplay.history import History, ToolSpec
from toolreplay.wires._common import SEPARATOR
from toolreplay.wires._turns import (
    AgentSaid,
    Answers,
    Call,
    Event,
    Result,
    SystemText,
    UserText,
    answer_text,
    arguments_input,
    assemble,
    merge_data,
    tool_spec,
)

WIRE = "anthropic"
_THINKING = ("thinking", "redacted_thinking")


def _fail(problem: str) -> WireError:
    return WireError(f"{WIRE} request: {problem}")


def _blocks(content: Any, where: str) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        raise _fail(f"{where}.content is {type(content).__name__}, not a string or a list of blocks")
    out: list[Mapping[str, Any]] = []
    for j, b in enumerate(content):
        if not isinstance(b, Mapping):
            raise _fail(f"{where}.content[{j}] is {type(b).__name__}, not a content block")
        out.append(cast(Mapping[str, Any], b))
    return out


def _assistant(content: Any, where: str, warnings: list[str], created_at: str | None) -> AgentSaid:
    parts: list[str | Call] = []
    data: dict[str, Any] | None = None
    for j, b in enumerate(_blocks(content, where)):
        kind = b.get("type")
        at = f"{where}.content[{j}]"
        if kind == "text":
            text = b.get("text")
            if isinstance(text, str) and text:
                parts.append(text)
        elif kind == "tool_use":
            name = b.get("name")
            if not isinstance(name, str) or not name:
                raise _fail(f"{at}.name is missing or not a string")
            value, problem = arguments_input(b.get("input"))
            if problem:
                warnings.append(f"{at}: {problem}")
            cid = b.get("id")
            parts.append(Call(name, value, cid if isinstance(cid, str) and cid else None))
        elif kind in _THINKING:
            data = merge_data(data, {WIRE: {"thinking": [dict(b)]}})
        else:
            data = merge_data(data, {WIRE: {"other_blocks": [dict(b)]}})
            warnings.append(f"{at}: a {kind!r} block is kept as provider data, not replayed")
    return AgentSaid(parts, where, data, created_at)


def _user(content: Any, where: str, warnings: list[str], created_at: str | None) -> list[Event]:
    results: list[Result] = []
    texts: list[str] = []
    for j, b in enumerate(_blocks(content, where)):
        kind = b.get("type")
        at = f"{where}.content[{j}]"
        if kind == "tool_result":
            answer, lost = answer_text(b.get("content"))
            for k in lost:
                warnings.append(f"{at}.content: a {k!r} block of the answer is not kept (text only)")
            ref = b.get("tool_use_id")
            results.append(
                Result(
                    answer, ref if isinstance(ref, str) and ref else None, None, b.get("is_error") is True, at
                )
            )
        elif kind == "text" and isinstance(b.get("text"), str):
            texts.append(str(b["text"]))
        else:
            warnings.append(f"{at}: a {kind!r} block is not kept (text only)")
    events: list[Event] = []
    if results:
        events.append(Answers(results, where))
    if texts or not results:
        events.append(UserText("\n\n".join(texts), where, created_at))
    return events


def message_events(
    msg: Mapping[str, Any], where: str, warnings: list[str], *, created_at: str | None = None
) -> list[Event]:
    """The events of one Messages message (shared by the Claude Code importer, whose entries hold them)."""
    role = msg.get("role")
    if role == "assistant":
        return [_assistant(msg.get("content"), where, warnings, created_at)]
    if role == "user":
        return _user(msg.get("content"), where, warnings, created_at)
    raise _fail(f"{where}.role is {role!r}; expected user or assistant")


def _system(raw: Any, warnings: list[str]) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        text, lost = answer_text(raw, joiner="\n\n")
        for k in lost:
            warnings.append(f"system: a {k!r} block is not kept (text only)")
        return text
    return ""


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """Client tools (``name``, ``description``, ``input_schema``); server tools (typed) are skipped."""
    out: list[ToolSpec] = []
    for t in raw if isinstance(raw, list) else []:
        if isinstance(t, Mapping) and t.get("type", "custom") == "custom":
            td = cast(Mapping[str, Any], t)
            spec = tool_spec(td.get("name"), td.get("description"), td.get("input_schema"))
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


def _is_separator(msgs: Sequence[Any], i: int) -> bool:
    """The renderer's opening ``(continued)`` user message (a history that opens with a reply)."""
    if i != 0 or len(msgs) < 2:
        return False
    first, nxt = msgs[0], msgs[1]
    return (
        isinstance(first, Mapping)
        and first.get("role") == "user"
        and first.get("content") == SEPARATOR
        and isinstance(nxt, Mapping)
        and nxt.get("role") == "assistant"
    )


def parse_request(body: Any, *, conversation_id: str = "request") -> History:
    """An Anthropic Messages body (or its ``messages`` list) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not this wire's
    shape; what it cannot represent is listed in the history's ``warnings``.
    """
    msgs, rest = split_body(body)
    warnings: list[str] = []
    events: list[Event] = []
    system = _system(rest.get("system"), warnings)
    if system:
        events.append(SystemText(system, "system"))
    for i, raw in enumerate(msgs):
        where = f"messages[{i}]"
        if not isinstance(raw, Mapping):
            raise _fail(f"{where} is {type(raw).__name__}, not an object")
        if _is_separator(msgs, i):
            continue
        events.extend(message_events(cast(Mapping[str, Any], raw), where, warnings))
    tools = parse_tools(rest.get("tools"))
    return assemble(events, conversation_id=conversation_id, tools=tools, warnings=warnings)


__all__ = ["WIRE", "message_events", "parse_request", "parse_tools", "split_body"]

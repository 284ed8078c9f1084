"""Anthropic Messages request bodies read back into a stored history (importers, the audit).

Reads a whole body (``system``, ``messages``, ``tools``) or just its ``messages`` list. Assistant content:
``text`` blocks, ``tool_use`` blocks (``id``, ``name``, ``input``), ``thinking`` / ``redacted_thinking``
blocks (kept whole, signatures included, as reasoning pieces of the message's step, replayed only to their
issuer: design 17), server-tool blocks (``server_tool_use``, ``*_tool_result``: kept whole the same way),
other blocks kept under ``other_blocks`` and reported. A ``system`` message inside ``messages`` (Claude
takes them mid-conversation) reads as the top-level ``system`` does. User content:
``tool_result`` blocks (answers by ``tool_use_id``, ``is_error`` kept) and the user's own text (text blocks
joined with a blank line); ``image`` and ``document`` blocks (``base64`` or ``url`` source, a document's
``title``) kept as the message's parts in the user's order. Other sources (``text``, ``content``,
``file``) and block fields a part has no place for (``cache_control``, ``citations``, ``context``) are
reported.

The renderer's ``(continued)`` user message in front of a history that opens with a reply (see
:data:`toolreplay.wires.common.SEPARATOR`) is the wire's role rule, not the user's words: it is not
stored. The turn rules are :func:`toolreplay.wires.turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.errors import WireError
from toolreplay.model import History, Part, PartKind, Reasoning, ServerTool, ToolSpec
from toolreplay.wires.common import SEPARATOR, body_issuer, request_settings
from toolreplay.wires.request_common import (
    listed,
    nonempty,
    objects,
    read_call,
    read_tools,
    split_list,
    user_events,
)
from toolreplay.wires.turns import (
    AgentSaid,
    Event,
    Result,
    SaidPart,
    SystemText,
    answer_text,
    assemble,
    merge_data,
)

WIRE = "anthropic"
#: The host of the wire's public API: the issuer of an imported body's replies (design 17) unless the
#: importer is told the URL the requests went to (``--issuer-url``).
PUBLIC_HOST = "api.anthropic.com"
#: The top-level keys that hold the conversation, its system prompt and its tools; every other one is
#: a request setting, kept as sent.
CONVERSATION_KEYS = ("messages", "system", "tools")
_THINKING = ("thinking", "redacted_thinking")


def thinking_piece(block: Mapping[str, Any]) -> Reasoning:
    """An Anthropic thinking (or redacted_thinking) block as a reasoning piece kept whole, signature
    included (replayed to its issuer only; importers that find such blocks elsewhere read them here)."""
    text = block.get("thinking")
    return Reasoning(text if isinstance(text, str) else "", {WIRE: dict(block)})


def _is_server_tool(kind: Any) -> bool:
    """A block of a tool Anthropic ran itself: ``server_tool_use`` and ``mcp_tool_use`` with their results
    (``web_search_tool_result``, ``code_execution_tool_result``, ``mcp_tool_result``...)."""
    return (isinstance(kind, str) and kind in ("server_tool_use", "mcp_tool_use")) or (
        isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result"
    )


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
    parts: list[SaidPart] = []
    data: dict[str, Any] | None = None
    for j, b in enumerate(_blocks(content, where)):
        kind = b.get("type")
        at = f"{where}.content[{j}]"
        if kind == "text":
            text = b.get("text")
            if isinstance(text, str) and text:
                parts.append(text)
        elif kind == "tool_use":
            parts.append(read_call(b.get("name"), b.get("input"), b.get("id"), at, "name", warnings, _fail))
        elif kind in _THINKING:
            parts.append(thinking_piece(b))
        elif _is_server_tool(kind):
            parts.append(ServerTool(str(kind), {WIRE: dict(b)}))  # kept whole, to its issuer only
        else:
            data = merge_data(data, {WIRE: {"other_blocks": [dict(b)]}})
            warnings.append(f"{at}: a {kind!r} block is kept as provider data, not replayed")
    return AgentSaid(parts, where, data, created_at)


#: The fields of an image or document block a part keeps (the rest is named in a warning).
#: ``cache_control`` is a prompt-cache marker, not content: the replay places its own (design 36), so
#: leaving it out loses nothing and is not reported.
_MEDIA_FIELDS = frozenset({"type", "source", "title", "cache_control"})


def media_part(b: Mapping[str, Any], at: str, warnings: list[str]) -> Part | None:
    """An ``image`` or ``document`` block as a part (a ``base64`` or ``url`` source), or None with a
    warning for a source a part cannot hold."""
    kind = str(b.get("type"))
    src = b.get("source")
    s = cast(Mapping[str, Any], src) if isinstance(src, Mapping) else {}
    title = b.get("title") if isinstance(b.get("title"), str) else ""
    if s.get("type") == "base64" and isinstance(s.get("data"), str):
        media = s.get("media_type")
        part = Part(cast(PartKind, kind), media_type=media if isinstance(media, str) else "",
                    data=s["data"], name=str(title))  # fmt: skip
    elif s.get("type") == "url" and isinstance(s.get("url"), str):
        part = Part(cast(PartKind, kind), url=s["url"], name=str(title))
    else:
        warnings.append(f"{at}: the {kind} block's {s.get('type')!r} source is not kept (base64 and url are)")
        return None
    extra = sorted(k for k in b if k not in _MEDIA_FIELDS)
    if extra:
        warnings.append(f"{at}: the {kind}'s {', '.join(extra)} not kept (the {kind} is)")
    return part


def _user(content: Any, where: str, warnings: list[str], created_at: str | None) -> list[Event]:
    results: list[Result] = []
    texts: list[str] = []
    parts: list[Part] = []
    for j, b in enumerate(_blocks(content, where)):
        kind = b.get("type")
        at = f"{where}.content[{j}]"
        if kind == "tool_result":
            answer, lost = answer_text(b.get("content"))
            for k in lost:
                warnings.append(f"{at}.content: a {k!r} block of the answer is not kept (text only)")
            ref = nonempty(b.get("tool_use_id"))
            results.append(Result(answer, ref, None, b.get("is_error") is True, at))
        elif kind == "text" and isinstance(b.get("text"), str):
            texts.append(str(b["text"]))
            parts.append(Part("text", text=str(b["text"])))
        elif kind in ("image", "document") and (part := media_part(b, at, warnings)) is not None:
            parts.append(part)
        elif kind not in ("image", "document"):
            warnings.append(f"{at}: a {kind!r} block is not kept (text only)")
    return user_events(results, texts, "\n\n", where, created_at, parts)


def message_events(
    msg: Mapping[str, Any], where: str, warnings: list[str], *, created_at: str | None = None
) -> list[Event]:
    """The events of one Messages message (shared by the Claude Code importer, whose entries hold them)."""
    role = msg.get("role")
    if role == "assistant":
        return [_assistant(msg.get("content"), where, warnings, created_at)]
    if role == "user":
        return _user(msg.get("content"), where, warnings, created_at)
    if role == "system":
        # Claude takes system messages inside ``messages`` too (mid-conversation instructions, such as
        # an agent's reminders): read as the top-level ``system`` is.
        return [SystemText(_system(msg.get("content"), warnings, f"{where}.content"), where)]
    raise _fail(f"{where}.role is {role!r}; expected user, assistant or system")


def _system(raw: Any, warnings: list[str], where: str = "system") -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        text, lost = answer_text(raw, joiner="\n\n")
        for k in lost:
            warnings.append(f"{where}: a {k!r} block is not kept (text only)")
        return text
    return ""


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """Client tools (``name``, ``description``, ``input_schema``); server tools (typed) are skipped."""
    custom = (t for t in listed(raw) if isinstance(t, Mapping) and t.get("type", "custom") == "custom")
    return read_tools(custom, schema=lambda d: d.get("input_schema"))


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``messages`` list and the rest of the body (empty when given just the list)."""
    return split_list(body, "messages", "messages", _fail)


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
    for i, where, msg in objects(msgs, "messages", _fail):
        if not _is_separator(msgs, i):
            events.extend(message_events(msg, where, warnings))
    tools = parse_tools(rest.get("tools"))
    issuer = body_issuer(WIRE, PUBLIC_HOST, rest.get("model"))
    return assemble(events, conversation_id=conversation_id, tools=tools, warnings=warnings,
                    issuer=issuer,
                    settings=request_settings(WIRE, body, CONVERSATION_KEYS))  # fmt: skip


__all__ = ["WIRE", "message_events", "parse_request", "parse_tools", "split_body"]

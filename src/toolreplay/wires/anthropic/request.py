"""Anthropic Messages request bodies read back into a stored history (importers, the audit).

Reads a whole body (``system``, ``messages``, ``tools``) or just its ``messages`` list. Assistant content:
``text`` blocks (each a piece of its own), ``tool_use`` blocks (``id``, ``name``, ``input``), ``thinking``
/ ``redacted_thinking`` blocks (kept whole, signatures included, as reasoning pieces of the message's
step, replayed only to their issuer: design 17), server-tool blocks (``server_tool_use``,
``mcp_tool_use``, ``*_tool_result``: kept whole the same way), other blocks kept under ``other_blocks``
and reported. The top-level ``system`` is one system message, or one per block of a list; a ``system``
message inside ``messages`` (Claude takes them mid-conversation) is a system message where it stood.
User content: ``tool_result`` blocks (answers by ``tool_use_id``, ``is_error`` kept; images and documents
in them as the answer's parts) and the user's own text (several blocks kept apart as parts); ``image``
and ``document`` blocks (``base64`` or ``url`` source, a document's ``title``) kept as the message's
parts in the user's order. Other sources (``text``, ``content``, ``file``) are reported. Tool
declarations are kept whole: client tools as function tools, typed ones (``web_search_20250305``,
``bash_20250124``...) as hosted tools. How each element stood (markers, block order, content forms,
keys beyond the neutral fields) is kept in ``sent``: :mod:`.layout` names the keys, :mod:`.as_sent`
renders them back (design 38).

The renderer's ``(continued)`` user message in front of a history that opens with a reply (see
:data:`toolreplay.wires.common.SEPARATOR`) is the wire's role rule, not the user's words: it is not
stored. The turn rules are :func:`toolreplay.wires.turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from toolreplay.errors import WireError
from toolreplay.model import History, Part, PartKind, Reasoning, Sent, ServerTool, Text, ToolSpec, with_words
from toolreplay.model import answer_text as model_answer_text
from toolreplay.wires.anthropic.layout import TEXT_KEYS, WIRE, extras, text_layout
from toolreplay.wires.common import SEPARATOR, body_issuer, merge_data, request_settings
from toolreplay.wires.read_memo import Group, ReadMemo, assemble_memo
from toolreplay.wires.request_common import (
    listed,
    nonempty,
    objects,
    read_call,
    read_tools,
    split_list,
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
    answer_text,
    assemble,
)

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


#: The keys of a ``tool_use`` and a ``tool_result`` block the neutral model holds (see :mod:`.layout`).
_USE_KEYS = frozenset({"type", "id", "name", "input"})
_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
_MESSAGE_KEYS = frozenset({"role", "content"})
_MEDIA_KEYS = frozenset({"type", "source", "title"})


def _said_block(b: Mapping[str, Any], at: str, warnings: list[str]) -> tuple[SaidPart | None, dict[str, Any]]:
    """One block of an assistant message: what the reply keeps of it, and its layout entry."""
    kind = b.get("type")
    if kind == "text":
        text = b.get("text")
        if isinstance(text, str) and text:
            return Text(text), {"k": "p", **extras(b, TEXT_KEYS)}
        return None, {"k": "e", **extras(b, TEXT_KEYS)}
    if kind == "tool_use":
        call = read_call(b.get("name"), b.get("input"), b.get("id"), at, "name", warnings, _fail)
        use = extras(b, _USE_KEYS)
        call.sent = {WIRE: {"use": use}} if use else None
        return call, {"k": "c"}
    if kind in _THINKING:
        return thinking_piece(b), {"k": "p"}
    if _is_server_tool(kind):
        return ServerTool(str(kind), {WIRE: dict(b)}), {"k": "p"}  # kept whole, to its issuer only
    warnings.append(f"{at}: a {kind!r} block is kept as provider data, not replayed")
    return None, {}


def _assistant(msg: Mapping[str, Any], where: str, warnings: list[str], created_at: str | None) -> AgentSaid:
    parts: list[SaidPart] = []
    data: dict[str, Any] | None = None
    layout: list[dict[str, Any]] = []
    texts: list[tuple[dict[str, Any], str]] = []
    for j, b in enumerate(_blocks(msg.get("content"), where)):
        part, entry = _said_block(b, f"{where}.content[{j}]", warnings)
        if not entry:
            data = merge_data(data, {WIRE: {"other_blocks": [dict(b)]}})
            continue
        layout.append(entry)
        if part is not None:
            parts.append(part)
        if isinstance(part, Text):
            texts.append((entry, part.text))
    if not any(isinstance(p, Call) for p in parts):
        # a message without calls closes the reply: its words are the reply's text, cut apart by length
        for entry, text in texts:
            entry.update(k="t", len=len(text))
    return AgentSaid(parts, where, data, created_at, _message_sent(msg, layout))


def _message_sent(msg: Mapping[str, Any], layout: Any, **more: Any) -> Sent:
    """A body message's layout: its content's form (``"string"`` or one entry per block), its other keys."""
    lay: dict[str, Any] = {"content": "string" if isinstance(msg.get("content"), str) else layout}
    extra = extras(msg, _MESSAGE_KEYS)
    if extra:
        lay["extra"] = extra
    lay.update({k: v for k, v in more.items() if v})
    return {WIRE: lay}


#: The fields of an image or document block a part keeps (the rest is named in a warning).
#: ``cache_control`` is a prompt-cache marker, not content: a normal render places its own (design 36);
#: the as-sent render gives it back from the message's layout, so it is not reported.
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


def _result(b: Mapping[str, Any], at: str, warnings: list[str]) -> Result:
    """A ``tool_result`` block as an answer: its text (text blocks joined by a line break), its images
    and documents as parts; its layout (content form, ``is_error`` written out, other keys) in ``sent``."""
    content = b.get("content")
    lay: dict[str, Any] = {}
    parts: list[Part] = []
    if content is None:
        lay["content"], answer = "none", ""
    elif isinstance(content, list):
        answer = answer_text(content)[0]
        lay["content"] = entries = []
        for j, raw in enumerate(content):
            block = cast(Mapping[str, Any], raw) if isinstance(raw, Mapping) else {}
            kind = block.get("type")
            part = (
                media_part(block, f"{at}.content[{j}]", warnings) if kind in ("image", "document") else None
            )
            if part is not None:
                parts.append(part)
                entries.append({"k": "m", **extras(block, _MEDIA_KEYS)})
            elif kind == "text" and isinstance(block.get("text"), str):
                parts.append(Part("text", text=str(block["text"])))
                entries.append({"k": "t", **text_layout([block])[0]})
            else:
                entries.append({"k": "r", "raw": raw})  # kept as sent; text-only wires get none of it
                warnings.append(f"{at}.content[{j}]: a {kind!r} block of the answer is not kept (text only)")
        if any(p.kind != "text" for p in parts):
            answer = model_answer_text(parts)
        else:
            parts = []
    else:
        answer, lay["content"] = answer_text(content)[0], "string"
    if "is_error" in b:
        lay["is_error"] = b["is_error"]
    extra = extras(b, _RESULT_KEYS)
    if extra:
        lay["extra"] = extra
    ref = nonempty(b.get("tool_use_id"))
    return Result(answer, ref, None, b.get("is_error") is True, at, tuple(parts), {WIRE: {"result": lay}})


def _user(msg: Mapping[str, Any], where: str, warnings: list[str], created_at: str | None) -> list[Event]:
    results: list[Result] = []
    parts: list[Part] = []
    layout: list[dict[str, Any]] = []
    for j, b in enumerate(_blocks(msg.get("content"), where)):
        kind = b.get("type")
        at = f"{where}.content[{j}]"
        if kind == "tool_result":
            results.append(_result(b, at, warnings))
        elif kind == "text" and isinstance(b.get("text"), str):
            parts.append(Part("text", text=str(b["text"])))
            layout.append(extras(b, TEXT_KEYS))
        elif kind in ("image", "document"):
            if (part := media_part(b, at, warnings)) is not None:
                parts.append(part)
                layout.append(extras(b, _MEDIA_KEYS))
        else:
            warnings.append(f"{at}: a {kind!r} block is not kept (text only)")
    events: list[Event] = [Answers(results, where)] if results else []
    if parts or not results:
        sent = _message_sent(msg, layout, joined=bool(results))
        if len(parts) > 1 or any(p.kind != "text" for p in parts):
            text, kept = with_words("", parts)  # several blocks: kept apart, as parts
            events.append(UserText(text, where, created_at, parts=kept, sent=sent))
        else:
            events.append(UserText(parts[0].text if parts else "", where, created_at, sent=sent))
    return events


def message_events(
    msg: Mapping[str, Any], where: str, warnings: list[str], created_at: str | None = None
) -> list[Event]:
    """The events of one Messages message (``ImportForm.message_events``: the Claude Code importer's
    entries hold them one at a time)."""
    role = msg.get("role")
    if role == "assistant":
        return [_assistant(msg, where, warnings, created_at)]
    if role == "user":
        return _user(msg, where, warnings, created_at)
    if role == "system":
        # Claude takes system messages inside ``messages`` (the mid-conversation-system beta: an agent's
        # reminders): a system message where it stood, its text blocks cut apart again by length
        raw = msg.get("content")
        text = _system(raw, warnings, f"{where}.content")
        layout = text_layout(_texts(raw)) if isinstance(raw, list) else []
        return [SystemText(text, where, _message_sent(msg, layout))]
    raise _fail(f"{where}.role is {role!r}; expected user, assistant or system")


def _texts(raw: list[Any]) -> list[Mapping[str, Any]]:
    return [cast(Mapping[str, Any], b) for b in raw if isinstance(b, Mapping) and "text" in b]


def _system(raw: Any, warnings: list[str], where: str = "system") -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        text, lost = answer_text(raw, joiner="\n\n")
        for k in lost:
            warnings.append(f"{where}: a {k!r} block is not kept (text only)")
        return text
    return ""


def _system_events(raw: Any, warnings: list[str]) -> list[Event]:
    """The top-level ``system``: a string is one system message; a list one per text block, each with
    its own keys (Claude Code sends 3 blocks, with their ``cache_control`` markers)."""
    if isinstance(raw, str):
        return [SystemText(raw, "system", {WIRE: {"system": "string"}})] if raw else []
    if not isinstance(raw, list):
        return []
    out: list[Event] = []
    for j, b in enumerate(raw):
        if isinstance(b, Mapping) and isinstance(b.get("text"), str):
            block = cast(Mapping[str, Any], b)
            lay: dict[str, Any] = {"system": "block"}
            if extra := extras(block, TEXT_KEYS):
                lay["extra"] = extra
            out.append(SystemText(str(block["text"]), f"system[{j}]", {WIRE: lay}))
        else:
            kind = b.get("type") if isinstance(b, Mapping) else type(b).__name__
            warnings.append(f"system[{j}]: a {kind!r} block is not kept (text only)")
    return out


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """Every declaration, kept whole in ``sent``: client tools (``name``, ``description``,
    ``input_schema``) as function tools; typed server and client tools (``web_search_20250305``,
    ``bash_20250124``, ``text_editor_20250728``, ``code_execution``...) as hosted tools named by their
    ``name`` (else their type)."""
    out: list[ToolSpec] = []
    for t in listed(raw):
        if not isinstance(t, Mapping):
            continue
        d = cast(Mapping[str, Any], t)
        sent = {WIRE: {"tool": dict(d)}}
        if d.get("type", "custom") == "custom":
            for spec in read_tools([d], schema=lambda e: e.get("input_schema")):
                out.append(replace(spec, sent=sent))
        elif isinstance(name := d.get("name", d.get("type")), str) and name:
            out.append(ToolSpec(name, kind="hosted", sent=sent))
    return tuple(out)


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


def parse_request(
    body: Any,
    *,
    conversation_id: str = "request",
    memo: ReadMemo | None = None,
    raws: Mapping[str, Any] | None = None,
) -> History:
    """An Anthropic Messages body (or its ``messages`` list) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not this wire's
    shape; what it cannot represent is listed in the history's ``warnings``. ``memo``: each message read
    and each turn assembled once (the proxy's, design 53); the history is the same with or without.
    ``raws``: the exact bytes the body's ``system`` and ``tools`` were read from, and of each of its
    ``messages`` (a list of them), which key the memo instead of an encoding of the values.
    """
    msgs, rest = split_body(body)
    system = rest.get("system")
    raws = raws or {}
    if memo is None:
        warnings: list[str] = []
        events = _system_events(system, warnings)
        for i, where, msg in objects(msgs, "messages", _fail):
            if not _is_separator(msgs, i):
                events.extend(message_events(msg, where, warnings))
        groups = [Group(tuple(events), tuple(warnings), 0)]
    else:
        groups = [memo.events("system", system, lambda w: _system_events(system, w), raws.get("system"))]
        entries = (  # every entry an object (the check at C speed: a long conversation's hundreds)
            msgs if set(map(type, msgs)) <= {dict} else [m for _, _, m in objects(msgs, "messages", _fail)]
        )
        skip = 0 if _is_separator(msgs, 0) else -1
        groups += memo.listed(entries, message_events, "messages", skip, raws.get("messages"))
        events = list(groups[0].events)  # what `_holds` asks: the system prompt's (the messages' say none)
    raw_tools = rest.get("tools")
    tools = (
        parse_tools(raw_tools)
        if memo is None
        else memo.parsed("tools", raw_tools, parse_tools, raws.get("tools"))
    )
    issuer = body_issuer(WIRE, PUBLIC_HOST, rest.get("model"))
    settings = request_settings(WIRE, body, CONVERSATION_KEYS)
    if settings is not None:
        # a system prompt or a tool list that holds nothing has no message or declaration to live in:
        # kept with the settings, as sent
        empty = {k: rest[k] for k in ("system", "tools") if k in rest and not _holds(k, events, tools)}
        settings = replace(settings, fields={**settings.fields, **empty})
    if memo is not None:
        return assemble_memo(memo, groups, conversation_id=conversation_id, tools=tools, issuer=issuer,
                             settings=settings)  # fmt: skip
    return assemble(events, conversation_id=conversation_id, tools=tools, warnings=groups[0].warnings,
                    issuer=issuer, settings=settings)  # fmt: skip


def _holds(key: str, events: Sequence[Event], tools: Sequence[ToolSpec]) -> bool:
    if key == "tools":
        return bool(tools)
    return any(isinstance(e, SystemText) and e.where.startswith("system") for e in events)


__all__ = ["WIRE", "message_events", "parse_request", "parse_tools", "split_body"]

"""OpenAI Chat Completions request bodies read back into a stored history (importers, the audit).

Reads a whole body (``messages``, ``tools``) or just its ``messages`` list: ``system``/``developer``
messages, ``user`` messages, ``assistant`` messages with ``content`` and ``tool_calls`` (``arguments`` a
JSON string, or an object as some compatible servers take it), ``tool`` messages answering by
``tool_call_id``, and the legacy ``function_call`` / ``function`` pair (answered by position). Kimi's and
DeepSeek's ``reasoning_content`` (vLLM's ``reasoning``, OpenRouter's ``reasoning_details``) and Mistral's
``thinking`` content parts are kept verbatim as reasoning pieces of the message's step, replayed only to
their issuer (design 17), never in an id. A user message's ``image_url`` parts (an address or a
``data:`` URL) and ``file`` parts (``file_data``, ``filename``) are kept as its parts in order; a file
given by ``file_id`` only, ``input_audio`` (no part kind holds sound) and a ``detail`` other than
``auto`` are reported.

The turn rules (one agent turn is one stored reply, pairing, deterministic ids) are
:func:`toolreplay.wires.turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from toolreplay import jsonenc
from toolreplay.errors import WireError
from toolreplay.model import History, Part, Reasoning, ToolSpec, with_words
from toolreplay.wires.common import body_issuer, request_settings
from toolreplay.wires.media import from_data_url
from toolreplay.wires.openai_chat.layout import message_layout, sent_of
from toolreplay.wires.openai_chat.response import thinking_text
from toolreplay.wires.read_memo import Group, ReadMemo, assemble_memo
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
    answer_text,
    arguments_input,
    assemble,
)

WIRE = "openai-chat"
#: The host of the wire's public API: the issuer of an imported body's replies (design 17) unless the
#: importer is told the URL the requests went to (``--issuer-url``).
PUBLIC_HOST = "api.openai.com"
#: The top-level keys that hold the conversation, its system prompt and its tools; every other one is
#: a request setting, kept as sent.
CONVERSATION_KEYS = ("messages", "tools", "functions")
_REASONING_KEYS = ("reasoning_content", "reasoning")
#: Content part types that carry text (``refusal`` is an assistant's text too).
_TEXT_PARTS = {"text": "text", "refusal": "refusal", "input_text": "text", "output_text": "text"}


def _fail(problem: str) -> WireError:
    return WireError(f"{WIRE} request: {problem}")


def content_text(content: Any, where: str, warnings: list[str]) -> str:
    """A message's ``content`` as text: a string, null, or a list of parts (text parts joined)."""
    return "".join(p for p in content_pieces(content, where, warnings, thinking=False) if isinstance(p, str))


def content_pieces(
    content: Any, where: str, warnings: list[str], *, thinking: bool = True
) -> list[str | Reasoning]:
    """A message's ``content`` in order: its text (adjacent text parts joined) and, with ``thinking``
    (an assistant's content), Mistral ``thinking`` parts as reasoning kept whole."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content] if content else []
    if not isinstance(content, list):
        raise _fail(f"{where}.content is {type(content).__name__}, not a string, null or a list of parts")
    out: list[str | Reasoning] = []
    for j, part in enumerate(content):
        if not isinstance(part, str | Mapping):
            raise _fail(f"{where}.content[{j}] is {type(part).__name__}, not a content part")
        p = cast(Mapping[str, Any], part) if isinstance(part, Mapping) else {"type": "text", "text": part}
        key = _TEXT_PARTS.get(str(p.get("type")))
        if key is not None and isinstance(p.get(key), str):
            text = str(p[key])
            if out and isinstance(out[-1], str):
                out[-1] += text
            elif text:
                out.append(text)
        elif thinking and p.get("type") == "thinking":
            out.append(Reasoning(thinking_text(p), {WIRE: {"content_part": dict(p)}}))
        else:
            warnings.append(f"{where}.content[{j}]: a {p.get('type')!r} part is not kept (text only)")
    return out


def _media(p: Mapping[str, Any], at: str, warnings: list[str]) -> Part | None:
    """An ``image_url`` or ``file`` part as a part of the message, or None (reported)."""
    kind = p.get("type")
    inner = p.get(str(kind))
    d = cast(Mapping[str, Any], inner) if isinstance(inner, Mapping) else {}
    part: Part | None = None
    if kind == "image_url":
        url = d.get("url") if d else inner
        part = from_data_url("image", url) if isinstance(url, str) and url else None
        if part is not None and d.get("detail") not in (None, "auto"):
            warnings.append(
                f"{at}: detail {d.get('detail')!r} is kept for an as-sent render only (others send auto)"
            )
    elif isinstance(d.get("file_data"), str) and d["file_data"]:
        name = d.get("filename") if isinstance(d.get("filename"), str) else ""
        part = from_data_url("document", d["file_data"], str(name))
        if not part.data:  # bare base64, no data: URL around it
            part = Part("document", data=d["file_data"], name=str(name))
    if part is None:
        warnings.append(f"{at}: a {kind!r} part without data or a URL (a file_id) is not kept")
    return part


def _user(msg: Mapping[str, Any], where: str, warnings: list[str], created_at: str | None) -> UserText:
    """A user message: its words, and its parts in order when its content is a list (text parts kept
    apart, images, files), each part's layout in its ``sent``."""
    content = msg.get("content")
    sent = sent_of(message_layout(msg, content=not isinstance(content, list)))
    if not isinstance(content, list):
        return UserText(content_text(content, where, warnings), where, created_at, sent=sent)
    parts: list[Part] = []
    for j, raw in enumerate(content):
        at = f"{where}.content[{j}]"
        p = cast(Mapping[str, Any], raw) if isinstance(raw, Mapping) else {"type": "text", "text": raw}
        key = _TEXT_PARTS.get(str(p.get("type")))
        got: Part | None = None
        if key is not None and isinstance(p.get(key), str):
            got = Part("text", text=str(p[key]))
        elif p.get("type") in ("image_url", "file"):
            got = _media(p, at, warnings)
        else:
            warnings.append(f"{at}: a {p.get('type')!r} part is not kept (no part kind holds it)")
        if got is not None:
            parts.append(replace(got, sent=sent_of(part_layout(p, key or str(p.get("type"))))))
    text, kept = with_words("", parts)
    return UserText(text, where, created_at, parts=kept, sent=sent)


def part_layout(p: Mapping[str, Any], key: str) -> dict[str, Any]:
    """What of a content part its :class:`Part` does not say: a type alias, extra keys (outside and in
    its ``image_url`` / ``file`` object)."""
    out: dict[str, Any] = {}
    if p.get("type") != "text" and key == "text":
        out["type"] = p.get("type")
    extra = {k: v for k, v in p.items() if k not in ("type", key)}
    if extra:
        out["extra"] = extra
    inner = p.get(key)
    if isinstance(inner, Mapping):
        kept = {k: v for k, v in inner.items() if k not in ("url", "file_data", "filename")}
        if kept:
            out["inner"] = kept
    return out


def _calls(msg: Mapping[str, Any], where: str, warnings: list[str]) -> list[Call]:
    out = function_calls(msg.get("tool_calls"), where, warnings, _fail)
    for call, tc in zip(out, listed(msg.get("tool_calls")), strict=True):
        fn = cast(Mapping[str, Any], tc["function"])
        call.sent = sent_of(_arguments_layout(call, fn.get("arguments")))
    legacy = msg.get("function_call")
    if isinstance(legacy, Mapping) and isinstance(legacy.get("name"), str):
        lf = cast(Mapping[str, Any], legacy)
        value, problem = arguments_input(lf.get("arguments"))
        if problem:
            warnings.append(f"{where}.function_call: {problem}")
        call = Call(str(lf["name"]), value, None)
        call.sent = sent_of({**_arguments_layout(call, lf.get("arguments")), "legacy": True})
        out.append(call)
    return out


def _arguments_layout(call: Call, raw: Any) -> dict[str, Any]:
    """The arguments as sent, where the compact JSON of the stored input is not them."""
    if isinstance(raw, str) and (not isinstance(call.input, Mapping) or jsonenc.dumps(call.input) == raw):
        return {}
    return {"arguments": raw}


def _reasoning(msg: Mapping[str, Any]) -> list[Reasoning]:
    """The message's reasoning fields as one piece kept verbatim (as the response parser keeps them)."""
    data: dict[str, Any] = {k: msg[k] for k in _REASONING_KEYS if isinstance(msg.get(k), str) and msg[k]}
    if isinstance(msg.get("reasoning_details"), list) and msg["reasoning_details"]:
        data["reasoning_details"] = msg["reasoning_details"]
    if not data:
        return []
    readable = str(data.get("reasoning_content") or data.get("reasoning") or "")
    return [Reasoning(readable, {WIRE: data})]


def message_events(
    msg: Mapping[str, Any], where: str, warnings: list[str], *, created_at: str | None = None
) -> list[Event]:
    """The events of one Chat message (shared by the tau-bench importer for its v1 transcripts)."""
    role = msg.get("role")
    if role in ("system", "developer"):
        sent = sent_of(message_layout(msg))
        return [SystemText(content_text(msg.get("content"), where, warnings), where, sent)]
    if role == "user":
        return [_user(msg, where, warnings, created_at)]
    if role == "assistant":
        parts: list[SaidPart] = [*_reasoning(msg)]
        parts.extend(content_pieces(msg.get("content"), where, warnings))
        parts.extend(_calls(msg, where, warnings))
        layout = message_layout(msg)
        if not parts:
            layout["empty"] = True
        return [AgentSaid(parts, where, None, created_at, sent_of(layout))]
    if role in ("tool", "function"):
        answer, lost = answer_text(msg.get("content"), joiner="")
        for kind in lost:
            warnings.append(f"{where}.content: a {kind!r} part of the answer is not kept (text only)")
        cid = msg.get("tool_call_id") if role == "tool" else None
        layout = message_layout(msg)
        result = Result(answer, nonempty(cid), string(msg.get("name")), where=where,
                        sent=sent_of({"result": layout}) if layout else None)  # fmt: skip
        return [Answers([result], where)]
    raise _fail(f"{where}.role is {role!r}; expected system, developer, user, assistant, tool or function")


def parse_tools(raw: Any, key: str = "tool") -> tuple[ToolSpec, ...]:
    """``tools`` (``{"type": "function", "function": {...}}``) or legacy ``functions`` definitions
    (``key`` ``function``), each declaration kept whole in its ``sent`` for the as-sent render."""
    out: list[ToolSpec] = []
    for t in listed(raw):
        if isinstance(t, Mapping):
            d = cast(Mapping[str, Any], t)
            for spec in read_tools([d.get("function", d)]):
                out.append(replace(spec, sent={WIRE: {key: dict(d)}}))
    return tuple(out)


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``messages`` list and the rest of the body (empty when given just the list)."""
    return split_list(body, "messages", "messages", _fail)


def _functions(raw: Any) -> tuple[ToolSpec, ...]:
    return parse_tools(raw, "function")


def parse_request(
    body: Any,
    *,
    conversation_id: str = "request",
    memo: ReadMemo | None = None,
    raws: Mapping[str, Any] | None = None,
) -> History:
    """A Chat request body (or its ``messages`` list) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not Chat's shape;
    anything it cannot represent (image parts, broken arguments kept as text, orphan answers) is listed
    in the history's ``warnings``. ``memo``: each message read and each turn assembled once (the
    proxy's, design 53); the history is the same with or without. ``raws``: the exact bytes the body's
    ``tools`` and ``functions`` were read from, and of each of its ``messages`` (a list of them).
    """
    msgs, rest = split_body(body)
    raws = raws or {}
    # a message is read alone (a tool message's pairing with the call before it is the assembler's), so
    # each one's events are a pure function of its bytes and place; a list with an entry that is no
    # object is read whole, to fail where the whole read fails
    memoized = memo is not None and set(map(type, msgs)) <= {dict}  # at C speed
    groups: list[Group] = []
    warnings: list[str] = []
    events: list[Event] = []
    if memo is not None and memoized:
        groups = memo.listed(msgs, message_events, "messages", raws=raws.get("messages"))
        tools = memo.parsed("tools", rest.get("tools"), parse_tools, raws.get("tools"))
        if "functions" in rest:  # the legacy declarations, which few clients send
            tools += memo.parsed("functions", rest["functions"], _functions, raws.get("functions"))
    else:
        for _, where, msg in objects(msgs, "messages", _fail):
            events.extend(message_events(msg, where, warnings))
        tools = parse_tools(rest.get("tools")) + _functions(rest.get("functions"))
    issuer = body_issuer(WIRE, PUBLIC_HOST, rest.get("model"))
    settings = request_settings(WIRE, body, CONVERSATION_KEYS)
    if settings is not None:  # an empty or null list of tools declares nothing: it is kept as a setting
        empty = {k: rest[k] for k in ("tools", "functions") if k in rest and rest[k] in ([], None)}
        settings = replace(settings, fields={**settings.fields, **empty}) if empty else settings
    if memo is not None and memoized:
        return assemble_memo(memo, groups, conversation_id=conversation_id, tools=tools, issuer=issuer,
                             settings=settings)  # fmt: skip
    return assemble(events, conversation_id=conversation_id, tools=tools, warnings=warnings,
                    issuer=issuer, settings=settings)  # fmt: skip


__all__ = [
    "WIRE",
    "content_pieces",
    "content_text",
    "message_events",
    "parse_request",
    "parse_tools",
    "split_body",
]

"""OpenAI Responses request bodies read back into a stored history (importers, the audit).

Reads a whole body (``instructions``, ``input``, ``tools``) or just its ``input`` (a list of items, or a
string: one user message). Items: messages (``role`` user/system/developer/assistant, content a string or
a list of ``input_text``/``output_text``/``refusal`` parts), ``function_call`` (``call_id``, ``name``,
JSON-string ``arguments``), ``function_call_output``, ``custom_tool_call`` (a free-form call: its raw
``input`` text is its whole input, ``ToolCall.kind`` ``custom``) and its ``custom_tool_call_output``, and
``reasoning`` items (kept whole, ``encrypted_content`` included, as reasoning pieces of the step they
lead, replayed only to their issuer; a call's ``fc_...`` / ``ctc_...`` item id is kept as ``item_id``
beside it, never as its id). Hosted-tool items (``web_search_call``, ``code_interpreter_call``...) are
kept whole the same way, as server-tool pieces. Other item kinds (item references) are reported, not
kept. A user message's ``input_image`` (``image_url``: a ``data:`` URL or an address) and ``input_file``
(``file_data`` or ``file_url``, ``filename``) parts are kept as its parts in order; one given only by
``file_id`` (a file kept at OpenAI), and a ``detail`` other than ``auto``, are reported.

``tools``: function tools, free-form ``custom`` tools (their grammar ``format`` kept) and the tools
OpenAI runs itself (``web_search``, ``tool_search``, ``code_interpreter``, ``mcp``, ``file_search``,
``image_generation``, ``local_shell``), each declaration kept whole. Every other top-level field is a
request setting, kept as sent. How each element stood in its body (item ids, ``developer`` roles,
content parts kept apart, output ids) is kept in its ``sent`` (the keys: :mod:`.layout`), for the
as-sent render (design 38).

One model response is several items in this wire: an output-form message (``type: "message"`` or a list
of ``output_text`` parts), reasoning items and the call items that follow it without an output between
are read as one agent message (text beside calls). An easy-form assistant message (``{"role":
"assistant", "content": "..."}``, what the renderer writes after a reply's calls) stands on its own. The
turn rules are :func:`toolreplay.wires.turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from toolreplay import jsonenc
from toolreplay.errors import WireError
from toolreplay.model import FREE_FORM_PARAMETERS, History, Part, RequestSettings, ToolSpec, with_words
from toolreplay.wires.common import body_issuer, request_settings
from toolreplay.wires.media import data_url, from_data_url
from toolreplay.wires.openai_responses.layout import (
    HOSTED_ITEMS,
    call_layout,
    message_layout,
    output_layout,
    part_layout,
    sent_of,
)
from toolreplay.wires.openai_responses.response import said_item
from toolreplay.wires.read_joined import joined
from toolreplay.wires.read_memo import Group, ReadMemo, assemble_memo
from toolreplay.wires.request_common import listed, nonempty, objects, read_tools, split_list
from toolreplay.wires.turns import (
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
)

WIRE = "openai-responses"
#: The host of the wire's public API: the issuer of an imported body's replies (design 17) unless the
#: importer is told the URL the requests went to (``--issuer-url``).
PUBLIC_HOST = "api.openai.com"
#: The top-level keys that hold the conversation, its system prompt and its tools; every other one is
#: a request setting, kept as sent.
CONVERSATION_KEYS = ("input", "instructions", "tools")
#: The request parameters of OpenAI's public Responses API (the openai SDK's ``ResponseCreateParams``): a
#: normal render carries an imported request's settings among these; others (Codex's ``client_metadata``,
#: which the ChatGPT backend takes) go only in an as-sent render.
PUBLIC_PARAMS = frozenset(
    {"background", "background_options", "context_management", "conversation", "include", "input",
     "instructions", "max_output_tokens", "max_tool_calls", "metadata", "model", "moderation",
     "parallel_tool_calls", "previous_response_id", "prompt", "prompt_cache_key", "prompt_cache_options",
     "prompt_cache_retention", "reasoning", "safety_identifier", "service_tier", "store", "stream",
     "stream_options", "temperature", "text", "tool_choice", "tools", "top_logprobs", "top_p",
     "truncation", "user"}
)  # fmt: skip
_TEXT_PARTS = ("input_text", "output_text", "text", "refusal")
_MEDIA = ("input_image", "input_file")
_CALLS = ("function_call", "custom_tool_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def _fail(problem: str) -> WireError:
    return WireError(f"{WIRE} request: {problem}")


def _media(p: Mapping[str, Any], at: str, warnings: list[str]) -> Part | None:
    """An ``input_image`` or ``input_file`` part as a part of the message, or None (reported)."""
    kind = p.get("type")
    if kind == "input_image":
        url = p.get("image_url")
        part = from_data_url("image", url) if isinstance(url, str) and url else None
    else:
        name = p.get("filename") if isinstance(p.get("filename"), str) else ""
        data, url = p.get("file_data"), p.get("file_url")
        if isinstance(data, str) and data:
            part = from_data_url("document", data, str(name))
            if not part.data:  # bare base64, no data: URL around it
                part = Part("document", data=data, name=str(name))
        elif isinstance(url, str) and url:
            part = Part("document", url=url, name=str(name))
        else:
            part = None
    if part is None:
        warnings.append(f"{at}: an {kind!r} part given by file_id only (a file kept at OpenAI) is not kept")
    elif p.get("detail") not in (None, "auto"):
        warnings.append(
            f"{at}: detail {p.get('detail')!r} is kept for an as-sent render only (others send auto)"
        )
    return part


#: The keys of an image or file part its :class:`Part` holds.
_MEDIA_KEYS = ("image_url", "file_data", "file_url", "filename")


def _media_layout(p: Mapping[str, Any], got: Part) -> dict[str, Any]:
    """What of a media part its :class:`Part` does not say: its other keys (``detail``), and the URL or
    data as sent when the part's rebuilt ``data:`` URL would differ."""
    out: dict[str, Any] = {"type": p.get("type")}
    extra = {k: v for k, v in p.items() if k not in ("type", *_MEDIA_KEYS)}
    if extra:
        out["extra"] = extra
    kept = {k: p[k] for k in _MEDIA_KEYS if k in p}
    rebuilt = media_fields(got)
    if kept != rebuilt:
        out["raw"] = kept
    return out


def media_fields(p: Part) -> dict[str, Any]:
    """The keys of an ``input_image`` / ``input_file`` part that carry ``p`` (as the renderer writes them)."""
    if p.kind == "image":
        return {"image_url": p.url or data_url(p)}
    out: dict[str, Any] = {"file_url": p.url} if p.url else {"file_data": data_url(p)}
    out["filename"] = p.name or "document"
    return out


def _content(content: Any, where: str, warnings: list[str], media: bool) -> tuple[str, list[Part], Any]:
    """A message's text, (``media``: a user message) its parts in order when it holds any image or file
    (otherwise none: a message of words stays text), and the content's layout (see :mod:`.layout`)."""
    if content is None:
        return "", [], "none"
    if isinstance(content, str):
        return content, [], "string"
    if not isinstance(content, list):
        raise _fail(f"{where}.content is {type(content).__name__}, not a string or a list of parts")
    texts: list[str] = []
    parts: list[Part] = []
    layouts: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        if not isinstance(part, Mapping):
            raise _fail(f"{where}.content[{j}] is {type(part).__name__}, not a content part")
        p = cast(Mapping[str, Any], part)
        kind = p.get("type")
        value = p.get("refusal") if kind == "refusal" else p.get("text")
        if kind in _TEXT_PARTS and isinstance(value, str):
            texts.append(value)
            parts.append(Part("text", text=value, sent=sent_of(part_layout(p, None))))
            layouts.append(part_layout(p, value))
            continue
        layouts.append(part_layout(p, None))  # kept whole in the layout: the as-sent render gives it back
        if media and kind in _MEDIA:
            got = _media(p, f"{where}.content[{j}]", warnings)
            parts.extend([replace(got, sent=sent_of(_media_layout(p, got)))] if got is not None else [])
        else:
            warnings.append(f"{where}.content[{j}]: a {kind!r} part is not kept (text only)")
    if not any(p.kind != "text" for p in parts):
        return "".join(texts), [], layouts
    return with_words("", parts)[0], parts, "parts"


def _is_output_form(item: Mapping[str, Any]) -> bool:
    """A message as a response produced it (not the easy input form the renderer writes)."""
    return item.get("type") == "message" or isinstance(item.get("content"), list) or "id" in item


@dataclass(slots=True)
class _Item(AgentSaid):
    """One item of a model response (an output-form message, a reasoning or hosted-tool item, a call):
    the items of one response are joined into one :class:`AgentSaid` (:func:`join_items`), each with its
    layout slot, in order."""

    slot: dict[str, Any] = field(default_factory=lambda: {})


def item_events(item: Mapping[str, Any], where: str, warnings: list[str]) -> list[Event]:
    """The events of one ``input`` item, read alone: whether it joins the items before it into one model
    response is :func:`join_items`'s to say (a read memo gives an item's events again wherever it stands)."""
    kind = item.get("type")
    role = item.get("role")
    if role is not None and kind in (None, "message"):
        return [_message(item, str(role), where, warnings)]
    if kind in _CALLS:
        return [_call(item, str(kind), where, warnings)]
    if kind in _OUTPUTS:
        return [Answers([_output(item, where, warnings)], where)]
    if kind == "reasoning" or (isinstance(kind, str) and kind in HOSTED_ITEMS):
        # kept verbatim in its place, replayed only to its issuer (design 17)
        return [_Item([said_item(item)], where, slot={"kind": "said"})]
    warnings.append(f"{where}: a {kind!r} item is not kept (no stored form for it)")
    return []


def _said(run: Sequence[_Item]) -> AgentSaid:
    """The items of one model response as one agent message, one layout slot per item."""
    parts = [p for i in run for p in i.parts]
    return AgentSaid(parts, run[0].where, sent=sent_of({"items": [i.slot for i in run]}))


def join_items(events: Sequence[Event]) -> list[Event]:
    """The events with each run of model-response items (nothing else between them) as one message."""
    out: list[Event] = []
    run: list[_Item] = []
    for ev in events:
        if isinstance(ev, _Item):
            run.append(ev)
            continue
        if run:
            out.append(_said(run))
            run = []
        out.append(ev)
    if run:
        out.append(_said(run))
    return out


def _output(item: Mapping[str, Any], where: str, warnings: list[str]) -> Result:
    raw = item.get("output")
    answer, lost = answer_text(raw, joiner="")
    for k in lost:
        warnings.append(f"{where}.output: a {k!r} part of the answer is not kept (text only)")
    content = None
    if isinstance(raw, list) and all(isinstance(p, Mapping) for p in raw):
        content = [part_layout(p, p["text"] if isinstance(p.get("text"), str) else None) for p in raw]
    layout = output_layout(item, content)
    return Result(answer, nonempty(item.get("call_id")), where=where, sent=sent_of(layout))


def _message(item: Mapping[str, Any], role: str, where: str, warnings: list[str]) -> Event:
    text, parts, content = _content(item.get("content"), where, warnings, role == "user")
    content = "null" if content == "none" and "content" in item else content
    layout = message_layout(item, content)
    if role == "assistant":
        slot = {"kind": "text", "len": len(text), **layout}
        if _is_output_form(item):
            return _Item([text] if text else [], where, slot=slot)
        return AgentSaid([text] if text else [], where, sent=sent_of({"items": [{**slot, "easy": True}]}))
    if role in ("system", "developer"):
        return SystemText(text, where, sent_of({**layout, "role": role}))
    if role == "user":
        return UserText(text, where, parts=tuple(parts), sent=sent_of(layout))
    raise _fail(f"{where}.role is {role!r}; expected user, assistant, system or developer")


def _call(item: Mapping[str, Any], kind: str, where: str, warnings: list[str]) -> _Item:
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(f"{where}.name is missing or not a string")
    raw = item.get("arguments")
    if kind == "custom_tool_call":  # a free-form call: its raw text is its whole input
        got = item.get("input")
        value: Any = got if isinstance(got, str) else ""
        sent = sent_of(call_layout(item, None))
    else:
        value, problem = arguments_input(raw)
        if problem:
            warnings.append(f"{where}: {problem}")
        same = isinstance(raw, str) and isinstance(value, Mapping) and jsonenc.dumps(value) == raw
        sent = sent_of(call_layout(item, None if same else raw))
    cid = item.get("call_id")
    item_id = item.get("id")
    data = {WIRE: {"item_id": item_id}} if isinstance(item_id, str) and item_id else None
    call = Call(name, value, cid if isinstance(cid, str) else None, data,
                "custom" if kind == "custom_tool_call" else "function", sent)  # fmt: skip
    return _Item([call], where, slot={"kind": "call"})


def _tool(t: Mapping[str, Any]) -> ToolSpec | None:
    """One declaration as a tool of its kind, kept whole in its ``sent``: a function tool, a free-form
    (``custom``) tool (to a wire without free-form tools, a function of one string ``input``), or a tool
    OpenAI runs itself (``web_search``, ``tool_search``, ``code_interpreter``, ``mcp``...)."""
    kind = t.get("type", "function")
    sent = {WIRE: {"tool": dict(t)}}
    desc = t.get("description") if isinstance(t.get("description"), str) else ""
    if kind == "function":
        found = read_tools([t])
        return replace(found[0], sent=sent) if found else None
    name = t.get("name")
    if kind == "custom":
        if not isinstance(name, str) or not name:
            return None
        return ToolSpec(name, str(desc), FREE_FORM_PARAMETERS, kind="custom", sent=sent)
    label = name if isinstance(name, str) and name else str(kind)
    return ToolSpec(label, str(desc), kind="hosted", sent=sent)


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """Every declaration (function, free-form and hosted tools), each kept whole for the as-sent render."""
    return tuple(t for t in (_tool(d) for d in listed(raw) if isinstance(d, Mapping)) if t is not None)


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``input`` items and the rest of the body (a string input is one user message)."""
    if isinstance(body, str):
        return [{"role": "user", "content": body}], {}
    if isinstance(body, Mapping) and isinstance(body.get("input"), str):
        b = cast(Mapping[str, Any], body)
        return [{"role": "user", "content": b["input"]}], b
    return split_list(body, "input", "input items", _fail)


def _settings(body: Any, rest: Mapping[str, Any]) -> RequestSettings | None:
    """The body's settings; ``instructions`` that hold no text and a ``tools`` list that declares nothing
    are kept among them, as sent."""
    settings = request_settings(WIRE, body, CONVERSATION_KEYS)
    if settings is None:
        return None
    kept = {k: rest[k] for k in ("tools",) if k in rest and rest[k] in ([], None)}
    if "instructions" in rest and not (isinstance(rest["instructions"], str) and rest["instructions"]):
        kept["instructions"] = rest["instructions"]
    return replace(settings, fields={**settings.fields, **kept}) if kept else settings


#: Said of a body that names earlier turns the server keeps (they are not in it).
_EARLIER = "previous_response_id: the earlier turns kept server-side are not in this body"


def _instructions(rest: Mapping[str, Any]) -> list[Event]:
    instructions = rest.get("instructions")
    if isinstance(instructions, str) and instructions:
        return [SystemText(instructions, "instructions", sent_of({"at": "instructions"}))]
    return []


def _groups(
    memo: ReadMemo, items: Sequence[Any], rest: Mapping[str, Any], raws: Mapping[str, Any]
) -> list[Group]:
    """The body's groups through the memo: each item's events once per exact bytes, each run of a model
    response's items joined once per identity of their groups (the joining is the one decision that
    looks past an item, so it is never in an item's events)."""
    read = []
    instructions = rest.get("instructions")
    if (
        isinstance(instructions, str) and instructions
    ):  # a system message, the same object while its bytes are
        read = [
            memo.events("instructions", instructions, lambda _: _instructions(rest), raws.get("instructions"))
        ]
    # an item's group holds one event or none (an item kept as a warning only: it joins the run in hand)
    laid: list[Group | list[Group]] = []
    for g in [*read, *memo.listed(items, item_events, "input", raws=raws.get("input"))]:
        ev = g.events
        in_run = bool(laid) and isinstance(laid[-1], list)
        if ev and type(ev[0]) is _Item and not in_run:
            laid.append([g])
        elif (ev and type(ev[0]) is _Item) or (not ev and in_run):
            cast(list[Group], laid[-1]).append(g)
        else:
            laid.append(g)
    made = iter(joined(memo, [r for r in laid if isinstance(r, list)], join_items))
    out = [next(made) if isinstance(r, list) else r for r in laid]
    if rest.get("previous_response_id"):
        out.append(Group((), (_EARLIER,), 0))
    return out


def parse_request(
    body: Any,
    *,
    conversation_id: str = "request",
    memo: ReadMemo | None = None,
    raws: Mapping[str, Any] | None = None,
) -> History:
    """A Responses request body (or its ``input``) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not this wire's
    shape; what it cannot represent is listed in the history's ``warnings``. ``memo``: each item read and
    each turn assembled once (the proxy's, design 53); the history is the same with or without.
    ``raws``: the exact bytes the body's ``instructions`` and ``tools`` were read from, and of each of
    its ``input`` items (a list of them).
    """
    items, rest = split_body(body)
    raws = raws or {}
    issuer = body_issuer(WIRE, PUBLIC_HOST, rest.get("model"))
    # a string input, or an item that is no object, is read whole (as the whole read names it)
    if (
        memo is not None
        and (isinstance(body, list) or isinstance(rest.get("input"), list))
        and all(type(i) is dict for i in items)
    ):
        tools = memo.parsed("tools", rest.get("tools"), parse_tools, raws.get("tools"))
        return assemble_memo(memo, _groups(memo, items, rest, raws), conversation_id=conversation_id,
                             tools=tools, issuer=issuer, settings=_settings(body, rest))  # fmt: skip
    warnings: list[str] = []
    events = _instructions(rest)
    for _, where, item in objects(items, "input", _fail):
        events.extend(item_events(item, where, warnings))
    events = join_items(events)
    if isinstance(rest.get("input"), str) and isinstance(events[-1], UserText):
        events[-1].sent = sent_of({"input": "string"})
    if rest.get("previous_response_id"):
        warnings.append(_EARLIER)
    return assemble(events, conversation_id=conversation_id, tools=parse_tools(rest.get("tools")),
                    warnings=warnings, issuer=issuer, settings=_settings(body, rest))  # fmt: skip


__all__ = ["WIRE", "item_events", "join_items", "parse_request", "parse_tools", "split_body"]

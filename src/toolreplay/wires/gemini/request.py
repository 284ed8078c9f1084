"""Gemini ``generateContent`` request bodies read back into a stored history (importers, the audit).

Reads a whole body (``contents``, ``systemInstruction``, ``tools``) or just its ``contents`` list, in
camelCase or snake_case alike (``functionCall``/``function_call``, ``thoughtSignature``/
``thought_signature``: both are valid protobuf JSON and other tools send snake_case, design 9).

* ``model`` contents: text parts, ``functionCall`` parts (``name``, ``args``, optional ``id``). A part's
  ``thoughtSignature`` is kept per call as ``{"gemini": {"thoughtSignature": ...}}``, except Google's
  documented dummy values on a content's first call: those are what a replay puts where no real signature
  exists, and the renderer puts them back. Thought parts (``thought: true``) are kept whole as reasoning
  pieces, and a signature on a text part stays on those words, like the response parser does; both go back
  only to their issuer (design 17).
* ``user`` (or legacy ``function``) contents: ``functionResponse`` parts answer the calls by id when both
  carry one, else by position (Gemini's own rule: same count, same order); ``{"output": x}`` and
  ``{"result": x}`` read as the answer ``x``, ``{"error": x}`` as a failed call; any other ``response``
  object is kept as its JSON text (and, verbatim, in the call's ``sent``); a response's own ``parts`` (a
  PDF or an image a tool returned, inline or by URL) are the answer's parts. Text parts are the user's
  words (several kept apart as text parts); ``inlineData`` (``mimeType``, base64
  ``data``) and ``fileData`` (``fileUri``) parts of an image or a document (``image/*``, PDF, text) are
  kept as its parts in order. Audio, video, a file of unknown type, and part fields a part has no place
  for (``videoMetadata``, ``mediaResolution``) are reported.
* The renderer's ``(continued)`` user content before a function-call turn that follows a model turn
  (see :data:`toolreplay.wires.common.SEPARATOR`) is the wire's role rule, not the user's: not stored.

Inline data and files in a model content are reported, not kept. How every content, part, call, answer,
system part and declaration stood beyond that is kept in its ``sent`` (keys: :mod:`.layout`), so the
as-sent render (:mod:`.as_sent`) gives the body back; hosted tools (``googleSearch``, ``codeExecution``,
``urlContext``...) are tools of kind ``hosted`` named by their key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from toolreplay import jsonenc
from toolreplay.errors import WireError
from toolreplay.model import History, Part, PartKind, Reasoning, ServerTool, Text, ToolSpec, words_of
from toolreplay.wires.common import SEPARATOR, body_issuer, request_settings
from toolreplay.wires.gemini.layout import WIRE, content_layout, part_layout, sent_of
from toolreplay.wires.gemini.response import server_part_kind
from toolreplay.wires.gemini.signatures import DUMMY_SIGNATURES
from toolreplay.wires.gemini.signatures import either_case as _get
from toolreplay.wires.media import url_type
from toolreplay.wires.read_memo import Group, ReadMemo, assemble_memo
from toolreplay.wires.request_common import (
    listed,
    nonempty,
    objects,
    read_call,
    read_tools,
    split_list,
    string,
    user_events,
)
from toolreplay.wires.turns import (
    AgentSaid,
    Call,
    Event,
    Result,
    SaidPart,
    SystemText,
    UserText,
    assemble,
)

#: The host of the wire's public API: the issuer of an imported body's replies (design 17) unless the
#: importer is told the URL the requests went to (``--issuer-url``).
PUBLIC_HOST = "generativelanguage.googleapis.com"
#: The top-level keys that hold the conversation, its system prompt and its tools; every other one is
#: a request setting, kept as sent.
CONVERSATION_KEYS = ("contents", "systemInstruction", "system_instruction", "tools")


#: Parts of tools Gemini runs itself, in either case.
_SERVER_PARTS = frozenset(
    {"executableCode", "executable_code", "codeExecutionResult", "code_execution_result", "toolCall",
     "tool_call", "toolResponse", "tool_response"}
)  # fmt: skip


def _fail(problem: str) -> WireError:
    return WireError(f"{WIRE} request: {problem}")


def _parts(content: Mapping[str, Any], where: str) -> list[Mapping[str, Any]]:
    raw = content.get("parts")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _fail(f"{where}.parts is {type(raw).__name__}, not a list")
    out: list[Mapping[str, Any]] = []
    for j, p in enumerate(raw):
        if not isinstance(p, Mapping):
            raise _fail(f"{where}.parts[{j}] is {type(p).__name__}, not a part")
        out.append(cast(Mapping[str, Any], p))
    return out


#: The keys of each kind of part the neutral model reads (either case); any other is kept as sent.
_READ_TEXT = frozenset({"text", "thought", "thoughtSignature"})
_READ_CALL = frozenset({"functionCall", "thoughtSignature"})
_READ_RESPONSE = frozenset({"functionResponse"})


def _call(p: Mapping[str, Any], at: str, first: bool, warnings: list[str]) -> tuple[Call, dict[str, Any]]:
    """A ``functionCall`` part as a call (its signature kept, a leading dummy one read as none) and its
    part layout."""
    f = cast(Mapping[str, Any], _get(p, "functionCall", "function_call"))
    sig = _get(p, "thoughtSignature", "thought_signature")
    sig = sig if isinstance(sig, str) and sig else None
    layout: dict[str, Any] = {}
    if sig in DUMMY_SIGNATURES and first:
        layout["signature"] = sig  # the replay's stand-in; the renderer puts it back on the first call
        sig = None
    pdata = {WIRE: {"thoughtSignature": sig}} if sig else None
    call = read_call(
        f.get("name"), f.get("args"), f.get("id"), at, "functionCall.name", warnings, _fail, pdata
    )
    if "args" not in f:
        layout["no_args"] = True
    elif not isinstance(f["args"], dict) or f["args"] != call.input:
        layout["args"] = f["args"]
    fc_extra = {k: v for k, v in f.items() if k not in ("name", "args", "id")}
    if fc_extra:
        layout["fc_extra"] = fc_extra
    call.sent = sent_of(layout)
    return call, part_layout(p, "call", _READ_CALL)


def _said(p: Mapping[str, Any], sig: str | None) -> tuple[SaidPart | None, dict[str, Any]]:
    """A text part of a model content: a thought (kept whole), words (with the signature on them)."""
    text = str(p["text"])
    if p.get("thought") is True:
        return Reasoning(text, {WIRE: dict(p)}), {"k": "thought"}
    layout = part_layout(p, "text", _READ_TEXT)
    if "thought" in p:
        layout.setdefault("extra", {})["thought"] = p["thought"]
    if sig:
        layout["signed"] = True
        return Text(text, {WIRE: {"thoughtSignature": sig}}), layout
    if not text:
        layout["text"] = ""
    return (text or None), layout


def _model(content: Mapping[str, Any], where: str, warnings: list[str], separated: bool) -> AgentSaid:
    parts: list[SaidPart] = []
    layouts: list[dict[str, Any]] = []
    first_call = True
    for j, p in enumerate(_parts(content, where)):
        at = f"{where}.parts[{j}]"
        sig = _get(p, "thoughtSignature", "thought_signature")
        sig = sig if isinstance(sig, str) and sig else None
        if isinstance(_get(p, "functionCall", "function_call"), Mapping):
            call, layout = _call(p, at, first_call, warnings)
            first_call = False
            parts.append(call)
        elif any(k in p for k in _SERVER_PARTS):
            # code Gemini ran itself (executableCode, codeExecutionResult), a built-in tool's call and
            # response: kept whole, replayed only to its issuer
            parts.append(ServerTool(server_part_kind(p), {WIRE: dict(p)}))
            layout = {"k": "server"}
        elif isinstance(p.get("text"), str):
            # thought parts and signatures on text parts kept whole, replayed only to their issuer
            piece, layout = _said(p, sig)
            if piece is not None:
                parts.append(piece)
        else:
            warnings.append(f"{at}: a part with {', '.join(sorted(p)) or 'nothing'} is not kept")
            layout = {"k": "other", "part": dict(p)}
        layouts.append(layout)
    if not any(isinstance(x, Call) for x in parts):  # a closing content: its words are joined
        for lay, p in zip(layouts, _parts(content, where), strict=True):
            if lay["k"] == "text":
                lay["text"] = p["text"]
    return AgentSaid(parts, where, sent=sent_of(_content_sent(content, layouts, separated)))


def _content_sent(c: Mapping[str, Any], layouts: list[dict[str, Any]], separated: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"parts": layouts}
    lay = content_layout(c)
    if lay:
        out["content"] = lay
    if "parts" not in c:
        out["no_parts"] = True
    if separated:
        out["separator"] = True
    return out


def response_answer(response: Any) -> tuple[str, bool]:
    """A ``functionResponse.response`` as the answer text and whether the call failed."""
    if isinstance(response, Mapping) and len(response) == 1:
        key, value = next(iter(cast(Mapping[str, Any], response).items()))
        if key in ("output", "result", "error"):
            return (value if isinstance(value, str) else jsonenc.dumps(value)), key == "error"
    if response is None:
        return "", False
    return jsonenc.dumps(response), False


def _kind(mime: str) -> PartKind | None:
    if mime.startswith("image/"):
        return "image"
    if mime == "application/pdf" or mime.startswith("text/"):
        return "document"
    return None


def media_part(p: Mapping[str, Any], at: str, warnings: list[str]) -> Part | None:
    """An ``inlineData`` or ``fileData`` part (either case) of an image or a document as a part, or None
    (reported)."""
    inline, file = _get(p, "inlineData", "inline_data"), _get(p, "fileData", "file_data")
    src = cast(Mapping[str, Any], inline if isinstance(inline, Mapping) else file)
    mime = _get(src, "mimeType", "mime_type") if isinstance(src, Mapping) else None
    mime = mime if isinstance(mime, str) else ""
    data = src.get("data") if isinstance(inline, Mapping) else None
    uri = _get(src, "fileUri", "file_uri") if isinstance(file, Mapping) else None
    kind = _kind(mime or (url_type(uri) if isinstance(uri, str) else ""))
    if kind is None or not (isinstance(data, str) or isinstance(uri, str)):
        warnings.append(f"{at}: a part of type {mime or 'unknown'!r} is not kept (images and documents are)")
        return None
    layout = part_layout(p, "media", _MEDIA_KEYS)
    inner = {k: v for k, v in src.items() if k not in _INNER_KEYS}
    if inner:
        layout["inner"] = inner
    if "mimeType" not in src and "mime_type" not in src:
        layout["no_mime"] = True
    sent = sent_of({k: v for k, v in layout.items() if k != "k"})
    if isinstance(data, str):
        return Part(kind, media_type=mime, data=data, sent=sent)
    return Part(kind, media_type=mime, url=str(uri), sent=sent)


_MEDIA_KEYS = frozenset({"inlineData", "fileData"})
_INNER_KEYS = frozenset({"mimeType", "mime_type", "data", "fileUri", "file_uri"})


def _result(p: Mapping[str, Any], at: str, warnings: list[str], place: list[int]) -> Result:
    """A ``functionResponse`` part as an answer: its response read as text, its own parts (a PDF or an
    image a tool returned, inline or by URL) kept as the answer's parts, and its layout."""
    f = cast(Mapping[str, Any], _get(p, "functionResponse", "function_response"))
    answer, failed = response_answer(f.get("response"))
    own = [media_part(cast(Mapping[str, Any], x), f"{at}.functionResponse.parts[{k}]", warnings)
           for k, x in enumerate(listed(f.get("parts"))) if isinstance(x, Mapping)]  # fmt: skip
    # where the answer stood (content, part): answers given out of their calls' order go back so
    layout: dict[str, Any] = {"part": part_layout(p, "response", _READ_RESPONSE), "at": place}
    if f.get("response") != {"error" if failed else "output": answer}:
        layout["response"] = f.get("response")
    if "response" not in f:
        layout["no_response"] = True
    for key in ("id", "name"):
        if key in f:
            layout[key] = f[key]
        else:
            layout[f"no_{key}"] = True
    fr_extra = {k: v for k, v in f.items() if k not in ("id", "name", "response", "parts")}
    if fr_extra:
        layout["fr_extra"] = fr_extra
    if any(x is None for x in own) or ("parts" in f and not isinstance(f["parts"], list)):
        layout["fr_parts"] = f["parts"]  # a part with no place in the model: kept as sent
    parts = tuple(x for x in own if x is not None)
    return Result(answer, nonempty(f.get("id")), string(f.get("name")), failed, at, parts,
                  {WIRE: {"result": layout}})  # fmt: skip


def _user(content: Mapping[str, Any], where: str, warnings: list[str], index: int = 0) -> list[Event]:
    results: list[Result] = []
    texts: list[str] = []
    parts: list[Part] = []
    layouts: list[dict[str, Any]] = []
    for j, p in enumerate(_parts(content, where)):
        at = f"{where}.parts[{j}]"
        if isinstance(_get(p, "functionResponse", "function_response"), Mapping):
            results.append(_result(p, at, warnings, [index, j]))
            layouts.append({"k": "response"})
        elif isinstance(p.get("text"), str):
            texts.append(str(p["text"]))
            parts.append(Part("text", text=str(p["text"])))
            layouts.append(part_layout(p, "text", _READ_TEXT))
        elif any(k in p for k in ("inlineData", "inline_data", "fileData", "file_data")):
            got = media_part(p, at, warnings)
            parts.extend(x for x in [got] if x is not None)
            layouts.append({"k": "media"} if got is not None else {"k": "other", "part": dict(p)})
        else:
            warnings.append(f"{at}: a part with {', '.join(sorted(p)) or 'nothing'} is not kept")
            layouts.append({"k": "other", "part": dict(p)})
    sent = _content_sent(content, layouts, False)
    if results:
        first = results[0].sent
        assert first is not None
        first[WIRE]["result"].update(opens=True, content=sent)
    events = user_events(results, texts, "", where, None, parts)
    for ev in events:
        if isinstance(ev, UserText):
            if len(texts) > 1 and not ev.parts:  # separate text parts stay separate
                ev.text, ev.parts = words_of(parts), tuple(parts)
            ev.sent = sent_of(sent)
    return events


def _calls_first(content: Any) -> bool:
    if not isinstance(content, Mapping) or content.get("role") != "model":
        return False
    parts = content.get("parts")
    return (
        isinstance(parts, list)
        and bool(parts)
        and isinstance(parts[0], Mapping)
        and _get(parts[0], "functionCall", "function_call") is not None
    )


def _is_separator(contents: Sequence[Any], i: int) -> bool:
    """The renderer's ``(continued)`` user content before calls that follow a model content."""
    c = contents[i]
    if not isinstance(c, Mapping) or c.get("role") != "user" or c.get("parts") != [{"text": SEPARATOR}]:
        return False
    before = contents[i - 1] if i else None
    after_model = before is None or (isinstance(before, Mapping) and before.get("role") == "model")
    return after_model and i + 1 < len(contents) and _calls_first(contents[i + 1])


def _system(body: Mapping[str, Any], warnings: list[str]) -> list[SystemText]:
    """The system instruction: one system message per text part, laid out as sent (its role, its key's
    spelling, a bare string)."""
    key = "systemInstruction" if body.get("systemInstruction") is not None else "system_instruction"
    raw = body.get(key)
    head: dict[str, Any] = {"key": key} if key != "systemInstruction" else {}
    if isinstance(raw, str):
        return [SystemText(raw, key, sent_of({**head, "string": True}))] if raw else []
    if not isinstance(raw, Mapping):
        return []
    c = cast(Mapping[str, Any], raw)
    lay = {k: v for k, v in content_layout(c).items() if k != "no_role"}
    if "role" in c:
        lay["role"] = c["role"]  # a system instruction has no role of its own: kept only where sent
    head.update({"content": lay} if lay else {})
    out: list[SystemText] = []
    for j, p in enumerate(_parts(c, key)):
        if isinstance(p.get("text"), str):
            layout = {**(head if not out else {}), "part": part_layout(p, "text", _READ_TEXT)}
            out.append(SystemText(str(p["text"]), f"{key}.parts[{j}]", sent_of(layout)))
        else:
            warnings.append(f"{key}.parts[{j}]: a part with {', '.join(sorted(p)) or 'nothing'} is not kept")
    return out


def _schema(declaration: Mapping[str, Any]) -> Any:
    """``parametersJsonSchema``, or the OpenAPI-subset ``parameters`` when there is none."""
    params = _get(declaration, "parametersJsonSchema", "parameters_json_schema")
    return params or declaration.get("parameters")


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """``functionDeclarations`` (``parametersJsonSchema``, or an OpenAPI-subset ``parameters``), each
    kept whole, and the tools Gemini runs itself (``googleSearch``, ``codeExecution``, ``urlContext``...)
    as hosted tools named by their key, in order."""
    out: list[ToolSpec] = []
    for i, t in enumerate(listed(raw)):
        if not isinstance(t, Mapping):
            continue
        for key, value in cast(Mapping[str, Any], t).items():
            if key not in ("functionDeclarations", "function_declarations"):
                out.append(ToolSpec(key, kind="hosted", sent={WIRE: {"tool": {key: value}, "entry": i}}))
                continue
            for d in listed(value):
                spec = read_tools([d], schema=_schema)
                if spec:
                    where: dict[str, Any] = {"tool": dict(d), "entry": i}
                    if key != "functionDeclarations":
                        where["key"] = key
                    out.append(replace(spec[0], sent={WIRE: where}))
    return tuple(out)


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``contents`` list and the rest of the body (empty when given just the list)."""
    return split_list(body, "contents", "contents", _fail)


def _events(c: Mapping[str, Any], where: str, warnings: list[str], index: int, led: bool) -> list[Event]:
    """One content's events; ``led``: the renderer's separator stood before it."""
    role = c.get("role", "user")
    if role == "model":
        return [_model(c, where, warnings, led)]
    if role in ("user", "function"):
        return _user(c, where, warnings, index)
    raise _fail(f"{where}.role is {role!r}; expected user or model")


def content_events(c: Mapping[str, Any], where: str, warnings: list[str]) -> list[Event]:
    """One content's events read alone (through the read memo): its index is the one ``where`` names
    (``contents[12]``: its answers' place is kept). No separator stands before it: a body that holds one
    is read whole (whether a content is one looks at its neighbours)."""
    return _events(c, where, warnings, int(where[where.index("[") + 1 : -1]), False)


#: The parts of the renderer's separator content (:func:`_is_separator`).
_SEPARATED = [{"text": SEPARATOR}]


def _memoized(
    memo: ReadMemo, contents: Sequence[Any], rest: Mapping[str, Any], raws: Mapping[str, Any]
) -> list[Group]:
    key = "systemInstruction" if rest.get("systemInstruction") is not None else "system_instruction"
    groups: list[Group] = []
    if rest.get(key) is not None:
        read: Callable[[list[str]], list[Event]] = lambda w: [*_system(rest, w)]  # noqa: E731
        groups.append(memo.events(("system", key), rest[key], read, raws.get(key)))
    return groups + memo.listed(contents, content_events, "contents", raws=raws.get("contents"))


def parse_request(
    body: Any,
    *,
    conversation_id: str = "request",
    memo: ReadMemo | None = None,
    raws: Mapping[str, Any] | None = None,
) -> History:
    """A Gemini ``generateContent`` body (or its ``contents`` list) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not this wire's
    shape; what it cannot represent is listed in the history's ``warnings``. ``memo``: each content read
    and each turn assembled once (the proxy's, design 53); the history is the same with or without.
    ``raws``: the exact bytes the body's system instruction and ``tools`` were read from, and of each
    of its ``contents`` (a list of them).
    """
    contents, rest = split_body(body)
    raws = raws or {}
    issuer = body_issuer(WIRE, PUBLIC_HOST, None)
    settings = request_settings(WIRE, body, CONVERSATION_KEYS)
    if (
        memo is not None
        and all(type(c) is dict for c in contents)
        and not any(c.get("parts") == _SEPARATED for c in contents)
    ):
        tools = memo.parsed("tools", rest.get("tools"), parse_tools, raws.get("tools"))
        return assemble_memo(memo, _memoized(memo, contents, rest, raws), conversation_id=conversation_id,
                             tools=tools, issuer=issuer, settings=settings)  # fmt: skip
    warnings: list[str] = []
    events: list[Event] = []
    events.extend(_system(rest, warnings))
    separated = False
    for i, where, c in objects(contents, "contents", _fail):
        if _is_separator(contents, i):
            separated = True
            continue
        led, separated = separated, False
        events.extend(_events(c, where, warnings, i, led))
    return assemble(events, conversation_id=conversation_id, tools=parse_tools(rest.get("tools")),
                    warnings=warnings, issuer=issuer, settings=settings)  # fmt: skip


__all__ = [
    "DUMMY_SIGNATURES",
    "WIRE",
    "content_events",
    "parse_request",
    "parse_tools",
    "response_answer",
    "split_body",
]

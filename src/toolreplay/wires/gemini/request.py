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
  object is kept as its JSON text. Text parts are the user's words; ``inlineData`` (``mimeType``, base64
  ``data``) and ``fileData`` (``fileUri``) parts of an image or a document (``image/*``, PDF, text) are
  kept as its parts in order. Audio, video, a file of unknown type, and part fields a part has no place
  for (``videoMetadata``, ``mediaResolution``) are reported.
* The renderer's ``(continued)`` user content before a function-call turn that follows a model turn
  (see :data:`toolreplay.wires.common.SEPARATOR`) is the wire's role rule, not the user's: not stored.

Inline data and files in a model content are reported, not kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay import jsonenc
from toolreplay.errors import WireError
from toolreplay.model import History, Part, PartKind, Reasoning, ServerTool, Text, ToolSpec
from toolreplay.wires.common import SEPARATOR, body_issuer, request_settings
from toolreplay.wires.gemini.response import server_part_kind
from toolreplay.wires.gemini.signatures import DUMMY_SIGNATURES
from toolreplay.wires.gemini.signatures import either_case as _get
from toolreplay.wires.media import url_type
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
    Event,
    Result,
    SaidPart,
    SystemText,
    assemble,
)

WIRE = "gemini"
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


def _model(content: Mapping[str, Any], where: str, warnings: list[str]) -> AgentSaid:
    parts: list[SaidPart] = []
    first_call = True
    for j, p in enumerate(_parts(content, where)):
        at = f"{where}.parts[{j}]"
        sig = _get(p, "thoughtSignature", "thought_signature")
        sig = sig if isinstance(sig, str) and sig else None
        fc = _get(p, "functionCall", "function_call")
        if isinstance(fc, Mapping):
            f = cast(Mapping[str, Any], fc)
            if sig in DUMMY_SIGNATURES and first_call:
                sig = None  # the replay's stand-in; the renderer puts it back on the first call
            first_call = False
            pdata = {WIRE: {"thoughtSignature": sig}} if sig else None
            name_field = "functionCall.name"
            parts.append(
                read_call(f.get("name"), f.get("args"), f.get("id"), at, name_field, warnings, _fail, pdata)
            )
        elif any(k in p for k in _SERVER_PARTS):
            # code Gemini ran itself (executableCode, codeExecutionResult), a built-in tool's call and
            # response: kept whole, replayed only to its issuer
            parts.append(ServerTool(server_part_kind(p), {WIRE: dict(p)}))
        elif isinstance(p.get("text"), str):
            # thought parts and signatures on text parts kept whole, replayed only to their issuer
            if p.get("thought") is True:
                parts.append(Reasoning(str(p["text"]), {WIRE: dict(p)}))
            elif sig:
                parts.append(Text(str(p["text"]), {WIRE: {"thoughtSignature": sig}}))
            elif p["text"]:
                parts.append(str(p["text"]))
        else:
            warnings.append(f"{at}: a part with {', '.join(sorted(p)) or 'nothing'} is not kept")
    return AgentSaid(parts, where)


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
    extra = sorted(k for k in p if k not in _MEDIA_KEYS)
    if extra:
        warnings.append(f"{at}: the part's {', '.join(extra)} not kept (the {kind} is)")
    if isinstance(data, str):
        return Part(kind, media_type=mime, data=data)
    return Part(kind, media_type=mime, url=str(uri))


_MEDIA_KEYS = frozenset({"inlineData", "inline_data", "fileData", "file_data"})


def _user(content: Mapping[str, Any], where: str, warnings: list[str]) -> list[Event]:
    results: list[Result] = []
    texts: list[str] = []
    parts: list[Part] = []
    for j, p in enumerate(_parts(content, where)):
        at = f"{where}.parts[{j}]"
        fr = _get(p, "functionResponse", "function_response")
        if isinstance(fr, Mapping):
            f = cast(Mapping[str, Any], fr)
            answer, failed = response_answer(f.get("response"))
            results.append(Result(answer, nonempty(f.get("id")), string(f.get("name")), failed, at))
        elif isinstance(p.get("text"), str):
            texts.append(str(p["text"]))
            parts.append(Part("text", text=str(p["text"])))
        elif any(k in p for k in _MEDIA_KEYS):
            parts.extend(x for x in [media_part(p, at, warnings)] if x is not None)
        else:
            warnings.append(f"{at}: a part with {', '.join(sorted(p)) or 'nothing'} is not kept")
    return user_events(results, texts, "", where, None, parts)


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


def _system(raw: Any, warnings: list[str]) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, Mapping):
        texts = [str(p["text"]) for p in _parts(raw, "systemInstruction") if isinstance(p.get("text"), str)]
        return "\n\n".join(texts)
    return ""


def _schema(declaration: Mapping[str, Any]) -> Any:
    """``parametersJsonSchema``, or the OpenAPI-subset ``parameters`` when there is none."""
    params = _get(declaration, "parametersJsonSchema", "parameters_json_schema")
    return params or declaration.get("parameters")


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """``functionDeclarations`` (``parametersJsonSchema``, or an OpenAPI-subset ``parameters``)."""
    decls = (
        d
        for t in listed(raw)
        if isinstance(t, Mapping)
        for d in listed(_get(t, "functionDeclarations", "function_declarations"))
    )
    return read_tools(decls, schema=_schema)


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``contents`` list and the rest of the body (empty when given just the list)."""
    return split_list(body, "contents", "contents", _fail)


def parse_request(body: Any, *, conversation_id: str = "request") -> History:
    """A Gemini ``generateContent`` body (or its ``contents`` list) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not this wire's
    shape; what it cannot represent is listed in the history's ``warnings``.
    """
    contents, rest = split_body(body)
    warnings: list[str] = []
    events: list[Event] = []
    system = _system(_get(rest, "systemInstruction", "system_instruction"), warnings)
    if system:
        events.append(SystemText(system, "systemInstruction"))
    for i, where, c in objects(contents, "contents", _fail):
        if _is_separator(contents, i):
            continue
        role = c.get("role", "user")
        if role == "model":
            events.append(_model(c, where, warnings))
        elif role in ("user", "function"):
            events.extend(_user(c, where, warnings))
        else:
            raise _fail(f"{where}.role is {role!r}; expected user or model")
    tools = parse_tools(rest.get("tools"))
    issuer = body_issuer(WIRE, PUBLIC_HOST, None)
    return assemble(events, conversation_id=conversation_id, tools=tools, warnings=warnings,
                    issuer=issuer,
                    settings=request_settings(WIRE, body, CONVERSATION_KEYS))  # fmt: skip


__all__ = ["DUMMY_SIGNATURES", "WIRE", "parse_request", "parse_tools", "response_answer", "split_body"]

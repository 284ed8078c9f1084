"""``pydantic-ai``: a message history serialized with pydantic-ai's ``ModelMessagesTypeAdapter``.

The JSON is a list of messages, each ``{"kind": "request"|"response", "parts": [...]}``; every part has a
``part_kind`` (shape from pydantic-ai's ``messages.py``; pydantic-ai itself is not needed to read it):

* request parts: ``system-prompt`` (``content``), ``user-prompt`` (``content``: a string, or a list of
  strings and media objects with a ``kind``), ``tool-return`` (``tool_name``, ``content``: any JSON,
  ``tool_call_id``, ``outcome``), ``retry-prompt`` (``content``: a string or a list of validation errors,
  ``tool_name``, ``tool_call_id``). A request's ``instructions`` is its system prompt;
* response parts: ``text`` (``content``), ``tool-call`` (``tool_name``, ``args``: an object, a JSON
  string or null, ``tool_call_id``), ``thinking`` (kept whole as ``{"pydantic-ai": {"thinking": [...]}}``).

A retry prompt answers its tool call as a failed call with the text pydantic-ai sends the model; without
a tool it is the user-side feedback pydantic-ai sends as a user message. Timestamps are kept as
``created_at``. A user prompt's images and documents (``image-url``, ``document-url``, ``binary``) are
kept as its parts (design 34); audio, video and built-in tool parts are reported, not kept. A JSON
document is one conversation (id: the file name, or ``--conversation``); JSON Lines hold one
conversation per line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ImportFormatError
from toolreplay._history import History
from toolreplay._importers._source import Document, Format, Reading, broken_warnings, kind_of, pick
from toolreplay._steps import Part, PartKind, with_words
from toolreplay.wires.common import merge_data
from toolreplay.wires.request_common import read_call
from toolreplay.wires.turns import (
    AgentSaid,
    Answers,
    Event,
    Result,
    SaidPart,
    SystemText,
    UserText,
    assemble,
)

NAME = "pydantic-ai"
_KINDS = ("request", "response")
_RETRY_TAIL = "\n\nFix the errors and try again."


def _why_not(messages: Any) -> str | None:
    if not isinstance(messages, list) or not messages:
        return f"{kind_of(messages)}, not a list of ModelRequest/ModelResponse messages"
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or m.get("kind") not in _KINDS:
            kind = m.get("kind") if isinstance(m, Mapping) else kind_of(m)
            return f"[{i}].kind is {kind!r}, not 'request' or 'response'"
        parts = m.get("parts")
        if not isinstance(parts, list):
            return f"[{i}].parts is {kind_of(parts)}, not a list"
        for j, p in enumerate(parts):
            if not isinstance(p, Mapping) or not isinstance(p.get("part_kind"), str):
                return f"[{i}].parts[{j}] has no 'part_kind'"
    return None


def sniff(doc: Document) -> str | None:
    """None when ``doc`` holds pydantic-ai message histories, else the first failing field."""
    if doc.not_json is not None:
        return doc.not_json
    rec = doc.records[0]
    why = _why_not(rec.value)
    return f"line {rec.line}: {why}" if why and rec.line is not None else why


def _ts(part: Mapping[str, Any]) -> str | None:
    ts = part.get("timestamp")
    return ts if isinstance(ts, str) else None


def _retry_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    n = len(content) if isinstance(content, list) else 1
    return f"{n} validation error{'s' if n != 1 else ''}: {jsonenc.dumps(content)}"


#: pydantic-ai's URL items that are an image or a document, and what part they are.
_URL_KINDS: dict[str, PartKind] = {"image-url": "image", "document-url": "document"}


def _media(item: Mapping[str, Any]) -> Part | None:
    """An image or a document of a user prompt (``image-url``, ``document-url``, ``binary`` with a
    base64 ``data``, URL-safe as pydantic writes bytes, kept in the standard alphabet providers read)."""
    media = item.get("media_type") if isinstance(item.get("media_type"), str) else ""
    kind = _URL_KINDS.get(str(item.get("kind")))
    if kind is not None and isinstance(item.get("url"), str) and item["url"]:
        return Part(kind, media_type=str(media), url=item["url"])
    data = item.get("data")
    if item.get("kind") != "binary" or not isinstance(data, str) or not data:
        return None
    found: PartKind | None = "image" if str(media).startswith("image/") else None
    if str(media) == "application/pdf" or str(media).startswith("text/"):
        found = "document"
    std = data.replace("-", "+").replace("_", "/")
    return None if found is None else Part(found, media_type=str(media), data=std)


def _empty_field(item: Any) -> str | None:
    """The field an image or document item carries its bytes or address in (``url``, ``data``) when
    that field is empty or missing: such an item has nothing to send (a provider refuses an empty
    image), so it is not kept, and the warning names the field."""
    if not isinstance(item, Mapping):
        return None
    kind = item.get("kind")
    field = "url" if kind in _URL_KINDS else "data" if kind == "binary" else None
    value = item.get(field) if field is not None else None
    return field if field is not None and not (isinstance(value, str) and value) else None


def _user_content(content: Any, where: str, warnings: list[str]) -> tuple[str, tuple[Part, ...]]:
    """A user prompt's words, and its parts in order when it holds an image or a document (design 34)."""
    if isinstance(content, str):
        return content, ()
    texts: list[str] = []
    parts: list[Part] = []
    for k, item in enumerate(content if isinstance(content, list) else [content]):
        if isinstance(item, str):
            texts.append(item)
            parts.append(Part("text", text=item))
        elif isinstance(item, Mapping) and (got := _media(cast(Mapping[str, Any], item))) is not None:
            parts.append(got)
        elif (field := _empty_field(item)) is not None:
            warnings.append(f"{where}.content[{k}].{field}: empty, so this {item['kind']!r} item is not kept")
        else:
            kind = item.get("kind") if isinstance(item, Mapping) else kind_of(item)
            warnings.append(f"{where}.content[{k}]: a {kind!r} item is not kept (text, images, documents)")
    if not any(p.kind != "text" for p in parts):
        return "\n\n".join(texts), ()
    return with_words("", parts)


def _request(
    m: Mapping[str, Any], where: str, warnings: list[str], first: bool, first_instructions: Any
) -> list[Event]:
    events: list[Event] = []
    results: list[Result] = []
    instructions = m.get("instructions")
    if isinstance(instructions, str) and instructions:
        if first:
            events.append(SystemText(instructions, f"{where}.instructions"))
        elif instructions != first_instructions:
            warnings.append(f"{where}.instructions: changed instructions are not kept (one system prompt)")
    for j, p in enumerate(m["parts"]):
        at = f"{where}.parts[{j}]"
        kind = p["part_kind"]
        if kind == "system-prompt":
            events.append(SystemText(str(p.get("content") or ""), at))
        elif kind == "user-prompt":
            text, parts = _user_content(p.get("content"), at, warnings)
            events.append(UserText(text, at, _ts(p), parts=parts))
        elif kind == "tool-return":
            content = p.get("content")
            answer = content if isinstance(content, str) else jsonenc.dumps(content)
            cid = p.get("tool_call_id")
            failed = p.get("outcome") in ("failed", "denied")
            results.append(
                Result(answer, cid if isinstance(cid, str) else None, p.get("tool_name"), failed, at)
            )
        elif kind == "retry-prompt":
            text = _retry_text(p.get("content"))
            if isinstance(p.get("tool_name"), str):
                cid = p.get("tool_call_id")
                results.append(
                    Result(text + _RETRY_TAIL, cid if isinstance(cid, str) else None, None, True, at)
                )
            else:
                events.append(UserText(f"Validation feedback:\n{text}{_RETRY_TAIL}", at, _ts(p)))
        else:
            warnings.append(f"{at}: a {kind!r} part is not kept")
    return ([Answers(results, where)] if results else []) + events


def _response(m: Mapping[str, Any], where: str, warnings: list[str]) -> AgentSaid:
    parts: list[SaidPart] = []
    data: dict[str, Any] | None = None
    for j, p in enumerate(m["parts"]):
        at = f"{where}.parts[{j}]"
        kind = p["part_kind"]
        if kind == "text":
            text = p.get("content")
            if isinstance(text, str) and text:
                parts.append(text)
        elif kind == "tool-call":
            name, args, cid = p.get("tool_name"), p.get("args"), p.get("tool_call_id")
            parts.append(read_call(name, args, cid, at, "tool_name", warnings, ImportFormatError))
        elif kind == "thinking":
            data = merge_data(data, {NAME: {"thinking": [dict(p)]}})
        else:
            data = merge_data(data, {NAME: {"other_parts": [dict(p)]}})
            warnings.append(f"{at}: a {kind!r} part is kept as provider data, not replayed")
    return AgentSaid(parts, where, data, _ts(m))


def history_of(messages: Sequence[Any], cid: str, where: str) -> History:
    """One serialized message history as a stored history."""
    warnings: list[str] = []
    events: list[Event] = []
    first_instructions = messages[0].get("instructions") if messages else None
    for i, m in enumerate(messages):
        at = f"{where}[{i}]"
        if m["kind"] == "request":
            events.extend(_request(m, at, warnings, i == 0, first_instructions))
        else:
            events.append(_response(m, at, warnings))
    return assemble(events, conversation_id=cid, warnings=warnings)


def read(doc: Document, conversation: str | None) -> Reading:
    """The conversations of ``doc`` (``conversation``: see :func:`pick`)."""
    found: list[History] = []
    for rec in doc.records:
        why = _why_not(rec.value)
        if why:
            raise ImportFormatError(f"{doc.at(rec)}: {why}")
        cid = f"{doc.path.stem}-{rec.line}" if rec.line is not None else doc.path.stem
        found.append(history_of(rec.value, cid, doc.at(rec)))
    return Reading(pick(doc, found, conversation, many=doc.kind == "jsonl"), tuple(broken_warnings(doc)))


FORMAT = Format(NAME, "a pydantic-ai message history (ModelMessagesTypeAdapter JSON)", sniff, read)

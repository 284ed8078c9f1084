"""The five wire formats: what people keep of their requests (``openai-chat``, ``openai-responses``,
``anthropic``, ``gemini``, ``ollama``), read with each wire's own ``parse_request``.

A file holds one of: a request body (``{"messages": ...}``, ``{"input": ...}``, ``{"contents": ...}``),
just the message list (a JSON array), JSON Lines of conversations (each line a body or a message list,
optionally with an ``id``), or JSON Lines of messages (one conversation, one message per line).

For ``--from auto`` each wire looks for its own marks in the first record, so a plain-text chat list (the
same in several wires) reads as ``openai-chat``: ``contents``/``parts`` for Gemini; ``input`` or typed
items for Responses; ``tool_use``/``tool_result``/``thinking`` blocks or a top-level ``system`` for
Anthropic; object ``arguments``, ``tool_name``, ``images``, ``thinking`` or Ollama's own body keys for
Ollama; Chat takes any list of Chat messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from toolreplay._errors import ImportFormatError, WireError
from toolreplay._history import History
from toolreplay._importers._source import Document, Format, Reading, Record, broken_warnings, kind_of, pick
from toolreplay.wires import parse_request

_LIST_KEY = {
    "openai-chat": "messages",
    "ollama": "messages",
    "anthropic": "messages",
    "openai-responses": "input",
    "gemini": "contents",
}
# Tuples, not sets: the values looked up come from the input and may be lists or objects, which a set
# lookup refuses with a TypeError instead of saying no.
_CHAT_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking")
_RESPONSES_ITEMS = (
    "function_call",
    "function_call_output",
    "reasoning",
    "message",
    "custom_tool_call",
    "custom_tool_call_output",
)
_OLLAMA_BODY_KEYS = ("options", "keep_alive", "format", "think")
# Keys that carry a message's content in some format. A message holding one its wire does not read
# would lose it: ``auto`` refuses the wire, a named wire reads the file with a warning.
_CONTENT_KEYS = ("content", "parts", "text", "tool_uses")
_OWN_CONTENT_KEY = {"gemini": "parts"}


def _is_element(value: Any, wire: str) -> bool:
    """Is ``value`` one message / item / content of ``wire`` (a JSON Lines file of messages)?"""
    if not isinstance(value, Mapping):
        return False
    if wire == "gemini":
        return "parts" in value
    if wire == "openai-responses":
        return "type" in value or "role" in value
    return "role" in value


def units(doc: Document, wire: str) -> tuple[list[tuple[Record, Any]], bool]:
    """The bodies in ``doc`` with their records, and whether the file holds many conversations."""
    recs = doc.records
    if (
        doc.kind == "jsonl"
        and recs
        and _is_element(recs[0].value, wire)
        and _LIST_KEY[wire] not in recs[0].value
    ):
        return [(recs[0], [r.value for r in recs])], False
    return [(r, r.value) for r in recs], doc.kind == "jsonl"


def _elements(body: Any, wire: str) -> Sequence[Any] | None:
    if isinstance(body, list):
        return body
    if isinstance(body, Mapping):
        inner = cast(Mapping[str, Any], body).get(_LIST_KEY[wire])
        if isinstance(inner, list):
            return inner
        if wire == "openai-responses" and isinstance(inner, str):
            return [{"role": "user", "content": inner}]
    return None


def _blocks(msgs: Sequence[Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for m in msgs:
        content = m.get("content") if isinstance(m, Mapping) else None
        if isinstance(content, list):
            out.extend(b for b in content if isinstance(b, Mapping))
    return out


def _foreign_keys(wire: str, els: Sequence[Any]) -> list[tuple[int, str]]:
    """(index, key) for each element key that carries content in some format but not in ``wire``."""
    own = _OWN_CONTENT_KEY.get(wire, "content")
    return [
        (i, k)
        for i, m in enumerate(els)
        if isinstance(m, Mapping)
        for k in _CONTENT_KEYS
        if k != own and k in m
    ]


def _lost(wire: str, els: Sequence[Any]) -> str | None:
    found = _foreign_keys(wire, els)
    if not found:
        return None
    i, k = found[0]
    return f"messages[{i}] has {k!r}, which {wire} does not read (it would be lost)"


def _mark_gemini(body: Any, els: Sequence[Any]) -> str | None:
    if els and all(isinstance(c, Mapping) and "parts" in c for c in els):
        return None
    return "no 'contents' list of contents with 'parts'"


def _mark_responses(body: Any, els: Sequence[Any]) -> str | None:
    if isinstance(body, Mapping) and "input" in body:
        return None
    for it in els:
        if isinstance(it, Mapping) and (it.get("type") in _RESPONSES_ITEMS):
            return None
    if any(b.get("type") in ("input_text", "output_text") for b in _blocks(els)):
        return None
    return "no 'input' and no Responses items (function_call, function_call_output, reasoning, message)"


def _mark_anthropic(body: Any, els: Sequence[Any]) -> str | None:
    for i, m in enumerate(els):
        if isinstance(m, Mapping) and (m.get("role") in ("system", "tool") or m.get("tool_calls")):
            return f"messages[{i}] is a Chat message (role {m.get('role')!r} or tool_calls)"
    if isinstance(body, Mapping) and "system" in body:
        return None
    if any(b.get("type") in _ANTHROPIC_BLOCKS for b in _blocks(els)):
        return None
    return "no Anthropic blocks (tool_use, tool_result, thinking) and no top-level 'system'"


def _mark_ollama(body: Any, els: Sequence[Any]) -> str | None:
    if isinstance(body, Mapping) and any(k in body for k in _OLLAMA_BODY_KEYS):
        return None
    for m in els:
        if not isinstance(m, Mapping):
            continue
        if "tool_name" in m or "images" in m or "thinking" in m:
            return None
        calls = m.get("tool_calls")
        for tc in calls if isinstance(calls, list) else []:
            fn = tc.get("function") if isinstance(tc, Mapping) else None
            if isinstance(fn, Mapping) and isinstance(fn.get("arguments"), Mapping):
                return None
    return "no Ollama marks (object arguments, tool_name, images, thinking, options)"


def _mark_chat(body: Any, els: Sequence[Any]) -> str | None:
    for i, m in enumerate(els):
        if not isinstance(m, Mapping):
            return f"messages[{i}] is {kind_of(m)}, not a message object"
        if m.get("role") not in _CHAT_ROLES:
            return f"messages[{i}].role is {m.get('role')!r}, not a Chat role"
    for b in _blocks(els):
        if b.get("type") in _ANTHROPIC_BLOCKS:
            return f"a {b.get('type')!r} block (Anthropic's, not a Chat content part)"
    return None


_MARKS: dict[str, Callable[[Any, Sequence[Any]], str | None]] = {
    "gemini": _mark_gemini,
    "openai-responses": _mark_responses,
    "anthropic": _mark_anthropic,
    "ollama": _mark_ollama,
    "openai-chat": _mark_chat,
}


def _sniffer(wire: str, marks: bool) -> Callable[[Document], str | None]:
    def sniff(doc: Document) -> str | None:
        if doc.not_json is not None:
            return doc.not_json
        found, _ = units(doc, wire)
        rec, body = found[0]
        where = f"line {rec.line}: " if rec.line is not None else ""
        els = _elements(body, wire)
        if els is None:
            return f"{where}no {_LIST_KEY[wire]!r} list (and not a list of them)"
        why = (_MARKS[wire](body, els) or _lost(wire, els)) if marks else None
        if why is None:
            try:
                parse_request(wire, body)
            except WireError as exc:
                why = str(exc).split(": ", 1)[-1]
        return f"{where}{why}" if why else None

    return sniff


def _reader(wire: str) -> Callable[[Document, str | None], Reading]:
    def read(doc: Document, conversation: str | None) -> Reading:
        found, many = units(doc, wire)
        out: list[History] = []
        for rec, body in found:
            cid = body.get("id", body.get("conversation_id")) if isinstance(body, Mapping) else None
            if not isinstance(cid, str) or not cid:
                cid = f"{doc.path.stem}-{rec.line}" if many else doc.path.stem
            try:
                h = parse_request(wire, body)
            except WireError as exc:
                raise ImportFormatError(f"{doc.at(rec)}: {exc}") from None
            els = _elements(body, wire) or ()
            lost = [
                f"messages[{i}].{k}: {wire} does not read it; not kept" for i, k in _foreign_keys(wire, els)
            ]
            warns = tuple(f"{doc.at(rec)}: {w}" for w in (*lost, *h.warnings))
            out.append(History(cid, h.messages, h.tools, warns))
        return Reading(pick(doc, out, conversation, many=many), tuple(broken_warnings(doc)))

    return read


_DESCRIPTIONS = {
    "openai-chat": "OpenAI Chat messages or request bodies (tau-bench v1, LiteLLM, vLLM logs)",
    "openai-responses": "OpenAI Responses input items or request bodies (Codex, Grok)",
    "anthropic": "Anthropic Messages lists or request bodies",
    "gemini": "Gemini contents or generateContent bodies (camelCase or snake_case)",
    "ollama": "Ollama /api/chat messages or bodies",
}

FORMATS: dict[str, Format] = {
    wire: Format(wire, desc, _sniffer(wire, True), _reader(wire), _sniffer(wire, False))
    for wire, desc in _DESCRIPTIONS.items()
}

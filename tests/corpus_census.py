"""What a recorded body, answer or stream holds, counted straight from the provider's JSON.

Independent of toolreplay's parsers on purpose: the corpus tests compare what a parser gives with this
census, so a parser that drops something is caught rather than agreed with.

A census counts calls and answered results, joins the visible text, and lists the *pieces* a parser must
keep or name in a warning: reasoning (thinking blocks, signatures, encrypted reasoning, reasoning text),
media (images, documents, audio) and hosted/server-side tool parts. Each piece has a ``label`` (the
provider's type name, what a warning would name) and a ``needle``: a short distinctive string of its
content (a signature's start, an id) that is in the parser's output when the piece is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from corpus_loader import DONE
from toolreplay.wires import get_wire

NEEDLE = 32


@dataclass(frozen=True)
class Piece:
    kind: str  # reasoning | media | server
    label: str
    needle: str


@dataclass
class Census:
    calls: int = 0
    call_names: list[str] = field(default_factory=list)
    results: int = 0
    texts: list[str] = field(default_factory=list)
    pieces: list[Piece] = field(default_factory=list)

    def add(self, kind: str, label: str, needle: Any) -> None:
        text = needle if isinstance(needle, str) else ""
        self.pieces.append(Piece(kind, label, text.strip()[:NEEDLE]))

    def call(self, name: Any) -> None:
        self.calls += 1
        self.call_names.append(str(name))


def _sample(value: Any) -> str:
    """A distinctive slice of the longest string inside ``value`` (a media part's data or URL)."""
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            found.append(v)
        elif isinstance(v, Mapping):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(value)
    longest = max(found, key=len, default="")
    mid = max(0, len(longest) // 2 - NEEDLE // 2)
    return longest[mid : mid + NEEDLE]


def _objs(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _either(part: Mapping[str, Any], camel: str) -> Any:
    snake = "".join("_" + c.lower() if c.isupper() else c for c in camel)
    return part.get(camel, part.get(snake))


# ------------------------------------------------------------------------------------------------ Chat

_CHAT_MEDIA = ("image_url", "input_audio", "file", "image", "document_url", "input_image")
_CHAT_REASONING = ("reasoning_content", "reasoning")


def _chat_reasoning(c: Census, msg: Mapping[str, Any]) -> None:
    for key in _CHAT_REASONING:
        if isinstance(msg.get(key), str) and msg[key].strip():
            c.add("reasoning", key, msg[key])
    for d in _objs(msg.get("reasoning_details")):
        c.add(
            "reasoning",
            "reasoning_details",
            d.get("signature") or d.get("data") or d.get("text") or d.get("summary"),
        )


def _chat_content(c: Census, content: Any, *, keep_text: bool) -> None:
    if isinstance(content, str):
        if keep_text:
            c.texts.append(content)
        return
    for part in _objs(content):
        kind = part.get("type")
        if kind == "text" and keep_text:
            c.texts.append(str(part.get("text", "")))
        elif kind == "thinking":
            inner = part.get("thinking")
            text = "".join(str(t.get("text", "")) for t in _objs(inner)) if isinstance(inner, list) else inner
            c.add("reasoning", "thinking", text)
        elif kind in _CHAT_MEDIA:
            c.add("media", str(kind), _sample(part))


def chat_request(body: Mapping[str, Any]) -> Census:
    c = Census()
    for msg in _objs(body.get("messages")):
        for tc in _objs(msg.get("tool_calls")):
            c.call((tc.get("function") or {}).get("name"))
        if msg.get("role") == "tool":
            c.results += 1
        _chat_content(c, msg.get("content"), keep_text=False)
        _chat_reasoning(c, msg)
    return c


def chat_message(c: Census, msg: Mapping[str, Any]) -> Census:
    for tc in _objs(msg.get("tool_calls")):
        c.call((tc.get("function") or {}).get("name"))
    _chat_content(c, msg.get("content"), keep_text=True)
    _chat_reasoning(c, msg)
    return c


def chat_response(body: Mapping[str, Any]) -> Census:
    choices = _objs(body.get("choices"))
    return chat_message(Census(), choices[0].get("message") or {}) if choices else Census()


def chat_stream(events: Iterable[Any]) -> Census:
    c = Census()
    calls: dict[Any, str] = {}
    reasoning: dict[str, list[str]] = {}
    details: list[Mapping[str, Any]] = []
    for ev in events:
        if ev == DONE:
            continue
        for ch in _objs(ev.get("choices")):
            if ch.get("index", 0) != 0 or not isinstance(ch.get("delta"), Mapping):
                continue
            d = ch["delta"]
            if isinstance(d.get("content"), str):
                c.texts.append(d["content"])
            elif isinstance(d.get("content"), list):  # Mistral's part lists (text, thinking)
                _chat_content(c, d["content"], keep_text=True)
            for key in _CHAT_REASONING:
                if isinstance(d.get(key), str):
                    reasoning.setdefault(key, []).append(d[key])
            details.extend(_objs(d.get("reasoning_details")))
            for tc in _objs(d.get("tool_calls")):
                key = tc.get("index") if isinstance(tc.get("index"), int) else tc.get("id")
                name = (tc.get("function") or {}).get("name")
                if key not in calls or (name and not calls[key]):
                    calls[key] = name or calls.get(key, "")
    for name in calls.values():
        c.call(name)
    for key, parts in reasoning.items():
        if "".join(parts).strip():
            c.add("reasoning", key, "".join(parts))
    for d in details:
        c.add("reasoning", "reasoning_details", d.get("signature") or d.get("data") or d.get("text"))
    return c


# ------------------------------------------------------------------------------------------- Anthropic


def _anthropic_block(c: Census, b: Mapping[str, Any], *, keep_text: bool) -> None:
    kind = str(b.get("type"))
    if kind == "text":
        if keep_text:
            c.texts.append(str(b.get("text", "")))
    elif kind == "tool_use":
        c.call(b.get("name"))
    elif kind == "tool_result":
        c.results += 1
        for inner in _objs(b.get("content")):
            if inner.get("type") in ("image", "document"):
                c.add("media", f"{inner['type']} in tool_result", _sample(inner))
    elif kind == "thinking":
        c.add("reasoning", kind, b.get("signature") or b.get("thinking"))
    elif kind == "redacted_thinking":
        c.add("reasoning", kind, b.get("data"))
    elif kind in ("image", "document"):
        c.add("media", kind, _sample(b))
    else:
        c.add("server", kind, b.get("id") or b.get("tool_use_id") or _sample(b))


def anthropic_request(body: Mapping[str, Any]) -> Census:
    c = Census()
    for msg in _objs(body.get("messages")):
        content = msg.get("content")
        for b in _objs(content):
            _anthropic_block(c, b, keep_text=False)
    return c


def anthropic_response(body: Mapping[str, Any]) -> Census:
    c = Census()
    for b in _objs(body.get("content")):
        _anthropic_block(c, b, keep_text=True)
    return c


def anthropic_stream(events: Iterable[Any]) -> Census:
    blocks: dict[int, dict[str, Any]] = {}
    for ev in events:
        if ev == DONE:
            continue
        kind = ev.get("type")
        if kind == "message_start":  # the SDK's accumulator starts from this message, content and all
            blocks.update(enumerate(dict(b) for b in ev["message"].get("content") or []))
        elif kind == "content_block_start":
            blocks[ev["index"]] = dict(ev["content_block"])
        elif kind == "content_block_delta":
            b, d = blocks[ev["index"]], ev["delta"]
            for key in ("text", "thinking", "signature"):
                if isinstance(d.get(key), str):
                    b[key] = b.get(key, "") + d[key]
    return anthropic_response({"content": [blocks[i] for i in sorted(blocks)]})


# ------------------------------------------------------------------------------------------- Responses

_RESPONSES_OWN = (
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
)
_RESPONSES_MEDIA = ("input_image", "input_file", "input_audio")


def _responses_item(c: Census, it: Mapping[str, Any], *, keep_text: bool) -> None:
    kind = it.get("type", "message" if "role" in it else None)
    if kind in ("function_call", "custom_tool_call"):
        c.call(it.get("name"))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        c.results += 1
        for part in _objs(it.get("output")):
            if part.get("type") in _RESPONSES_MEDIA:
                c.add("media", f"{part['type']} in {kind}", _sample(part))
    elif kind == "message":
        content = it.get("content")
        if isinstance(content, str) and keep_text:
            c.texts.append(content)
        for part in _objs(content):
            if part.get("type") in ("output_text", "text") and keep_text:
                c.texts.append(str(part.get("text", "")))
            elif part.get("type") in _RESPONSES_MEDIA:
                c.add("media", str(part["type"]), _sample(part))
    elif kind == "reasoning":
        summary = "".join(str(s.get("text", "")) for s in _objs(it.get("summary")))
        c.add("reasoning", "reasoning", it.get("encrypted_content") or summary or it.get("id"))
    else:
        c.add("server", str(kind), it.get("id") or it.get("call_id"))


def responses_request(body: Mapping[str, Any]) -> Census:
    c = Census()
    for it in _objs(body.get("input")):
        _responses_item(c, it, keep_text=False)
    return c


def responses_response(body: Mapping[str, Any]) -> Census:
    c = Census()
    for it in _objs(body.get("output")):
        _responses_item(c, it, keep_text=True)
    return c


def responses_stream(events: Iterable[Any]) -> Census:
    """The final response's output; its items as streamed when it lists none. (The two can differ: a
    reasoning item's ``encrypted_content`` in ``output_item.done`` is not the one ``response.completed``
    carries; the final one is the answer's.)"""
    items: list[Any] = []
    final: list[Any] = []
    for ev in events:
        if ev == DONE:
            continue
        if ev.get("type") == "response.output_item.done":
            items.append(ev["item"])
        elif ev.get("type") in ("response.completed", "response.incomplete"):
            final = _objs(ev["response"].get("output"))
    return responses_response({"output": final or items})


# ---------------------------------------------------------------------------------------------- Gemini

_GEMINI_SERVER = ("executableCode", "codeExecutionResult", "toolCall", "toolResponse")


def _gemini_part(c: Census, p: Mapping[str, Any], *, keep_text: bool) -> None:
    sig = _either(p, "thoughtSignature")
    if isinstance(sig, str) and sig:
        c.add("reasoning", "thoughtSignature", sig)
    if _either(p, "functionCall") is not None:
        c.call((_either(p, "functionCall") or {}).get("name"))
    elif _either(p, "functionResponse") is not None:
        c.results += 1
        for inner in _objs((_either(p, "functionResponse") or {}).get("parts")):
            c.add("media", "functionResponse.parts", _sample(inner))
    elif isinstance(p.get("text"), str):
        if p.get("thought"):
            c.add("reasoning", "thought", p["text"])
        elif keep_text:
            c.texts.append(p["text"])
    elif _either(p, "inlineData") is not None or _either(p, "fileData") is not None:
        c.add("media", "inlineData" if _either(p, "inlineData") is not None else "fileData", _sample(p))
    else:
        for key in _GEMINI_SERVER:
            value = _either(p, key)
            if value is not None:
                needle = value.get("code") or value.get("output") if isinstance(value, Mapping) else ""
                c.add("server", key, needle)


def gemini_request(body: Mapping[str, Any]) -> Census:
    c = Census()
    for content in _objs(body.get("contents")):
        for p in _objs(content.get("parts")):
            _gemini_part(c, p, keep_text=False)
    return c


def gemini_response(body: Mapping[str, Any]) -> Census:
    c = Census()
    for cand in _objs(body.get("candidates"))[:1]:
        for p in _objs((cand.get("content") or {}).get("parts")):
            _gemini_part(c, p, keep_text=True)
    return c


def _continues_a_call(part: Mapping[str, Any]) -> bool:
    """A nameless functionCall part of a stream carries more of the call before it (Gemini 3's streamed
    arguments: partialArgs, willContinue, or an empty functionCall that closes the call)."""
    call = _either(part, "functionCall")
    return isinstance(call, Mapping) and call.get("name") is None


def gemini_stream(events: Iterable[Any]) -> Census:
    parts: list[Any] = []
    for ev in events:
        if ev == DONE:
            continue
        for cand in _objs(ev.get("candidates"))[:1]:
            parts.extend(
                p for p in _objs((cand.get("content") or {}).get("parts")) if not _continues_a_call(p)
            )
    return gemini_response({"candidates": [{"content": {"parts": parts}}]})


# ---------------------------------------------------------------------------------------------- Ollama


def _ollama_message(c: Census, msg: Mapping[str, Any], *, keep_text: bool) -> None:
    for tc in _objs(msg.get("tool_calls")):
        c.call((tc.get("function") or {}).get("name"))
    if msg.get("role") == "tool":
        c.results += 1
    if keep_text and isinstance(msg.get("content"), str):
        c.texts.append(msg["content"])
    if isinstance(msg.get("thinking"), str) and msg["thinking"].strip():
        c.add("reasoning", "thinking", msg["thinking"])
    for image in msg.get("images") or []:
        c.add("media", "images", _sample(image))


def ollama_request(body: Mapping[str, Any]) -> Census:
    c = Census()
    for msg in _objs(body.get("messages")):
        _ollama_message(c, msg, keep_text=False)
    return c


def ollama_response(body: Mapping[str, Any]) -> Census:
    c = Census()
    _ollama_message(c, body.get("message") or {}, keep_text=True)
    return c


def ollama_stream(events: Iterable[Any]) -> Census:
    msg: dict[str, Any] = {"content": "", "thinking": "", "tool_calls": []}
    for ev in events:
        if ev == DONE:
            continue
        m = ev.get("message") or {}
        msg["content"] += m.get("content") or ""
        msg["thinking"] += m.get("thinking") or ""
        msg["tool_calls"] += m.get("tool_calls") or []
    return ollama_response({"message": msg})


REQUEST = {
    "openai-chat": chat_request,
    "openai-responses": responses_request,
    "anthropic": anthropic_request,
    "gemini": gemini_request,
    "ollama": ollama_request,
}
RESPONSE = {
    "openai-chat": chat_response,
    "openai-responses": responses_response,
    "anthropic": anthropic_response,
    "gemini": gemini_response,
    "ollama": ollama_response,
}
STREAM = {
    "openai-chat": chat_stream,
    "openai-responses": responses_stream,
    "anthropic": anthropic_stream,
    "gemini": gemini_stream,
    "ollama": ollama_stream,
}


# ------------------------------------------------------------------------------ the shape of a request


def _letter(wire: str, el: Mapping[str, Any]) -> tuple[str, str]:
    """(letter, words riding with calls) of one message / item / content: C calls, R results, A the
    assistant's text, U the user's, S system; the words are the text beside the calls ('' when none)."""
    role = el.get("role")
    if wire in ("openai-chat", "ollama"):
        if el.get("tool_calls"):
            content = el.get("content")
            words = content if isinstance(content, str) else ""
            return "C", words.strip()
        return {"tool": "R", "assistant": "A", "user": "U"}.get(str(role), "S"), ""
    if wire == "anthropic":
        blocks = _objs(el.get("content"))
        if any(b.get("type") == "tool_use" for b in blocks):
            return "C", "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text").strip()
        if any(b.get("type") == "tool_result" for b in blocks):
            return "R", ""
        return {"assistant": "A", "user": "U"}.get(str(role), "S"), ""
    if wire == "gemini":
        parts = _objs(el.get("parts"))
        if any(_either(p, "functionCall") is not None for p in parts):
            words = "".join(str(p.get("text", "")) for p in parts if not p.get("thought"))
            return "C", words.strip()
        if any(_either(p, "functionResponse") is not None for p in parts):
            return "R", ""
        return ("A" if role == "model" else "U"), ""
    kind = el.get("type", "message")
    if kind in ("function_call", "custom_tool_call"):
        return "C", ""
    if kind in ("function_call_output", "custom_tool_call_output"):
        return "R", ""
    if kind == "message":
        return {"assistant": "A", "user": "U"}.get(str(role), "S"), ""
    return "", ""


def _assistant_text(el: Mapping[str, Any]) -> str:
    content = el.get("content")
    if isinstance(content, str):
        return content.strip()
    return "".join(str(p.get("text", "")) for p in _objs(content)).strip()


def shape(wire: str, body: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The body's message list as letters (runs of C and of R each one letter: one step's calls, then their
    answers) and the words that ride with each step's calls.

    On Responses a step's words are the assistant message item right before its calls."""
    letters: list[str] = []
    words: list[str] = []
    last_said = ""
    listed = body.get(get_wire(wire).list_key)  # a key name only: no toolreplay parser reads the body
    if wire == "openai-responses" and isinstance(listed, str):
        listed = [{"role": "user", "content": listed}]  # Responses takes a bare string as one user message
    for el in _objs(listed):
        letter, said = _letter(wire, el)
        if not letter:
            continue
        if wire == "openai-responses" and letter == "A":
            last_said = _assistant_text(el)
        if wire == "openai-responses" and letter == "C" and letters and letters[-1] == "A":
            letters.pop()
            said = last_said
        if letter in "CR" and letters and letters[-1] == letter:
            continue
        letters.append(letter)
        if letter == "C":
            words.append(said)
    return "".join(letters), [w for w in words if w]

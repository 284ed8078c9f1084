"""OpenAI Chat Completions answers (``chat.completion`` bodies and ``chat.completion.chunk`` events).

Read: the first choice's ``message`` (``content`` as a string or a list of text parts, ``tool_calls`` with
JSON-string ``arguments``), ``finish_reason`` as the provider gave it, ``usage`` (``prompt_tokens``,
``completion_tokens``; cached from ``prompt_tokens_details.cached_tokens``, Moonshot's top-level
``cached_tokens`` or DeepSeek's ``prompt_cache_hit_tokens``), ``model``.

Provider data to echo back (message level, under ``"openai-chat"``): ``reasoning_content`` (Kimi thinking
models and DeepSeek require it on an assistant message with tool calls: "thinking is enabled but
reasoning_content is missing in assistant tool call message") and ``reasoning`` (vLLM, OpenRouter).

Streaming: chunks carry ``delta`` pieces; tool calls arrive as fragments keyed by ``index`` (the id and
name once, ``arguments`` in pieces). The final event is the chunk with a ``finish_reason`` (the usage
chunk of ``stream_options.include_usage`` may follow it), or ``[DONE]``, which the transport reports with
:meth:`StreamParser.mark_done`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay.model import Piece, Reasoning, Text
from toolreplay.wires._parse import (
    count,
    detail_count,
    ended_early,
    fail,
    function_calls,
    items,
    mapping,
    missing,
    provider_data,
    stream_error,
    string,
    text_of,
)
from toolreplay.wires.reply import Reply, Usage

WIRE = "openai-chat"
_REASONING_KEYS = ("reasoning_content", "reasoning")


def parse_response(body: Mapping[str, Any]) -> Reply:
    """A whole ``chat.completion`` body as a :class:`Reply`."""
    body = mapping(body, WIRE, "the body")
    if "choices" not in body:
        if "error" in body:
            raise stream_error(WIRE, body)
        missing(WIRE, "choices", body)
    choices = items(body["choices"], WIRE, "choices")
    if not choices:
        fail(WIRE, "'choices' is empty")
    choice = mapping(choices[0], WIRE, "choices[0]")
    message = mapping(choice.get("message"), WIRE, "choices[0].message")
    return _reply(message, choice.get("finish_reason"), body.get("usage"), body.get("model"))


def _reply(message: Mapping[str, Any], finish: Any, usage: Any, model: Any) -> Reply:
    reasoning: dict[str, Any] = {
        k: message.get(k) for k in _REASONING_KEYS if isinstance(message.get(k), str)
    }
    if isinstance(message.get("reasoning_details"), list):  # OpenRouter: kept whole for its issuer
        reasoning["reasoning_details"] = message["reasoning_details"]
    calls = function_calls(WIRE, message)  # before the content: a body broken in both names its calls
    text, said = _content(message.get("content"))
    if reasoning:
        readable = str(reasoning.get("reasoning_content") or reasoning.get("reasoning") or "")
        said.insert(0, Reasoning(readable, {WIRE: reasoning}))
    return Reply(
        text=text,
        calls=calls,
        finish_reason=string(finish),
        usage=parse_usage(usage),
        provider_data=provider_data(WIRE, reasoning),
        model=string(model),
        said=tuple(said),
    )


def thinking_text(part: Mapping[str, Any]) -> str:
    """A Mistral-style ``thinking`` content part's text (its list of text chunks, or a string)."""
    body = part.get("thinking")
    if isinstance(body, str):
        return body
    chunks = body if isinstance(body, list) else []
    return "".join(str(c.get("text") or "") for c in chunks if isinstance(c, Mapping))


def _content(content: Any) -> tuple[str, list[Piece]]:
    """The answer's text, and its pieces in order (Mistral ``thinking`` parts as reasoning, kept whole)."""
    if content is None or isinstance(content, str):
        return content or "", [Text(content)] if content else []
    parts = items(content, WIRE, "message.content")
    out: list[str] = []
    said: list[Piece] = []
    for i, part in enumerate(parts):
        p = mapping(part, WIRE, f"message.content[{i}]")
        if p.get("type") in ("text", "output_text"):
            out.append(text_of(p.get("text"), WIRE, f"message.content[{i}].text"))
            said.append(Text(out[-1]))
        elif p.get("type") == "refusal":
            out.append(text_of(p.get("refusal"), WIRE, f"message.content[{i}].refusal"))
            said.append(Text(out[-1]))
        elif p.get("type") == "thinking":
            said.append(Reasoning(thinking_text(p), {WIRE: {"content_part": dict(p)}}))
    return "".join(out), said


def parse_usage(usage: Any) -> Usage:
    """Chat ``usage``; cached tokens from whichever field the server reports."""
    if not isinstance(usage, Mapping):
        return Usage()
    cached = detail_count(usage, "prompt_tokens_details")
    if cached is None:
        cached = count(usage.get("cached_tokens"))  # Moonshot
    if cached is None:
        cached = count(usage.get("prompt_cache_hit_tokens"))  # DeepSeek
    return Usage(count(usage.get("prompt_tokens")), count(usage.get("completion_tokens")), cached)


class StreamParser:
    """Fed ``chat.completion.chunk`` payloads one by one; :meth:`finish` gives the same Reply as the body."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: dict[str, list[str]] = {}
        self._details: list[Any] = []
        self._thinking: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._usage: Any = None
        self._model: str | None = None
        self._done = False

    def feed(self, event: Mapping[str, Any]) -> str:
        """Take one chunk; return the new text it carries ('' when none)."""
        event = mapping(event, WIRE, "a stream event")
        if "error" in event:
            raise stream_error(WIRE, event)
        if isinstance(event.get("model"), str):
            self._model = event["model"]
        if event.get("usage"):
            self._usage = event["usage"]
        new: list[str] = []
        for i, raw in enumerate(items(event.get("choices"), WIRE, "choices")):
            choice = mapping(raw, WIRE, f"choices[{i}]")
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                new.append(self._delta(delta))
            if isinstance(choice.get("finish_reason"), str):
                self._finish = choice["finish_reason"]
        return "".join(new)

    def _delta(self, delta: Mapping[str, Any]) -> str:
        text = delta.get("content")
        if isinstance(text, list):  # Mistral: a delta of content parts (thinking, text)
            text = self._parts(text)
        if isinstance(text, str):
            self._content.append(text)
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            self._details.extend(details)
        for key in _REASONING_KEYS:
            piece = delta.get(key)
            if isinstance(piece, str):
                self._reasoning.setdefault(key, []).append(piece)
        for frag in items(delta.get("tool_calls"), WIRE, "delta.tool_calls"):
            self._fragment(mapping(frag, WIRE, "delta.tool_calls[]"))
        return text if isinstance(text, str) else ""

    def _parts(self, parts: list[Any]) -> str:
        """The text of a delta's content parts; its thinking parts' text goes to the reasoning."""
        text: list[str] = []
        for p in parts:
            if isinstance(p, Mapping) and p.get("type") == "thinking":
                self._thinking.append(thinking_text(p))
            elif isinstance(p, Mapping) and isinstance(p.get("text"), str):
                text.append(p["text"])
        return "".join(text)

    def _fragment(self, frag: Mapping[str, Any]) -> None:
        index = frag.get("index")
        if not isinstance(index, int):
            index = self._index_without(frag.get("id"))
        acc = self._calls.setdefault(index, {"id": "", "name": "", "arguments": []})
        if isinstance(frag.get("id"), str) and frag["id"]:
            acc["id"] = frag["id"]
        fn = frag.get("function")
        if isinstance(fn, Mapping):
            if isinstance(fn.get("name"), str) and fn["name"] and not acc["name"]:
                acc["name"] = fn["name"]
            if isinstance(fn.get("arguments"), str):
                acc["arguments"].append(fn["arguments"])

    def _index_without(self, call_id: Any) -> int:
        # Some compatible servers omit the index: a fragment with a new id starts a new call, one without
        # an id continues the latest call.
        for k, c in self._calls.items():
            if call_id and c["id"] == call_id:
                return k
        if call_id or not self._calls:
            return max(self._calls, default=-1) + 1
        return max(self._calls)

    def mark_done(self) -> None:
        """``data: [DONE]`` arrived: the stream is complete even if no chunk gave a finish_reason (some
        OpenAI-compatible servers omit it; the finish reason then stays None)."""
        self._done = True

    def finish(self) -> Reply:
        """The whole answer; ConnectionFault when the stream ended before its final chunk."""
        if self._finish is None and not self._done:
            raise ended_early(WIRE, "finish_reason")
        text = "".join(self._content)
        content: Any = text or None
        if self._thinking:  # Mistral: the thinking read back as the part it streamed as
            thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "".join(self._thinking)}]}
            content = [thinking, *([{"type": "text", "text": text}] if text else [])]
        message: dict[str, Any] = {"role": "assistant", "content": content}
        for key, pieces in self._reasoning.items():
            message[key] = "".join(pieces)
        if self._details:
            message["reasoning_details"] = self._details
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": "".join(c["arguments"])},
                }
                for _, c in sorted(self._calls.items())
            ]
        return _reply(message, self._finish, self._usage, self._model)


__all__ = ["WIRE", "StreamParser", "parse_response", "parse_usage"]

"""The Chat Completions side of the bridge between wires (design 51): :data:`BRIDGE`.

The reader is :class:`~toolreplay.wires.openai_chat.bridge_read.ChatReader`. The writer sends chunks as
OpenAI's server does: every chunk with the answer's ``id``, ``object``, ``created`` and ``model``; the
first with the role; text as ``content`` deltas; each call on its own ``index``, its id, ``type`` and name
on its first fragment only (the SDKs' accumulators join every string field they see twice, so a name sent
twice reads ``listlist``), then its arguments in pieces; the finish chunk (``delta: {}``); the usage chunk
(``choices: []``) when the agent asked for it; ``[DONE]``. Every chunk has ``usage: null`` when the usage
chunk will come, as OpenAI's do.

Reasoning, when the agent asked to see it, goes out as ``reasoning_content`` deltas, the field Kimi and
DeepSeek send and opencode and the OpenAI-compatible clients read back. Chat has no field for a piece's
token or signature: the piece stays in the store, and what the agent echoes back is matched there by its
text (design 50). Not shown, it is named in the notes.
"""

from __future__ import annotations

from typing import Any, assert_never

from toolreplay import jsonenc
from toolreplay.model import Reasoning, Text
from toolreplay.wires.bridge import (
    FINISH_REASONS,
    Begin,
    Bridge,
    CallBegin,
    CallDelta,
    CallEnd,
    Delta,
    Event,
    Failed,
    Finish,
    FinishReason,
    Outbound,
    ReasoningDelta,
    ReasoningEnd,
    TextDelta,
)
from toolreplay.wires.openai_chat.bridge_read import REASONS, ChatReader, neutral_reason
from toolreplay.wires.openai_chat.errors import error_body
from toolreplay.wires.reply import ParsedCall, Reply, Usage

#: The bridge's finish reasons in Chat's words (an error has no finish chunk: it is an error chunk).
FINISHES: dict[FinishReason, str] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "length": "length",
    "refusal": "content_filter",
    "error": "stop",
}
HIDDEN = "reasoning not shown: the agent did not ask to see it (it stays in the store for its issuer)"
SEALED = "reasoning without readable text (encrypted or redacted) not shown: Chat has no place for it"
NO_USAGE = "usage not sent: the agent did not ask for it (stream_options.include_usage)"
ENDED = "the upstream's stream ended before its answer was complete"
_OURS: dict[str, FinishReason] = {r: r for r in FINISH_REASONS}


def chat_usage(usage: Usage) -> dict[str, Any]:
    """A usage as Chat's ``usage`` object (``prompt_tokens`` counts the cached part too; the tokens
    written to the prompt cache, Anthropic's ``cache_creation_input_tokens``, in
    ``prompt_tokens_details.cache_write_tokens`` when there are any)."""
    i, o, c = usage.input_tokens or 0, usage.output_tokens or 0, usage.cached_tokens or 0
    details = {"cached_tokens": c}
    if usage.cache_write_tokens:
        details["cache_write_tokens"] = usage.cache_write_tokens
    return {
        "prompt_tokens": i,
        "completion_tokens": o,
        "total_tokens": i + o,
        "prompt_tokens_details": details,
    }


def _custom_note(index: int, name: str) -> str:
    return f"call {index} ({name}) is a free-form call: written as a function call, its text as arguments"


class ChatWriter:
    """A :class:`~toolreplay.wires.bridge.DeltaWriter` of Chat chunks for one answer."""

    def __init__(self, out: Outbound) -> None:
        self.notes: list[str] = []
        self._out = out
        self._head = {
            "id": out.answer_id,
            "object": "chat.completion.chunk",
            "created": out.created,
            "model": out.model,
        }
        self._opened = False
        self._ended = False  # a finish or an error chunk is out
        self._failed = False
        self._closed = False
        self._streamed = False  # the reasoning piece under way has shown text

    def write(self, delta: Delta) -> list[Event]:
        if self._ended:
            return []
        match delta:
            case Begin():
                return self._open()
            case TextDelta(text=text):
                return self._chunk({"content": text}) if text else []
            case ReasoningDelta(text=text):
                if not self._out.thinking:
                    self._note(HIDDEN)
                    return []
                self._streamed = self._streamed or bool(text)
                return self._chunk({"reasoning_content": text}) if text else []
            case ReasoningEnd(text=text):
                return self._reasoning_end(text)
            case CallBegin():
                return self._call_begin(delta)
            case CallDelta(index=index, arguments=piece):
                frag = {"index": index, "function": {"arguments": piece}}
                return self._chunk({"tool_calls": [frag]}) if piece else []
            case CallEnd():
                return []  # Chat marks no call's end; what the upstream must get back stays in the store
            case Finish(reason=reason, usage=usage):
                return self._finish(reason, usage)
            case Failed(message=message, status=status):
                return self._fail(message, status)
            case _:
                assert_never(delta)

    def close(self) -> list[Event]:
        if self._closed:
            return []
        self._closed = True
        if not self._ended:
            return self._fail(ENDED, None)
        return [] if self._failed else [(None, "[DONE]")]

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> list[Event]:
        opening = self._open()
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        usage = {"usage": None} if self._out.usage_chunk else {}
        return [*opening, (None, {**self._head, "choices": [choice], **usage})]

    def _open(self) -> list[Event]:
        if self._opened:
            return []
        self._opened = True
        # Sent at once (the agent's first byte need not wait for the first word), before the writer knows
        # what comes: content null, as DeepSeek opens a reasoning answer and OpenAI an answer of calls.
        return self._chunk({"role": "assistant", "content": None, "refusal": None})

    def _reasoning_end(self, text: str) -> list[Event]:
        streamed, self._streamed = self._streamed, False
        if not self._out.thinking:
            self._note(HIDDEN)
            return []
        if not text:
            self._note(SEALED)
            return []
        # A reader that gives a piece's text only at its end (no deltas): shown whole, now.
        return [] if streamed else self._chunk({"reasoning_content": text})

    def _call_begin(self, d: CallBegin) -> list[Event]:
        if d.call_kind == "custom":
            self._note(_custom_note(d.index, d.name))
        call_id = self._out.call_id(d.index, d.call_id, d.name)
        fn = {"name": d.name, "arguments": ""}
        return self._chunk(
            {"tool_calls": [{"index": d.index, "id": call_id, "type": "function", "function": fn}]}
        )

    def _finish(self, reason: FinishReason, usage: Usage) -> list[Event]:
        if reason == "error":
            return self._fail("the upstream's answer ended in an error", None)
        events = self._chunk({}, FINISHES[reason])
        self._ended = True
        if self._out.usage_chunk:
            events.append((None, {**self._head, "choices": [], "usage": chat_usage(usage)}))
        elif usage != Usage():
            self._note(NO_USAGE)
        return events

    def _fail(self, message: str, status: int | None) -> list[Event]:
        # OpenAI ends a stream that fails part-way with an error chunk and no [DONE].
        self._ended = self._failed = True
        return [(None, error_body(status or 500, message))]


# -- whole answers --------------------------------------------------------------------------------------


def reply_reason(reply: Reply) -> FinishReason:
    """A reply's finish reason in the bridge's words: the bridge's own, Chat's, else from its calls."""
    raw = reply.finish_reason or ""
    reason = _OURS.get(raw) or REASONS.get(raw) or "stop"
    return "tool_calls" if reason == "stop" and reply.calls else reason


def _arguments(call: ParsedCall) -> str:
    return call.input if isinstance(call.input, str) else jsonenc.dumps(call.input)


def _tool_calls(reply: Reply, out: Outbound, notes: list[str]) -> list[dict[str, Any]]:
    calls = []
    for i, c in enumerate(reply.calls):
        if c.kind == "custom":
            notes.append(_custom_note(i, c.name))
        fn = {"name": c.name, "arguments": _arguments(c)}
        calls.append({"id": out.call_id(i, c.call_id, c.name), "type": "function", "function": fn})
    return calls


def _message(reply: Reply, out: Outbound, notes: list[str]) -> dict[str, Any]:
    said = reply.said or ((Text(reply.text),) if reply.text else ())
    text = "".join(p.text for p in said if isinstance(p, Text))
    reasoning = [p for p in said if isinstance(p, Reasoning)]
    message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    readable = "".join(p.text for p in reasoning)
    if reasoning and not out.thinking:
        notes.append(HIDDEN)
    elif readable:
        message["reasoning_content"] = readable
    if reasoning and out.thinking and any(not p.text for p in reasoning):
        notes.append(SEALED)
    if reply.calls:
        message["tool_calls"] = _tool_calls(reply, out, notes)
    return message


def chat_body(reply: Reply, out: Outbound) -> tuple[dict[str, Any], list[str]]:
    """A whole reply as a ``chat.completion`` body, and what it could not carry."""
    notes: list[str] = []
    reason = reply_reason(reply)
    if reason == "error":
        notes.append("the upstream's answer ended in an error: given as finish_reason stop")
    choice = {
        "index": 0,
        "message": _message(reply, out, notes),
        "logprobs": None,
        "finish_reason": FINISHES[reason],
    }
    body = {
        "id": out.answer_id,
        "object": "chat.completion",
        "created": out.created,
        "model": out.model,
        "choices": [choice],
        "usage": chat_usage(reply.usage),
    }
    return body, notes


BRIDGE = Bridge(reader=ChatReader, writer=ChatWriter, body=chat_body, reason=neutral_reason)

__all__ = ["BRIDGE", "ChatWriter", "chat_body", "chat_usage", "reply_reason"]

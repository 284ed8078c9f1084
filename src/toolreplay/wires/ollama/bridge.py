"""The Ollama side of the bridge between wires (design 51): :data:`BRIDGE`.

Ollama's ``/api/chat`` stream is NDJSON: each line ``{"model", "created_at", "message": {"role",
"content", "thinking"?, "tool_calls"?}, "done": false}``, calls whole on one line (``function.name``,
``function.arguments`` an object, an ``id`` from servers since 2025), the last line ``"done": true`` with
``done_reason`` and the counts (``prompt_eval_count``, ``eval_count``). What :class:`OllamaReader` gives
agrees with :class:`~toolreplay.wires.ollama.response.StreamParser`: the thinking as one reasoning piece
with the data the parser stores (``{"ollama": {"thinking": ...}}``), ended at the first line that carries
something else.

The writer sends the same lines (no duration fields: they would be made up); the reasoning as
``message.thinking`` when the agent asked to see it (``think``); each call on its own line as soon as it is
complete, its arguments an object. Ollama has no cached count, no refusal reason and no place for a
reasoning piece's token: named in the notes (the store keeps them).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, assert_never

from toolreplay import jsonenc
from toolreplay.model import Reasoning, Text
from toolreplay.wires._parse import items, mapping, text_of
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
from toolreplay.wires.ollama.response import WIRE
from toolreplay.wires.reply import ParsedCall, Reply, Usage

HIDDEN = "reasoning not shown: the agent did not ask to see it (think), it stays in the store for its issuer"
SEALED = "reasoning without readable text (encrypted or redacted) not shown: Ollama has no place for it"
NO_CACHE = "cached tokens not sent: Ollama's answer has no cached count"
NO_CACHE_WRITE = "tokens written to the prompt cache not sent: Ollama's answer has no cache_write count"
REFUSAL = "the upstream refused (a safety stop): Ollama has no such reason, given as done_reason stop"
ENDED = "the upstream's stream ended before its answer was complete"
_REASONS: dict[str, FinishReason] = {"stop": "stop", "length": "length", **{r: r for r in FINISH_REASONS}}


def created_at(seconds: int) -> str:
    """``created`` as Ollama's ``created_at`` (RFC 3339, UTC)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def neutral_reason(raw: str | None, calls: bool) -> FinishReason:
    """``done_reason`` in the bridge's words: Ollama says ``stop`` after calls too (and ``load`` or
    ``unload`` for a model loaded or unloaded without an answer)."""
    reason = _REASONS.get(raw or "", "stop")
    return "tool_calls" if reason == "stop" and calls else reason


class OllamaReader:
    """A :class:`~toolreplay.wires.bridge.DeltaReader` of ``/api/chat`` NDJSON objects."""

    def __init__(self) -> None:
        self._begun = False
        self._thinking: list[str] | None = None
        self._calls = 0
        self._over = False

    def feed(self, event: Any) -> list[Delta]:
        if self._over:
            return []
        line = mapping(event, WIRE, "a stream line")
        if "error" in line:
            self._over = True
            err = line["error"]
            return [Failed(err if isinstance(err, str) else jsonenc.dumps(err))]
        out: list[Delta] = []
        if not self._begun:
            self._begun = True
            model = line.get("model")
            out.append(Begin(model if isinstance(model, str) and model else None))
        message = line.get("message")
        if isinstance(message, Mapping):
            out += self._message(message)
        if line.get("done") is True:
            out += self._end_thinking()
            self._over = True
            usage = Usage(_count(line.get("prompt_eval_count")), _count(line.get("eval_count")), None)
            reason = line.get("done_reason")
            out.append(
                Finish(neutral_reason(reason if isinstance(reason, str) else None, self._calls > 0), usage)
            )
        return out

    def finish(self) -> list[Delta]:
        if self._over:
            return []
        self._over = True
        return [Failed(f'{WIRE}: the stream ended before its final line ("done": true)'), Finish("error")]

    def _message(self, message: Mapping[str, Any]) -> list[Delta]:
        out: list[Delta] = []
        thinking = message.get("thinking")
        if isinstance(thinking, str):
            if self._thinking is None:
                self._thinking = []
            self._thinking.append(thinking)
            out += [ReasoningDelta(thinking)] if thinking else []
        text = text_of(message.get("content"), WIRE, "message.content")
        if text:
            out += [*self._end_thinking(), TextDelta(text)]
        for i, raw in enumerate(items(message.get("tool_calls"), WIRE, "message.tool_calls")):
            out += [*self._end_thinking(), *self._call(mapping(raw, WIRE, f"message.tool_calls[{i}]"))]
        return out

    def _end_thinking(self) -> list[Delta]:
        pieces, self._thinking = self._thinking, None
        if not pieces or not "".join(pieces):  # the parser keeps no piece for empty thinking either
            return []
        text = "".join(pieces)
        return [ReasoningEnd(text, {WIRE: {"thinking": text}})]

    def _call(self, call: Mapping[str, Any]) -> list[Delta]:
        fn = mapping(call.get("function"), WIRE, "message.tool_calls[].function")
        name = text_of(fn.get("name"), WIRE, "message.tool_calls[].function.name")
        args = fn.get("arguments")
        text = args if isinstance(args, str) else jsonenc.dumps(args if args is not None else {})
        cid = call.get("id")
        n, self._calls = self._calls, self._calls + 1
        begin = CallBegin(n, name, cid if isinstance(cid, str) and cid else None)
        return [begin, CallDelta(n, text), CallEnd(n)]


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


# -- the writer -----------------------------------------------------------------------------------------


def _arguments(text: str, index: int, notes: list[str]) -> dict[str, Any]:
    try:
        value = jsonenc.loads(text) if text.strip() else {}
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    notes.append(
        f"call {index}'s arguments are not a JSON object: Ollama carries objects only, given as {{}}"
    )
    return {}


def _tool_call(
    out: Outbound, index: int, name: str, upstream: str | None, args: dict[str, Any]
) -> dict[str, Any]:
    call: dict[str, Any] = {"function": {"index": index, "name": name, "arguments": args}}
    cid = out.call_id(index, upstream, name)
    return {"id": cid, **call} if cid else call


def _final(reason: FinishReason, usage: Usage, notes: list[str]) -> dict[str, Any]:
    if reason == "refusal":
        notes.append(REFUSAL)
    elif reason == "error":
        notes.append("the upstream's answer ended in an error: given as done_reason stop")
    if usage.cached_tokens:
        notes.append(NO_CACHE)
    if usage.cache_write_tokens:
        notes.append(NO_CACHE_WRITE)
    counts = {"prompt_eval_count": usage.input_tokens, "eval_count": usage.output_tokens}
    # Ollama's counts are omitempty: a real answer never holds a zero one
    done = {"done": True, "done_reason": "length" if reason == "length" else "stop"}
    return {**done, **{k: v for k, v in counts.items() if v}}


class OllamaWriter:
    """A :class:`~toolreplay.wires.bridge.DeltaWriter` of ``/api/chat`` NDJSON lines for one answer."""

    def __init__(self, out: Outbound) -> None:
        self.notes: list[str] = []
        self._out = out
        self._head = {"model": out.model, "created_at": created_at(out.created)}
        self._calls: dict[int, tuple[str, str | None, list[str]]] = {}
        self._ended = False
        self._closed = False
        self._streamed = False

    def write(self, delta: Delta) -> list[Event]:
        if self._ended:
            return []
        match delta:
            case Begin():
                return []  # Ollama's first line already carries the answer's first piece
            case TextDelta(text=text):
                return [self._line({"content": text})] if text else []
            case ReasoningDelta(text=text):
                if not self._out.thinking:
                    return self._note(HIDDEN)
                self._streamed = self._streamed or bool(text)
                return [self._line({"content": "", "thinking": text})] if text else []
            case ReasoningEnd(text=text):
                return self._reasoning_end(text)
            case CallBegin(index=index, name=name, call_id=upstream):
                self._calls[index] = (name, upstream, [])
                return []
            case CallDelta(index=index, arguments=piece):
                self._calls[index][2].append(piece)
                return []
            case CallEnd(index=index):
                return [self._line({"content": "", "tool_calls": [self._call(index)]})]
            case Finish(reason=reason, usage=usage):
                if reason == "error":
                    return self._fail("the upstream's answer ended in an error")
                self._ended = True
                final = _final(reason, usage, self.notes)
                return [(None, {**self._head, "message": {"role": "assistant", "content": ""}, **final})]
            case Failed(message=message):
                return self._fail(message)
            case _:
                assert_never(delta)

    def close(self) -> list[Event]:
        if self._closed:
            return []
        self._closed = True
        return [] if self._ended else self._fail(ENDED)

    def _line(self, message: dict[str, Any]) -> Event:
        return None, {**self._head, "message": {"role": "assistant", **message}, "done": False}

    def _note(self, note: str) -> list[Event]:
        if note not in self.notes:
            self.notes.append(note)
        return []

    def _reasoning_end(self, text: str) -> list[Event]:
        streamed, self._streamed = self._streamed, False
        if not self._out.thinking:
            return self._note(HIDDEN)
        if not text:
            return self._note(SEALED)
        return [] if streamed else [self._line({"content": "", "thinking": text})]

    def _call(self, index: int) -> dict[str, Any]:
        name, upstream, parts = self._calls.pop(index)
        return _tool_call(self._out, index, name, upstream, _arguments("".join(parts), index, self.notes))

    def _fail(self, message: str) -> list[Event]:
        self._ended = True
        return [(None, {"error": message})]


# -- whole answers --------------------------------------------------------------------------------------


def _arguments_of(call: ParsedCall, index: int, notes: list[str]) -> dict[str, Any]:
    if isinstance(call.input, dict):
        return call.input
    return _arguments(call.input if isinstance(call.input, str) else jsonenc.dumps(call.input), index, notes)


def ollama_body(reply: Reply, out: Outbound) -> tuple[dict[str, Any], list[str]]:
    """A whole reply as an ``/api/chat`` answer, and what it could not carry."""
    notes: list[str] = []
    said = reply.said or ((Text(reply.text),) if reply.text else ())
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(p.text for p in said if isinstance(p, Text)),
    }
    reasoning = [p for p in said if isinstance(p, Reasoning)]
    thinking = "".join(p.text for p in reasoning)
    if reasoning and not out.thinking:
        notes.append(HIDDEN)
    elif thinking:
        message["thinking"] = thinking
    if reasoning and out.thinking and any(not p.text for p in reasoning):
        notes.append(SEALED)
    if reply.calls:
        message["tool_calls"] = [
            _tool_call(out, i, c.name, c.call_id, _arguments_of(c, i, notes))
            for i, c in enumerate(reply.calls)
        ]
    raw = reply.finish_reason
    final = _final(neutral_reason(raw, bool(reply.calls)), reply.usage, notes)
    return {"model": out.model, "created_at": created_at(out.created), "message": message, **final}, notes


BRIDGE = Bridge(reader=OllamaReader, writer=OllamaWriter, body=ollama_body, reason=neutral_reason)

__all__ = ["BRIDGE", "OllamaReader", "OllamaWriter", "created_at", "neutral_reason", "ollama_body"]

"""Reading an Anthropic Messages stream into the bridge's neutral deltas, event by event (design 51).

Each event gives its deltas as it arrives: ``message_start`` a :class:`Begin`; a ``text`` block its
words; a ``thinking`` block its ``thinking_delta`` pieces, then (at its ``content_block_stop``) one
:class:`ReasoningEnd` holding the whole block as ``response.said_block`` keeps it (type, thinking,
signature), so a stream and the whole answer store the same piece; a ``redacted_thinking`` block one
:class:`ReasoningEnd` with no text; a ``tool_use`` block a :class:`CallBegin` (calls counted from 0), its
``input_json_delta`` pieces and a :class:`CallEnd`; ``message_stop`` the :class:`Finish`, with the stop
reason ``message_delta`` gave and the usage of ``message_start`` and ``message_delta`` merged (the later
count wins, as the SDK merges them). An ``error`` event is a :class:`Failed` with the status its type
stands for, and ends the stream.

Text after a call starts with a blank line when words came before (design 10), as the stream parser and
the whole answer's text have it. Server-tool blocks (``server_tool_use``, ``web_search_tool_result``...)
give no delta: a hosted tool's run belongs to its provider (the recorded upstream stream keeps it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolreplay import jsonenc
from toolreplay.wires._parse import ended_early, fail, mapping, text_of
from toolreplay.wires.anthropic.errors import error_status
from toolreplay.wires.anthropic.response import WIRE, parse_usage
from toolreplay.wires.bridge import (
    Begin,
    CallBegin,
    CallDelta,
    CallEnd,
    Delta,
    Failed,
    Finish,
    FinishReason,
    ReasoningDelta,
    ReasoningEnd,
    TextDelta,
)

#: Anthropic's stop reasons in the bridge's words. ``pause_turn`` (a server tool's long turn paused) and
#: ``model_context_window_exceeded`` have no word of their own elsewhere: the nearest is kept.
STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
}
_THINKING = ("thinking", "redacted_thinking")


@dataclass(slots=True)
class _Block:
    """One open content block: its type, the block as accumulated (thinking), the call it is."""

    type: str
    block: dict[str, Any]
    call: int = -1
    sep: str = ""
    json_events: int = 0
    pieces: list[str] = field(default_factory=list)


class Reader:
    """A :class:`~toolreplay.wires.bridge.DeltaReader` of one Messages stream. Events that are not this
    wire's shape raise :class:`~toolreplay.errors.ResponseFormatError`, as the stream parser does."""

    def __init__(self) -> None:
        self._open: dict[int, _Block] = {}
        self._stopped: set[int] = set()
        self._calls = 0
        self._usage: dict[str, Any] = {}
        self._stop: str | None = None
        self._ended = False
        self._after_call = False
        self._said = False

    def feed(self, event: Any) -> list[Delta]:
        event = mapping(event, WIRE, "a stream event")
        if self._ended:
            return []
        kind = event.get("type")
        if kind == "message_start":
            return self._begin(mapping(event.get("message"), WIRE, "message_start.message"))
        if kind == "content_block_start":
            return self._start(event)
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_stop":
            index = _index(event)
            self._stopped.add(index)
            block = self._open.pop(index, None)
            return self._stop_block(block) if block is not None else []
        if kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, Mapping) and isinstance(delta.get("stop_reason"), str):
                self._stop = delta["stop_reason"]
            self._merge_usage(event.get("usage"))
            return []
        if kind == "message_stop":
            return self._end()
        if kind == "error":
            self._ended = True
            return [_failed(event)]
        return []  # ping, and event kinds this reader does not know yet

    def finish(self) -> list[Delta]:
        if self._ended:
            return []
        self._ended = True
        return [Failed(str(ended_early(WIRE, "message_stop"))), Finish("error", parse_usage(self._usage))]

    def _begin(self, message: Mapping[str, Any]) -> list[Delta]:
        self._merge_usage(message.get("usage"))
        if isinstance(message.get("stop_reason"), str):
            self._stop = message["stop_reason"]
        out: list[Delta] = [Begin(_str(message.get("model")), _str(message.get("id")))]
        # A message resumed after server-side code called a client tool arrives whole in message_start
        # (its tool_use in content, its stop_reason set) followed by message_stop alone.
        given = message.get("content")
        for index, block in enumerate(given if isinstance(given, list) else []):
            out += self._start({"index": index, "content_block": block})
            out += self._stop_block(self._open.pop(index))
        return out

    def _merge_usage(self, usage: Any) -> None:
        if isinstance(usage, Mapping):
            self._usage.update({k: v for k, v in usage.items() if v is not None})

    def _end(self) -> list[Delta]:
        out: list[Delta] = []
        for index in sorted(self._open):  # blocks never stopped end with the message
            out += self._stop_block(self._open.pop(index))
        self._ended = True
        reason = stop_reason_of(self._stop, bool(self._calls))
        return [*out, Finish(reason, parse_usage(self._usage))]

    def _start(self, event: Mapping[str, Any]) -> list[Delta]:
        index = _index(event)
        block = dict(mapping(event.get("content_block"), WIRE, "content_block_start.content_block"))
        kind = str(block.get("type") or "")
        state = _Block(kind, block)
        self._open[index] = state
        if kind == "tool_use":
            self._after_call = True
            state.call = self._calls
            self._calls += 1
            name = text_of(block.get("name"), WIRE, "content_block_start.content_block.name")
            if not name:
                fail(WIRE, f"tool_use block {index} without a name")
            return [CallBegin(state.call, name, _str(block.get("id")))]
        if kind == "text":
            state.sep = "\n\n" if self._after_call and self._said else ""
            self._after_call = False
            return self._text(state, text_of(block.get("text"), WIRE, "content_block_start.text"))
        if kind == "thinking":
            piece = str(block.get("thinking") or "")
            return [ReasoningDelta(piece)] if piece else []
        return []

    def _text(self, state: _Block, piece: str) -> list[Delta]:
        if not piece:
            return []
        self._said = True
        piece, state.sep = state.sep + piece, ""
        return [TextDelta(piece)]

    def _delta(self, event: Mapping[str, Any]) -> list[Delta]:
        index = _index(event)
        state = self._open.get(index)
        if state is None and index in self._stopped:
            return []  # a late piece of a block already ended: the block was given whole at its stop
        if state is None:
            fail(WIRE, f"content_block_delta for block {index} before its content_block_start")
        delta = mapping(event.get("delta"), WIRE, "content_block_delta.delta")
        kind = delta.get("type")
        if kind == "text_delta" and state.type == "text":
            return self._text(state, text_of(delta.get("text"), WIRE, "text_delta.text"))
        if kind == "input_json_delta" and state.type == "tool_use":
            state.json_events += 1
            piece = text_of(delta.get("partial_json"), WIRE, "input_json_delta.partial_json")
            return [CallDelta(state.call, piece)] if piece else []
        if kind == "thinking_delta" and state.type == "thinking":
            piece = str(delta.get("thinking") or "")
            state.block["thinking"] = str(state.block.get("thinking") or "") + piece
            return [ReasoningDelta(piece)] if piece else []
        if kind == "signature_delta" and state.type == "thinking":
            signature = str(state.block.get("signature") or "") + str(delta.get("signature") or "")
            state.block["signature"] = signature
        return []  # citations, and a server tool's input (kept whole by the recording)

    def _stop_block(self, state: _Block) -> list[Delta]:
        if state.type in _THINKING:
            return [ReasoningEnd(str(state.block.get("thinking") or ""), {WIRE: state.block})]
        if state.type != "tool_use":
            return []
        out: list[Delta] = []
        given = state.block.get("input")
        if not state.json_events and isinstance(given, Mapping) and given:
            # A call made from server-side code arrives with its whole input in the start event and no
            # delta (the stream parser keeps that input the same way).
            out.append(CallDelta(state.call, jsonenc.dumps(given)))
        return [*out, CallEnd(state.call)]


def _index(event: Mapping[str, Any]) -> int:
    index = event.get("index")
    if isinstance(index, bool) or not isinstance(index, int):
        fail(WIRE, f"{event.get('type')} without an integer 'index'")
    return index


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _failed(event: Mapping[str, Any]) -> Failed:
    error = event.get("error")
    if isinstance(error, Mapping):
        kind = str(error.get("type") or "")
        return Failed(str(error.get("message") or kind or "error"), error_status(kind))
    return Failed(str(error or "the stream sent an error event"))


def stop_reason_of(raw: str | None, calls: bool) -> FinishReason:
    """Anthropic's ``stop_reason`` in neutral words (an unknown one read from whether calls were made)."""
    return STOP_REASONS.get(raw or "") or ("tool_calls" if calls else "stop")


__all__ = ["STOP_REASONS", "Reader", "stop_reason_of"]

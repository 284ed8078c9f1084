"""Writing the bridge's neutral deltas as an Anthropic Messages answer: the stream a real server sends, and
the whole ``message`` object (design 51).

The stream: ``message_start`` (the message id is ``Outbound.answer_id``, the model ``Outbound.model``,
usage 0: an upstream may count only at the end) and a ``ping``, as the API sends; then one content block
per run of words, per piece of reasoning and per call, each with its own index from 0 in order
(``content_block_start`` / ``*_delta`` / ``content_block_stop``); then ``message_delta`` with the stop
reason and the final usage (the SDK's accumulator takes ``input_tokens``, both cache counts and
``output_tokens`` from it) and ``message_stop``.

* Words: a ``text`` block, ``text_delta`` pieces as they come.
* Reasoning, only when the agent asked for thinking (``Outbound.thinking``): a ``thinking`` block with
  ``thinking_delta`` pieces and, just before its stop, one ``signature_delta`` whose signature is
  ``Outbound.seal(piece)``, the opaque token (design 50), never the upstream's signature; a piece with
  no readable text is a ``redacted_thinking`` block whose ``data`` is the token. Not asked: nothing is
  shown and one note says so (the store keeps the piece).
* A call: a ``tool_use`` block with ``id = Outbound.call_id(index, upstream id, name)`` (derived from the
  answer id when that gives none), ``input: {}``, an empty ``input_json_delta`` first (as the API always
  sends) and the arguments as ``partial_json`` pieces as they arrive. A free-form call goes as an object
  with its text under ``"input"`` (Messages tools take objects only), with a note.
* A thinking or ``tool_use`` block is written whole from its first piece to its end: what arrives for
  another block meanwhile (calls streamed interleaved) waits, and follows once it has ended, so no index
  is ever reopened.
* A stop of ``stop`` with calls written is ``tool_use`` (Gemini stops with ``STOP`` after its calls, and
  an agent runs tools on ``tool_use``); ``tool_calls`` without a call is ``end_turn``.
* :class:`Failed` (or a stream closed before its finish) is Anthropic's ``error`` event, the type its
  status stands for, the upstream's message; the stream ends there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import Reasoning, ServerTool, Text, Usage
from toolreplay.wires.anthropic.bridge_read import STOP_REASONS
from toolreplay.wires.anthropic.errors import error_body
from toolreplay.wires.bridge import (
    FINISH_REASONS,
    Begin,
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
from toolreplay.wires.reply import ParsedCall, Reply

_STOP: dict[FinishReason, str] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "refusal": "refusal",
    "error": "end_turn",
}
#: A reply's own stop reason when it is already Anthropic's (the body of an Anthropic upstream).
_OWN = {"end_turn", "tool_use", "max_tokens", "refusal", "stop_sequence", "pause_turn"}
HIDDEN = "reasoning not shown: the request did not ask for thinking (the store keeps it)"


def stop_reason(reason: FinishReason, calls: int) -> str:
    """Anthropic's ``stop_reason`` for a finish, given how many calls were written."""
    if calls and reason == "stop":
        return "tool_use"
    if not calls and reason == "tool_calls":
        return "end_turn"
    return _STOP[reason]


def usage_json(usage: Usage) -> dict[str, int]:
    """Anthropic's usage counts: ``input_tokens`` without the cache (the neutral count includes it),
    both cache counts, ``output_tokens``; a count not known is 0 (every Messages usage carries them)."""
    cached, written = usage.cached_tokens or 0, usage.cache_write_tokens or 0
    return {
        "input_tokens": max(0, (usage.input_tokens or 0) - cached - written),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
        "output_tokens": usage.output_tokens or 0,
    }


def tool_id(out: Outbound, index: int, upstream: str | None, name: str) -> str:
    """The id the agent sees for call ``index``; from the answer id when the caller gives none."""
    given = out.call_id(index, upstream, name)
    return given or "toolu_" + re.sub(r"[^A-Za-z0-9_-]", "_", out.answer_id) + f"_{index}"


def _ev(kind: str, **fields: Any) -> Event:
    return kind, {"type": kind, **fields}


def _delta(index: int, **delta: Any) -> Event:
    return _ev("content_block_delta", index=index, delta=delta)


@dataclass(slots=True)
class _Open:
    """The block being written: its kind, its index, the call it is, what it has carried so far."""

    kind: str
    index: int
    call: int = -1
    custom: bool = False
    parts: list[str] = field(default_factory=list)


class Writer:
    """A :class:`~toolreplay.wires.bridge.DeltaWriter` of one Messages stream."""

    def __init__(self, out: Outbound) -> None:
        self.out = out
        self.notes: list[str] = []
        self._started = False
        self._ended = False
        self._next = 0
        self._open: _Open | None = None
        self._held: list[Delta] = []
        self._calls = 0

    def write(self, delta: Delta) -> list[Event]:
        if self._ended:
            return []
        if isinstance(delta, Failed):
            return self._fail(delta.message, delta.status)
        if isinstance(delta, Finish):
            return self._finish(delta)
        if self._waits(delta):
            self._held.append(delta)
            return []
        events = [] if self._started else self._start()
        if isinstance(delta, Begin):
            return events
        if isinstance(delta, TextDelta):
            return events + self._text(delta.text)
        if isinstance(delta, ReasoningDelta | ReasoningEnd):
            return events + self._reasoning(delta)
        return events + self._call(delta)

    def close(self) -> list[Event]:
        if self._ended:
            return []
        self.notes.append("the upstream's answer ended without its last event: sent as an error event")
        return self._fail("the upstream's answer ended before it was complete", None)

    # -- the message's frame ---------------------------------------------------------------------------

    def _start(self) -> list[Event]:
        self._started = True
        message: dict[str, Any] = {
            "id": self.out.answer_id,
            "type": "message",
            "role": "assistant",
            "model": self.out.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage_json(Usage()),
        }
        return [_ev("message_start", message=message), _ev("ping")]

    def _finish(self, finish: Finish) -> list[Event]:
        if finish.reason == "error":
            return self._fail("the upstream's answer ended in an error", None)
        events = ([] if self._started else self._start()) + self._drain()
        delta = {"stop_reason": stop_reason(finish.reason, self._calls), "stop_sequence": None}
        self._ended = True
        usage = usage_json(finish.usage)
        return [*events, _ev("message_delta", delta=delta, usage=usage), _ev("message_stop")]

    def _fail(self, message: str, status: int | None) -> list[Event]:
        self._ended = True
        name, payload = "error", error_body(status or 500, message)
        return [(name, payload)]

    # -- blocks -----------------------------------------------------------------------------------------

    def _waits(self, delta: Delta) -> bool:
        """Whether ``delta`` belongs to another block than the thinking or call block being written."""
        o = self._open
        if o is None or o.kind == "text" or isinstance(delta, Begin):
            return False
        if o.kind == "thinking":
            return not isinstance(delta, ReasoningDelta | ReasoningEnd)
        return not (isinstance(delta, CallDelta | CallEnd) and delta.index == o.call)

    def _open_block(self, kind: str, block: dict[str, Any], **state: Any) -> list[Event]:
        events = self._close()
        self._open = _Open(kind, self._next, **state)
        self._next += 1
        return [*events, _ev("content_block_start", index=self._open.index, content_block=block)]

    def _close(self) -> list[Event]:
        """End the block being written (a thinking block without its end is sealed as it stands)."""
        o, self._open = self._open, None
        if o is None:
            return []
        events: list[Event] = []
        if o.kind == "thinking":
            token = self.out.seal(Reasoning("".join(o.parts)))
            events.append(_delta(o.index, type="signature_delta", signature=token))
        elif o.kind == "tool_use" and o.custom:
            events.append(_delta(o.index, type="input_json_delta", partial_json='"}'))
        return [*events, _ev("content_block_stop", index=o.index)]

    def _drain(self) -> list[Event]:
        """End every block, writing what waited for them in order (it may open and end blocks itself)."""
        events: list[Event] = []
        while True:
            events += self._close()
            if not self._held:
                return events
            held, self._held = self._held, []
            for d in held:
                events += self.write(d)

    def _text(self, text: str) -> list[Event]:
        if not text:
            return []
        events: list[Event] = []
        if not (self._open and self._open.kind == "text"):
            events = self._open_block("text", {"type": "text", "text": ""})
        assert self._open is not None
        return [*events, _delta(self._open.index, type="text_delta", text=text)]

    def _reasoning(self, delta: ReasoningDelta | ReasoningEnd) -> list[Event]:
        if not self.out.thinking:
            if HIDDEN not in self.notes:
                self.notes.append(HIDDEN)
            return []
        o = self._open if self._open and self._open.kind == "thinking" else None
        shown = "".join(o.parts) if o else ""
        if isinstance(delta, ReasoningDelta):
            return self._think(delta.text)
        whole = delta.text or shown
        token = self.out.seal(Reasoning(whole, delta.data))
        if not whole:  # opaque reasoning: the agent keeps the token and sends it back
            block = {"type": "redacted_thinking", "data": token}
            return [*self._open_block("redacted", block), *self._end_block()]
        events = self._think(whole[len(shown) :] if whole.startswith(shown) else "")
        assert self._open is not None
        events.append(_delta(self._open.index, type="signature_delta", signature=token))
        return events + self._end_block()

    def _think(self, text: str) -> list[Event]:
        events: list[Event] = []
        if not (self._open and self._open.kind == "thinking"):
            events = self._open_block("thinking", {"type": "thinking", "thinking": "", "signature": ""})
        assert self._open is not None
        if text:
            self._open.parts.append(text)
            events.append(_delta(self._open.index, type="thinking_delta", thinking=text))
        return events

    def _end_block(self) -> list[Event]:
        """End the thinking or call block just completed, then write what waited for it."""
        assert self._open is not None
        events = [_ev("content_block_stop", index=self._open.index)]
        self._open = None
        held, self._held = self._held, []
        for d in held:
            events += self.write(d)
        return events

    def _call(self, delta: CallBegin | CallDelta | CallEnd) -> list[Event]:
        if isinstance(delta, CallBegin):
            return self._call_begin(delta)
        o = self._open
        if o is None or o.kind != "tool_use":  # a piece of a call already ended, or never begun
            self.notes.append(
                f"a piece of call {delta.index} came after its end (or before its start): left out"
            )
            return []
        if isinstance(delta, CallDelta):
            if not delta.arguments:
                return []
            o.parts.append(delta.arguments)
            piece = jsonenc.dumps(delta.arguments)[1:-1] if o.custom else delta.arguments
            return [_delta(o.index, type="input_json_delta", partial_json=piece)]
        events = [_delta(o.index, type="input_json_delta", partial_json='"}')] if o.custom else []
        if not o.custom and not _is_object("".join(o.parts)):
            self.notes.append(f"call {o.call}'s arguments are not a JSON object; sent as they came")
        return events + self._end_block()

    def _call_begin(self, begin: CallBegin) -> list[Event]:
        custom = begin.call_kind == "custom"
        cid = tool_id(self.out, begin.index, begin.call_id, begin.name)
        block = {"type": "tool_use", "id": cid, "name": begin.name, "input": {}}
        events = self._open_block("tool_use", block, call=begin.index, custom=custom)
        self._calls += 1
        first = '{"input":"' if custom else ""
        if custom:
            self.notes.append(f'call {begin.index} ({begin.name}) is free-form: its text went under "input"')
        return [*events, _delta(self._next - 1, type="input_json_delta", partial_json=first)]


def _is_object(text: str) -> bool:
    if not text.strip():
        return True
    try:
        return isinstance(jsonenc.loads(text), dict)
    except ValueError:
        return False


# -- the whole answer ------------------------------------------------------------------------------------


def _finish_reason(reply: Reply, notes: list[str]) -> FinishReason:
    """A reply's stop in the bridge's words: as given (a reply collected from deltas), Anthropic's own, or
    else by its calls, with a note naming what was not understood."""
    given = reply.finish_reason
    if given in FINISH_REASONS:
        return given
    if given in _OWN:
        return STOP_REASONS[given]
    if given is not None:
        notes.append(f"stop reason {given!r} is not one the bridge knows: taken from the calls")
    return "tool_calls" if reply.calls else "stop"


def _said_blocks(reply: Reply, out: Outbound, notes: list[str]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for piece in reply.said or ((Text(reply.text),) if reply.text else ()):
        if isinstance(piece, Text):
            if blocks and blocks[-1]["type"] == "text":
                blocks[-1]["text"] += piece.text
            elif piece.text:
                blocks.append({"type": "text", "text": piece.text})
        elif isinstance(piece, ServerTool):
            notes.append(
                f"a hosted tool's run ({piece.text or 'server tool'}) is not shown: it is its provider's"
            )
        elif not out.thinking:
            if HIDDEN not in notes:
                notes.append(HIDDEN)
        elif piece.text:
            blocks.append({"type": "thinking", "thinking": piece.text, "signature": out.seal(piece)})
        else:
            blocks.append({"type": "redacted_thinking", "data": out.seal(piece)})
    return blocks


def _input(index: int, call: ParsedCall, notes: list[str]) -> dict[str, Any]:
    if call.kind == "custom":
        notes.append(f'call {index} ({call.name}) is free-form: its text went under "input"')
        return {"input": call.input if isinstance(call.input, str) else jsonenc.dumps(call.input)}
    if isinstance(call.input, Mapping):
        return dict(call.input)
    notes.append(f"call {index} ({call.name})'s arguments are not a JSON object: sent as {{}}")
    return {}


def body(reply: Reply, out: Outbound) -> tuple[dict[str, Any], list[str]]:
    """A whole reply as a Messages ``message`` object: reasoning (when asked for, sealed), words and calls
    in order, the stop reason and usage as the stream writes them; and the notes of what it left out."""
    notes: list[str] = []
    content = _said_blocks(reply, out, notes)
    for i, call in enumerate(reply.calls):
        cid = tool_id(out, i, call.call_id, call.name)
        content.append({"type": "tool_use", "id": cid, "name": call.name, "input": _input(i, call, notes)})
    message = {
        "id": out.answer_id,
        "type": "message",
        "role": "assistant",
        "model": out.model,
        "content": content,
        "stop_reason": stop_reason(_finish_reason(reply, notes), len(reply.calls)),
        "stop_sequence": None,
        "usage": usage_json(reply.usage),
    }
    return message, notes


__all__ = ["HIDDEN", "Writer", "body", "stop_reason", "tool_id", "usage_json"]

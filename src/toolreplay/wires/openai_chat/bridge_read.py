"""Chat Completions streams read into the bridge's neutral deltas (design 51): the reader side of
:data:`toolreplay.wires.openai_chat.bridge.BRIDGE`.

A ``chat.completion.chunk`` carries pieces of one message: ``delta.content`` (text; Mistral sends a list
of parts, its ``thinking`` parts reasoning), ``delta.reasoning_content`` (Kimi, DeepSeek, xAI) or
``delta.reasoning`` (OpenRouter, vLLM, Ollama's compatible endpoint), and ``delta.tool_calls`` fragments
keyed by ``index`` (the id and name once, the arguments in pieces). What :class:`ChatReader` gives agrees
with :class:`~toolreplay.wires.openai_chat.response.StreamParser` on the same chunks: the same text, calls
and usage, and each reasoning piece with the data the parser stores (``{"openai-chat":
{"reasoning_content": ...}}``), so what the store keeps is the same whether the proxy translates or not.

When things end: a reasoning piece at the first delta that is not reasoning (text, a call, the finish); a
call when the next call begins and its arguments so far are a whole JSON object (a server that streams
calls one after another), else at the finish (a server that interleaves calls: all announced first, then
their arguments); the answer at its usage (the chunk after the finish chunk when ``include_usage`` asked
for it, or the finish chunk itself at DeepSeek and Groq) or at ``[DONE]``, whichever comes first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolreplay import jsonenc
from toolreplay.wires._parse import items, mapping, stream_error
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
from toolreplay.wires.openai_chat.response import WIRE, parse_usage, thinking_text
from toolreplay.wires.reply import Usage

DONE = "[DONE]"
#: Chat's finish reasons in the bridge's words; any other (a server's own) counts as ``stop``.
REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "refusal",
}
_REASONING_KEYS = ("reasoning_content", "reasoning")


def neutral_reason(raw: str | None, calls: bool) -> FinishReason:
    """A Chat ``finish_reason`` as the bridge's; ``stop`` with calls made is ``tool_calls`` (vLLM and
    Ollama's compatible endpoint say ``stop`` after calls, and the agent must still run them)."""
    reason = REASONS.get(raw or "", "stop")
    return "tool_calls" if reason == "stop" and calls else reason


@dataclass(slots=True)
class _Reasoning:
    """The reasoning piece under way: its text by field, OpenRouter's ``reasoning_details``, Mistral's
    ``thinking`` part text."""

    fields: dict[str, list[str]] = field(default_factory=dict)
    details: list[Any] = field(default_factory=list)
    part: list[str] | None = None

    def ends(self) -> list[Delta]:
        out: list[Delta] = []
        if self.fields or self.details:
            data: dict[str, Any] = {k: "".join(v) for k, v in self.fields.items()}
            if self.details:
                data["reasoning_details"] = self.details
            readable = str(data.get("reasoning_content") or data.get("reasoning") or "")
            out.append(ReasoningEnd(readable, {WIRE: data}))
        if self.part is not None:  # kept as the part it streamed as, as the stream parser keeps it
            text = "".join(self.part)
            part = {"type": "thinking", "thinking": [{"type": "text", "text": text}]}
            out.append(ReasoningEnd(text, {WIRE: {"content_part": part}}))
        return out


@dataclass(slots=True)
class _Call:
    number: int
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    begun: bool = False
    ended: bool = False

    def whole(self) -> bool:
        """Its arguments so far are a whole JSON object (a sequential server has moved on)."""
        try:
            return isinstance(jsonenc.loads("".join(self.arguments)), dict)
        except ValueError:
            return False


class ChatReader:
    """A :class:`~toolreplay.wires.bridge.DeltaReader` of Chat chunks (and the string ``[DONE]``)."""

    def __init__(self) -> None:
        self._begun = False
        self._reasoning: _Reasoning | None = None
        self._calls: dict[int, _Call] = {}
        self._reason: str | None = None
        self._finishing = False
        self._usage = Usage()
        self._over = False

    def feed(self, event: Any) -> list[Delta]:
        if self._over:
            return []
        if event == DONE:
            return self._done()
        chunk = mapping(event, WIRE, "a stream event")
        if "error" in chunk:
            self._over = True
            return [_failed(chunk)]
        out: list[Delta] = []
        # Azure opens with a chunk of prompt filter results alone (no choices, model ""): not the answer yet.
        if not self._begun and (chunk.get("choices") or _str(chunk.get("model"))):
            self._begun = True
            out.append(Begin(_str(chunk.get("model")), _str(chunk.get("id"))))
        for i, raw in enumerate(items(chunk.get("choices"), WIRE, "choices")):
            choice = mapping(raw, WIRE, f"choices[{i}]")
            if choice.get("index", 0) == 0:  # n > 1: the agent's answer is the first choice
                out += self._choice(choice)
        usage = chunk.get("usage")
        if isinstance(usage, Mapping) and usage:
            self._usage = parse_usage(usage)
            if self._finishing:
                out += self._finish()
        return out

    def finish(self) -> list[Delta]:
        if self._finishing or self._over:
            return self._finish()
        self._over = True
        return [
            Failed(f"{WIRE}: the stream ended before its final chunk (no finish_reason)"),
            Finish("error"),
        ]

    # -- one choice's delta -------------------------------------------------------------------------

    def _choice(self, choice: Mapping[str, Any]) -> list[Delta]:
        out: list[Delta] = []
        delta = choice.get("delta")
        if isinstance(delta, Mapping):
            out += self._reasoning_of(delta)
            out += self._text_of(delta)
            for frag in items(delta.get("tool_calls"), WIRE, "delta.tool_calls"):
                out += self._fragment(mapping(frag, WIRE, "delta.tool_calls[]"))
        if isinstance(choice.get("finish_reason"), str) and not self._finishing:
            self._reason = choice["finish_reason"]
            out += self._ends()
        return out

    def _reasoning_of(self, delta: Mapping[str, Any]) -> list[Delta]:
        shown = ""
        for key in _REASONING_KEYS:
            piece = delta.get(key)
            if isinstance(piece, str):
                self._pending().fields.setdefault(key, []).append(piece)
                shown = shown or piece  # a server that sends both sends the same text twice
        if isinstance(delta.get("reasoning_details"), list):
            self._pending().details.extend(delta["reasoning_details"])
        return [ReasoningDelta(shown)] if shown else []

    def _text_of(self, delta: Mapping[str, Any]) -> list[Delta]:
        content = delta.get("content")
        out: list[Delta] = []
        if isinstance(content, list):  # Mistral: content parts, thinking among them
            for part in content:
                if isinstance(part, Mapping) and part.get("type") == "thinking":
                    out += self._thought(thinking_text(part))
                elif isinstance(part, Mapping) and isinstance(part.get("text"), str) and part["text"]:
                    out += [*self._end_reasoning(), TextDelta(part["text"])]
        elif isinstance(content, str) and content:
            out += [*self._end_reasoning(), TextDelta(content)]
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:  # OpenAI's refusal: words the agent must see
            out += [*self._end_reasoning(), TextDelta(refusal)]
        return out

    def _thought(self, text: str) -> list[Delta]:
        pending = self._pending()
        if pending.part is None:
            pending.part = []
        pending.part.append(text)
        return [ReasoningDelta(text)] if text else []

    def _pending(self) -> _Reasoning:
        if self._reasoning is None:
            self._reasoning = _Reasoning()
        return self._reasoning

    def _end_reasoning(self) -> list[Delta]:
        pending, self._reasoning = self._reasoning, None
        return pending.ends() if pending is not None else []

    # -- calls --------------------------------------------------------------------------------------

    def _fragment(self, frag: Mapping[str, Any]) -> list[Delta]:
        out = self._end_reasoning()
        index = frag.get("index")
        if not isinstance(index, int):
            index = self._index_without(frag.get("id"))
        call = self._calls.get(index)
        if call is None:
            out += self._end_whole_calls()
            call = self._calls[index] = _Call(len(self._calls))
        if isinstance(frag.get("id"), str) and frag["id"] and not call.call_id:
            call.call_id = frag["id"]
        fn = frag.get("function")
        fn = fn if isinstance(fn, Mapping) else {}
        if isinstance(fn.get("name"), str) and fn["name"] and not call.name:
            call.name = fn["name"]  # a later fragment may repeat it, or send "" (GLM)
        piece = fn.get("arguments")
        piece = piece if isinstance(piece, str) else ""
        if call.ended:
            # Only a piece after a whole JSON object lands here; the object stays what the call made.
            return out
        call.arguments.append(piece)
        if not call.begun and call.name:
            call.begun = True
            out.append(CallBegin(call.number, call.name, call.call_id or None))
            joined = "".join(call.arguments)
            out += [CallDelta(call.number, joined)] if joined else []
        elif call.begun and piece:
            out.append(CallDelta(call.number, piece))
        return out

    def _index_without(self, call_id: Any) -> int:
        # Mistral sends no index: a fragment with a new id starts a new call, one without an id continues
        # the latest call (as the stream parser reads it).
        for k, c in self._calls.items():
            if call_id and c.call_id == call_id:
                return k
        if call_id or not self._calls:
            return max(self._calls, default=-1) + 1
        return max(self._calls)

    def _end_whole_calls(self) -> list[Delta]:
        out: list[Delta] = []
        for call in self._calls.values():
            if call.begun and not call.ended and call.whole():
                call.ended = True
                out.append(CallEnd(call.number))
        return out

    # -- the end ------------------------------------------------------------------------------------

    def _ends(self) -> list[Delta]:
        """What ends with the message: the reasoning under way and every open call."""
        self._finishing = True
        out = self._end_reasoning()
        for call in sorted(self._calls.values(), key=lambda c: c.number):
            if not call.begun:
                self._over = True
                return [*out, Failed(f"{WIRE}: tool call {call.number} came without a name"), Finish("error")]
            if not call.ended:
                call.ended = True
                out.append(CallEnd(call.number))
        return out

    def _done(self) -> list[Delta]:
        out = [] if self._finishing else self._ends()
        return [*out, *self._finish()]

    def _finish(self) -> list[Delta]:
        if self._over:  # a call without a name has failed the answer already
            return []
        self._over = True
        return [Finish(neutral_reason(self._reason, bool(self._calls)), self._usage)]


def _failed(payload: Mapping[str, Any]) -> Failed:
    """An error chunk as :class:`Failed`: the provider's own message, the status its type implies."""
    err = payload.get("error")
    if isinstance(err, Mapping):
        message = str(err.get("message") or jsonenc.dumps(dict(err)))
        code = err.get("code")
        if isinstance(code, int) and not isinstance(code, bool) and 400 <= code < 600:
            return Failed(message, code)
    else:
        message = str(err)
    return Failed(message, stream_error(WIRE, payload).status)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


__all__ = ["DONE", "REASONS", "ChatReader", "neutral_reason"]

"""The Gemini side of the bridge between wires (design 51): ``alt=sse`` chunks read into neutral deltas,
deltas written as the chunks Gemini sends, a whole reply as a ``GenerateContentResponse``.

Reading: every chunk is a partial ``GenerateContentResponse``; its first candidate's parts come in
order. Thought parts (``thought: true``) are reasoning, merged while they follow each other and ended by
the first other part, their parts kept whole (signature included) as :mod:`response` keeps them; text
parts are words, a ``thoughtSignature`` on one travelling with it (``TextDelta.data``: Gemini 3 signs an
answer's last part, often an empty text part); a ``functionCall`` part is a whole call, its signature in
the call's provider data (Gemini 3's streamed ``partialArgs`` are put back together first, the call
begun when its opening part comes). There is no final event: the chunk with ``finishReason`` (or a
prompt's ``blockReason``) ends the answer, with the last usage seen.

Writing: one chunk per delta, as Gemini streams them; no usage until the last chunk, which holds an empty
text part, ``finishReason`` and ``usageMetadata`` (Gemini 3's closing chunk). Reasoning is shown only
when the agent asked (``includeThoughts``), as ``thought: true`` parts (not shown, it is named in the
notes). A reasoning piece's token goes where Gemini 3 puts a step's signature, whether the thoughts are
shown or not: on the first call after it, else on the closing part (the last text part of a whole
answer); a Gemini client keeps those signatures and sends them back (Gemini CLI puts a dummy one on a
first call that has none). The token goes in its base64 form
(:func:`~toolreplay.wires.bridge.base64_token`): ``thoughtSignature`` is protobuf bytes and google-genai
refuses an answer whose signature is not base64. A call's ``id`` is written when ``Outbound.call_id``
gives one (the API's ``FunctionCall.id``, which Gemini 3 sends and clients echo in
``functionResponse.id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import CallKind, Usage
from toolreplay.wires._parse import items, mapping, parsed_call, text_of
from toolreplay.wires._parse import string as _str
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
    base64_token,
    reply_deltas,
)
from toolreplay.wires.gemini.errors import error_body
from toolreplay.wires.gemini.partial_args import Assembler
from toolreplay.wires.gemini.response import parse_usage
from toolreplay.wires.gemini.signatures import either_case as _get
from toolreplay.wires.reply import Reply

WIRE = "gemini"

#: Gemini's finish reasons that mean its safety or policy stopped the answer.
REFUSALS = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
        "LANGUAGE",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)
#: The ones that mean the model's calls failed on Gemini's side.
FAILURES = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"})
_WRITTEN: dict[FinishReason, str] = {
    "stop": "STOP",
    "tool_calls": "STOP",  # Gemini has no reason of its own for calls
    "length": "MAX_TOKENS",
    "refusal": "SAFETY",
}
HIDDEN = "reasoning not shown: the agent did not ask to see it (includeThoughts); its token still goes out"


def finish_reason(value: Any, made_calls: bool) -> FinishReason:
    """Gemini's ``finishReason`` in neutral words (``STOP`` with calls is ``tool_calls``)."""
    if value == "MAX_TOKENS":
        return "length"
    if value in REFUSALS:
        return "refusal"
    if value in FAILURES:
        return "error"
    return "tool_calls" if made_calls else "stop"


def _signature(part: Mapping[str, Any]) -> Any:
    return _get(part, "thoughtSignature", "thought_signature")


def _continues(call: Any) -> bool:
    return isinstance(call, Mapping) and call.get("willContinue", call.get("will_continue")) is True


def _failed(event: Mapping[str, Any]) -> Failed:
    err = event.get("error")
    if isinstance(err, Mapping):
        code = err.get("code")
        status = code if isinstance(code, int) and not isinstance(code, bool) else None
        return Failed(str(err.get("message") or jsonenc.dumps(err)), status)
    return Failed(str(err) if isinstance(err, str) else jsonenc.dumps(event))


class Reader:
    """Reads one Gemini stream (its chunks decoded, in order) into deltas."""

    def __init__(self) -> None:
        self._began = False
        self._usage: Any = None
        self._thought: dict[str, Any] | None = None  # the thought parts so far, merged
        self._assembler = Assembler()
        self._open: tuple[int, Mapping[str, Any]] | None = None  # a call whose arguments still stream
        self._calls = 0
        self._done = False  # the answer ended: its finish or its error came
        self._finished = False  # the Finish went out

    def feed(self, event: Any) -> list[Delta]:
        if self._done:
            return []
        event = mapping(event, WIRE, "a stream event")
        if "error" in event:
            self._done = True
            return [_failed(event)]
        out: list[Delta] = []
        if not self._began:
            self._began = True
            out.append(
                Begin(_str(_get(event, "modelVersion", "model_version")), _str(event.get("responseId")))
            )
        usage = _get(event, "usageMetadata", "usage_metadata")
        if usage is not None:
            self._usage = usage
        candidates = items(event.get("candidates"), WIRE, "candidates")
        cand = mapping(candidates[0], WIRE, "candidates[0]") if candidates else {}
        content = cand.get("content")
        if isinstance(content, Mapping):
            for raw in items(content.get("parts"), WIRE, "candidates[0].content.parts"):
                out += self._part(raw)
        reason = _get(cand, "finishReason", "finish_reason")
        if reason is not None or (not candidates and _blocked(event)):
            self._done = self._finished = True
            out += self._end_reasoning() + self._end_call()
            neutral = finish_reason(reason, self._calls > 0) if reason is not None else "refusal"
            out.append(Finish(neutral, parse_usage(self._usage)))
        return out

    def finish(self) -> list[Delta]:
        if self._finished:
            return []
        self._finished = True
        if self._done:  # an error event ended it
            return [Finish("error", parse_usage(self._usage))]
        self._done = True
        return [
            *self._end_reasoning(),
            Failed("the Gemini stream ended before the chunk with finishReason"),
            Finish("error", parse_usage(self._usage)),
        ]

    def _part(self, raw: Any) -> list[Delta]:
        call_raw = _get(raw, "functionCall", "function_call") if isinstance(raw, Mapping) else None
        part = self._assembler.take(raw)
        if part is None:  # it went on with the open call: maybe closing it
            return [] if _continues(call_raw) else self._end_call()
        part = mapping(part, WIRE, "candidates[0].content.parts[]")
        call = _get(part, "functionCall", "function_call")
        if call is not None:
            return self._end_reasoning() + self._end_call() + self._call(part, call, _continues(call_raw))
        if part.get("thought") is True:
            return self._end_call() + self._thinking(part)
        out = self._end_reasoning() + self._end_call()
        if "text" in part:
            text = text_of(part.get("text"), WIRE, "candidates[0].content.parts[].text")
            sig = _signature(part)
            data = {WIRE: {"thoughtSignature": sig}} if isinstance(sig, str) and sig else None
            if text or data:
                out.append(TextDelta(text, data))
        return out  # a part Gemini's own tools made (executableCode...) has no neutral delta

    def _thinking(self, part: Mapping[str, Any]) -> list[Delta]:
        text = text_of(part.get("text"), WIRE, "candidates[0].content.parts[].text")
        out: list[Delta] = []
        prev = self._thought
        if prev is not None and isinstance(prev.get("text"), str) and isinstance(part.get("text"), str):
            self._thought = {**prev, **part, "text": prev["text"] + text}
        else:
            out += self._end_reasoning()
            self._thought = dict(part)
        if text:
            out.append(ReasoningDelta(text))
        return out

    def _end_reasoning(self) -> list[Delta]:
        if self._thought is None:
            return []
        merged, self._thought = self._thought, None
        text = merged.get("text")
        return [ReasoningEnd(text if isinstance(text, str) else "", {WIRE: merged})]

    def _call(self, part: Mapping[str, Any], call: Any, streaming: bool) -> list[Delta]:
        call = mapping(call, WIRE, "candidates[0].content.parts[].functionCall")
        index, self._calls = self._calls, self._calls + 1
        parsed = parsed_call(WIRE, call.get("name"), {}, call.get("id"), "functionCall.name")
        out: list[Delta] = [CallBegin(index, parsed.name, parsed.call_id)]
        self._open = (index, part)
        return out if streaming else out + self._end_call()

    def _end_call(self) -> list[Delta]:
        if self._open is None:
            return []
        (index, part), self._open = self._open, None
        call = mapping(_get(part, "functionCall", "function_call"), WIRE, "functionCall")
        parsed = parsed_call(WIRE, call.get("name"), call.get("args"), None, "functionCall.name")
        args = parsed.input if isinstance(parsed.input, str) else jsonenc.dumps(parsed.input)
        sig = _signature(part)
        data = {WIRE: {"thoughtSignature": sig}} if isinstance(sig, str) else None
        return [CallDelta(index, args), CallEnd(index, data)]


def _blocked(event: Mapping[str, Any]) -> bool:
    feedback = _get(event, "promptFeedback", "prompt_feedback")
    return isinstance(feedback, Mapping) and _get(feedback, "blockReason", "block_reason") is not None


# -- writing ---------------------------------------------------------------------------------------------


#: Anthropic's cache writes (``cache_creation_input_tokens``) have no field in ``usageMetadata``.
NO_CACHE_WRITE = (
    "tokens written to the prompt cache not sent: Gemini's usageMetadata has no cache_write count"
)


def usage_metadata(usage: Usage) -> dict[str, int]:
    """``usageMetadata`` for a usage: prompt, candidates (thoughts included: Gemini bills both as output),
    their total, cached content."""
    out: dict[str, int] = {}
    if usage.input_tokens is not None:
        out["promptTokenCount"] = usage.input_tokens
    if usage.output_tokens is not None:
        out["candidatesTokenCount"] = usage.output_tokens
    if out:
        out["totalTokenCount"] = sum(out.values())
    if usage.cached_tokens:
        out["cachedContentTokenCount"] = usage.cached_tokens
    return out


def _arguments(name: str, kind: CallKind, text: str) -> tuple[dict[str, Any], str | None]:
    """A call's arguments as the ``args`` object Gemini's ``functionCall`` holds, and the note when the
    call's input cannot be one (a free-form call, arguments that are not a JSON object)."""
    if kind == "custom":
        return {"input": text}, f"call {name}: a free-form call, sent as a functionCall with args.input"
    try:
        value = jsonenc.loads(text) if text.strip() else {}
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value, None
    return {"input": text}, f"call {name}: its arguments are not a JSON object, sent as args.input"


class Writer:
    """Writes deltas as the ``alt=sse`` chunks Gemini sends (each payload a ``GenerateContentResponse``)."""

    def __init__(self, out: Outbound) -> None:
        self.notes: list[str] = []
        self._out = out
        self._calls: dict[int, tuple[str, str | None, CallKind, list[str]]] = {}
        self._token: str | None = None  # the last reasoning piece's token, for the next part written
        self._ended = False

    def write(self, delta: Delta) -> list[Event]:
        if self._ended:
            return []
        if isinstance(delta, TextDelta):
            return [self._chunk([{"text": delta.text}])] if delta.text else []
        if isinstance(delta, ReasoningDelta):
            out = self._flush()
            if self._out.thinking and delta.text:
                out.append(self._chunk([{"text": delta.text, "thought": True}]))
            return out
        if isinstance(delta, ReasoningEnd):
            if delta.text and not self._out.thinking and HIDDEN not in self.notes:
                self.notes.append(HIDDEN)  # what the agent did not see stays in the store for its issuer
            out = self._flush()
            self._token = base64_token(self._out.seal(delta.piece()))
            return out
        if isinstance(delta, CallBegin):
            self._calls[delta.index] = (delta.name, delta.call_id, delta.call_kind, [])
        elif isinstance(delta, CallDelta) and delta.index in self._calls:
            self._calls[delta.index][3].append(delta.arguments)
        elif isinstance(delta, CallEnd) and delta.index in self._calls:
            return [self._chunk([self._signed(self._call_part(delta.index))])]
        elif isinstance(delta, Finish):
            return self._finish(delta)
        elif isinstance(delta, Failed):
            self._ended = True
            return [(None, error_body(delta.status or 500, delta.message))]
        return []

    def close(self) -> list[Event]:
        if self._ended:
            return []
        self._ended = True
        self.notes.append("the upstream's answer ended without its last event: sent as a stream error")
        return [(None, error_body(500, "the upstream's answer ended before it was complete"))]

    def _flush(self) -> list[Event]:
        """A token still waiting when the next piece of reasoning starts goes on an empty text part of its
        own: each token placed once, in order, and the two pieces' thoughts not read back as one."""
        return [self._chunk([self._signed({"text": ""})])] if self._token is not None else []

    def _signed(self, part: dict[str, Any]) -> dict[str, Any]:
        if self._token is not None:
            part["thoughtSignature"], self._token = self._token, None
        return part

    def _call_part(self, index: int) -> dict[str, Any]:
        name, upstream, kind, pieces = self._calls.pop(index)
        args, note = _arguments(name, kind, "".join(pieces))
        if note:
            self.notes.append(note)
        call: dict[str, Any] = {"name": name, "args": args}
        cid = self._out.call_id(index, upstream, name)
        if cid:
            call["id"] = cid
        return {"functionCall": call}

    def _finish(self, delta: Finish) -> list[Event]:
        self._ended = True
        if delta.reason == "error":
            return [(None, error_body(500, "the upstream's answer ended in an error"))]
        final = {"finishReason": _WRITTEN[delta.reason]}
        if delta.usage.cache_write_tokens:
            self.notes.append(NO_CACHE_WRITE)
        return [self._chunk([self._signed({"text": ""})], final, usage_metadata(delta.usage))]

    def _chunk(
        self,
        parts: list[dict[str, Any]],
        final: dict[str, Any] | None = None,
        usage: dict[str, int] | None = None,
    ) -> Event:
        cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, **(final or {}), "index": 0}
        payload: dict[str, Any] = {"candidates": [cand]}
        if usage is not None:
            payload["usageMetadata"] = usage
        payload["modelVersion"] = self._out.model
        payload["responseId"] = self._out.answer_id
        return None, payload


_NEUTRAL: dict[str, FinishReason] = {
    "MAX_TOKENS": "length",
    "max_tokens": "length",
    "max_output_tokens": "length",
    "content_filter": "refusal",
    **dict.fromkeys(REFUSALS, "refusal"),
}


def _neutral(reason: str | None) -> FinishReason | None:
    """A stored reply's finish reason in neutral words, when it says more than stop or calls (None: the
    default, from the reply's calls); an error is no reason to end a whole answer with."""
    for known in FINISH_REASONS:
        if reason == known:
            return None if known == "error" else known
    return _NEUTRAL.get(reason or "")


def _close_parts(parts: list[dict[str, Any]]) -> None:
    """The stream's closing empty text part folded away: gone when it holds nothing, its signature on the
    last text part when there is one (where Gemini 3 signs a whole answer without calls)."""
    last = parts[-1] if len(parts) > 1 else None
    if last is None or set(last) - {"text", "thoughtSignature"} or last["text"]:
        return
    prev = parts[-2]
    if "thoughtSignature" not in last or (set(prev) == {"text"} and prev["text"]):
        parts.pop()
        if "thoughtSignature" in last:
            prev["thoughtSignature"] = last["thoughtSignature"]


def body(reply: Reply, out: Outbound) -> tuple[dict[str, Any], list[str]]:
    """A whole reply as the ``GenerateContentResponse`` Gemini answers ``generateContent`` with: the parts
    the stream would carry, in one candidate (the stream's closing empty text part only when it holds a
    signature), and the notes of what could not be carried."""
    writer = Writer(out)
    parts: list[dict[str, Any]] = []
    cand: dict[str, Any] = {}
    usage: Any = {}
    for delta in reply_deltas(reply, _neutral(reply.finish_reason)):
        for _, payload in writer.write(delta):
            cand = payload["candidates"][0]
            parts += cand["content"]["parts"]
            usage = payload.get("usageMetadata", usage)
    _close_parts(parts)
    whole = {"content": {"role": "model", "parts": parts}, "finishReason": cand["finishReason"], "index": 0}
    return {
        "candidates": [whole],
        "usageMetadata": usage,
        "modelVersion": out.model,
        "responseId": out.answer_id,
    }, writer.notes


BRIDGE = Bridge(reader=Reader, writer=Writer, body=body, reason=finish_reason)

__all__ = [
    "BRIDGE",
    "FAILURES",
    "HIDDEN",
    "REFUSALS",
    "Reader",
    "Writer",
    "body",
    "finish_reason",
    "usage_metadata",
]

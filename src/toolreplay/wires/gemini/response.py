"""Gemini ``generateContent`` answers (``GenerateContentResponse`` bodies and ``alt=sse`` chunks).

Read: the first candidate's ``content.parts`` in order: ``text`` (parts marked ``thought: true`` are
thought summaries, not the reply's words: kept as provider data), ``functionCall`` (``name``, ``args``
object, optional ``id``). ``finish_reason`` is ``finishReason`` (``STOP``, ``MAX_TOKENS``...), or
``blocked:<reason>`` when ``promptFeedback`` blocked the prompt and no candidate came back. Usage:
``promptTokenCount``; output ``candidatesTokenCount + thoughtsTokenCount`` (both are billed as output);
cached ``cachedContentTokenCount``.

Keys are read in camelCase and in snake_case (``function_call``, ``thought_signature``...): both are valid
protobuf JSON and other tools send snake_case (design 9).

Provider data to echo back: call level, ``{"gemini": {"thoughtSignature": ...}}`` for a call part that
carries one (Gemini 3 rejects a replayed step whose first call lacks it: "Function call is missing a
thought_signature in functionCall parts"); message level, under ``"gemini"``: ``thoughtSignature`` of a
text part (Gemini signs the last part of a text answer) and ``thoughts``, the thought-summary texts.

Streaming: every chunk is a partial ``GenerateContentResponse``; parts are appended in order; the final
chunk is the one with a ``finishReason`` (or a ``promptFeedback.blockReason``). A call whose arguments
were streamed (Gemini 3's ``partialArgs``) is put back together into one part first (``partial_args``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay.model import Piece, Reasoning, ServerTool, Text
from toolreplay.wires._parse import (
    add_counts,
    count,
    ended_early,
    items,
    join_runs,
    mapping,
    missing,
    parsed_call,
    provider_data,
    stream_error,
    text_of,
)
from toolreplay.wires._parse import string as _str
from toolreplay.wires.gemini.partial_args import Assembler
from toolreplay.wires.gemini.signatures import either_case as _get
from toolreplay.wires.reply import ParsedCall, Reply, Usage

WIRE = "gemini"


def parse_response(body: Mapping[str, Any]) -> Reply:
    """A whole ``GenerateContentResponse`` as a :class:`Reply`."""
    body = mapping(body, WIRE, "the body")
    if "error" in body:
        raise stream_error(WIRE, body)
    model = _get(body, "modelVersion", "model_version")
    usage = parse_usage(_get(body, "usageMetadata", "usage_metadata"))
    candidates = items(body.get("candidates"), WIRE, "candidates")
    if not candidates:
        blocked = _block_reason(body)
        if blocked is None:
            missing(WIRE, "candidates", body)
        return Reply(finish_reason=f"blocked:{blocked}", usage=usage, model=_str(model))
    cand = mapping(candidates[0], WIRE, "candidates[0]")
    content = cand.get("content")
    parts: Any = ()
    if content is not None:
        parts = items(mapping(content, WIRE, "candidates[0].content").get("parts"), WIRE, "content.parts")
    runs: list[str] = [""]
    calls: list[ParsedCall] = []
    pdata: dict[str, Any] = {}
    said: list[Piece] = []
    for i, raw in enumerate(parts):
        part = mapping(raw, WIRE, f"candidates[0].content.parts[{i}]")
        signature = _get(part, "thoughtSignature", "thought_signature")
        call = _get(part, "functionCall", "function_call")
        if call is not None:
            calls.append(_call(mapping(call, WIRE, f"parts[{i}].functionCall"), i, signature))
            runs.append("")
            continue
        text = text_of(part.get("text"), WIRE, f"candidates[0].content.parts[{i}].text")
        piece = _piece(part, text, signature)
        if piece is not None:  # an empty text part (a stream's last chunk) says nothing
            said.append(piece)
        if part.get("thought") is True:
            if text:
                pdata.setdefault("thoughts", []).append(text)
        else:
            runs[-1] += text
        if isinstance(signature, str) and signature:
            pdata["thoughtSignature"] = signature
    return Reply(
        text=join_runs(runs),
        calls=tuple(calls),
        finish_reason=_str(_get(cand, "finishReason", "finish_reason")),
        usage=usage,
        provider_data=provider_data(WIRE, pdata),
        model=_str(model),
        said=_merged(said),
    )


def _merged(said: list[Piece]) -> tuple[Piece, ...]:
    """Adjacent text parts (and adjacent thought parts) as one piece: a stream splits them anywhere, and
    the same answer must read the same whole or streamed. A signature stays with the merged piece."""
    out: list[Piece] = []
    for p in said:
        prev = out[-1] if out else None
        if isinstance(p, Text) and isinstance(prev, Text):
            out[-1] = Text(prev.text + p.text, prev.data or p.data)
        elif _thought(p) and prev is not None and _thought(prev):
            a, b = dict(prev.data[WIRE]), dict(p.data[WIRE])  # type: ignore[index]
            merged = {**a, **b, "text": str(a.get("text") or "") + str(b.get("text") or "")}
            out[-1] = Reasoning(prev.text + p.text, {WIRE: merged})
        else:
            out.append(p)
    return tuple(out)


def _thought(p: Piece) -> bool:
    d = p.data.get(WIRE) if isinstance(p, Reasoning) and p.data else None
    return isinstance(d, Mapping) and d.get("thought") is True and isinstance(d.get("text"), str)


def _piece(part: Mapping[str, Any], text: str, signature: Any) -> Piece | None:
    """A part that is not a call, kept for its issuer: plain text (its signature beside it), or a thought,
    code-execution or server-tool part verbatim (design 17)."""
    if "text" in part and part.get("thought") is not True:
        sig = {WIRE: {"thoughtSignature": signature}} if isinstance(signature, str) and signature else None
        return Text(text, sig) if text or sig else None
    if part.get("thought") is True:
        return Reasoning(text, {WIRE: dict(part)})
    return ServerTool(server_part_kind(part), {WIRE: dict(part)})


def server_part_kind(part: Mapping[str, Any]) -> str:
    """The kind of a part Gemini's own tools made (``executableCode``, ``codeExecutionResult``,
    ``toolCall``, ``toolResponse``...): its first key that is not a signature."""
    return next((k for k in part if k not in ("thoughtSignature", "thought_signature")), "part")


def _block_reason(body: Mapping[str, Any]) -> str | None:
    feedback = _get(body, "promptFeedback", "prompt_feedback")
    if isinstance(feedback, Mapping):
        reason = _get(feedback, "blockReason", "block_reason")
        if isinstance(reason, str):
            return reason
    return None


def _call(call: Mapping[str, Any], i: int, signature: Any) -> ParsedCall:
    pdata = {WIRE: {"thoughtSignature": signature}} if isinstance(signature, str) else None
    return parsed_call(
        WIRE, call.get("name"), call.get("args"), call.get("id"), f"parts[{i}].functionCall.name", pdata
    )


def parse_usage(usage: Any) -> Usage:
    """``usageMetadata``: prompt, candidates plus thoughts, cached content."""
    if not isinstance(usage, Mapping):
        return Usage()
    output = add_counts(
        count(_get(usage, "candidatesTokenCount", "candidates_token_count")),
        count(_get(usage, "thoughtsTokenCount", "thoughts_token_count")),
    )
    return Usage(
        count(_get(usage, "promptTokenCount", "prompt_token_count")),
        output,
        count(_get(usage, "cachedContentTokenCount", "cached_content_token_count")),
    )


class StreamParser:
    """Fed ``alt=sse`` chunks one by one; :meth:`finish` gives the same Reply as the whole body."""

    def __init__(self) -> None:
        self._parts: list[Any] = []
        self._finish: Any = None
        self._blocked: str | None = None
        self._usage: Any = None
        self._model: Any = None
        self._calls = Assembler()  # Gemini 3's streamed arguments (partialArgs)

    def feed(self, event: Mapping[str, Any]) -> str:
        """Take one chunk; return the new reply text it carries ('' when none)."""
        event = mapping(event, WIRE, "a stream event")
        if "error" in event:
            raise stream_error(WIRE, event)
        usage = _get(event, "usageMetadata", "usage_metadata")
        if usage is not None:
            self._usage = usage
        model = _get(event, "modelVersion", "model_version")
        if model is not None:
            self._model = model
        self._blocked = _block_reason(event) or self._blocked
        new: list[str] = []
        candidates = items(event.get("candidates"), WIRE, "candidates")
        if candidates:
            cand = mapping(candidates[0], WIRE, "candidates[0]")
            content = cand.get("content")
            if isinstance(content, Mapping):
                for raw in items(content.get("parts"), WIRE, "candidates[0].content.parts"):
                    part = self._calls.take(raw)
                    if part is None:
                        continue
                    self._parts.append(part)
                    if isinstance(part, Mapping) and part.get("thought") is not True:
                        text = part.get("text")
                        if isinstance(text, str) and _get(part, "functionCall", "function_call") is None:
                            new.append(text)
            finish = _get(cand, "finishReason", "finish_reason")
            if finish is not None:
                self._finish = finish
        return "".join(new)

    def mark_done(self) -> None:
        """This wire sends no end marker besides its final event; nothing to do."""

    def finish(self) -> Reply:
        """The whole answer; ConnectionFault when the stream ended before the chunk with finishReason."""
        if self._finish is None and self._blocked is None:
            raise ended_early(WIRE, "finishReason")
        body: dict[str, Any] = {}
        if self._finish is not None:
            body["candidates"] = [
                {"content": {"role": "model", "parts": self._parts}, "finishReason": self._finish}
            ]
        else:
            body["promptFeedback"] = {"blockReason": self._blocked}
        if self._usage is not None:
            body["usageMetadata"] = self._usage
        if self._model is not None:
            body["modelVersion"] = self._model
        return parse_response(body)


__all__ = ["WIRE", "StreamParser", "parse_response", "parse_usage", "server_part_kind"]

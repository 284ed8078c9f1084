"""Ollama native ``/api/chat`` answers (one object, or NDJSON objects when ``"stream": true``).

Read: ``message.content``; ``message.tool_calls`` (``function.name``, ``function.arguments`` as an object,
optional ``id``); ``done_reason`` as the finish reason. Usage: ``prompt_eval_count`` (input),
``eval_count`` (output). Ollama reports no cached count (its prompt cache only shows as a smaller
``prompt_eval_count``), so ``cached_tokens`` stays None.

Provider data (message level, under ``"ollama"``): ``thinking``, the thinking text of thinking models.

Streaming: each NDJSON object carries a piece of ``message.content`` / ``message.thinking``; tool calls
arrive whole; the final object has ``"done": true`` with the counts. An ``{"error": "..."}`` object
raises the provider's error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay.model import Piece, Reasoning, Text
from toolreplay.wires._parse import (
    count,
    ended_early,
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

WIRE = "ollama"


def parse_response(body: Mapping[str, Any]) -> Reply:
    """A whole ``/api/chat`` answer as a :class:`Reply`."""
    body = mapping(body, WIRE, "the body")
    if "error" in body:
        raise stream_error(WIRE, body)
    if "message" not in body:
        missing(WIRE, "message", body)
    message = mapping(body["message"], WIRE, "message")
    calls = function_calls(WIRE, message)  # before the content: a body broken in both names its calls
    text = text_of(message.get("content"), WIRE, "message.content")
    thinking = string(message.get("thinking"))
    said: list[Piece] = [Reasoning(thinking, {WIRE: {"thinking": thinking}})] if thinking else []
    if text:
        said.append(Text(text))
    return Reply(
        text=text,
        calls=calls,
        finish_reason=string(body.get("done_reason")),
        usage=Usage(count(body.get("prompt_eval_count")), count(body.get("eval_count")), None),
        provider_data=provider_data(WIRE, {"thinking": thinking}),
        model=string(body.get("model")),
        said=tuple(said),
    )


class StreamParser:
    """Fed NDJSON objects one by one; :meth:`finish` gives the same Reply as the non-streamed answer."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._thinking: list[str] = []
        self._calls: list[Any] = []
        self._final: Mapping[str, Any] | None = None

    def feed(self, event: Mapping[str, Any]) -> str:
        """Take one object; return the new text it carries ('' when none)."""
        event = mapping(event, WIRE, "a stream line")
        if "error" in event:
            raise stream_error(WIRE, event)
        new = ""
        message = event.get("message")
        if isinstance(message, Mapping):
            new = text_of(message.get("content"), WIRE, "message.content")
            self._content.append(new)
            thinking = message.get("thinking")
            if isinstance(thinking, str):
                self._thinking.append(thinking)
            self._calls.extend(items(message.get("tool_calls"), WIRE, "message.tool_calls"))
        if event.get("done") is True:
            self._final = event
        return new

    def mark_done(self) -> None:
        """This wire sends no end marker besides its final event; nothing to do."""

    def finish(self) -> Reply:
        """The whole answer; ConnectionFault when the stream ended before the ``"done": true`` object."""
        if self._final is None:
            raise ended_early(WIRE, '"done": true')
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content)}
        if self._thinking:
            message["thinking"] = "".join(self._thinking)
        if self._calls:
            message["tool_calls"] = self._calls
        return parse_response({**self._final, "message": message})


__all__ = ["WIRE", "StreamParser", "parse_response"]

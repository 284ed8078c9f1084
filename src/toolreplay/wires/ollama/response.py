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

from toolreplay.errors import ConnectionFault
from toolreplay.wires._parse import (
    count,
    decode_arguments,
    fail,
    items,
    mapping,
    stream_error,
    text_of,
)
from toolreplay.wires.reply import ParsedCall, Reply, Usage

WIRE = "ollama"


def parse_response(body: Mapping[str, Any]) -> Reply:
    """A whole ``/api/chat`` answer as a :class:`Reply`."""
    body = mapping(body, WIRE, "the body")
    if "error" in body:
        raise stream_error(WIRE, body)
    if "message" not in body:
        fail(WIRE, f"no 'message' (keys: {', '.join(sorted(body)) or 'none'})")
    message = mapping(body["message"], WIRE, "message")
    calls = tuple(
        _call(mapping(tc, WIRE, f"message.tool_calls[{i}]"), i)
        for i, tc in enumerate(items(message.get("tool_calls"), WIRE, "message.tool_calls"))
    )
    thinking = message.get("thinking")
    finish, model = body.get("done_reason"), body.get("model")
    return Reply(
        text=text_of(message.get("content"), WIRE, "message.content"),
        calls=calls,
        finish_reason=finish if isinstance(finish, str) else None,
        usage=Usage(count(body.get("prompt_eval_count")), count(body.get("eval_count")), None),
        provider_data={WIRE: {"thinking": thinking}} if isinstance(thinking, str) and thinking else None,
        model=model if isinstance(model, str) else None,
    )


def _call(tc: Mapping[str, Any], i: int) -> ParsedCall:
    fn = mapping(tc.get("function"), WIRE, f"message.tool_calls[{i}].function")
    name = text_of(fn.get("name"), WIRE, f"message.tool_calls[{i}].function.name")
    if not name:
        fail(WIRE, f"message.tool_calls[{i}].function.name is empty")
    value, error = decode_arguments(fn.get("arguments"))
    call_id = tc.get("id")
    return ParsedCall(
        name=name,
        input=value,
        call_id=call_id if isinstance(call_id, str) and call_id else None,
        input_error=error,
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

    def finish(self) -> Reply:
        """The whole answer; ConnectionFault when the stream ended before the ``"done": true`` object."""
        if self._final is None:
            raise ConnectionFault(f'{WIRE}: stream ended before the final event (no "done": true)')
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content)}
        if self._thinking:
            message["thinking"] = "".join(self._thinking)
        if self._calls:
            message["tool_calls"] = self._calls
        return parse_response({**self._final, "message": message})


__all__ = ["WIRE", "StreamParser", "parse_response"]

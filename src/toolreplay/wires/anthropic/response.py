"""Anthropic Messages answers (``message`` objects and the SSE events of ``"stream": true``): Claude, GLM.

Read: ``content`` blocks in order: ``text``; ``tool_use`` (``id``, ``name``, ``input`` object);
``thinking`` (with ``signature``) and ``redacted_thinking`` (with ``data``). Text blocks separated by a
tool_use are joined with a blank line (design 10); adjacent ones are joined as they are.
``finish_reason`` is ``stop_reason`` (``end_turn``, ``tool_use``, ``max_tokens``...).

Usage: Anthropic's ``input_tokens`` excludes the cache, so ``Usage.input_tokens`` is the whole prompt,
``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` (comparable with the other wires,
whose prompt counts include cached tokens), and ``cached_tokens`` is ``cache_read_input_tokens``.

Provider data to echo back (message level, under ``"anthropic"``): ``thinking``, the thinking and
redacted-thinking blocks as given, signatures included (with extended thinking on, an open tool loop must
start with the signed thinking block the model wrote); ``other_blocks`` for block kinds this parser does
not model (server tools), kept rather than dropped.

Streaming: ``message_start`` (the message with empty content, and input usage), ``content_block_start`` /
``content_block_delta`` (``text_delta``, ``input_json_delta`` pieces of the input's JSON, ``thinking_delta``,
``signature_delta``) / ``content_block_stop``, ``message_delta`` (``stop_reason``, output usage),
``message_stop`` (the final event); ``ping`` is ignored; ``error`` raises the provider's error.
The input of a ``tool_use``, ``server_tool_use`` or ``mcp_tool_use`` block is the JSON its
``input_json_delta`` pieces spell.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import Piece, Reasoning, ServerTool, Text
from toolreplay.wires._parse import (
    add_counts,
    count,
    ended_early,
    fail,
    items,
    join_runs,
    mapping,
    missing,
    parsed_call,
    provider_data,
    stream_error,
    string,
    text_of,
)
from toolreplay.wires.reply import ParsedCall, Reply, Usage

WIRE = "anthropic"
_THINKING = ("thinking", "redacted_thinking")


def parse_response(body: Mapping[str, Any]) -> Reply:
    """A whole ``message`` object as a :class:`Reply`."""
    body = mapping(body, WIRE, "the body")
    if body.get("type") == "error":
        raise stream_error(WIRE, body)
    if "content" not in body:
        missing(WIRE, "content", body)
    runs: list[str] = [""]
    calls: list[ParsedCall] = []
    thinking: list[Any] = []
    other: list[Any] = []
    said: list[Piece] = []
    for i, raw in enumerate(items(body["content"], WIRE, "content")):
        block = mapping(raw, WIRE, f"content[{i}]")
        kind = block.get("type")
        if kind == "text":
            piece = text_of(block.get("text"), WIRE, f"content[{i}].text")
            runs[-1] += piece
            said.append(Text(piece))
        elif kind == "tool_use":
            calls.append(
                parsed_call(
                    WIRE, block.get("name"), block.get("input"), block.get("id"), f"content[{i}].name"
                )
            )
            runs.append("")
        else:
            # thinking, redacted_thinking, server-tool blocks: kept verbatim in order, replayed only to
            # their issuer (design 17)
            said.append(said_block(block))
            (thinking if kind in _THINKING else other).append(dict(block))
    return Reply(
        text=join_runs(runs),
        calls=tuple(calls),
        finish_reason=string(body.get("stop_reason")),
        usage=parse_usage(body.get("usage")),
        provider_data=provider_data(WIRE, {"thinking": thinking, "other_blocks": other}),
        model=string(body.get("model")),
        said=tuple(said),
    )


def said_block(block: Mapping[str, Any]) -> Reasoning | ServerTool:
    """A thinking block as reasoning; any other block that is not text or a client call (server tools:
    ``server_tool_use``, ``web_search_tool_result``, ``mcp_tool_use``...) as a server-tool piece. Both
    verbatim, for their issuer only."""
    if block.get("type") in _THINKING:
        return Reasoning(str(block.get("thinking") or ""), {WIRE: dict(block)})
    return ServerTool(str(block.get("type") or ""), {WIRE: dict(block)})


def parse_usage(usage: Any) -> Usage:
    """Anthropic ``usage``: the whole prompt as input, ``cache_read_input_tokens`` as cached,
    ``cache_creation_input_tokens`` as written to the cache."""
    if not isinstance(usage, Mapping):
        return Usage()
    fresh = count(usage.get("input_tokens"))
    created = count(usage.get("cache_creation_input_tokens"))
    read = count(usage.get("cache_read_input_tokens"))
    return Usage(add_counts(fresh, created, read), count(usage.get("output_tokens")), read, created)


#: The blocks whose ``input`` arrives as ``input_json_delta`` pieces: a client call's and the calls Anthropic
#: runs itself (a web search's query, a bash command: kept as the same answer whole keeps them).
_STREAMED_INPUT = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


def _streamed_input(block: Mapping[str, Any], text: str) -> Any:
    """A block's input from its streamed JSON text. A client call's stays text: parse_response decodes it
    (or reports it broken, as for a whole answer). A server tool's is decoded here, since its block is
    kept verbatim; text that is not JSON stays as streamed (nothing is made up), and no pieces at all
    (``""``) leave the input the start event gave."""
    if block.get("type") == "tool_use":
        return text
    if not text.strip():
        return block.get("input", {})
    try:
        return jsonenc.loads(text)
    except ValueError:
        return text


class StreamParser:
    """Fed Messages stream event payloads one by one; :meth:`finish` gives the same Reply as the object."""

    def __init__(self) -> None:
        self._message: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._usage: dict[str, Any] = {}
        self._done = False
        self._after_call = False
        self._said = False

    def feed(self, event: Mapping[str, Any]) -> str:
        """Take one event; return the new text it carries ('' when none)."""
        event = mapping(event, WIRE, "a stream event")
        kind = event.get("type")
        if kind == "message_start":
            self._message = dict(mapping(event.get("message"), WIRE, "message_start.message"))
            self._merge_usage(self._message.get("usage"))
        elif kind == "content_block_start":
            return self._start(event)
        elif kind == "content_block_delta":
            return self._delta(event)
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, Mapping):
                for key in ("stop_reason", "stop_sequence"):
                    if key in delta:
                        self._message[key] = delta[key]
            self._merge_usage(event.get("usage"))
        elif kind == "message_stop":
            self._done = True
        elif kind == "error":
            raise stream_error(WIRE, event)
        return ""

    def _merge_usage(self, usage: Any) -> None:
        if isinstance(usage, Mapping):
            self._usage.update({k: v for k, v in usage.items() if v is not None})

    def _index(self, event: Mapping[str, Any]) -> int:
        index = event.get("index")
        if not isinstance(index, int):
            fail(WIRE, f"{event.get('type')} without an integer 'index'")
        return index

    def _start(self, event: Mapping[str, Any]) -> str:
        index = self._index(event)
        block = dict(mapping(event.get("content_block"), WIRE, "content_block_start.content_block"))
        self._blocks[index] = block
        if block.get("type") == "tool_use":
            self._after_call = True
            return ""
        if block.get("type") != "text":
            return ""
        # A text block after a call starts a new piece: the chat shows the same blank line the
        # whole answer's text has.
        sep = "\n\n" if self._after_call and self._said else ""
        self._after_call = False
        text = block.get("text")
        if isinstance(text, str) and text:
            self._said = True
            return sep + text
        if sep:
            block["_sep"] = sep
        return ""

    def _delta(self, event: Mapping[str, Any]) -> str:
        index = self._index(event)
        block = self._blocks.get(index)
        if block is None:
            fail(WIRE, f"content_block_delta for block {index} before its content_block_start")
        delta = mapping(event.get("delta"), WIRE, "content_block_delta.delta")
        kind = delta.get("type")
        if kind == "text_delta":
            piece = text_of(delta.get("text"), WIRE, "text_delta.text")
            block["text"] = str(block.get("text") or "") + piece
            if piece:
                self._said = True
                return str(block.pop("_sep", "")) + piece
        elif kind == "input_json_delta":
            self._json.setdefault(index, []).append(
                text_of(delta.get("partial_json"), WIRE, "input_json_delta.partial_json")
            )
        elif kind == "thinking_delta":
            block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = str(block.get("signature") or "") + str(delta.get("signature") or "")
        return ""

    def mark_done(self) -> None:
        """This wire sends no end marker besides its final event; nothing to do."""

    def finish(self) -> Reply:
        """The whole answer; ConnectionFault when the stream ended before ``message_stop``."""
        if not self._done:
            raise ended_early(WIRE, "message_stop")
        # A message resumed after server-side code called a client tool arrives whole in message_start:
        # its content (a tool_use) comes before any block streamed after it.
        given = self._message.get("content")
        content: list[dict[str, Any]] = list(given) if isinstance(given, list) else []
        for index, block in sorted(self._blocks.items()):
            block.pop("_sep", None)
            if index in self._json and block.get("type") in _STREAMED_INPUT:
                block["input"] = _streamed_input(block, "".join(self._json[index]))
            content.append(block)
        body = {**self._message, "content": content, "usage": self._usage}
        return parse_response(body)


__all__ = ["WIRE", "StreamParser", "parse_response", "parse_usage", "said_block"]

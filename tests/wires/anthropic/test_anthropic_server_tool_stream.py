"""A streamed server-tool call (``server_tool_use``, ``mcp_tool_use``) keeps its input as the same answer
whole keeps it: its ``input_json_delta`` pieces are applied as a client call's are (issue 22)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from corpus_loader import Exchange, exchanges
from toolreplay.wires.anthropic.response import StreamParser, parse_response
from toolreplay.wires.reply import Reply

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "pelicans"}}
MCP = {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "echo", "server_name": "s", "input": {"m": "hi"}}
RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}


def _stream(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events a Messages stream sends for ``blocks``: each input in two JSON pieces."""
    out: list[dict[str, Any]] = [{"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "model": "m", "content": [], "usage": {"input_tokens": 1}}}]  # fmt: skip
    for i, b in enumerate(blocks):
        if "input" in b and b["type"] != "web_search_tool_result":
            text = json.dumps(b["input"])
            out.append({"type": "content_block_start", "index": i, "content_block": {**b, "input": {}}})
            for piece in ("", text[:5], text[5:]):
                out.append({"type": "content_block_delta", "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": piece}})  # fmt: skip
        else:
            out.append({"type": "content_block_start", "index": i, "content_block": b})
        out.append({"type": "content_block_stop", "index": i})
    out.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}})
    out.append({"type": "message_stop"})
    return out


def _streamed(events: list[Any]) -> Reply:
    p = StreamParser()
    for e in events:
        p.feed(e)
    return p.finish()


def test_a_streamed_server_tool_call_keeps_its_input_as_the_whole_answer_does() -> None:
    blocks = [SEARCH, RESULT, MCP]
    usage = {"input_tokens": 1, "output_tokens": 2}
    whole = parse_response(
        {"type": "message", "role": "assistant", "model": "m", "content": blocks, "stop_reason": "end_turn",
         "usage": usage}
    )  # fmt: skip
    got = _streamed(_stream(blocks))
    assert got.said == whole.said
    inputs = [p.data["anthropic"].get("input") for p in got.said if p.data]
    assert inputs == [{"query": "pelicans"}, None, {"m": "hi"}]


def test_a_server_tool_input_that_is_not_json_stays_as_streamed() -> None:
    events = _stream([SEARCH])
    events[3]["delta"]["partial_json"] = '{"query": '  # the JSON is never closed
    (piece,) = _streamed(events).said
    assert (
        piece.data is not None
        and piece.data["anthropic"]["input"]
        == '{"query": "pelicans"}'[:10] + (json.dumps(SEARCH["input"])[5:])
    )


def _server_inputs(ex: Exchange) -> list[Any]:
    """The input of every server-tool call of the stream, in order: the JSON its pieces spell, or the
    start event's input when it sends none (a call made by server-side code arrives whole)."""
    starts: dict[int, dict[str, Any]] = {}
    texts: dict[int, str] = {}
    for e in ex.events():
        if e.get("type") == "content_block_start":
            starts[e["index"]] = e["content_block"]
        elif e.get("type") == "content_block_delta" and e["delta"].get("type") == "input_json_delta":
            texts[e["index"]] = texts.get(e["index"], "") + e["delta"]["partial_json"]
    return [
        json.loads(texts[i]) if texts.get(i, "").strip() else b.get("input")
        for i, b in sorted(starts.items())
        if b["type"] in SERVER_CALLS
    ]


SERVER_CALLS = ("server_tool_use", "mcp_tool_use")
_WITH_SERVER_INPUT = [ex for ex in exchanges("anthropic") if ex.streamed and any(_server_inputs(ex))]


@pytest.mark.parametrize("ex", _WITH_SERVER_INPUT, ids=lambda ex: ex.id)
def test_a_recorded_stream_keeps_every_server_tool_input(ex: Exchange) -> None:
    said = _streamed(ex.events()).said
    kept = [
        p.data["anthropic"]["input"] for p in said if p.data and p.data["anthropic"]["type"] in SERVER_CALLS
    ]
    assert kept == _server_inputs(ex)

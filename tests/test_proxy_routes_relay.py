"""The relay of a translated stream (design 47): an upstream's bytes cut into events however its chunks
fall, read by its wire's bridge and written by the agent's as they come; the agent's tool names restored."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

pytest.importorskip("starlette")

from corpus_loader import exchanges
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.translated_stream import AgentNames, Carried, Payloads, frame, translated_events
from toolreplay.wires import get_wire
from toolreplay.wires.bridge import CallBegin, CallDelta, CallEnd, Delta, Outbound, collect
from toolreplay.wires.reply import ParsedCall, Reply


def test_sse_events_are_cut_out_of_chunks_wherever_the_chunks_end() -> None:
    stream = b'event: a\r\ndata: {"x": 1}\r\n\r\n: keep-alive\n\ndata: {"y":\ndata:  2}\n\ndata: [DONE]\n\n'
    whole = Payloads("sse").feed(stream)
    assert whole == ['{"x": 1}', '{"y":\n 2}', "[DONE]"]
    for size in (1, 2, 3, 7):
        cut = Payloads("sse")
        got = [p for i in range(0, len(stream), size) for p in cut.feed(stream[i : i + size])]
        assert got == whole, size


def test_a_last_event_without_its_blank_line_is_still_read() -> None:
    cut = Payloads("sse")
    assert cut.feed(b'data: {"a": 1}\n\ndata: {"b": 2}') == ['{"a": 1}']
    assert cut.end() == ['{"b": 2}']
    nd = Payloads("ndjson")
    assert nd.feed(b'{"a": 1}\n\n{"b"') == ['{"a": 1}']
    assert nd.feed(b": 2}") == [] and nd.end() == ['{"b": 2}']


def test_frames_are_the_agents_wire_framing() -> None:
    assert frame("sse", ("message_stop", {"type": "message_stop"})) == (
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    assert frame("sse", (None, "[DONE]")) == b"data: [DONE]\n\n"
    assert frame("ndjson", (None, {"done": True})) == b'{"done":true}\n'


def test_tool_names_the_upstream_could_not_take_go_back_as_the_agent_declared_them() -> None:
    names = AgentNames({"mcp__fs__read": "mcp:fs/read"}, frozenset({"apply_patch"}))
    assert names(CallBegin(0, "mcp__fs__read", "c1")) == [CallBegin(0, "mcp:fs/read", "c1")]
    assert names(CallBegin(1, "apply_patch", "c2")) == [CallBegin(1, "apply_patch", "c2", "custom")]
    assert names(CallDelta(1, '{"input": "*** Begin')) == []  # held: the text is inside the JSON
    assert names(CallDelta(1, ' Patch"}')) == []
    assert names(CallEnd(1)) == [CallDelta(1, "*** Begin Patch"), CallEnd(1)]
    assert names(CallDelta(0, "{}")) == [CallDelta(0, "{}")]
    whole = Reply(calls=(ParsedCall("mcp__fs__read", {}), ParsedCall("apply_patch", {"input": "x"})))
    assert [(c.name, c.input, c.kind) for c in names.reply(whole).calls] == [
        ("mcp:fs/read", {}, "function"),
        ("apply_patch", "x", "custom"),
    ]


def _streamed_gemini() -> list[bytes]:
    """Real recorded Gemini streams, as the SSE bytes a server sends them."""
    out = []
    for ex in exchanges("gemini", streamed=True):
        events = ex.events()
        if events:
            out.append(b"".join(b"data: " + jsonenc.dumps(e).encode() + b"\r\n\r\n" for e in events))
    return out


async def _chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


def _relayed(data: bytes, size: int) -> tuple[bytes, list[Delta]]:
    bridge = get_wire("gemini").bridge
    assert bridge is not None
    b = bridge()
    carried = Carried()
    out = Outbound(model="gemini-2.5-flash", answer_id="a1")
    names = AgentNames({}, frozenset())

    async def run() -> bytes:
        events = translated_events(
            _chunks(data, size), "sse", b.reader(), b.writer(out), "sse", carried, names, time.perf_counter
        )
        return b"".join([c async for c in events])

    return asyncio.run(run()), carried.deltas


def test_a_recorded_stream_relays_to_the_same_answer_however_its_chunks_fall() -> None:
    streams = _streamed_gemini()
    assert streams, "the corpus holds streamed Gemini exchanges"
    for data in streams:
        whole_bytes, whole = _relayed(data, len(data))
        assert whole_bytes and collect(whole).finish_reason != "error"
        for size in (1, 5, 64):
            got_bytes, got = _relayed(data, size)
            assert got == whole and got_bytes == whole_bytes
        written = Payloads("sse").feed(whole_bytes)
        assert written and all(isinstance(jsonenc.loads(p), dict) for p in written)


def _chat_chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4.1",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + jsonenc.dumps(body).encode() + b"\n\n"


def test_the_events_of_one_chunk_go_out_together_and_none_waits_for_the_next() -> None:
    words = ["I'll", " read", " the", " file."]
    one = [
        _chat_chunk({"role": "assistant", "content": ""}),
        *(_chat_chunk({"content": w}) for w in words),
        _chat_chunk({}, "stop"),
        b"data: [DONE]\n\n",
    ]
    chat, anthropic = get_wire("openai-chat").bridge, get_wire("anthropic").bridge
    assert chat is not None and anthropic is not None
    yielded: list[bytes] = []
    came = asyncio.Event()

    async def chunks() -> AsyncIterator[bytes]:
        yield b"".join(one[:3])  # three events in one read
        await came.wait()  # the rest comes only once what came before has gone out
        yield b"".join(one[3:])

    async def run() -> None:
        events = translated_events(
            chunks(), "sse", chat().reader(), anthropic().writer(Outbound(model="m", answer_id="a1")), "sse",
            Carried(), AgentNames({}, frozenset()), time.perf_counter,
        )  # fmt: skip
        async for c in events:
            yielded.append(c)
            came.set()

    asyncio.run(asyncio.wait_for(run(), 5))

    def said(pieces: list[bytes]) -> tuple[list[str], list[str]]:
        events = [jsonenc.loads(p) for c in pieces for p in Payloads("sse").feed(c)]
        return [e["type"] for e in events], [
            e["delta"]["text"] for e in events if "text" in e.get("delta", {})
        ]

    # the answer's first event went out at once, the rest of the first read's events in one piece
    (first, first_words), (_, together), (rest, rest_words) = (
        said(yielded[:1]), said(yielded[1:2]), said(yielded[2:])
    )  # fmt: skip
    assert first[0] == "message_start" and not first_words and together == words[:2]
    assert rest_words == words[2:] and rest[-1] == "message_stop"


def test_a_stream_that_breaks_off_ends_with_the_agents_error() -> None:
    data = _streamed_gemini()[0]
    cut = data[: len(data) // 2]

    async def broken() -> AsyncIterator[bytes]:
        import httpx

        yield cut
        raise httpx.ReadError("connection reset")

    bridge = get_wire("gemini").bridge
    assert bridge is not None
    b = bridge()
    carried = Carried()

    async def run() -> bytes:
        out = Outbound(model="m", answer_id="a1")
        events = translated_events(
            broken(),
            "sse",
            b.reader(),
            b.writer(out),
            "sse",
            carried,
            AgentNames({}, frozenset()),
            time.perf_counter,
        )
        return b"".join([c async for c in events])

    got = asyncio.run(run())
    assert carried.cut == "the upstream's answer broke off (ReadError)"
    assert b"broke off" in got  # the agent's wire's error event names it
    assert collect(carried.deltas).finish_reason == "error"  # recorded as an answer that broke off

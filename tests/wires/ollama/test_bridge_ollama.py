"""The Ollama bridge (design 51): its reader over the recorded ``/api/chat`` answers agrees with the
stream parser; its writer's NDJSON lines and its whole bodies read back, under the ollama SDK over real
HTTP, as the reply they were written from."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_loader import Exchange, exchanges
from helpers_bridge_http import Written, read_all, serving, write_all
from toolreplay.model import Reasoning, Text, Usage
from toolreplay.wires.bridge import (
    Begin,
    CallBegin,
    CallDelta,
    CallEnd,
    Failed,
    Finish,
    Outbound,
    ReasoningEnd,
    TextDelta,
    collect,
    reply_deltas,
)
from toolreplay.wires.doubles import Answer, AnswerCall, empty_first, token_pieces, whole
from toolreplay.wires.ollama.bridge import BRIDGE, HIDDEN, NO_CACHE, REFUSAL, OllamaReader, neutral_reason
from toolreplay.wires.ollama.double import ollama_body, ollama_events
from toolreplay.wires.ollama.response import WIRE, StreamParser, parse_response
from toolreplay.wires.reply import ParsedCall, Reply

RECORDED = [e for e in exchanges("ollama") if e.streamed or e.response is not None]


def _ids(index: int, upstream: str | None, name: str) -> str:
    return f"call_{index:08d}"  # Ollama's own shape: call_ and 8 letters or digits


OUT = Outbound(model="qwen3", answer_id="unused", thinking=True, call_id=_ids, created=1_764_000_000)
REPLY = Reply(
    text="Let me look.",
    calls=(
        ParsedCall("coop", {"action": "list"}, "toolu_01A"),
        ParsedCall("coop", {"id": 12, "x": [1, None]}),
    ),
    usage=Usage(120, 30),
    model="claude-sonnet-4-5",
    said=(Reasoning("The user wants the board.", {"anthropic": {"signature": "s"}}), Text("Let me look.")),
)


# -- the reader -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ex", RECORDED, ids=[e.id for e in RECORDED])
def test_the_reader_agrees_with_the_parser_on_every_recording(ex: Exchange) -> None:
    reader, parser = OllamaReader(), StreamParser()
    lines = ex.events() if ex.streamed else [ex.response]  # a whole answer is one final line
    deltas = []
    for line in lines:
        got = reader.feed(line)
        deltas += got
        assert "".join(d.text for d in got if isinstance(d, TextDelta)) == parser.feed(line)
    deltas += reader.finish()
    want, back = parser.finish(), collect(deltas)
    assert back.said == want.said and back.text == want.text and back.calls == want.calls
    assert back.usage == want.usage and back.model == want.model
    assert back.finish_reason == neutral_reason(want.finish_reason, bool(want.calls))
    assert isinstance(deltas[0], Begin) and isinstance(deltas[-1], Finish)


@pytest.mark.parametrize("cut", [token_pieces, whole, empty_first], ids=["tokens", "whole", "empty_first"])
def test_the_doubles_stream_reads_as_its_answer_with_the_data_the_whole_body_keeps(cut: Any) -> None:
    calls = (
        AnswerCall("multiply", {"a": 1234, "b": 4567}, "call_0000002s", None),
        AnswerCall("list_all", {}, None, None),
    )
    answer = Answer(1, "qwen3", "Two calls.", calls, "Think first.", Usage(40, 7))
    reader = OllamaReader()
    per_line = [reader.feed(p) for _, p in ollama_events(answer, cut)]
    reply = collect([d for ds in per_line for d in ds])
    first_words = next(ds for ds in per_line if any(isinstance(d, TextDelta) for d in ds))
    assert isinstance(first_words[0], ReasoningEnd)  # the thinking ends where the words begin
    assert reply.said == parse_response(ollama_body(answer)).said
    assert reply.said[0] == Reasoning("Think first.", {WIRE: {"thinking": "Think first."}})
    assert reply.text == answer.text and reply.model == "qwen3" and reply.usage == Usage(40, 7)
    assert [(c.name, c.input, c.call_id) for c in reply.calls] == [(c.name, c.args, c.call_id) for c in calls]
    assert reply.finish_reason == "tool_calls"  # Ollama says "stop" after calls


def test_a_call_line_gives_each_call_whole() -> None:
    reader = OllamaReader()
    line = {
        "model": "m",
        "message": {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_a", "function": {"index": 0, "name": "ls", "arguments": {"p": "."}}},
                {"function": {"name": "pwd", "arguments": {}}},
            ],
        },
        "done": False,
    }
    assert reader.feed(line) == [
        Begin("m"),
        CallBegin(0, "ls", "call_a"),
        CallDelta(0, '{"p":"."}'),
        CallEnd(0),
        CallBegin(1, "pwd"),
        CallDelta(1, "{}"),
        CallEnd(1),
    ]


def test_empty_thinking_makes_no_reasoning_piece_as_the_parser_reads_it() -> None:
    lines: list[dict[str, Any]] = [
        {"model": "m", "message": {"role": "assistant", "content": "", "thinking": ""}, "done": False},
        {"model": "m", "message": {"role": "assistant", "content": "hi", "thinking": ""}, "done": False},
        {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    ]
    reader, parser = OllamaReader(), StreamParser()
    deltas = [d for line in lines for d in reader.feed(line)]
    for line in lines:
        parser.feed(line)
    assert collect(deltas).said == parser.finish().said == (Text("hi"),)


def test_an_error_line_fails_and_a_stream_without_done_ends_as_failed() -> None:
    reader = OllamaReader()
    reader.feed({"model": "m", "message": {"role": "assistant", "content": "a"}, "done": False})
    assert reader.feed({"error": "model runner has unexpectedly stopped"}) == [
        Failed("model runner has unexpectedly stopped")
    ]
    assert reader.finish() == []
    cut = OllamaReader()
    cut.feed({"model": "m", "message": {"role": "assistant", "content": "a"}, "done": False})
    failed, finish = cut.finish()
    assert isinstance(failed, Failed) and '"done": true' in failed.message and finish == Finish("error")


# -- the writer and the body under the ollama SDK -------------------------------------------------------

ollama = pytest.importorskip("ollama")
HI = [{"role": "user", "content": "close todo 12"}]


def _written(out: Outbound = OUT, reply: Reply = REPLY) -> Written:
    events, _ = write_all(BRIDGE, reply_deltas(reply), out)
    body, _ = BRIDGE.body(reply, out)
    return Written("ndjson", events, body, streams_by_default=True)


def _calls_of(parts: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.function.name, dict(c.function.arguments)) for p in parts for c in p.message.tool_calls or []]


def test_the_sdk_reads_the_stream_as_the_reply() -> None:
    written = _written()
    with serving(written) as base:
        parts = list(ollama.Client(host=base).chat(model="qwen3", messages=HI, stream=True, think=True))
    assert written.requests[0]["stream"] is True and written.requests[0]["think"] is True
    assert "".join(p.message.content or "" for p in parts) == REPLY.text
    assert "".join(p.message.thinking or "" for p in parts) == "The user wants the board."
    assert _calls_of(parts) == [(c.name, c.input) for c in REPLY.calls]
    final = parts[-1]
    assert (
        final.done
        and final.done_reason == "stop"
        and (final.prompt_eval_count, final.eval_count) == (120, 30)
    )
    assert all(not p.done for p in parts[:-1]) and all(p.model == "qwen3" for p in parts)
    assert final.created_at == "2025-11-24T16:00:00Z"
    lines = [p for _, p in written.events]
    for line in lines:
        ollama.ChatResponse.model_validate(line, strict=True)
    with_calls = [line["message"]["tool_calls"] for line in lines if "tool_calls" in line["message"]]
    assert [[c["id"] for c in calls] for calls in with_calls] == [["call_00000000"], ["call_00000001"]]
    assert all(isinstance(c["function"]["arguments"], dict) for calls in with_calls for c in calls)


def test_the_sdk_reads_the_whole_body_as_the_reply() -> None:
    written = _written()
    ollama.ChatResponse.model_validate(written.body, strict=True)
    with serving(written) as base:
        got = ollama.Client(host=base).chat(model="qwen3", messages=HI, stream=False, think=True)
    assert got.message.content == REPLY.text and got.message.thinking == "The user wants the board."
    assert _calls_of([got]) == [(c.name, c.input) for c in REPLY.calls]
    assert got.done and (got.prompt_eval_count, got.eval_count) == (120, 30)
    ids = [c["id"] for c in written.body["message"]["tool_calls"]]
    assert ids == ["call_00000000", "call_00000001"]
    # the body and the stream say the same
    stream = collect(read_all(BRIDGE, written.events))
    body = parse_response(written.body)
    assert (body.text, body.calls, body.said, body.usage) == (
        stream.text,
        stream.calls,
        stream.said,
        stream.usage,
    )


def test_a_failure_reaches_the_sdk_as_its_error_after_the_lines_before_it() -> None:
    events, _ = write_all(BRIDGE, [Begin("m"), TextDelta("Half"), Failed("Overloaded", 529)], OUT)
    seen: list[Any] = []
    served = Written("ndjson", events, streams_by_default=True)
    with serving(served) as base, pytest.raises(ollama.ResponseError, match="Overloaded"):
        seen.extend(ollama.Client(host=base).chat(model="qwen3", messages=HI, stream=True))
    assert [p.message.content for p in seen] == ["Half"]


def test_what_ollama_cannot_carry_is_named() -> None:
    out = Outbound(model="qwen3", answer_id="unused", call_id=_ids)
    reply = Reply(
        "No.",
        (ParsedCall("f", '{"a": ', input_error="not JSON"),),
        "refusal",
        Usage(9, 1, 8),
        None,
        None,
        REPLY.said,
    )
    events, notes = write_all(BRIDGE, reply_deltas(reply, "refusal"), out)
    assert not any("thinking" in p["message"] for _, p in events)
    (call_line,) = [p for _, p in events if "tool_calls" in p["message"]]
    assert call_line["message"]["tool_calls"][0]["function"]["arguments"] == {}
    assert notes[0] == HIDDEN and "not a JSON object" in notes[1] and notes[2:] == [REFUSAL, NO_CACHE]
    body, body_notes = BRIDGE.body(reply, out)
    assert body["done_reason"] == "stop" and "thinking" not in body["message"]
    assert body_notes == notes


# -- round trip -----------------------------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_calls = st.lists(
    st.tuples(st.text(min_size=1, max_size=12), st.dictionaries(st.text(max_size=6), _json, max_size=3)),
    max_size=3,
)


@settings(max_examples=30, deadline=None)
@given(
    reasoning=st.text(max_size=30),
    text=st.text(max_size=40),
    calls=_calls,
    counts=st.tuples(st.integers(1, 10**6), st.integers(1, 10**5)),
)
def test_a_reply_written_and_read_back_is_the_same_reply(
    reasoning: str, text: str, calls: list[tuple[str, dict[str, Any]]], counts: tuple[int, int]
) -> None:
    said = ([Reasoning(reasoning, {"gemini": {"thoughtSignature": "x"}})] if reasoning else []) + (
        [Text(text)] if text else []
    )
    parsed = tuple(ParsedCall(n, a, f"up{i}") for i, (n, a) in enumerate(calls))
    reply = Reply(text, parsed, None, Usage(*counts), None, "m", tuple(said))
    events, _ = write_all(BRIDGE, reply_deltas(reply), OUT)
    back = collect(read_all(BRIDGE, events))
    assert back.text == text and back.model == OUT.model
    assert [p.text for p in back.said if isinstance(p, Reasoning)] == ([reasoning] if reasoning else [])
    assert [(c.call_id, c.name, c.input) for c in back.calls] == [
        (_ids(i, None, c.name), c.name, c.input) for i, c in enumerate(parsed)
    ]
    assert back.usage == reply.usage and back.finish_reason == ("tool_calls" if calls else "stop")
    parser = StreamParser()  # the recorder's own parser reads the same answer from the same lines
    for _, payload in events:
        parser.feed(payload)
    parsed_back = parser.finish()
    assert (parsed_back.text, parsed_back.calls, parsed_back.said) == (back.text, back.calls, back.said)
    assert json.dumps(events) == json.dumps(
        write_all(BRIDGE, reply_deltas(reply), OUT)[0]
    )  # the same bytes again

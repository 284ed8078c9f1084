"""The doubles' own streams carry what tests/corpus/STREAMS.md says every real stream with tool calls
carries (the checks tests/test_corpus_streams.py applies to the recordings), for every scripted shape and
every argument chunking; and the project's stream parsers read each chunking as the whole body."""

from __future__ import annotations

from typing import Any

import pytest

from toolreplay.testing.answers import (
    Answer,
    AnswerCall,
    Splitter,
    answer_body,
    answer_events,
    empty_first,
    seeded,
    token_pieces,
    whole,
)
from toolreplay.wires import get_wire
from toolreplay.wires.reply import Usage

ASKED = {"stream": True, "stream_options": {"include_usage": True}}
ONE = AnswerCall("multiply", {"a": 1234, "b": 4567}, "call_x1", "c2ln")
TWO = AnswerCall("coop", {"action": "close", "id": 13, "note": "dünn ✓"}, "call_x2", None)
EMPTY = AnswerCall("list_all", {}, "call_x3", None)
SHAPES = {
    "one call": ("", (ONE,), None),
    "parallel calls": ("", (ONE, TWO), None),
    "text before a call": ("Let me multiply.", (ONE,), None),
    "no arguments": ("", (EMPTY,), None),
    "thinking then a call": ("", (ONE,), "I should multiply."),
}
CUTS: dict[str, Splitter] = {
    "tokens": token_pieces,
    "whole": whole,
    "empty first": empty_first,
    "seeded": seeded(16),
}


def _answer(shape: str, model: str = "m", request: dict[str, Any] | None = None) -> Answer:
    text, calls, reasoning = SHAPES[shape]
    return Answer(7, model, text, calls, reasoning, Usage(120, 30, 64), ASKED if request is None else request)


def _payloads(wire: str, a: Answer, cut: Splitter = token_pieces) -> list[Any]:
    return [p for _, p in answer_events(wire, a, cut) if p != "[DONE]"]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_anthropic_double_stream_order_usage_and_empty_first_input_delta(shape: str) -> None:
    events = _payloads("anthropic", _answer(shape))
    kinds = [e["type"] for e in events if e["type"] != "ping"]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    keys = {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
    assert keys <= set(events[0]["message"]["usage"])
    delta = next(e for e in events if e["type"] == "message_delta")
    assert keys <= set(delta["usage"]) and delta["delta"]["stop_reason"] == "tool_use"
    for e in events:
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use":
            deltas = [d for d in events if d["type"] == "content_block_delta" and d["index"] == e["index"]]
            assert e["content_block"]["input"] == {}
            assert deltas[0]["delta"] == {"type": "input_json_delta", "partial_json": ""}
            if e["content_block"]["name"] == "list_all":
                assert len(deltas) == 1  # an empty input is the empty delta alone


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_responses_double_stream_order_usage_and_call_items(shape: str) -> None:
    events = _payloads("openai-responses", _answer(shape))
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert events[0]["response"]["usage"] is None and events[1]["response"]["usage"] is None
    assert events[-1]["response"]["usage"]["output_tokens"] == 30
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    for e in events:
        if e["type"] == "response.output_item.added" and e["item"]["type"] == "function_call":
            assert (e["item"]["status"], e["item"]["arguments"]) == ("in_progress", "")
        if e["type"] in ("response.output_text.delta", "response.output_text.done"):
            assert e["logprobs"] == []
    for field in ("parallel_tool_calls", "tool_choice", "tools"):
        assert field in events[0]["response"]


def _parts(event: Any) -> list[Any]:
    parts: list[Any] = event["candidates"][0]["content"]["parts"]
    return parts


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_gemini_double_call_chunk_ends_the_stream_on_2x_and_not_on_3(shape: str, model: str) -> None:
    events = _payloads("gemini", _answer(shape, model))
    finish = [e["candidates"][0].get("finishReason") for e in events]
    with_call = [e for e in events if any("functionCall" in p for p in _parts(e))]
    if model.startswith("gemini-2"):
        assert finish[-1] == "STOP" and with_call[-1] is events[-1]
    else:
        assert all(e["candidates"][0].get("finishReason") is None for e in with_call)
        assert finish[-1] == "STOP" and _parts(events[-1]) == [{"text": ""}]
    assert finish.count("STOP") == 1 and all(e.get("responseId") for e in events)
    assert events[-1]["candidates"][0]["finishMessage"] == "Model generated function call(s)."
    counts = [e["usageMetadata"]["candidatesTokenCount"] for e in events]
    assert counts == sorted(counts) and events[-1]["usageMetadata"]["totalTokenCount"] == 150
    thinking = SHAPES[shape][2] is not None
    assert ("thoughtsTokenCount" in events[-1]["usageMetadata"]) == thinking


@pytest.mark.parametrize("asked", [True, False])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_chat_double_stream_opens_with_the_call_and_closes_with_usage_when_asked(
    shape: str, asked: bool
) -> None:
    a = _answer(shape, request=ASKED if asked else {"stream": True})
    raw = answer_events("openai-chat", a)
    events = [p for _, p in raw if p != "[DONE]"]
    first = events[0]["choices"][0]["delta"]
    if SHAPES[shape][0] or SHAPES[shape][2]:
        assert (first["role"], first["content"]) == ("assistant", "")
    else:
        assert (first["role"], first["content"]) == ("assistant", None)
        call = first["tool_calls"][0]
        assert call["id"] and call["function"]["name"] and call["function"]["arguments"] == ""
    finish = next(e for e in events if e["choices"] and e["choices"][0]["finish_reason"])
    assert finish["choices"][0]["delta"] == {} and finish["choices"][0]["finish_reason"] == "tool_calls"
    assert (events[-1]["choices"] == [] and bool(events[-1].get("usage"))) == asked
    assert raw[-1] == (None, "[DONE]")


def test_token_pieces_are_token_sized_and_join_back() -> None:
    assert token_pieces('{"a":1234,"b":4567}') == [
        '{"',
        "a",
        '":',
        "123",
        "4",
        ',"',
        "b",
        '":',
        "456",
        "7",
        "}",
    ]
    text = "Grüße, ✓ streaming_text — 12345 long\n\tenough"
    assert "".join(token_pieces(text)) == text and max(len(p) for p in token_pieces(text)) <= 9
    assert whole(text) == [text] and empty_first(text)[0] == "" and "".join(empty_first(text)) == text
    cut = seeded(3)
    assert all("".join(cut(text)) == text for _ in range(20))
    assert len({tuple(cut(text)) for _ in range(40)}) > 1  # the seed picks different cuts


WIRES = ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"]
#: The model answering, where the answer's shape depends on it (Gemini 3 signs its calls).
MODELS = {"gemini": "gemini-3-pro-preview"}


@pytest.mark.parametrize("cut", sorted(CUTS))
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("wire", WIRES)
def test_stream_parsers_read_every_chunking_as_the_body(wire: str, shape: str, cut: str) -> None:
    a = _answer(shape, MODELS.get(wire, "m"))
    w = get_wire(wire)
    parser = w.stream_parser()
    streamed = "".join(parser.feed(p) for _, p in answer_events(wire, a, CUTS[cut]) if p != "[DONE]")
    reply = parser.finish()
    assert reply == w.parse_response(answer_body(wire, a)) and streamed == reply.text

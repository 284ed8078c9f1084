"""Response parsing per wire: whole bodies and streams, pure (dict in, Reply out).

Real-shaped bodies come from the providers' documentation; streams from the doubles' event builders
(each wire's real event names). Property: any split of a scripted stream gives the Reply of the body.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolreplay._errors import (
    BadRequestError,
    ConnectionFault,
    RateLimitError,
    ResponseFormatError,
    ServerError,
)
from toolreplay.testing.answers import Answer, AnswerCall, answer_body, answer_events
from toolreplay.wires import get_wire, parse_response
from toolreplay.wires.reply import ParsedCall, Reply, Usage
from wire_helpers import http_of

WIRES = ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama")

#: The wires whose streamed text joins separate message items as the whole answer does not (Responses).
JOINS_ITEMS = frozenset({"openai-responses"})
#: What the scripted answers' usage reports as written to the cache (only Anthropic reports it).
WRITTEN = {"anthropic": 0}
#: The provider data of the two scripted calls where a wire signs them (Gemini: the step's first call).
SIGNED_CALLS = {"gemini": [{"gemini": {"thoughtSignature": "c2lnMA=="}}, None]}


def stream_parser(wire: str) -> Any:
    return get_wire(wire).stream_parser()


def feed_all(wire: str, events: list[tuple[str | None, Any]]) -> tuple[str, Reply]:
    parser = stream_parser(wire)
    text = "".join(parser.feed(payload) for _, payload in events if payload != "[DONE]")
    return text, parser.finish()


# -- whole bodies, real shapes ---------------------------------------------------------------------------


def test_chat_text_calls_usage_cached_and_reasoning() -> None:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "kimi-k2",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Closing both.",
                    "reasoning_content": "The user wants them closed.",
                    "tool_calls": [
                        {"id": "functions.coop:0", "type": "function",
                         "function": {"name": "coop", "arguments": "{\"action\":\"close\",\"id\":12}"}},
                        {"id": "functions.coop:1", "type": "function",
                         "function": {"name": "coop", "arguments": "{\"action\":\"close\",\"id\":13}"}},
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30,
                  "prompt_tokens_details": {"cached_tokens": 96}},
    }  # fmt: skip
    reply = parse_response("openai-chat", body)
    assert reply.text == "Closing both."
    assert reply.calls == (
        ParsedCall("coop", {"action": "close", "id": 12}, "functions.coop:0"),
        ParsedCall("coop", {"action": "close", "id": 13}, "functions.coop:1"),
    )
    assert reply.finish_reason == "tool_calls"
    assert reply.usage == Usage(120, 30, 96)
    assert reply.provider_data == {"openai-chat": {"reasoning_content": "The user wants them closed."}}
    assert reply.model == "kimi-k2"


@pytest.mark.parametrize(
    ("usage", "cached"),
    [
        ({"prompt_tokens": 10, "completion_tokens": 1, "cached_tokens": 7}, 7),  # Moonshot
        ({"prompt_tokens": 10, "completion_tokens": 1, "prompt_cache_hit_tokens": 5}, 5),  # DeepSeek
        ({"prompt_tokens": 10, "completion_tokens": 1}, None),
    ],
)
def test_chat_cached_tokens_from_each_server(usage: dict[str, Any], cached: int | None) -> None:
    body = {
        "choices": [{"message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}],
        "usage": usage,
    }
    assert parse_response("openai-chat", body).usage == Usage(10, 1, cached)


def test_chat_content_parts_and_null_content() -> None:
    parts = {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    body = {"choices": [{"message": parts, "finish_reason": "stop"}]}
    assert parse_response("openai-chat", body).text == "ab"
    body = {"choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "stop"}]}
    assert parse_response("openai-chat", body).text == ""


def test_responses_items_reasoning_and_cached() -> None:
    body = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-5",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA..."},
            {"type": "message", "id": "msg_1", "role": "assistant",
             "content": [{"type": "output_text", "text": "On it.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "coop",
             "arguments": "{\"action\":\"list\"}"},
        ],
        "usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1920}, "output_tokens": 12},
    }  # fmt: skip
    reply = parse_response("openai-responses", body)
    assert reply.text == "On it."
    assert reply.calls == (
        ParsedCall("coop", {"action": "list"}, "call_a", {"openai-responses": {"item_id": "fc_1"}}),
    )
    assert reply.usage == Usage(2000, 12, 1920)
    assert reply.finish_reason == "completed"
    reasoning = reply.provider_data["openai-responses"]["reasoning"]  # type: ignore[index]
    assert reasoning == [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA..."}]


def test_responses_incomplete_and_failed() -> None:
    body = {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []}
    assert parse_response("openai-responses", body).finish_reason == "incomplete:max_output_tokens"
    failed = {"status": "failed", "output": [], "error": {"code": "server_error", "message": "boom"}}
    with pytest.raises(ServerError, match="boom"):
        parse_response("openai-responses", failed)


def test_anthropic_blocks_thinking_usage_and_text_between_calls() -> None:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Let me look.", "signature": "EqQBCkYI..."},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_01", "name": "coop", "input": {"action": "list"}},
            {"type": "text", "text": "Then closing."},
            {"type": "tool_use", "id": "toolu_02", "name": "coop", "input": {"action": "close", "id": 3}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 900,
                  "output_tokens": 40},
    }  # fmt: skip
    reply = parse_response("anthropic", body)
    assert reply.text == "Looking.\n\nThen closing."
    assert [c.call_id for c in reply.calls] == ["toolu_01", "toolu_02"]
    assert reply.usage == Usage(930, 40, 900, 20)
    assert reply.finish_reason == "tool_use"
    assert reply.provider_data == {
        "anthropic": {
            "thinking": [{"type": "thinking", "thinking": "Let me look.", "signature": "EqQBCkYI..."}]
        }
    }


def test_gemini_signatures_camel_and_snake_case() -> None:
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Thinking about it", "thought": True},
                        {"functionCall": {"name": "coop", "args": {"action": "close", "id": 1}},
                         "thoughtSignature": "c2lnMQ=="},
                        {"function_call": {"name": "coop", "args": {"action": "close", "id": 2}, "id": "g2"},
                         "thought_signature": "c2lnMg=="},
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {"promptTokenCount": 500, "candidatesTokenCount": 20, "thoughtsTokenCount": 30,
                          "cachedContentTokenCount": 400},
        "modelVersion": "gemini-3-pro",
    }  # fmt: skip
    reply = parse_response("gemini", body)
    assert reply.text == ""
    assert reply.calls == (
        ParsedCall("coop", {"action": "close", "id": 1}, None, {"gemini": {"thoughtSignature": "c2lnMQ=="}}),
        ParsedCall("coop", {"action": "close", "id": 2}, "g2", {"gemini": {"thoughtSignature": "c2lnMg=="}}),
    )
    assert reply.usage == Usage(500, 50, 400)
    assert reply.provider_data == {"gemini": {"thoughts": ["Thinking about it"]}}
    assert reply.model == "gemini-3-pro"


def test_gemini_blocked_prompt_and_text_signature() -> None:
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 3}}
    reply = parse_response("gemini", blocked)
    assert reply.finish_reason == "blocked:SAFETY"
    assert reply.usage.input_tokens == 3
    signed = {
        "candidates": [
            {"content": {"parts": [{"text": "Hi", "thoughtSignature": "s"}]}, "finishReason": "STOP"}
        ]
    }
    assert parse_response("gemini", signed).provider_data == {"gemini": {"thoughtSignature": "s"}}


def test_ollama_calls_objects_thinking_counts() -> None:
    body = {
        "model": "qwen3",
        "message": {
            "role": "assistant",
            "content": "",
            "thinking": "hmm",
            "tool_calls": [{"function": {"index": 0, "name": "coop", "arguments": {"action": "list"}}}],
        },
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 42,
        "eval_count": 7,
    }
    reply = parse_response("ollama", body)
    assert reply.calls == (ParsedCall("coop", {"action": "list"}),)
    assert reply.usage == Usage(42, 7, None)
    assert reply.provider_data == {"ollama": {"thinking": "hmm"}}
    assert reply.finish_reason == "stop"


# -- broken arguments never raise ------------------------------------------------------------------------


BROKEN = '{"action": "close", "id": 12'


@pytest.mark.parametrize(
    ("wire", "body"),
    [
        ("openai-chat", {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "coop", "arguments": BROKEN}}]},
            "finish_reason": "tool_calls"}]}),
        ("openai-responses", {"status": "completed", "output": [
            {"type": "function_call", "call_id": "c1", "name": "coop", "arguments": BROKEN}]}),
        ("anthropic", {"content": [{"type": "tool_use", "id": "c1", "name": "coop", "input": BROKEN}]}),
        ("gemini", {"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "coop", "args": BROKEN}}]},
                                    "finishReason": "STOP"}]}),
        ("ollama", {"message": {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "coop", "arguments": BROKEN}}]}, "done": True}),
    ],
)  # fmt: skip
def test_broken_arguments_become_input_error(wire: str, body: dict[str, Any]) -> None:
    (call,) = parse_response(wire, body).calls
    assert call.name == "coop"
    assert call.input == BROKEN
    assert call.input_error is not None and "not valid JSON" in call.input_error


@pytest.mark.parametrize(
    ("raw", "expected", "error"),
    [
        ("", {}, None),
        (None, {}, None),
        ("[1, 2]", "[1, 2]", "an array"),
        ('"text"', '"text"', "a string"),
        ({"a": 1}, {"a": 1}, None),
    ],
)
def test_arguments_that_are_not_objects(raw: Any, expected: Any, error: str | None) -> None:
    call = {"id": "c", "function": {"name": "t", "arguments": raw}}
    body = {
        "choices": [{"message": {"role": "assistant", "tool_calls": [call]}, "finish_reason": "tool_calls"}]
    }
    (call,) = parse_response("openai-chat", body).calls
    assert call.input == expected
    assert (call.input_error is None) if error is None else (error in (call.input_error or ""))


# -- bodies that are not the wire's shape ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "body", "words"),
    [
        ("openai-chat", {"id": "x"}, "no 'choices'"),
        ("openai-chat", {"choices": []}, "'choices' is empty"),
        ("openai-chat", {"choices": [{"message": "hi"}]}, "choices[0].message is a string"),
        ("openai-responses", {"status": "completed"}, "no 'output'"),
        ("openai-responses", {"output": {}}, "output is an object, not an array"),
        ("anthropic", {"type": "message"}, "no 'content'"),
        ("gemini", {"foo": 1}, "no 'candidates'"),
        ("ollama", {"done": True}, "no 'message'"),
        ("ollama", [1, 2], "the body is an array"),
    ],
)
def test_wrong_shape_raises_response_format_error(wire: str, body: Any, words: str) -> None:
    with pytest.raises(ResponseFormatError, match=words.replace("[", r"\[").replace("]", r"\]")) as info:
        parse_response(wire, body)
    assert str(info.value).startswith(f"{wire} response: ")


def test_error_bodies_on_200_raise_the_providers_error() -> None:
    with pytest.raises(RateLimitError, match="slow down"):
        parse_response("openai-chat", {"error": {"message": "slow down", "type": "rate_limit_exceeded"}})
    with pytest.raises(ServerError, match="Overloaded"):
        parse_response(
            "anthropic", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        )
    with pytest.raises(BadRequestError, match="bad"):
        parse_response("gemini", {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}})
    with pytest.raises(ServerError, match="model crashed"):
        parse_response("ollama", {"error": "model crashed"})


# -- streams ---------------------------------------------------------------------------------------------

# What toolreplay's renderers send with a stream (Chat's usage chunk comes only when it is asked for).
STREAMED = {"stream": True, "stream_options": {"include_usage": True}}

SCRIPTS = {
    "text": Answer(1, "m", "Hello there, the todo list is empty now.", (), None, Usage(100, 9, 64), STREAMED),
    "calls": Answer(
        2,
        "m",
        "Closing two todos.",
        (
            AnswerCall("coop", {"action": "close", "id": 12}, "call_a", "c2lnMA=="),
            AnswerCall("coop", {"action": "close", "id": 13, "note": "dünn ✓"}, "call_b", None),
        ),
        "I should close them.",
        Usage(300, 40, 256),
        STREAMED,
    ),
    "broken": Answer(
        3, "m", "", (AnswerCall("coop", BROKEN, "call_c", None),), None, Usage(5, 5, 0), STREAMED
    ),
    "silent": Answer(4, "m", "", (), None, Usage(5, 1, 0), STREAMED),
}


def _cuts(draw: Callable[..., Any]) -> Callable[[str], list[str]]:
    sizes = draw(st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=6))

    def cut(text: str) -> list[str]:
        out, i, k = [], 0, 0
        while i < len(text):
            n = sizes[k % len(sizes)]
            out.append(text[i : i + n])
            i, k = i + n, k + 1
        return out

    return cut


@st.composite
def splitters(draw: Callable[..., Any]) -> Callable[[str], list[str]]:
    return _cuts(draw)


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
@given(cut=splitters())
def test_any_split_of_a_stream_gives_the_body_reply(
    wire: str, script: str, cut: Callable[[str], list[str]]
) -> None:
    answer = SCRIPTS[script]
    expected = parse_response(wire, answer_body(wire, answer))
    text, reply = feed_all(wire, answer_events(wire, answer, cut))
    assert reply == expected
    if wire not in JOINS_ITEMS and script != "broken":
        # streamed text is the reply's text (Responses joins separate message items the same way)
        assert text == expected.text


@pytest.mark.parametrize("wire", WIRES)
def test_stream_reply_details(wire: str) -> None:
    _, reply = feed_all(wire, answer_events(wire, SCRIPTS["calls"]))
    assert reply.text == "Closing two todos."
    assert [c.input for c in reply.calls] == [
        {"action": "close", "id": 12},
        {"action": "close", "id": 13, "note": "dünn ✓"},
    ]
    cached = {"ollama": None}.get(wire, 256)  # Ollama reports no cached tokens
    assert reply.usage == Usage(300, 40, cached, WRITTEN.get(wire))
    if wire in SIGNED_CALLS:
        assert [c.provider_data for c in reply.calls] == SIGNED_CALLS[wire]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_stream_cut_before_its_final_event_raises_connection_fault(wire: str, script: str) -> None:
    events = [e for e in answer_events(wire, SCRIPTS[script]) if e[1] != "[DONE]"]
    final = _final_index(wire, events)
    for n in range(final):
        parser = stream_parser(wire)
        for _, payload in events[:n]:
            parser.feed(payload)
        with pytest.raises(ConnectionFault, match="stream ended before the final event"):
            parser.finish()


def _final_index(wire: str, events: list[tuple[str | None, Any]]) -> int:
    """The index of the event that completes the stream, as the wire's ``stream_end`` reads it (later ones
    are optional, e.g. Chat usage): the parser and the proxy agree on where a stream may end."""
    http = http_of(wire)
    assert http.stream_end is not None
    for i, (_, payload) in enumerate(events):
        if http.stream_end(json.dumps(payload).encode()):
            return i
    raise AssertionError("no final event")


def test_chat_stream_without_indexes_and_with_usage_after_finish() -> None:
    parser = stream_parser("openai-chat")
    parser.feed(
        {
            "choices": [
                {"delta": {"tool_calls": [{"id": "a", "function": {"name": "t", "arguments": '{"x"'}}]}}
            ]
        }
    )
    parser.feed({"choices": [{"delta": {"tool_calls": [{"function": {"arguments": ": 1}"}}]}}]})
    parser.feed(
        {"choices": [{"delta": {"tool_calls": [{"id": "b", "function": {"name": "u", "arguments": "{}"}}]}}]}
    )
    parser.feed({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]})
    parser.feed({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}})
    reply = parser.finish()
    assert [(c.call_id, c.name, c.input) for c in reply.calls] == [("a", "t", {"x": 1}), ("b", "u", {})]
    assert reply.usage == Usage(3, 2, None)


def test_stream_error_events_raise() -> None:
    with pytest.raises(ServerError, match="Overloaded"):
        stream_parser("anthropic").feed(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        )
    with pytest.raises(RateLimitError):
        stream_parser("openai-responses").feed(
            {"type": "error", "code": "rate_limit_exceeded", "message": "slow"}
        )
    with pytest.raises(ServerError, match="failed"):
        stream_parser("openai-responses").feed(
            {
                "type": "response.failed",
                "response": {"error": {"code": "server_error", "message": "it failed"}},
            }
        )
    with pytest.raises(ServerError, match="oom"):
        stream_parser("ollama").feed({"error": "oom"})


def test_responses_completed_with_empty_output_uses_collected_items() -> None:
    # The Codex backend sends response.completed with an empty output list.
    parser = stream_parser("openai-responses")
    item = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "coop", "arguments": "{}"}
    parser.feed({"type": "response.output_item.done", "output_index": 0, "item": item})
    parser.feed({"type": "response.completed", "response": {"status": "completed", "output": []}})
    assert parser.finish().calls[0].call_id == "c1"


def test_anthropic_stream_separates_text_after_a_call() -> None:
    events = [
        {"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "A"}},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "t", "name": "x", "input": {}}},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "B"}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]  # fmt: skip
    parser = stream_parser("anthropic")
    text = "".join(parser.feed(e) for e in events)
    reply = parser.finish()
    assert text == reply.text == "A\n\nB"
    assert reply.calls == (ParsedCall("x", {}, "t"),)
    assert reply.usage == Usage(1, 3, None)


def test_gemini_stream_blocked_prompt_is_final() -> None:
    parser = stream_parser("gemini")
    parser.feed({"promptFeedback": {"blockReason": "SAFETY"}})
    assert parser.finish().finish_reason == "blocked:SAFETY"

"""What tests/corpus/STREAMS.md says every real stream with tool calls carries, checked on each recording.

These are the shapes the provider doubles must produce (issue 16); a recording added later that breaks one of
them means STREAMS.md (and the doubles) must say more, not that the recording is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from corpus_loader import DONE, Exchange, exchanges


def _events(ex: Exchange) -> list[Any]:
    return [e for e in ex.events() if e != DONE]


def _streams(wire: str, keep: Callable[[Exchange, list[Any]], bool]) -> list[Any]:
    return [pytest.param(ex, id=ex.id) for ex in exchanges(wire, streamed=True) if keep(ex, _events(ex))]


# ------------------------------------------------------------------------------------------- Anthropic


def _anthropic_calls(ex: Exchange, events: list[Any]) -> bool:
    return any(
        e.get("type") == "content_block_start" and e["content_block"].get("type") == "tool_use"
        for e in events
    )


@pytest.mark.parametrize("ex", _streams("anthropic", _anthropic_calls))
def test_anthropic_stream_order_and_usage(ex: Exchange) -> None:
    kinds = [e["type"] for e in _events(ex) if e["type"] != "ping"]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    start = _events(ex)[0]["message"]["usage"]
    assert {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} <= set(
        start
    )
    delta = next(e for e in _events(ex) if e["type"] == "message_delta")
    assert "output_tokens" in delta["usage"] and delta["delta"]["stop_reason"] == "tool_use"


@pytest.mark.parametrize("ex", _streams("anthropic", _anthropic_calls))
def test_anthropic_tool_use_opens_with_an_empty_input_delta(ex: Exchange) -> None:
    events = _events(ex)
    for e in events:
        block = e.get("content_block") or {}
        if e["type"] != "content_block_start" or block.get("type") != "tool_use" or block.get("input"):
            continue  # a call made by server-side code arrives whole in its start event
        deltas = [d for d in events if d["type"] == "content_block_delta" and d["index"] == e["index"]]
        assert block["input"] == {} and deltas[0]["delta"] == {"type": "input_json_delta", "partial_json": ""}


# ------------------------------------------------------------------------------------------- Responses


def _responses_calls(ex: Exchange, events: list[Any]) -> bool:
    return any(
        e.get("type") == "response.output_item.added" and e["item"].get("type") == "function_call"
        for e in events
    )


@pytest.mark.parametrize("ex", _streams("openai-responses", _responses_calls))
def test_responses_stream_order_and_usage(ex: Exchange) -> None:
    events = _events(ex)
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert events[0]["response"]["usage"] is None and events[1]["response"]["usage"] is None
    assert events[-1]["response"]["usage"]["output_tokens"] >= 0
    assert [e["sequence_number"] for e in events] == list(range(len(events)))


@pytest.mark.parametrize("ex", _streams("openai-responses", _responses_calls))
def test_responses_call_items_open_in_progress_with_empty_arguments(ex: Exchange) -> None:
    for e in _events(ex):
        if e["type"] == "response.output_item.added" and e["item"]["type"] == "function_call":
            assert (e["item"]["status"], e["item"]["arguments"]) == ("in_progress", "")


# ---------------------------------------------------------------------------------------------- Gemini


def _gemini_parts(event: Any) -> list[Any]:
    cands = event.get("candidates") or [{}]
    parts: list[Any] = (cands[0].get("content") or {}).get("parts") or []
    return parts


def _gemini_whole_calls(ex: Exchange, events: list[Any]) -> bool:
    calls = [p["functionCall"] for e in events for p in _gemini_parts(e) if "functionCall" in p]
    return bool(calls) and all("args" in c for c in calls)


def _finish(event: Any) -> Any:
    return (event.get("candidates") or [{}])[0].get("finishReason")


@pytest.mark.parametrize("ex", _streams("gemini", _gemini_whole_calls))
def test_gemini_call_chunk_ends_the_stream_on_2x_and_not_on_3(ex: Exchange) -> None:
    events = _events(ex)
    with_call = [e for e in events if any("functionCall" in p for p in _gemini_parts(e))]
    assert ex.model is not None
    if ex.model.startswith("gemini-2"):
        assert _finish(with_call[-1]) == "STOP" and with_call[-1] is events[-1]
    else:
        assert all(_finish(e) is None for e in with_call)
        assert _finish(events[-1]) == "STOP" and _gemini_parts(events[-1]) == [{"text": ""}]
    assert all(e.get("responseId") for e in events)


# ------------------------------------------------------------------------------------------------ Chat


def _openai_chat_calls(ex: Exchange, events: list[Any]) -> bool:
    # OpenAI's own models (some cassettes record other servers' answers under api.openai.com)
    hosted = str(ex.model).startswith("gpt-")
    return hosted and any(
        (c.get("delta") or {}).get("tool_calls") for e in events for c in e.get("choices", [])
    )


@pytest.mark.parametrize("ex", _streams("openai-chat", _openai_chat_calls))
def test_openai_chat_stream_opens_with_the_call_and_closes_with_usage_when_asked(ex: Exchange) -> None:
    events = _events(ex)
    first = events[0]["choices"][0]["delta"]
    assert (first["role"], first["content"]) == ("assistant", None)
    # the call opens beside the role, or (models recorded in 2024) on the chunk right after it
    opens = next(
        i for i, e in enumerate(events) if e["choices"] and e["choices"][0]["delta"].get("tool_calls")
    )
    assert opens in (0, 1)
    call = events[opens]["choices"][0]["delta"]["tool_calls"][0]
    assert call["id"] and call["function"]["name"] and call["function"]["arguments"] == ""
    finish = next(e for e in events if e["choices"] and e["choices"][0]["finish_reason"])
    assert finish["choices"][0]["delta"] == {} and finish["choices"][0]["finish_reason"] == "tool_calls"
    asked = bool(((ex.request or {}).get("stream_options") or {}).get("include_usage"))
    assert (events[-1]["choices"] == [] and bool(events[-1]["usage"])) == asked
    assert ex.events()[-1] == DONE

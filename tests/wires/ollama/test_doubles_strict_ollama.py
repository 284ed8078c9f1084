"""The Ollama double driven by the official ``ollama`` SDK (issue 16): every answer, whole and streamed, for
text, one call, parallel calls, text before a call and thinking, validates strictly against the SDK's
``ChatResponse`` and holds only what the server's Go types can send (ollama/ollama ``api/types.go``: the
keys, and no zero count or duration, all ``omitempty``); the stream has the server's shape (a line per
piece, the calls whole in one line, then the final line); each scripted fault reaches the SDK as its
``ResponseError`` with the status."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from helpers_common import HTTP
from toolreplay import _jsonenc as jsonenc
from toolreplay.testing import Call, Calls, Error, ProviderDouble, StreamError, Text

ollama = pytest.importorskip("ollama")

SCRIPTED = {
    "text": Text("Nothing to do."),
    "one call": Calls([Call("multiply", {"a": 1234, "b": 4567})]),
    "parallel calls": Calls([Call("multiply", {"a": 1, "b": 2}), Call("list_all")]),
    "text before a call": Calls([Call("multiply", {"a": 3, "b": 4})], text="Let me multiply."),
    "thinking": Calls([Call("list_all")], reasoning="I should list them."),
}
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
    for n in ("multiply", "list_all")
]
HI = [{"role": "user", "content": "hi"}]

# The JSON keys of the server's Go types (ollama/ollama api/types.go at the commit tests/corpus/SOURCES.md
# cites): ChatResponse with its embedded Metrics, Message, ToolCall, ToolCallFunction.
METRICS = {"total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count"}
METRICS |= {"eval_duration"}
RESPONSE = {"model", "remote_model", "remote_host", "created_at", "message", "done", "done_reason"}
RESPONSE |= {"_debug_info", "logprobs"} | METRICS
MESSAGE = {"role", "content", "thinking", "images", "tool_calls", "tool_name", "tool_call_id"}
OMITEMPTY = {"remote_model", "remote_host", "done_reason", "_debug_info", "logprobs"} | METRICS
MESSAGE_OMITEMPTY = MESSAGE - {"role", "content"}
CALL_ID = re.compile(r"^call_[a-z0-9]{8}$")  # server/routes.go toolCallId


def _go_shape(payload: Mapping[str, Any]) -> None:
    """What the Go server can send: its keys only, no omitempty field at its zero value."""
    assert set(payload) <= RESPONSE, set(payload) - RESPONSE
    assert all(payload[k] for k in OMITEMPTY & set(payload)), payload
    message = payload["message"]
    assert set(message) <= MESSAGE and all(message[k] for k in MESSAGE_OMITEMPTY & set(message)), message
    for index, call in enumerate(message.get("tool_calls", [])):
        assert set(call) == {"id", "function"} and CALL_ID.match(call["id"]), call
        assert set(call["function"]) == {"index", "name", "arguments"} and call["function"]["index"] == index
        assert isinstance(call["function"]["arguments"], dict)


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def _raw(double: ProviderDouble, stream: bool) -> list[Any]:
    body = {"model": "qwen3", "messages": HI, "tools": TOOLS, "stream": stream}
    answer = HTTP.post(double.url + "/api/chat", json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    if stream:
        assert answer.headers["content-type"].startswith("application/x-ndjson")
    return [jsonenc.loads(line) for line in answer.text.splitlines()]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("shape", sorted(SCRIPTED))
def test_sdk_model_accepts_every_answer_in_the_servers_shape(
    double: ProviderDouble, shape: str, stream: bool
) -> None:
    double.script(SCRIPTED[shape])
    payloads = _raw(double, stream)
    for payload in payloads:
        ollama.ChatResponse.model_validate(payload, strict=True)
        _go_shape(payload)
    *pieces, final = payloads
    assert final["done"] is True and final["done_reason"] == "stop"
    assert final["prompt_eval_count"] > 0 and final["eval_count"] > 0
    assert all(p["done"] is False and set(p) == {"model", "created_at", "message", "done"} for p in pieces)
    if stream:
        # the calls come whole in one line, after the words; the final line holds no words
        with_calls = [i for i, p in enumerate(pieces) if "tool_calls" in p["message"]]
        assert with_calls in ([], [len(pieces) - 1]) and final["message"] == {
            "role": "assistant",
            "content": "",
        }


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("shape", sorted(SCRIPTED))
def test_sdk_client_reads_what_was_scripted(double: ProviderDouble, shape: str, stream: bool) -> None:
    item = SCRIPTED[shape]
    double.script(item)
    client = ollama.Client(host=double.url)
    got = client.chat(model="qwen3", messages=HI, tools=TOOLS, stream=stream, think=True)
    parts = list(got) if stream else [got]
    text = "".join(p.message.content or "" for p in parts)
    thinking = "".join(p.message.thinking or "" for p in parts)
    calls = [(c.function.name, dict(c.function.arguments)) for p in parts for c in p.message.tool_calls or []]
    assert text == item.text and thinking == (item.reasoning or "")
    assert calls == [(c.name, dict(c.input)) for c in getattr(item, "calls", [])]
    assert parts[-1].done and parts[-1].prompt_eval_count and parts[-1].eval_count


FAULTS = [
    (Error(429, retry_after=0), 429),
    (Error(500), 500),
    (Error(401), 401),
    (StreamError(kind="rate_limit"), 429),
    (StreamError(kind="invalid_request"), 400),
]


@pytest.mark.parametrize(("fault", "status"), FAULTS, ids=[repr(f) for f, _ in FAULTS])
def test_sdk_raises_response_error_with_the_status(double: ProviderDouble, fault: Any, status: int) -> None:
    double.script(fault)
    with pytest.raises(ollama.ResponseError) as caught:
        ollama.Client(host=double.url).chat(model="qwen3", messages=HI, stream=False)
    assert caught.value.status_code == status and caught.value.error


@pytest.mark.parametrize("after", [0, 1, 3])
def test_sdk_raises_an_error_line_mid_stream(double: ProviderDouble, after: int) -> None:
    """The server ends a stream that already sent lines with a lone ``{"error": ...}`` line (its
    streamResponse); the SDK raises it after the lines before it."""
    double.script(
        StreamError("model runner has unexpectedly stopped", after_events=after, then=Text("a b c d"))
    )
    seen: list[Any] = []
    with pytest.raises(ollama.ResponseError, match="model runner has unexpectedly stopped"):
        seen.extend(ollama.Client(host=double.url).chat(model="qwen3", messages=HI, stream=True))
    assert len(seen) == after

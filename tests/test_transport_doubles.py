"""Transport against the real provider doubles on 127.0.0.1: every wire, streamed or whole, every fault."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolreplay._errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionFault,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    ResponseFormatError,
    ServerError,
)
from toolreplay._transport.client import RetryPolicy, SendResult, Transport
from toolreplay.testing import (
    BrokenArgs,
    Call,
    Calls,
    CutStream,
    Error,
    Hang,
    NotJSON,
    ProviderDouble,
    Reset,
    StreamError,
    Text,
    Usage,
)
from toolreplay.wires.openai_chat.rules import ORPHAN_TOOL

FAKE_KEY = "sk-FAKE-double-key-9f8e7d6c5b4a"

#: A minimal valid request per vessel (each vessel's own wire).
BODIES: dict[str, dict[str, Any]] = {
    "openai": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Close todo 12"}]},
    "kimi": {"model": "kimi-k2", "messages": [{"role": "user", "content": "Close todo 12"}]},
    "openai-responses": {
        "model": "gpt-5",
        "store": False,
        "input": [{"role": "user", "content": "Close 12"}],
    },
    "codex": {"model": "gpt-5-codex", "store": False, "input": [{"role": "user", "content": "Close 12"}]},
    "anthropic": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "Hi"}],
    },
    "glm": {"model": "glm-4.6", "max_tokens": 256, "messages": [{"role": "user", "content": "Hi"}]},
    "gemini": {"contents": [{"role": "user", "parts": [{"text": "Close todo 12"}]}]},
    "ollama": {"model": "qwen3", "messages": [{"role": "user", "content": "Close todo 12"}]},
}
VESSELS = sorted(BODIES)
CASES = [(v, s) for v in VESSELS for s in (False, True) if not (v == "codex" and not s)]


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def send(
    double: ProviderDouble,
    vessel: str,
    *,
    stream: bool,
    body: dict[str, Any] | None = None,
    timeout: float = 5.0,
    attempts: int = 4,
    dump: Path | None = None,
    on_text: Any = None,
    send_key: bool = False,
) -> tuple[SendResult | ProviderError, Sleeps]:
    sleeps = Sleeps()
    retry = RetryPolicy(max_attempts=attempts, sleep=sleeps, rng=random.Random(3))

    async def go() -> SendResult | ProviderError:
        async with Transport(retry=retry, timeout=timeout, dump=dump) as t:
            try:
                return await t.exchange(
                    double.vessel(vessel),
                    body or BODIES[vessel],
                    stream=stream,
                    on_text=on_text,
                    send_key=send_key,
                )
            except ProviderError as exc:
                return exc

    return asyncio.run(go()), sleeps


def ok(result: SendResult | ProviderError) -> SendResult:
    if isinstance(result, ProviderError):
        raise AssertionError(f"expected a reply, got {type(result).__name__}: {result}")
    return result


# -- answers on every wire, streamed and whole ----------------------------------------------------------


@pytest.mark.parametrize(("vessel", "stream"), CASES)
def test_text_with_cached_usage(double: ProviderDouble, vessel: str, stream: bool) -> None:
    double.script(Text("The list is empty now.", usage=Usage(1200, 8, 1024)))
    pieces: list[str] = []
    result = ok(send(double, vessel, stream=stream, on_text=pieces.append)[0])
    assert result.reply.text == "The list is empty now."
    assert result.reply.calls == ()
    cached = None if vessel == "ollama" else 1024  # Ollama reports no cached count
    written = (
        0 if vessel in ("anthropic", "glm") else None
    )  # only Anthropic (the wire) reports what it wrote to the cache
    assert result.reply.usage == Usage(1200, 8, cached, written)
    assert result.attempts == 1 and result.status == 200 and result.latency_s > 0
    assert ("".join(pieces) == result.reply.text) if stream else pieces == []
    (req,) = double.requests
    assert req.stream is stream and req.vessel == vessel and req.rejected is None


@pytest.mark.parametrize(("vessel", "stream"), CASES)
def test_parallel_tool_calls(double: ProviderDouble, vessel: str, stream: bool) -> None:
    double.script(
        Calls(
            [Call("coop", {"action": "close", "id": 12}), Call("coop", {"action": "close", "id": 13})],
            text="Closing both.",
        )
    )
    reply = ok(send(double, vessel, stream=stream)[0]).reply
    assert reply.text == "Closing both."
    assert [(c.name, c.input) for c in reply.calls] == [
        ("coop", {"action": "close", "id": 12}),
        ("coop", {"action": "close", "id": 13}),
    ]
    assert all(c.input_error is None for c in reply.calls)
    if vessel == "gemini":
        assert reply.calls[0].provider_data is not None
        assert "thoughtSignature" in reply.calls[0].provider_data["gemini"]
        assert reply.calls[0].call_id is None
    else:
        assert all(c.call_id for c in reply.calls)


@pytest.mark.parametrize(("vessel", "stream"), CASES)
def test_broken_arguments_parse_as_input_error(double: ProviderDouble, vessel: str, stream: bool) -> None:
    double.script(BrokenArgs("coop", '{"action": "close", "id": 1'))
    (call,) = ok(send(double, vessel, stream=stream)[0]).reply.calls
    assert call.name == "coop"
    assert call.input == '{"action": "close", "id": 1'
    assert call.input_error


# -- retries ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("vessel", "stream"), CASES)
def test_429_with_retry_after_1_is_retried_and_succeeds(
    double: ProviderDouble, vessel: str, stream: bool
) -> None:
    double.script(Error(429, retry_after=1), Text("second time lucky"))
    result, sleeps = send(double, vessel, stream=stream)
    assert ok(result).reply.text == "second time lucky"
    assert ok(result).attempts == 2
    assert sleeps.waits == [1.0]
    assert [r.status for r in double.requests] == [429, 200]


def test_429_without_retry_after_backs_off(double: ProviderDouble) -> None:
    double.script(Error(429), Error(429), Text("ok now"))
    result, sleeps = send(double, "kimi", stream=False)
    assert ok(result).attempts == 3
    assert len(sleeps.waits) == 2 and all(0 < w <= 20 for w in sleeps.waits)


def test_429_every_time_gives_rate_limit_error(double: ProviderDouble) -> None:
    double.script(*[Error(429, retry_after=2)] * 4)
    result, sleeps = send(double, "anthropic", stream=True)
    assert isinstance(result, RateLimitError)
    assert result.retry_after == 2 and result.status == 429
    assert sleeps.waits == [2, 2, 2]


@pytest.mark.parametrize("status", [500, 502, 503, 529])
@pytest.mark.parametrize("vessel", ["openai", "anthropic", "gemini", "ollama"])
def test_server_errors_are_retried(double: ProviderDouble, vessel: str, status: int) -> None:
    double.script(Error(status), Text("recovered"))
    result, sleeps = send(double, vessel, stream=False)
    assert ok(result).reply.text == "recovered"
    assert len(sleeps.waits) == 1


def test_server_error_after_all_attempts(double: ProviderDouble) -> None:
    double.script(*[Error(503)] * 4)
    result, _ = send(double, "gemini", stream=True)
    assert isinstance(result, ServerError) and result.status == 503
    assert len(double.requests) == 4


@pytest.mark.parametrize("stream", [False, True])
def test_hung_connection_times_out_after_retries(double: ProviderDouble, stream: bool) -> None:
    double.script(Hang(10), Hang(10, after_events=2))
    result, sleeps = send(double, "kimi", stream=stream, timeout=0.3, attempts=2)
    assert isinstance(result, ProviderTimeout)
    assert "no answer in time" in str(result)
    assert len(double.requests) == 2 and len(sleeps.waits) == 1


@pytest.mark.parametrize("vessel", ["kimi", "openai-responses", "anthropic", "gemini", "ollama"])
def test_reset_mid_stream_then_success(double: ProviderDouble, vessel: str) -> None:
    double.script(Reset(after_events=2), Reset(), Text("after the resets"))
    result, _ = send(double, vessel, stream=True)
    assert ok(result).reply.text == "after the resets"
    assert ok(result).attempts == 3


def test_reset_every_time_gives_connection_fault(double: ProviderDouble) -> None:
    double.script(*[Reset()] * 2)
    result, _ = send(double, "anthropic", stream=False, attempts=2)
    assert isinstance(result, ConnectionFault)
    assert result.vessel == "anthropic"


@pytest.mark.parametrize(("vessel", "stream"), CASES)
def test_stream_cut_before_final_event(double: ProviderDouble, vessel: str, stream: bool) -> None:
    double.script(*[CutStream(after_events=2)] * 2)
    result, _ = send(double, vessel, stream=stream, attempts=2)
    assert isinstance(result, ConnectionFault)
    if stream:
        assert "stream ended before the final event" in str(result)


def test_cut_stream_recovers_on_retry(double: ProviderDouble) -> None:
    double.script(CutStream(after_events=3), Text("whole this time"))
    pieces: list[str] = []
    result, _ = send(double, "openai-responses", stream=True, on_text=pieces.append)
    assert ok(result).reply.text == "whole this time"
    assert "".join(pieces).endswith("whole this time")  # text restarts after a retry


@pytest.mark.parametrize(("vessel", "stream"), CASES)
def test_not_json_is_a_format_error_not_retried(double: ProviderDouble, vessel: str, stream: bool) -> None:
    double.script(NotJSON(), Text("never reached"))
    result, sleeps = send(double, vessel, stream=stream)
    assert isinstance(result, ResponseFormatError)
    assert "502 Bad Gateway" in str(result)
    assert len(double.requests) == 1 and sleeps.waits == []


# -- refusals: the provider's own message, never retried -------------------------------------------------

ORPHAN_CHAT = {
    "model": "gpt-4.1",
    "messages": [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
    ],
}


@pytest.mark.parametrize("stream", [False, True])
def test_400_surfaces_the_providers_message_and_is_not_retried(double: ProviderDouble, stream: bool) -> None:
    result, sleeps = send(double, "openai", stream=stream, body=ORPHAN_CHAT)
    assert isinstance(result, BadRequestError)
    assert str(result) == "openai: HTTP 400: " + ORPHAN_TOOL
    assert result.status == 400
    assert len(double.requests) == 1 and sleeps.waits == []


@pytest.mark.parametrize("vessel", ["kimi", "openai-responses", "anthropic", "gemini", "ollama"])
def test_401_is_not_retried(double: ProviderDouble, vessel: str) -> None:
    double.script(Error(401, "invalid x-api-key"))
    result, sleeps = send(double, vessel, stream=False)
    assert isinstance(result, AuthenticationError)
    assert "invalid x-api-key" in str(result)
    assert len(double.requests) == 1 and sleeps.waits == []


# -- keys -------------------------------------------------------------------------------------------------


def test_loopback_without_key_sends_none(double: ProviderDouble) -> None:
    for vessel in ("kimi", "anthropic", "gemini"):
        ok(send(double, vessel, stream=False)[0])
    assert [r.has_key() for r in double.requests] == [False, False, False]


def test_key_never_in_errors_or_dumps(
    double: ProviderDouble, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for env in ("MOONSHOT_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(env, FAKE_KEY)
    double.script(
        Error(401, f"Incorrect API key provided: {FAKE_KEY}"),
        Error(400, f"bad request for key {FAKE_KEY}"),
        Text(f"echo {FAKE_KEY}"),
    )
    errors = [
        send(double, v, stream=s, dump=tmp_path, send_key=True)[0]
        for v, s in [("kimi", False), ("anthropic", True)]
    ]
    reply = ok(send(double, "gemini", stream=True, dump=tmp_path, send_key=True)[0]).reply
    assert reply.text == f"echo {FAKE_KEY}"  # the answer itself is the provider's, untouched
    for err in errors:
        assert isinstance(err, AuthenticationError | BadRequestError)
        assert FAKE_KEY not in str(err) and "[redacted]" in str(err)
    assert all(r.has_key() for r in double.requests)  # sent to the server...
    assert all(FAKE_KEY not in json.dumps(dict(r.headers)) for r in double.requests)  # ...recorded redacted
    files = list(tmp_path.iterdir())
    assert len(files) == 11  # 3 requests x (request, response, meta) + 2 errors
    for f in files:
        assert FAKE_KEY.encode() not in f.read_bytes(), f.name
    assert sorted(f.name for f in files if f.name.startswith("0003"))[-1] == "0003-gemini-response.sse"


def test_dump_request_bytes_are_what_the_server_received(double: ProviderDouble, tmp_path: Path) -> None:
    ok(send(double, "anthropic", stream=True, dump=tmp_path)[0])
    (req,) = double.requests
    assert (tmp_path / "0001-anthropic-request.json").read_bytes() == req.raw
    meta = json.loads((tmp_path / "0001-anthropic-meta.json").read_text())
    assert meta["url"].endswith("/vessel/anthropic/v1/messages") and meta["stream"] is True


# -- sync and async callers -------------------------------------------------------------------------------


def test_sync_wrapper_over_several_sends(double: ProviderDouble) -> None:
    double.script(Text("one"), Text("two"))
    with Transport(retry=RetryPolicy(sleep=Sleeps())) as t:
        assert t.send_sync(double.vessel("kimi"), BODIES["kimi"]).text == "one"
        assert t.send_sync(double.vessel("gemini"), BODIES["gemini"], stream=True).text == "two"


def test_concurrent_async_sends_with_delay(double: ProviderDouble) -> None:
    double.delay = 0.05

    async def go() -> list[str]:
        async with Transport() as t:
            replies = await asyncio.gather(
                *[t.send(double.vessel("ollama"), BODIES["ollama"], stream=i % 2 == 0) for i in range(8)]
            )
        return [r.text for r in replies]

    assert asyncio.run(go()) == ["ok"] * 8
    assert len(double.requests) == 8


@pytest.mark.parametrize("vessel", ["kimi", "openai-responses", "anthropic", "gemini", "ollama"])
def test_error_event_mid_stream(double: ProviderDouble, vessel: str) -> None:
    double.script(StreamError("Overloaded", after_events=2), Text("after the overload"))
    result, sleeps = send(double, vessel, stream=True)
    assert ok(result).reply.text == "after the overload" and len(sleeps.waits) == 1
    double.script(*[StreamError("tool_use ids were found", kind="invalid_request")] * 4)
    result, sleeps = send(double, vessel, stream=True)
    assert "tool_use ids were found" in str(result)
    if vessel == "ollama":
        # Ollama's error objects carry no type: an error inside a stream counts as a server error.
        assert isinstance(result, ServerError) and len(sleeps.waits) == 3
    else:
        assert isinstance(result, BadRequestError) and sleeps.waits == []
        assert str(result) == f"{vessel}: {double.vessel(vessel).wire} stream error: tool_use ids were found"
    double.clear()
    double.script(StreamError("slow down", kind="rate_limit"), Text("ok"))
    assert ok(send(double, vessel, stream=True)[0]).attempts == 2


def test_stream_error_item_on_a_whole_request_is_an_http_error(double: ProviderDouble) -> None:
    double.script(*[StreamError()] * 2)
    result, _ = send(double, "anthropic", stream=False, attempts=2)
    assert isinstance(result, ServerError) and result.status == 503

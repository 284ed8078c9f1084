"""Transport units: request building per wire, keys, errors, retries, dumps (httpx.MockTransport)."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ConnectionFault,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    ResponseFormatError,
    ServerError,
)
from toolreplay._transport.client import (
    RetryPolicy,
    Transport,
    error_for_status,
    is_loopback,
    prepare,
    provider_message,
    retry_after,
)
from toolreplay._transport.dump import redact, redact_headers
from toolreplay._vessels import get_vessel
from toolreplay.testing.answers import Answer, AnswerCall, answer_body, answer_events
from toolreplay.wires import parse_response
from toolreplay.wires.reply import Usage
from wire_helpers import http_of

FAKE_KEY = "sk-FAKEKEY-0123456789abcdef-toolreplay"
CHAT = {"model": "kimi-k2", "messages": [{"role": "user", "content": "hi"}]}
OK_CHAT = {"choices": [{"message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}]}


class Sleeps:
    """A RetryPolicy sleep that records the waits and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def policy(sleeps: Sleeps, **kw: Any) -> RetryPolicy:
    return RetryPolicy(sleep=sleeps, rng=random.Random(7), **kw)


Handler = Callable[[httpx.Request], httpx.Response]


def run(
    handler: Handler, vessel: str = "kimi", body: dict[str, Any] | None = None, **kw: Any
) -> tuple[Any, Sleeps, list[httpx.Request]]:
    """Send through a MockTransport; returns (SendResult or the raised error, sleeps, requests seen)."""
    seen: list[httpx.Request] = []
    sleeps = Sleeps()

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    async def go() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(record)) as client:
            transport = Transport(client, retry=policy(sleeps), dump=kw.pop("dump", None))
            try:
                return await transport.exchange(vessel, body or CHAT, **kw)
            except ProviderError as exc:
                return exc

    return asyncio.run(go()), sleeps, seen


# -- building requests -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vessel", "env", "url", "key_header", "key_value"),
    [
        ("kimi", "MOONSHOT_API_KEY", "https://api.moonshot.ai/v1/chat/completions",
         "authorization", f"Bearer {FAKE_KEY}"),
        ("openai-responses", "OPENAI_API_KEY", "https://api.openai.com/v1/responses",
         "authorization", f"Bearer {FAKE_KEY}"),
        ("anthropic", "ANTHROPIC_API_KEY", "https://api.anthropic.com/v1/messages", "x-api-key", FAKE_KEY),
        ("glm", "ZAI_API_KEY", "https://api.z.ai/api/anthropic/v1/messages", "x-api-key", FAKE_KEY),
        ("gemini", "GEMINI_API_KEY",
         "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
         "x-goog-api-key", FAKE_KEY),
    ],
)  # fmt: skip
def test_prepare_url_and_key_header_per_wire(
    monkeypatch: pytest.MonkeyPatch, vessel: str, env: str, url: str, key_header: str, key_value: str
) -> None:
    monkeypatch.setenv(env, FAKE_KEY)
    prep = prepare(vessel, {"model": get_vessel(vessel).model, "messages": []}, stream=False)
    assert prep.url == url
    assert prep.headers[key_header] == key_value
    assert FAKE_KEY not in prep.url  # never ?key=
    if vessel in ("anthropic", "glm"):
        assert prep.headers["anthropic-version"] == "2023-06-01"


def test_prepare_body_bytes_and_stream_flags() -> None:
    base = "http://127.0.0.1:9"
    chat = prepare("openai-compatible", CHAT, base_url=base, stream=True)
    assert json.loads(chat.content) == {**CHAT, "stream": True, "stream_options": {"include_usage": True}}
    plain = prepare(
        "openai-compatible", {**CHAT, "stream": True, "stream_options": {}}, base_url=base, stream=False
    )
    assert plain.content == jsonenc.encode(CHAT)  # OpenAI refuses stream_options without stream
    assert not plain.stream
    follows = prepare("openai-compatible", {**CHAT, "stream": True}, base_url=base)
    assert follows.stream  # stream=None follows the body's flag
    ollama = prepare("ollama", {"model": "qwen3", "messages": []}, stream=False)
    assert json.loads(ollama.content)["stream"] is False  # Ollama streams when the flag is absent
    assert (
        prepare("ollama", {"model": "qwen3", "messages": []}, stream=True).headers["accept"]
        == "application/json"
    )
    anthropic = prepare("anthropic", {"model": "c", "messages": []}, base_url=base, stream=True)
    assert json.loads(anthropic.content)["stream"] is True
    assert anthropic.headers["accept"] == "text/event-stream"
    gemini = prepare(
        "gemini", {"contents": []}, base_url=base + "/v1beta", stream=True, model="models/gemini-3-pro"
    )
    assert gemini.url == base + "/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse"
    assert gemini.content == b'{"contents":[]}'


def test_body_bytes_are_the_encoded_body_and_model_override() -> None:
    body = {"model": "a", "messages": [{"role": "user", "content": "ünïcode ✓"}]}
    prep = prepare("openai-compatible", body, base_url="http://localhost:8000/v1", stream=False)
    assert prep.content == jsonenc.encode(body)
    other = prepare("openai-compatible", body, base_url="http://localhost:8000/v1", stream=False, model="b")
    assert json.loads(other.content)["model"] == "b"
    assert list(json.loads(other.content)) == ["model", "messages"]  # key order kept


def test_codex_always_streams() -> None:
    prep = prepare(
        "codex", {"model": "m", "store": False, "input": []}, base_url="http://127.0.0.1:1", stream=False
    )
    assert prep.stream
    assert prep.url == "http://127.0.0.1:1/responses"


@pytest.mark.keyless  # needs the key unset
def test_keyless_loopback_sends_no_key_and_remote_refuses() -> None:
    prep = prepare("kimi", CHAT, base_url="http://127.0.0.1:8000/v1")
    assert "authorization" not in prep.headers
    assert "x-api-key" not in prepare("anthropic", {}, base_url="http://localhost:1").headers
    with pytest.raises(
        ConfigError, match=r"^kimi: set MOONSHOT_API_KEY or point base_url \(--base-url\) at a local server$"
    ):
        prepare("kimi", CHAT)
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        prepare("gemini", {"contents": []}, base_url="https://proxy.example.com/v1beta")


def test_vessels_without_key_variable_and_the_cli_vessel() -> None:
    assert "authorization" not in prepare("ollama", {"model": "q", "messages": []}).headers
    with pytest.raises(ConfigError, match="Claude Code CLI"):
        prepare("claude", {"prompt": "x"})
    with pytest.raises(ConfigError, match="not an http"):
        prepare("kimi", CHAT, base_url="ftp://127.0.0.1/x")


@pytest.mark.parametrize(
    ("url", "loop"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.9.9.9", True),
        ("http://localhost:11434", True),
        ("http://[::1]:8000", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.2:8000", False),
        ("http://localhost.example.com", False),
    ],
)
def test_is_loopback(url: str, loop: bool) -> None:
    assert is_loopback(url) is loop


# -- error translation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (403, AuthenticationError),
        (404, BadRequestError),
        (408, ProviderTimeout),
        (409, BadRequestError),
        (413, BadRequestError),
        (422, BadRequestError),
        (429, RateLimitError),
        (500, ServerError),
        (502, ServerError),
        (503, ServerError),
        (529, ServerError),
    ],
)
def test_status_to_error_class(status: int, cls: type[ProviderError]) -> None:
    err = error_for_status(get_vessel("kimi"), status, httpx.Headers(), b'{"error":{"message":"nope"}}')
    assert type(err) is cls
    assert err.status == status
    assert str(err).startswith(f"kimi: HTTP {status}: nope")
    assert err.retryable == (status in (408, 429) or status >= 500)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"error":{"message":"bad id","type":"invalid_request_error"}}', "bad id"),  # OpenAI
        (b'{"type":"error","error":{"type":"invalid_request_error","message":"tool_use ids"}}',
         "tool_use ids"),
        (b'{"error":{"code":400,"message":"Function call is missing","status":"INVALID_ARGUMENT"}}',
         "Function call is missing"),
        (b'[{"error":{"code":429,"message":"quota"}}]', "quota"),  # Gemini sometimes wraps in a list
        (b'{"error":"model \\"x\\" not found"}', 'model "x" not found'),  # Ollama
        (b'{"detail":"Not Found"}', "Not Found"),
        (b"<html>\n<b>Bad   Gateway</b></html>", "<html> <b>Bad Gateway</b></html>"),
        (b"", "(empty body)"),
    ],
)  # fmt: skip
def test_provider_message_from_every_error_shape(data: bytes, message: str) -> None:
    assert provider_message(data)[0] == message


def test_retry_after_forms() -> None:
    assert retry_after(httpx.Headers({"retry-after": "1"})) == 1.0
    assert retry_after(httpx.Headers({"retry-after": "2.5"})) == 2.5
    assert retry_after(httpx.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    now = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)
    date = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after(httpx.Headers({"retry-after": date}), now=now) == 30.0
    assert (
        retry_after(
            httpx.Headers({"retry-after": format_datetime(now - timedelta(seconds=5), usegmt=True)}), now=now
        )
        == 0
    )
    assert retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after(httpx.Headers()) is None
    gemini = {
        "error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]}
    }
    assert retry_after(httpx.Headers(), gemini) == 37.0


def test_retry_policy_delays() -> None:
    p = RetryPolicy(base_delay=1, max_delay=5, jitter=0.5, max_attempts=6, rng=random.Random(1))
    server = ServerError("x")
    for attempt, full in [(1, 1), (2, 2), (3, 4), (4, 5), (5, 5)]:
        d = p.delay(attempt, server)
        assert d is not None and full * 0.5 <= d <= full
    assert p.delay(6, server) is None  # attempts used up
    assert p.delay(1, BadRequestError("x")) is None
    assert p.delay(1, AuthenticationError("x")) is None
    assert p.delay(1, ResponseFormatError("x")) is None
    assert p.delay(1, RateLimitError("x", retry_after=3)) == 3
    assert (
        p.delay(1, RateLimitError("x", retry_after=3600)) is None
    )  # longer than max_retry_after: give up now
    assert RetryPolicy(jitter=0).delay(2, server) == 1.0
    with pytest.raises(ConfigError):
        RetryPolicy(max_attempts=0)


# -- retries through MockTransport -------------------------------------------------------------------------


def test_429_with_retry_after_is_retried_and_succeeds() -> None:
    answers = iter([httpx.Response(429, headers={"retry-after": "1"}, json={"error": {"message": "slow"}}),
                    httpx.Response(200, json=OK_CHAT)])  # fmt: skip
    result, sleeps, seen = run(lambda r: next(answers), base_url="http://127.0.0.1:1/v1")
    assert result.reply.text == "hello"
    assert result.attempts == 2
    assert sleeps.waits == [1.0]
    assert len(seen) == 2
    assert seen[0].content == seen[1].content


def test_429_without_retry_after_backs_off_then_gives_up() -> None:
    result, sleeps, seen = run(
        lambda r: httpx.Response(429, json={"error": {"message": "Rate limit reached"}}),
        base_url="http://127.0.0.1:1/v1",
    )
    assert isinstance(result, RateLimitError)
    assert result.retry_after is None
    assert "Rate limit reached" in str(result)
    assert len(seen) == 4
    assert len(sleeps.waits) == 3
    assert sleeps.waits[0] <= sleeps.waits[2]


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_retried_up_to_max_attempts(status: int) -> None:
    result, sleeps, seen = run(
        lambda r: httpx.Response(status, text="oops"), base_url="http://127.0.0.1:1/v1"
    )
    assert isinstance(result, ServerError)
    assert result.status == status
    assert len(seen) == 4 and len(sleeps.waits) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_4xx_never_retried(status: int) -> None:
    result, sleeps, seen = run(
        lambda r: httpx.Response(status, json={"error": {"message": "provider says no"}}),
        base_url="http://127.0.0.1:1/v1",
    )
    assert isinstance(result, BadRequestError | AuthenticationError)
    assert "provider says no" in str(result)
    assert len(seen) == 1 and sleeps.waits == []


@pytest.mark.parametrize(
    ("exc", "cls"),
    [
        (httpx.ReadTimeout("timed out"), ProviderTimeout),
        (httpx.ConnectTimeout("timed out"), ProviderTimeout),
        (httpx.ConnectError("refused"), ConnectionFault),
        (httpx.ReadError("connection reset by peer"), ConnectionFault),
        (httpx.RemoteProtocolError("peer closed"), ConnectionFault),
    ],
)
def test_exceptions_below_http_are_translated_and_retried(exc: Exception, cls: type[ProviderError]) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise exc

    result, _, seen = run(fail, base_url="http://127.0.0.1:1/v1")
    assert type(result) is cls
    assert result.vessel == "kimi"
    assert len(seen) == 4


def test_recovers_after_a_timeout() -> None:
    calls = iter([httpx.ReadTimeout("t"), None])

    def handler(request: httpx.Request) -> httpx.Response:
        exc = next(calls)
        if exc:
            raise exc
        return httpx.Response(200, json=OK_CHAT)

    result, _, _ = run(handler, base_url="http://127.0.0.1:1/v1")
    assert result.reply.text == "hello" and result.attempts == 2


def test_not_json_and_wrong_shape_are_not_retried() -> None:
    result, _, seen = run(
        lambda r: httpx.Response(200, text="<html>oops</html>"), base_url="http://127.0.0.1:1/v1"
    )
    assert isinstance(result, ResponseFormatError)
    assert "not JSON" in str(result) and len(seen) == 1
    result, _, seen = run(lambda r: httpx.Response(200, json={"id": 1}), base_url="http://127.0.0.1:1/v1")
    assert isinstance(result, ResponseFormatError)
    assert "no 'choices'" in str(result) and result.vessel == "kimi" and len(seen) == 1


def test_on_retry_is_told() -> None:
    answers = iter([httpx.Response(503), httpx.Response(200, json=OK_CHAT)])
    told: list[tuple[str, int, float]] = []
    result, _, _ = run(
        lambda r: next(answers),
        base_url="http://127.0.0.1:1/v1",
        on_retry=lambda e, n, d: told.append((type(e).__name__, n, d)),
    )
    assert result.attempts == 2
    assert [(name, n) for name, n, _ in told] == [("ServerError", 1)]


# -- streaming through MockTransport ----------------------------------------------------------------------


def _sse(wire: str, answer: Answer) -> bytes:
    out = []
    for name, payload in answer_events(wire, answer):
        data = payload if isinstance(payload, str) else json.dumps(payload)
        out.append((f"event: {name}\n" if name else "") + f"data: {data}\n\n")
    return "".join(out).encode()


ANSWER = Answer(1, "m", "Hello world, streaming.", (AnswerCall("coop", {"action": "list"}, "call_1", None),),
                None, Usage(10, 5, 4), {"stream": True, "stream_options": {"include_usage": True}},
                )  # fmt: skip


@pytest.mark.parametrize(
    ("vessel", "base", "body"),
    [
        ("kimi", "http://127.0.0.1:1/v1", CHAT),
        ("openai-responses", "http://127.0.0.1:1/v1", {"model": "m", "input": "hi"}),
        ("anthropic", "http://127.0.0.1:1", {"model": "m", "max_tokens": 5, "messages": []}),
        ("gemini", "http://127.0.0.1:1/v1beta", {"contents": []}),
    ],
)
def test_sse_stream_gives_text_pieces_and_the_reply(vessel: str, base: str, body: dict[str, Any]) -> None:
    wire = get_vessel(vessel).wire
    pieces: list[str] = []
    stream = _sse(wire, ANSWER)
    result, _, seen = run(
        lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream),
        vessel,
        body,
        base_url=base,
        stream=True,
        on_text=pieces.append,
    )
    assert "".join(pieces) == "Hello world, streaming."
    assert result.reply.calls[0].input == {"action": "list"}
    assert result.reply.usage.input_tokens == 10
    assert result.first_text_s is not None
    assert seen[0].headers["accept"] == "text/event-stream"


def test_ndjson_stream_for_ollama() -> None:
    lines = "".join(json.dumps(p) + "\n" for _, p in answer_events("ollama", ANSWER)).encode()
    pieces: list[str] = []
    result, _, _ = run(
        lambda r: httpx.Response(200, headers={"content-type": "application/x-ndjson"}, content=lines),
        "ollama",
        {"model": "qwen3", "messages": []},
        stream=True,
        on_text=pieces.append,
    )
    assert "".join(pieces) == result.reply.text == "Hello world, streaming."


def test_stream_cut_short_is_retried_then_connection_fault() -> None:
    events = _sse("openai-chat", ANSWER).split(b"\n\n")
    cut = b"\n\n".join(events[:3]) + b"\n\n"
    result, _, seen = run(
        lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=cut),
        base_url="http://127.0.0.1:1/v1",
        stream=True,
    )
    assert isinstance(result, ConnectionFault)
    assert "stream ended before the final event" in str(result)
    assert len(seen) == 4


def test_stream_event_not_json_is_a_format_error() -> None:
    result, _, seen = run(
        lambda r: httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=b"data: {nope\n\n"
        ),
        base_url="http://127.0.0.1:1/v1",
        stream=True,
    )
    assert isinstance(result, ResponseFormatError) and len(seen) == 1


def test_server_that_ignores_stream_flag_still_works() -> None:
    result, _, _ = run(
        lambda r: httpx.Response(200, json=OK_CHAT), base_url="http://127.0.0.1:1/v1", stream=True
    )
    assert result.reply.text == "hello"


# -- keys never leak; dumps --------------------------------------------------------------------------------


def test_key_is_redacted_from_errors_and_dumps(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MOONSHOT_API_KEY", FAKE_KEY)
    echo = {"error": {"message": f"Incorrect API key provided: {FAKE_KEY}"}}
    result, _, seen = run(lambda r: httpx.Response(401, json=echo), dump=tmp_path)
    assert seen[0].headers["authorization"] == f"Bearer {FAKE_KEY}"  # the key was sent...
    assert isinstance(result, AuthenticationError)
    assert FAKE_KEY not in str(result)  # ...but never shows
    assert "[redacted]" in str(result) and "MOONSHOT_API_KEY" in str(result)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "0001-kimi-error.json",
        "0001-kimi-meta.json",
        "0001-kimi-request.json",
        "0001-kimi-response.json",
    ]
    for p in tmp_path.iterdir():
        assert FAKE_KEY.encode() not in p.read_bytes(), p.name
    meta = json.loads((tmp_path / "0001-kimi-meta.json").read_text())
    assert meta["headers"]["authorization"] == "[redacted]"
    assert meta["status"] == 401 and meta["wire"] == "openai-chat" and meta["attempt"] == 1


def test_dump_writes_exact_bytes_per_attempt_and_numbering_continues(tmp_path: Path) -> None:
    (tmp_path / "0007-old-request.json").write_text("{}")
    answers = iter([httpx.Response(500, text="boom"), httpx.Response(200, json=OK_CHAT)])
    result, _, _ = run(lambda r: next(answers), base_url="http://127.0.0.1:1/v1", dump=tmp_path)
    assert result.attempts == 2
    assert (tmp_path / "0008-kimi-request.json").read_bytes() == jsonenc.encode(CHAT)
    assert (tmp_path / "0008-kimi-response.json").read_bytes() == b"boom"
    assert json.loads((tmp_path / "0008-kimi-error.json").read_text())["error"] == "ServerError"
    assert (tmp_path / "0009-kimi-request.json").read_bytes() == jsonenc.encode(CHAT)
    assert json.loads((tmp_path / "0009-kimi-response.json").read_bytes()) == OK_CHAT
    assert not (tmp_path / "0009-kimi-error.json").exists()


def test_stream_dump_keeps_the_raw_events(tmp_path: Path) -> None:
    stream = _sse("openai-chat", ANSWER)
    run(
        lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream),
        base_url="http://127.0.0.1:1/v1",
        stream=True,
        dump=tmp_path,
    )
    assert (tmp_path / "0001-kimi-response.sse").read_bytes() == stream


def test_redact_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secretvalue-1234")
    assert redact("key sk-ant-secretvalue-1234 here") == "key [redacted] here"
    assert redact("Authorization: Bearer abcdefghijkl") == "Authorization: Bearer [redacted]"
    assert (
        redact("GET /v1beta/models/x?key=AIzaSyAbc&alt=sse") == "GET /v1beta/models/x?key=[redacted]&alt=sse"
    )
    assert redact("short abc", ["abc"]) == "short abc"  # too short to be a key
    assert redact("my own secret-xyz-123", ["secret-xyz-123"]) == "my own [redacted]"
    assert redact_headers({"X-Api-Key": "k", "content-type": "application/json"}) == {
        "X-Api-Key": "[redacted]",
        "content-type": "application/json",
    }


# -- sync wrapper ------------------------------------------------------------------------------------------


def test_send_sync_reuses_its_loop_and_refuses_inside_a_loop() -> None:
    count = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal count
        count += 1
        return httpx.Response(200, json=OK_CHAT)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    with Transport(client) as t:
        assert t.send_sync("kimi", CHAT, base_url="http://127.0.0.1:1/v1").text == "hello"
        assert t.exchange_sync("kimi", CHAT, base_url="http://127.0.0.1:1/v1").attempts == 1
        assert count == 2

        async def inside() -> None:
            with pytest.raises(ConfigError, match="await send"):
                t.send_sync("kimi", CHAT, base_url="http://127.0.0.1:1/v1")

        asyncio.run(inside())
    asyncio.run(client.aclose())


def test_chat_stream_done_without_finish_reason() -> None:
    # Some OpenAI-compatible servers end with [DONE] and never send a finish_reason.
    stream = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'
    result, _, seen = run(
        lambda r: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream),
        base_url="http://127.0.0.1:1/v1",
        stream=True,
    )
    assert result.reply.text == "hi" and result.reply.finish_reason is None and len(seen) == 1


class Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


@pytest.mark.parametrize("vessel", ["kimi", "openai-responses", "anthropic", "gemini", "ollama"])
@given(cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=40), crlf=st.booleans())
def test_any_byte_split_of_the_http_stream_gives_the_same_reply(
    vessel: str, cuts: list[int], crlf: bool
) -> None:
    wire = get_vessel(vessel).wire
    answer = Answer(
        1,
        "m",
        "Grüße, ✓ streaming text — long enough to cut.",
        ANSWER.calls,
        "why",
        Usage(3, 2, 1),
        ANSWER.request,
    )
    ndjson = http_of(wire).framing == "ndjson"
    if ndjson:
        data = "".join(
            json.dumps(p, ensure_ascii=False) + "\n" for _, p in answer_events(wire, answer)
        ).encode()
    else:
        data = _sse(wire, answer)
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in itertools.pairwise(points)]
    ctype = "application/x-ndjson" if ndjson else "text/event-stream"
    result, _, _ = run(
        lambda r: httpx.Response(200, headers={"content-type": ctype}, stream=Chunks(chunks)),
        vessel,
        {"model": "m", "messages": [], "contents": []},
        base_url="http://127.0.0.1:1/v1",
        stream=True,
    )
    assert result.reply == parse_response(wire, answer_body(wire, answer))

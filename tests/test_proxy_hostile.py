"""Hostile input and faults through the proxy: clear errors in the calling wire's own shape, the upstream
not called for what the proxy refuses, cut streams ended by the wire's own error event, nothing lost."""

from __future__ import annotations

import gzip
import socket
from pathlib import Path

import httpx
import pytest

pytest.importorskip("starlette")
zstandard = pytest.importorskip("zstandard")

from helpers_common import HTTP  # noqa: E402
from proxy_helpers import CASES, post, proxied  # noqa: E402
from toolreplay import _jsonenc as jsonenc  # noqa: E402
from toolreplay._store import open_store  # noqa: E402
from toolreplay.testing import Call, Calls, CutStream, Error, Hang, ProviderDouble, Reset, Text  # noqa: E402
from wire_helpers import error_message, http_of  # noqa: E402

BY_WIRE = {c.wire: c for c in CASES}
LIMIT = 64 * 1024


def _raw(url: str, path: str, data: bytes, **headers: str) -> httpx.Response:
    return HTTP.post(
        url + path, content=data, headers={"content-type": "application/json", **headers}, timeout=30
    )


def _error_message(wire: str, r: httpx.Response) -> str:
    return error_message(wire, r.json(), r.status_code)


@pytest.mark.parametrize("wire", ["anthropic", "openai-chat", "openai-responses", "gemini", "ollama"])
def test_refused_bodies_answer_in_the_wires_shape_and_never_reach_the_upstream(
    wire: str, tmp_path: Path
) -> None:
    case = BY_WIRE[wire]
    path = case.path(False)
    big = jsonenc.encode({"messages": [{"role": "user", "content": "x" * (LIMIT + 10)}]})
    zbomb = zstandard.ZstdCompressor().compress(b'{"a": "' + b"0" * (8 * LIMIT) + b'"}')
    gbomb = gzip.compress(b'{"a": "' + b" " * (8 * LIMIT) + b'"}')
    cases = [
        (big, {}, 413, "larger than"),
        (zbomb, {"content-encoding": "zstd"}, 413, "decompresses to more than"),
        (gbomb, {"content-encoding": "gzip"}, 413, "decompresses to more than"),
        (b'{"model": "x", "messages": [', {}, 400, "not valid JSON"),
        (b"[1, 2]", {}, 400, "not an object"),
        (b"not gzip", {"content-encoding": "gzip"}, 400, "not valid gzip"),
    ]
    with ProviderDouble() as double, proxied(double, tmp_path, max_body=LIMIT) as (proxy, _, db):
        for data, headers, status, words in cases:
            r = _raw(proxy.url, path, data, **{**case.headers, **headers})
            assert r.status_code == status, (words, r.text)
            assert words in _error_message(wire, r)
        unknown = _raw(proxy.url, "/v1/nothing-here", b"{}", **case.headers)
        # in the shape of the wire whose headers the request carries, else of the /v1 wires (Chat's)
        marked = any(m in case.headers for m in http_of(wire).marks)
        shape = wire if marked else "openai-chat"
        assert unknown.status_code == 404 and "no provider path" in _error_message(shape, unknown)
        assert double.requests == []  # the upstream was never called
        assert proxy.drain()
        assert open_store(str(db)).list_conversations() == []


def test_a_zstd_body_within_the_limit_passes_as_it_came_and_is_recorded(tmp_path: Path) -> None:
    case = BY_WIRE["openai-responses"]
    plain = jsonenc.encode(case.first(True))
    packed = zstandard.ZstdCompressor().compress(plain)
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, _, db):
        r = _raw(proxy.url, case.path(True), packed, **case.headers, **{"content-encoding": "zstd"})
        # the double cannot read zstd: what matters is that the bytes reached it as they came
        assert double.requests[-1].raw == packed and double.requests[-1].headers["content-encoding"] == "zstd"
        assert r.status_code == 400
        assert proxy.drain()
        (conv,) = open_store(str(db)).list_conversations()  # the request itself was read and recorded
        assert conv.messages == 1


@pytest.mark.parametrize("wire", ["anthropic", "openai-chat", "openai-responses", "gemini", "ollama"])
@pytest.mark.parametrize("fault", ["cut", "reset"])
def test_a_broken_stream_ends_with_the_wires_error_event_and_the_reply_is_kept_interrupted(
    wire: str, fault: str, tmp_path: Path
) -> None:
    case = BY_WIRE[wire]
    then = Text("Twelve is closed now, as you asked.")
    item = CutStream(after_events=4, then=then) if fault == "cut" else Reset(after_events=4, then=then)
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, lines, db):
        double.script(item)
        r = post(proxy.url, case, case.first(True), True)
        assert r.status_code == 200
        tail = r.text.strip().splitlines()[-1]
        assert "toolreplay proxy: the upstream" in tail and "error" in tail
        assert proxy.drain()
        store = open_store(str(db))
        (conv,) = store.list_conversations()
        user, reply = store.load(conv.id).messages
    assert user.text == "close todo 12"
    assert reply.status == "interrupted" and reply.meta is not None and reply.meta["cut"]
    assert then.text.startswith(reply.text)  # what the agent saw before the break, kept
    assert any("[cut]" in line for line in lines)


# Gemini and Ollama send a turn's calls whole, with the finish, in one event: no cut of the double's
# stream falls between a call and the end (their reading of a cut stream is checked below)
@pytest.mark.parametrize("wire", ["anthropic", "openai-chat", "openai-responses"])
def test_the_calls_a_broken_stream_finished_are_kept_with_the_interrupted_reply(
    wire: str, tmp_path: Path
) -> None:
    case = BY_WIRE[wire]
    calls = [Call("coop", {"action": "close", "id": 12}), Call("coop", {"action": "list"})]
    kept: list[int] = []
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, _, db):
        for cut in range(1, 80, 3):
            double.script(CutStream(after_events=cut, then=Calls(calls, text="Closing.")))
            assert post(proxy.url, case, case.first(True), True).status_code == 200
        assert proxy.drain()
        store = open_store(str(db))
        replies = [m for c in store.list_conversations() for m in store.load(c.id).messages]
        for reply in replies:
            if reply.role != "assistant" or reply.status != "interrupted":
                continue  # a cut after the final event: a whole answer
            got = [(c.name, c.input) for c in reply.tool_uses]
            # only whole calls, in order: a prefix of what the upstream made
            assert got == [(c.name, dict(c.input)) for c in calls][: len(got)], got
            kept.append(len(got))
    assert 1 in kept  # a stream cut between the two calls keeps the first


def test_a_gemini_stream_cut_after_its_call_keeps_the_call() -> None:
    from toolreplay._proxy.exchange import Exchange, read_answer

    call = {
        "functionCall": {"name": "coop", "args": {"action": "close", "id": 12}},
        "thoughtSignature": "c2ln",
    }
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Closing."}]}, "index": 0}]},
        {"candidates": [{"content": {"role": "model", "parts": [call]}, "index": 0}]},
    ]  # and then the stream broke off, before the chunk with finishReason
    data = b"".join(b"data: " + jsonenc.encode(c) + b"\r\n\r\n" for c in chunks)
    ex = Exchange(
        started=0.0, wire="gemini", kind="generate", path="/v1beta/models/m:streamGenerateContent",
        model="m", upstream="http://127.0.0.1:1/v1beta", agent="", session=None, body={},
        request_bytes=0, status=200, streamed=True, cut="the upstream's answer broke off",
    )  # fmt: skip
    got = read_answer(ex, data)
    assert got.reply is None and got.partial is not None
    (kept,) = got.partial.calls
    assert (kept.name, kept.input) == ("coop", {"action": "close", "id": 12})
    assert kept.provider_data == {"gemini": {"thoughtSignature": "c2ln"}}


def test_upstream_errors_pass_as_they_came(tmp_path: Path) -> None:
    case = BY_WIRE["anthropic"]
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, _, db):
        double.script(Error(429, "Slow down.", retry_after=3))
        r = post(proxy.url, case, case.first(False), False)
        assert r.status_code == 429 and r.headers["retry-after"] == "3"
        assert r.json() == {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down."}}
        assert proxy.drain()
        (conv,) = open_store(str(db)).list_conversations()
        assert conv.messages == 1  # the user's message is kept; no reply was answered


def test_an_upstream_that_is_down_or_silent_gets_502_or_504(tmp_path: Path) -> None:
    case = BY_WIRE["openai-chat"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    with ProviderDouble() as double:
        double.script(Hang(5.0))
        with proxied(double, tmp_path, timeout=0.5) as (proxy, _, _):
            silent = post(proxy.url, case, case.first(False), False)
            assert silent.status_code == 504 and "did not answer in time" in silent.json()["error"]["message"]
        from toolreplay._proxy.config import ProxyConfig
        from toolreplay._proxy.serve import start

        down = start(ProxyConfig(upstreams={"openai-chat": f"http://127.0.0.1:{closed}/v1"}, record=False))
        try:
            r = post(down.url, case, case.first(False), False)
        finally:
            down.close()
        assert r.status_code == 502 and "cannot reach 127.0.0.1" in r.json()["error"]["message"]


@pytest.mark.slow
def test_beyond_loopback_only_with_the_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = BY_WIRE["anthropic"]
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with ProviderDouble() as double, proxied(double, tmp_path, token="team-token-1234567") as (proxy, _, _):
        double.script(Text("hi"), Text("hi"))
        assert post(proxy.url, case, case.first(False), False).status_code == 401
        ok = post(proxy.url, case, case.first(False), False, **{"x-toolreplay-token": "team-token-1234567"})
        assert ok.status_code == 200
        assert "x-toolreplay-token" not in double.requests[-1].headers  # the token stays here
        as_key = post(proxy.url, case, case.first(False), False, **{"x-api-key": "team-token-1234567"})
        assert as_key.status_code == 200
        assert "x-api-key" not in double.requests[-1].headers  # no ANTHROPIC_API_KEY here: no key at all
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-proxys-own-key-1234")
        double.script(Text("hi"))
        post(proxy.url, case, case.first(False), False, **{"x-api-key": "team-token-1234567"})
        assert double.requests[-1].has_key()  # the proxy's own key, from its environment

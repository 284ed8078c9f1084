"""A routed model end to end (design 47): the official anthropic SDK through a real proxy on 127.0.0.1,
routed to the Kimi vessel (thinking) on the Chat double; the second request carries Kimi's stored
reasoning, which the agent never saw; errors in the agent's shape; count_tokens answered by the estimate;
the agent's key never reaching the routed host; the store holding the upstream's issuer."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from helpers_common import loopback_server

pytest.importorskip("starlette")
pytest.importorskip("anthropic")

import anthropic

from helpers_common import HTTP
from proxy_helpers import TOOLS_ANTHROPIC, proxied
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.model_routes import parse_route
from toolreplay._steps import host_of
from toolreplay._store import open_store
from toolreplay.testing import Call, Calls, Error, ProviderDouble, Text

AGENT_KEY = "sk-ant-agent-own-key-0123456789"
KIMI_KEY = "sk-moonshot-vessel-key-9876543210"
CLOSE = Calls([Call("coop", {"action": "close", "id": 12})], reasoning="The user wants todo 12 closed.")


def _kimi_on(tmp: Path, monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    """The kimi vessel pointed at a loopback server (its profile's URL: the key goes there)."""
    f = tmp / "vessels.toml"
    f.write_text(f'[vessels.kimi]\nbase_url = "{base_url}"\n', encoding="utf-8")
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
    monkeypatch.setenv("MOONSHOT_API_KEY", KIMI_KEY)


@contextmanager
def _routed(
    double: ProviderDouble, tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Any, list[str], Path]]:
    _kimi_on(tmp, monkeypatch, double.base_url_for("kimi"))
    routes = (parse_route("claude-*=kimi:kimi-k2-thinking"),)
    with proxied(double, tmp, routes=routes) as (proxy, lines, db):
        yield proxy, lines, db


def _first() -> list[dict[str, Any]]:
    return [{"role": "user", "content": "close todo 12"}]


def _after(msgs: list[dict[str, Any]], msg: Any) -> list[dict[str, Any]]:
    """``msgs`` continued by the answer ``msg`` and its call's result."""
    call = next(b for b in msg.content if b.type == "tool_use")
    return [
        *msgs,
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "closed"}]},
    ]


def _follow(msg: Any) -> list[dict[str, Any]]:
    return _after(_first(), msg)


def _client(url: str) -> Any:
    return anthropic.Anthropic(base_url=url, api_key=AGENT_KEY, max_retries=0)


@pytest.mark.slow
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_claude_on_kimi_continues_with_the_reasoning_the_agent_never_saw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    with ProviderDouble() as double, _routed(double, tmp_path, monkeypatch) as (proxy, _lines, db):
        double.script(CLOSE, Text("Closed todo 12."))
        with _client(proxy.url) as client:
            ask = dict(model="claude-sonnet-4-5", max_tokens=300, tools=TOOLS_ANTHROPIC)
            if streamed:
                with client.messages.stream(**ask, messages=_first()) as s:
                    msg = s.get_final_message()
                with client.messages.stream(**ask, messages=_follow(msg)) as s:
                    done = s.get_final_message()
            else:
                msg = client.messages.create(**ask, messages=_first())
                done = client.messages.create(**ask, messages=_follow(msg))
        assert proxy.drain()
        # the agent asked for no thinking: it saw the call, not Kimi's reasoning
        assert [b.type for b in msg.content] == ["tool_use"]
        call = msg.content[0]
        assert (call.name, call.input) == ("coop", {"action": "close", "id": 12})
        assert msg.model == "claude-sonnet-4-5" and msg.stop_reason == "tool_use"
        assert [b.text for b in done.content if b.type == "text"] == ["Closed todo 12."]
        first, second = double.requests
        assert first.vessel == second.vessel == "kimi" and second.status == 200, second.rejected
        assert first.body["model"] == "kimi-k2-thinking" and first.stream is streamed
        said = [m for m in second.body["messages"] if m["role"] == "assistant"]
        assert said[0]["reasoning_content"] == "The user wants todo 12 closed."  # from the store
        assert said[0]["tool_calls"][0]["function"]["name"] == "coop"
        host = host_of(double.url)
    _the_store_holds_it(db, host, call.id)


def _the_store_holds_it(db: Path, host: str, agent_id: str) -> None:
    store = open_store(str(db))
    try:
        (conv,) = store.list_conversations()
        h = store.load(conv.id)
    finally:
        store.close()
    reply = next(m for m in h.messages if m.role == "assistant" and m.tool_uses)
    assert reply.meta["issuer"] == {"wire": "openai-chat", "host": host, "model": "kimi-k2-thinking"}
    assert reply.meta["proxy"]["route"] == "claude-* -> kimi (kimi-k2-thinking)"
    (c,) = reply.tool_uses
    assert c.call_id == agent_id  # the id the agent saw
    upstream_id = (c.provider_data or {}).get("openai-chat", {}).get("id")
    assert upstream_id is None or upstream_id != agent_id
    assert any(p.kind == "reasoning" for s in reply.steps for p in s.said)


@pytest.mark.slow
@pytest.mark.parametrize("status", [429, 500])
def test_an_upstream_error_comes_back_in_the_agents_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    with ProviderDouble() as double, _routed(double, tmp_path, monkeypatch) as (proxy, _, _db):
        double.script(Error(status, message=f"kimi says {status}", retry_after=7))
        with _client(proxy.url) as client, pytest.raises(anthropic.APIStatusError) as got:
            client.messages.create(model="claude-haiku-4-5", max_tokens=50, messages=_first())
        assert proxy.drain()
    exc = got.value
    assert exc.status_code == status and "kimi says" in exc.message
    assert exc.body["type"] == "error" and exc.body["error"]["message"] == f"kimi says {status}"
    if status == 429:
        assert exc.response.headers["retry-after"] == "7"


def test_count_tokens_on_a_routed_model_is_answered_by_the_estimate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ProviderDouble() as double, _routed(double, tmp_path, monkeypatch) as (proxy, _, _db):
        with _client(proxy.url) as client:
            n = client.messages.count_tokens(model="claude-sonnet-4-5", messages=_first()).input_tokens
            bigger = client.messages.count_tokens(
                model="claude-sonnet-4-5", messages=[{"role": "user", "content": "close todo 12 " * 300}]
            ).input_tokens
        assert double.requests == []  # neither Anthropic nor Kimi was asked
    assert 0 < n < bigger


# -- keys ------------------------------------------------------------------------------------------------


@contextmanager
def _header_recorder() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A Chat server on 127.0.0.1 that keeps every request's headers as they came and answers "ok"."""
    seen: list[dict[str, str]] = []
    answer = jsonenc.encode({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "kimi-k2-thinking",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    })  # fmt: skip

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append({k.lower(): v for k, v in self.headers.items()})
            zipped = "gzip" in self.headers.get("accept-encoding", "")  # as a provider answers it
            data = gzip.compress(answer) if zipped else answer
            self.send_response(200)
            self.send_header("content-type", "application/json")
            if zipped:
                self.send_header("content-encoding", "gzip")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return None

    with loopback_server(Handler) as base:
        yield f"{base}/v1", seen


def test_the_agents_key_never_reaches_the_routed_host_the_vessels_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _header_recorder() as (base, seen), ProviderDouble() as double:
        _kimi_on(tmp_path, monkeypatch, base)
        with proxied(double, tmp_path, routes=(parse_route("claude-*=kimi"),)) as (proxy, _, _db):
            with _client(proxy.url) as client:
                extra = {
                    "anthropic-beta": "interleaved-thinking-2025-05-14",
                    "x-claude-code-session-id": "s1",
                }
                got = client.messages.create(
                    model="claude-sonnet-4-5", max_tokens=50, messages=_first(), extra_headers=extra
                )
            assert proxy.drain()
    assert [b.text for b in got.content if b.type == "text"] == ["ok"]
    (headers,) = seen
    assert headers["authorization"] == f"Bearer {KIMI_KEY}"
    flat = repr(sorted(headers.items()))
    assert AGENT_KEY not in flat
    assert not {"x-api-key", "anthropic-version", "anthropic-beta", "x-claude-code-session-id"} & set(headers)
    assert not {h for h in headers if h.startswith("x-stainless")}  # the agent's SDK headers stay behind
    # the vessel's request's headers and the HTTP framing, nothing else; a whole answer may come gzipped
    assert set(headers) == {
        "host", "content-length", "content-type", "accept", "user-agent", "authorization", "accept-encoding"
    }  # fmt: skip
    assert headers["accept-encoding"] == "gzip"


def test_a_routed_stream_is_asked_for_uncompressed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compressing server may hold a stream's events back to fill a block: a stream is asked for as it
    is made (here the upstream answers whole though asked to stream: the agent still gets its stream)."""
    with _header_recorder() as (base, seen), ProviderDouble() as double:
        _kimi_on(tmp_path, monkeypatch, base)
        with proxied(double, tmp_path, routes=(parse_route("claude-*=kimi"),)) as (proxy, _, _db):
            client = _client(proxy.url)
            with (
                client,
                client.messages.stream(model="claude-sonnet-4-5", max_tokens=50, messages=_first()) as s,
            ):
                got = s.get_final_message()
            assert proxy.drain()
    assert [b.text for b in got.content if b.type == "text"] == ["ok"]
    (headers,) = seen
    assert headers["accept-encoding"] == "identity" and headers["accept"] == "text/event-stream"


@pytest.mark.slow
def test_thinking_shown_to_claude_carries_our_token_resolved_on_the_way_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ProviderDouble() as double, _routed(double, tmp_path, monkeypatch) as (proxy, _, _db):
        double.script(CLOSE, Text("Closed todo 12."))
        ask = dict(
            model="claude-sonnet-4-5", max_tokens=4000, tools=TOOLS_ANTHROPIC,
            thinking={"type": "enabled", "budget_tokens": 1024},
        )  # fmt: skip
        with _client(proxy.url) as client:
            with client.messages.stream(**ask, messages=_first()) as s:
                msg = s.get_final_message()
            done = client.messages.create(**ask, messages=_follow(msg))
        assert proxy.drain()
        _, second = double.requests
    thinking = msg.content[0]
    assert thinking.type == "thinking" and thinking.thinking == "The user wants todo 12 closed."
    assert thinking.signature.startswith("toolreplay.r1.")  # ours, never Kimi's data
    assert [b.text for b in done.content if b.type == "text"] == ["Closed todo 12."]
    said = next(m for m in second.body["messages"] if m["role"] == "assistant")
    assert said["reasoning_content"] == "The user wants todo 12 closed."
    assert b"toolreplay.r1." not in second.raw  # resolved from the store, not forwarded


def test_a_stream_the_upstream_cuts_ends_with_the_agents_error_and_is_kept_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreplay.testing import CutStream

    with ProviderDouble() as double, _routed(double, tmp_path, monkeypatch) as (proxy, _, db):
        double.script(CutStream(after_events=2, then=Text("an answer that never finishes")))
        ask = dict(model="claude-sonnet-4-5", max_tokens=50, messages=_first())
        with (
            _client(proxy.url) as client,
            pytest.raises(anthropic.APIError) as got,
            client.messages.stream(**ask) as s,
        ):
            s.get_final_message()
        assert proxy.drain()
    assert "ended before" in str(got.value) or "broke off" in str(got.value)
    store = open_store(str(db))
    try:
        (conv,) = store.list_conversations()
        reply = store.load(conv.id).messages[-1]
    finally:
        store.close()
    assert reply.role == "assistant" and reply.status == "interrupted"


def test_an_unreachable_routed_host_is_a_502_in_the_agents_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with ProviderDouble() as double:
        _kimi_on(tmp_path, monkeypatch, f"http://127.0.0.1:{port}/v1")
        with proxied(double, tmp_path, routes=(parse_route("claude-*=kimi"),)) as (proxy, _, _db):
            with _client(proxy.url) as client, pytest.raises(anthropic.APIStatusError) as got:
                client.messages.create(model="claude-sonnet-4-5", max_tokens=50, messages=_first())
            assert proxy.drain()
        assert double.requests == []
    assert got.value.status_code == 502 and f"cannot reach 127.0.0.1:{port}" in got.value.message


def test_an_unrouted_model_passes_through_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    with ProviderDouble() as double, _routed(double, tmp_path, monkeypatch) as (proxy, _, _db):
        raw = b'{"model": "gpt-4.1",  "messages": [{"role": "user", "content": "hi"}]}'
        got = HTTP.post(
            proxy.url + "/v1/chat/completions", content=raw,
            headers={"authorization": f"Bearer {AGENT_KEY}", "content-type": "application/json"},
        )  # fmt: skip
        assert proxy.drain()
        (sent,) = double.requests
    assert got.status_code == 200 and sent.raw == raw and sent.vessel is None  # the agent's own provider
    assert sent.has_key()  # the agent's key went to its own provider


def test_the_log_names_the_route_the_vessel_and_the_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ProviderDouble() as double, _routed(double, tmp_path, monkeypatch) as (proxy, lines, _db):
        double.script(CLOSE, CLOSE)  # two answers with reasoning the agent does not ask to see
        with _client(proxy.url) as client:
            client.messages.create(
                model="claude-sonnet-4-5", max_tokens=50, tools=TOOLS_ANTHROPIC, messages=_first()
            )
            client.messages.create(
                model="claude-sonnet-4-5", max_tokens=50, tools=TOOLS_ANTHROPIC, messages=_first()
            )
        assert proxy.drain()
    logged = [jsonenc.loads(line) for line in (tmp_path / "proxy.log").read_text().splitlines()]
    assert [(e["route"], e["vessel"]) for e in logged] == [
        ("claude-* -> kimi (kimi-k2-thinking)", "kimi")
    ] * 2
    assert all("reasoning not shown: the request did not ask for thinking (the store keeps it)" in e["notes"]
               for e in logged)  # fmt: skip
    assert logged[0]["upstream"].startswith("openai-chat 127.0.0.1:")
    assert len([line for line in lines if line.startswith("[route]")]) == 1  # once per kind


@pytest.mark.slow
def test_switching_routes_mid_conversation_gives_each_upstream_only_its_own_reasoning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kimi_says = Calls([Call("coop", {"action": "list"})], reasoning="Kimi: list the board first.")
    claude_says = Calls([Call("coop", {"action": "close", "id": 12})], reasoning="Claude: now close 12.")
    with ProviderDouble() as double:
        f = tmp_path / "vessels.toml"
        f.write_text(
            f'[vessels.kimi]\nbase_url = "{double.base_url_for("kimi")}"\n\n'
            f'[vessels.anthropic]\nbase_url = "{double.base_url_for("anthropic")}"\n', encoding="utf-8",
        )  # fmt: skip
        monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
        routes = (parse_route("claude-kimi=kimi:kimi-k2-thinking"), parse_route("claude-*=anthropic"))
        double.script(kimi_says, claude_says, Text("Done."))
        with proxied(double, tmp_path, routes=routes) as (proxy, _, _db), _client(proxy.url) as client:
            msgs = _first()
            for model in ("claude-kimi", "claude-sonnet-4-5", "claude-kimi"):  # Kimi, then Claude, then Kimi
                got = client.messages.create(
                    model=model, max_tokens=4000, tools=TOOLS_ANTHROPIC, messages=msgs
                )
                if any(b.type == "tool_use" for b in got.content):
                    msgs = _after(msgs, got)
            assert proxy.drain()
        sent = double.requests
    assert [r.vessel for r in sent] == ["kimi", "anthropic", "kimi"]
    assert [r.status for r in sent] == [200, 200, 200], [r.rejected for r in sent]
    assert [b.text for b in got.content if b.type == "text"] == ["Done."]
    assert b"Kimi: list" not in sent[1].raw  # Anthropic never gets Kimi's reasoning
    assert b"Kimi: list the board first." in sent[2].raw and b"Claude: now" not in sent[2].raw


def test_an_upstream_id_the_agents_wire_cannot_take_is_mapped_and_kept_for_the_upstream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Kimi's own call ids (functions.NAME:IDX) do not fit Anthropic's tool_use id pattern
    kimi = Calls(
        [Call("coop", {"action": "close", "id": 12}, call_id="functions.coop:0")], reasoning="Close."
    )
    with ProviderDouble() as double, _routed(double, tmp_path, monkeypatch) as (proxy, _, db):
        double.script(kimi, Text("Closed."))
        with _client(proxy.url) as client:
            ask = dict(model="claude-sonnet-4-5", max_tokens=300, tools=TOOLS_ANTHROPIC)
            msg = client.messages.create(**ask, messages=_first())
            client.messages.create(**ask, messages=_follow(msg))
        assert proxy.drain()
        _, second = double.requests
    seen = msg.content[0].id
    assert seen != "functions.coop:0" and seen.replace("_", "").replace("-", "").isalnum()
    said = next(m for m in second.body["messages"] if m["role"] == "assistant")
    assert said["tool_calls"][0]["id"] == "functions.coop:0"  # mapped back: Kimi gets its own id
    store = open_store(str(db))
    try:
        (conv,) = store.list_conversations()
        (call,) = [c for m in store.load(conv.id).messages for c in m.tool_uses]
    finally:
        store.close()
    assert call.call_id == seen and call.provider_data["openai-chat"]["id"] == "functions.coop:0"

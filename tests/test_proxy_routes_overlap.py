"""The answer's side of a routed request's translation (design 58), each part once, whole or streamed:
the ids the answer starts with while the upstream works on the request, once the request is written, not
before it goes; the tool names it goes back under when the answer has a call; the notes when the
exchange is handed to the recorder."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

import httpx

from proxy_helpers import proxied
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy import http1, ready
from toolreplay._proxy.model_routes import parse_route
from toolreplay.testing import Call, Calls, ProviderDouble

DELAY = 0.3


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("record", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_the_answers_side_is_made_while_the_upstream_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool, record: bool
) -> None:
    made: dict[str, list[float]] = {"answer_ids": [], "answer_names": [], "answering": []}

    def timed(name: str) -> Any:
        real = getattr(ready, name)

        def f(*args: Any) -> Any:
            made[name].append(time.monotonic())
            return real(*args)

        return f

    for name in made:
        monkeypatch.setattr(ready, name, timed(name))
    written: list[float] = []  # when the proxy's transport wrote the request's bytes
    send = http1.Connection.send

    async def sent(
        self: http1.Connection, head: bytes, request: httpx.Request, timeout: float | None
    ) -> None:
        await send(self, head, request, timeout)
        written.append(time.monotonic())

    monkeypatch.setattr(http1.Connection, "send", sent)
    f = tmp_path / "vessels.toml"
    with ProviderDouble(delay=DELAY) as double:
        double.script(Calls([Call("mcp__fs__read", {"path": "a.txt"})]))
        f.write_text(f'[vessels.kimi]\nbase_url = "{double.base_url_for("kimi")}"\n', encoding="utf-8")
        monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
        monkeypatch.setenv("MOONSHOT_API_KEY", "sk-moonshot-vessel-key-9876543210")
        routes = (parse_route("claude-*=kimi:kimi-k2-thinking"),)
        body = {
            "model": "claude-sonnet-4-5", "max_tokens": 200, "stream": stream,
            "messages": [{"role": "user", "content": "read a.txt"}],
            "tools": [{"name": "mcp__fs__read", "input_schema": {"type": "object"}}],
        }  # fmt: skip
        with proxied(double, tmp_path, routes=routes, record=record) as (proxy, _lines, _db):
            sent = time.monotonic()
            got = httpx.post(proxy.url + "/v1/messages", content=jsonenc.encode(body), timeout=30)
            answered = time.monotonic()
            assert proxy.drain()
    assert got.status_code == 200, got.text
    # each once, though the ids are asked for at the send, the writer and the record
    assert [len(made[k]) for k in made] == [1, 1, 1]
    ids = made["answer_ids"][0]
    # made after the request went (the upstream then holds it DELAY seconds), long before its answer came
    assert sent <= ids <= answered - DELAY / 2
    assert written and written[0] <= ids  # after the request's bytes went
    assert made["answer_names"][0] >= ids + DELAY / 2  # asked at the answer's call
    assert made["answering"][0] >= made["answer_names"][0]  # the notes: when the exchange is handed over
    text = got.text
    assert ("message_stop" in text) == stream
    assert '"name":"mcp__fs__read"' in text  # the call, under the agent's own tool name
    assert stream or jsonenc.loads(text)["content"][0]["input"] == {"path": "a.txt"}

"""The routed path's own faults (design 47, 56): an unexpected failure while a request is prepared comes
back in the agent's wire's error shape (500, naming what failed) and is logged once; an agent that goes
away before a translated stream begins leaves nothing for the recorder to wait on."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

import httpx

from proxy_helpers import TOOLS_ANTHROPIC, proxied, served_upstreams
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.app import Proxy, build_app
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.model_routes import parse_route
from toolreplay._proxy.serve import recorder_for
from toolreplay.testing import ProviderDouble, Text

KIMI_KEY = "sk-moonshot-vessel-key-9876543210"


def _kimi_on(tmp: Path, monkeypatch: pytest.MonkeyPatch, base_url: str) -> tuple[Any, ...]:
    f = tmp / "vessels.toml"
    f.write_text(f'[vessels.kimi]\nbase_url = "{base_url}"\n', encoding="utf-8")
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
    monkeypatch.setenv("MOONSHOT_API_KEY", KIMI_KEY)
    return (parse_route("claude-*=kimi:kimi-k2-thinking"),)


def _ask(stream: bool = False) -> bytes:
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 200, "tools": TOOLS_ANTHROPIC}
    body["messages"] = [{"role": "user", "content": "close todo 12"}]
    return jsonenc.encode(body | ({"stream": True} if stream else {}))


def test_an_unexpected_failure_preparing_a_routed_request_is_a_500_in_the_agents_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import toolreplay._proxy.translate as translate

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the endpoint's template is broken")

    with ProviderDouble() as double:
        routes = _kimi_on(tmp_path, monkeypatch, double.base_url_for("kimi"))
        monkeypatch.setattr(translate, "prepare", broken)  # the vessel's request is prepared there
        with caplog.at_level(logging.ERROR), proxied(double, tmp_path, routes=routes) as (proxy, _, _db):
            got = httpx.post(proxy.url + "/v1/messages", content=_ask(), timeout=30)
        assert not double.requests  # nothing went upstream
    assert got.status_code == 500
    body = got.json()
    assert body["type"] == "error" and body["error"]["type"] == "api_error"  # Anthropic's own shape
    message = body["error"]["message"]
    assert "claude-* -> kimi (kimi-k2-thinking)" in message
    assert "RuntimeError: the endpoint's template is broken" in message
    logged = [r for r in caplog.records if "the endpoint's template is broken" in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None  # once, with where it failed


async def _gone_before_the_start(app: Any, body: bytes) -> None:
    """One request to ``app`` from an agent that is gone when its answer starts: the server's ``send``
    raises, as the ASGI spec has a server do on a closed connection (an ``OSError``)."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        raise ConnectionResetError("the agent went away")

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/v1/messages", "raw_path": b"/v1/messages", "query_string": b"",
        "root_path": "", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 5000),
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    }  # fmt: skip
    with pytest.raises(ConnectionResetError):
        await app(scope, receive, send)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_an_agent_gone_before_a_routed_answer_begins_leaves_the_recorder_nothing_to_wait_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    with ProviderDouble() as double:
        routes = _kimi_on(tmp_path, monkeypatch, double.base_url_for("kimi"))
        double.script(Text("Closed todo 12."))
        cfg = ProxyConfig(
            upstreams=served_upstreams(double), db=str(tmp_path / "p.db"), log=tmp_path / "p.log",
            routes=routes,
        )  # fmt: skip
        recorder = recorder_for(cfg, None)
        assert recorder is not None
        proxy = Proxy(cfg, recorder)

        async def run() -> None:
            await _gone_before_the_start(build_app(proxy), _ask(stream))
            await proxy.aclose()

        asyncio.run(run())
        t0 = time.perf_counter()
        assert recorder.drain(3.0), "the recorder waits for an exchange that never comes"
        assert time.perf_counter() - t0 < 1.0
        recorder.close()
        assert len(double.requests) == 1  # the upstream was asked, its answer read and let go
    line = jsonenc.loads((tmp_path / "p.log").read_text(encoding="utf-8").splitlines()[-1])
    assert line["route"] == "claude-* -> kimi (kimi-k2-thinking)"
    if stream:
        assert line["cut"] == "the agent went away before the answer began"

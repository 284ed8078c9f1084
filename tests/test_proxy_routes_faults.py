"""The routed path's own faults (design 47, 56): an unexpected failure while a request is prepared comes
back in the agent's wire's error shape (500, naming what failed) and is logged once; an agent that goes
away before a translated stream begins leaves nothing for the recorder to wait on."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

import httpx

from proxy_helpers import TOOLS_ANTHROPIC, proxied
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.model_routes import parse_route
from toolreplay.testing import ProviderDouble

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
    import toolreplay._proxy.translated as translated

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the endpoint's template is broken")

    with ProviderDouble() as double:
        routes = _kimi_on(tmp_path, monkeypatch, double.base_url_for("kimi"))
        monkeypatch.setattr(translated, "prepare", broken)
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

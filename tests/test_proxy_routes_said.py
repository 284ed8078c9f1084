"""What the routed path answers itself leaves its ``--log`` line (design 55), as a pass-through refusal
does: the 500 of a fault of its own, the 400 of a body it cannot translate, the refusal of an earlier
answer it does not hold, the 504 and 502 of an upstream that does not answer, and a routed token count.
Each line names the route and the vessel, a refusal its message; nothing of it is stored."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

import httpx

from proxy_helpers import proxied
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.model_routes import parse_route
from toolreplay._store import open_store
from toolreplay.testing import ProviderDouble, Text

ROUTE = "claude-* -> kimi (kimi-k2-thinking)"
ASK: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 200}
HELLO = [{"role": "user", "content": "hello"}]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _routes(tmp: Path, monkeypatch: pytest.MonkeyPatch, base_url: str) -> tuple[Any, ...]:
    f = tmp / "vessels.toml"
    f.write_text(f'[vessels.kimi]\nbase_url = "{base_url}"\n', encoding="utf-8")
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
    monkeypatch.setenv("MOONSHOT_API_KEY", "sk-moonshot-vessel-key-9876543210")
    return (parse_route("claude-*=kimi:kimi-k2-thinking"), parse_route("gpt-*=kimi:kimi-k2-thinking"))


def _logged(
    tmp: Path, monkeypatch: pytest.MonkeyPatch, path: str, body: dict[str, Any], *, base_url: str = "",
    timeout: float = 30.0, delay: float = 0.0,
) -> tuple[httpx.Response, list[dict[str, Any]], Path]:  # fmt: skip
    """One request to a routed proxy (recording, with ``--log``): its answer, the log's lines, the store."""
    with ProviderDouble(delay=delay) as double:
        double.script(Text("Hello."))
        routes = _routes(tmp, monkeypatch, base_url or double.base_url_for("kimi"))
        with proxied(double, tmp, routes=routes, timeout=timeout) as (proxy, _lines, db):
            got = httpx.post(proxy.url + path, content=jsonenc.encode(body), timeout=30)
            assert proxy.drain()
        assert not double.requests or delay  # nothing reached the upstream, but what timed out
    lines = [jsonenc.loads(x) for x in (tmp / "proxy.log").read_text(encoding="utf-8").splitlines()]
    return got, lines, db


def _one_refusal(lines: list[dict[str, Any]], status: int, says: str, route: str = ROUTE) -> dict[str, Any]:
    assert len(lines) == 1, lines
    line = lines[0]
    assert (line["status"], line["route"], line["vessel"]) == (status, route, "kimi"), line
    assert says in line["refused"], line
    assert line["conversation"] is None and line["reply"] is None  # logged, not recorded
    return line


def test_a_fault_of_the_routed_paths_own_leaves_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolreplay._proxy.translate as translate

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the endpoint's template is broken")

    monkeypatch.setattr(translate, "prepare", broken)  # the vessel's request is prepared there
    got, lines, _db = _logged(tmp_path, monkeypatch, "/v1/messages", {**ASK, "messages": HELLO})
    assert got.status_code == 500
    line = _one_refusal(lines, 500, "RuntimeError: the endpoint's template is broken")
    assert line["model"] == "claude-sonnet-4-5" and line["path"] == "/v1/messages"


def test_a_body_that_cannot_be_translated_leaves_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {**ASK, "messages": [{"role": "robot", "content": "hello"}]}
    got, lines, db = _logged(tmp_path, monkeypatch, "/v1/messages", body)
    assert got.status_code == 400 and "cannot translate" in got.json()["error"]["message"]
    _one_refusal(lines, 400, f"{ROUTE}: cannot translate: anthropic request: messages[0].role is 'robot'")
    kept = open_store(str(db))
    try:
        assert kept.list_conversations() == []
    finally:
        kept.close()


def test_an_earlier_answer_the_proxy_does_not_hold_leaves_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {"model": "gpt-5", "previous_response_id": "resp_never_given", "input": "hello"}
    got, lines, _db = _logged(tmp_path, monkeypatch, "/v1/responses", body)
    assert got.status_code == 400 and got.json()["error"]["code"] == "previous_response_not_found"
    says = "Previous response with id 'resp_never_given' not found."
    _one_refusal(lines, 400, says, "gpt-* -> kimi (kimi-k2-thinking)")


@pytest.mark.parametrize("fault", ["unreachable", "slow"])
def test_an_upstream_that_does_not_answer_leaves_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    if fault == "unreachable":
        kw: dict[str, Any] = {"base_url": f"http://127.0.0.1:{_closed_port()}/v1"}
    else:
        kw = {"timeout": 0.3, "delay": 1.5}
    got, lines, _db = _logged(tmp_path, monkeypatch, "/v1/messages", {**ASK, "messages": HELLO}, **kw)
    status = 502 if fault == "unreachable" else 504
    assert got.status_code == status
    _one_refusal(lines, status, "cannot reach" if fault == "unreachable" else "did not answer in time")


def test_a_routed_token_count_leaves_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    got, lines, _db = _logged(tmp_path, monkeypatch, "/v1/messages/count_tokens", {**ASK, "messages": HELLO})
    assert got.status_code == 200 and got.json()["input_tokens"] > 0
    assert len(lines) == 1 and (lines[0]["status"], lines[0]["route"]) == (200, ROUTE)
    assert "refused" not in lines[0] and lines[0]["path"] == "/v1/messages/count_tokens"

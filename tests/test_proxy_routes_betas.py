"""The agent's ``anthropic-beta`` flags on a routed Anthropic vessel (design 56): Claude Code's captured
request (``context_management`` in its body, ``context-management-2025-06-27`` among its flags) routed to
an Anthropic vessel keeps its flags, which the body's field needs (Anthropic refuses the field without
them, as the double does, in Anthropic's words); routed to another wire, the field and the flags are
named in the notes and go nowhere. The agent's key never goes on, nor a flag about its credentials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

from helpers_common import HTTP
from proxy_helpers import proxied
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.model_routes import parse_route
from toolreplay.testing import ProviderDouble, Text

AGENTS = Path(__file__).resolve().parent / "data" / "agents"
AGENT_KEY = "sk-ant-agent-own-key-0123456789abcdef"
VESSEL_KEY = "sk-ant-vessel-key-0123456789"
#: what an agent's headers carry that is not the request's own (the connection's, the body's size)
_NOT_SENT = {"host", "content-length", "connection", "accept-encoding"}


def _claude_code() -> tuple[dict[str, str], bytes]:
    """Claude Code's first captured request: its headers (the agent's own key) and body."""
    first = json.loads((AGENTS / "claude.json").read_text(encoding="utf-8"))["requests"][0]
    headers = {k: v for k, v in first["headers"].items() if k not in _NOT_SENT}
    body = jsonenc.loads(first["body_text"])
    assert "context_management" in body and "context-management-2025-06-27" in headers["anthropic-beta"]
    return headers | {"x-api-key": AGENT_KEY}, jsonenc.encode(body | {"stream": False})


def _routed(
    tmp: Path, monkeypatch: pytest.MonkeyPatch, route: str, headers: dict[str, str], body: bytes
) -> tuple[Any, list[Any], list[dict[str, Any]]]:
    with ProviderDouble() as double:
        f = tmp / "vessels.toml"
        f.write_text(
            f'[vessels.anthropic]\nbase_url = "{double.base_url_for("anthropic")}"\n'
            f'[vessels.kimi]\nbase_url = "{double.base_url_for("kimi")}"\n',
            encoding="utf-8",
        )
        monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
        monkeypatch.setenv("ANTHROPIC_API_KEY", VESSEL_KEY)
        monkeypatch.setenv("MOONSHOT_API_KEY", "sk-moonshot-vessel-key-9876543210")
        double.script(Text("Hello."))
        with proxied(double, tmp, routes=(parse_route(route),)) as (proxy, _lines, _db):
            got = HTTP.post(proxy.url + "/v1/messages?beta=true", content=body, headers=headers, timeout=30)
            assert proxy.drain()
        sent = list(double.requests)
    log = [jsonenc.loads(x) for x in (tmp / "proxy.log").read_text(encoding="utf-8").splitlines()]
    return got, sent, log


def test_the_double_refuses_a_beta_field_without_its_flag_in_anthropics_words() -> None:
    headers, body = _claude_code()
    plain = {k: v for k, v in headers.items() if k != "anthropic-beta"}
    with ProviderDouble() as double:
        double.script(Text("Hello."))
        taken = HTTP.post(double.url + "/v1/messages", content=body, headers=headers, timeout=30)
        refused = HTTP.post(double.url + "/v1/messages", content=body, headers=plain, timeout=30)
    assert taken.status_code == 200, taken.text
    assert refused.status_code == 400
    assert refused.json()["error"] == {
        "type": "invalid_request_error",
        "message": "context_management: Extra inputs are not permitted",
    }


def test_claude_codes_flags_go_on_to_a_routed_anthropic_vessel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers, body = _claude_code()
    headers["anthropic-beta"] += ",oauth-2025-04-20"  # a flag about the agent's own credentials
    got, sent, log = _routed(tmp_path, monkeypatch, "claude-*=anthropic:claude-sonnet-4-5", headers, body)
    assert got.status_code == 200, got.text
    (up,) = sent
    assert up.status == 200, up.rejected
    assert "context_management" in json.loads(up.raw)
    flags = up.headers["anthropic-beta"].split(",")
    asked = headers["anthropic-beta"].split(",")
    assert flags == [f for f in asked if not f.startswith("oauth-")]
    assert up.headers["x-api-key"] == "[redacted]" and AGENT_KEY.encode() not in up.raw
    assert any("oauth-2025-04-20" in n and "credentials" in n for n in log[-1]["notes"]), log[-1]["notes"]


def test_a_value_that_is_not_a_flag_never_goes_on_nor_into_the_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers, body = _claude_code()
    headers["anthropic-beta"] += f",{AGENT_KEY.upper()}"
    got, sent, log = _routed(tmp_path, monkeypatch, "claude-*=anthropic:claude-sonnet-4-5", headers, body)
    assert got.status_code == 200 and sent[0].status == 200
    assert AGENT_KEY.upper() not in sent[0].headers["anthropic-beta"]
    assert AGENT_KEY.upper() not in json.dumps(log)
    assert any("not a flag" in n for n in log[-1]["notes"])


def test_on_another_wire_the_beta_field_and_flags_are_named_not_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers, body = _claude_code()
    got, sent, log = _routed(tmp_path, monkeypatch, "claude-*=kimi:kimi-k2-thinking", headers, body)
    assert got.status_code == 200, got.text
    (up,) = sent
    assert up.status == 200 and "anthropic-beta" not in up.headers
    assert b"context_management" not in up.raw
    notes = log[-1]["notes"]
    assert any("context_management" in n for n in notes), notes
    assert any("anthropic-beta" in n and "context-management-2025-06-27" in n for n in notes), notes

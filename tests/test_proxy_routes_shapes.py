"""What a routed answer is written in (design 51, 56): the framing the agent asked for (a Gemini stream as
SSE or as one JSON array) and the usage in the agent's wire's own fields, the cache's counts included
where the wire has a place for them and named where it has none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

import httpx

from proxy_helpers import CASES, post, proxied
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.model_routes import parse_route
from toolreplay.model import Usage
from toolreplay.testing import ProviderDouble, Text
from wire_helpers import http_of

KIMI_KEY = "sk-moonshot-vessel-key-9876543210"


def _gemini_ask() -> bytes:
    decl = {"functionDeclarations": [{"name": "coop", "parameters": {"type": "object"}}]}
    return jsonenc.encode(
        {"contents": [{"role": "user", "parts": [{"text": "close todo 12"}]}], "tools": [decl]}
    )


@pytest.mark.parametrize("alt", ["?alt=sse", ""], ids=["sse", "json-array"])
def test_a_routed_gemini_stream_is_framed_as_the_agent_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alt: str
) -> None:
    """``streamGenerateContent?alt=sse`` (google-genai, Gemini CLI) is SSE; without ``alt=sse`` (the REST
    default) Gemini streams one JSON array of the same chunks."""
    with ProviderDouble() as double:
        f = tmp_path / "vessels.toml"
        f.write_text(f'[vessels.kimi]\nbase_url = "{double.base_url_for("kimi")}"\n', encoding="utf-8")
        monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
        monkeypatch.setenv("MOONSHOT_API_KEY", KIMI_KEY)
        double.script(Text("Closed todo 12."))
        routes = (parse_route("gemini:*=kimi:kimi-k2-thinking"),)
        with proxied(double, tmp_path, routes=routes) as (proxy, _lines, _db):
            url = proxy.url + "/v1beta/models/gemini-2.5-flash:streamGenerateContent" + alt
            got = httpx.post(url, content=_gemini_ask(), headers={"x-goog-api-key": "k"}, timeout=30)
            assert proxy.drain()
    assert got.status_code == 200
    if alt:
        assert got.headers["content-type"].startswith("text/event-stream")
        chunks = [jsonenc.loads(line[6:]) for line in got.text.splitlines() if line.startswith("data: ")]
    else:
        assert got.headers["content-type"].startswith("application/json")
        chunks = jsonenc.loads(got.text)  # the whole body is one JSON array
        assert isinstance(chunks, list)
    words = "".join(p.get("text", "") for c in chunks for p in c["candidates"][0]["content"].get("parts", []))
    assert words == "Closed todo 12."
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP" and "usageMetadata" in chunks[-1]


USAGE = Usage(input_tokens=1000, output_tokens=7, cached_tokens=600, cache_write_tokens=300)
#: Each agent wire's usage, as its answer (whole, or the stream's last usage) gives it.
WANTED: dict[str, Any] = {
    "openai-chat": {
        "prompt_tokens": 1000, "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300},
    },
    "openai-responses": {
        "input_tokens": 1000, "output_tokens": 7,
        "input_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300},
    },
    "gemini": {"promptTokenCount": 1000, "candidatesTokenCount": 7, "cachedContentTokenCount": 600},
    "ollama": {"prompt_eval_count": 1000, "eval_count": 7},
}  # fmt: skip
#: What the agent's wire has no place for, named in the log line's notes.
NAMED = {"gemini": ["cache_write"], "ollama": ["cached", "cache_write"]}


def _usage_of(wire: str, text: str, streamed: bool) -> dict[str, Any]:
    if not streamed:
        body = jsonenc.loads(text)
        return {"gemini": body.get("usageMetadata"), "ollama": body}.get(wire, body.get("usage")) or {}
    events = (
        [jsonenc.loads(line) for line in text.splitlines() if line.strip()]
        if http_of(wire).framing == "ndjson"
        else [jsonenc.loads(x[6:]) for x in text.splitlines() if x.startswith("data: {")]
    )
    found: dict[str, Any] = {}
    for e in events:
        got = {
            "openai-chat": e.get("usage"), "gemini": e.get("usageMetadata"),
            "openai-responses": (e.get("response") or {}).get("usage"),
            "ollama": e if e.get("done") else None,
        }[wire]  # fmt: skip
        found = got or found
    return found


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", list(WANTED))
def test_anthropics_cache_counts_reach_every_agent_wire_where_it_has_a_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wire: str, streamed: bool
) -> None:
    case = next(c for c in CASES if c.wire == wire)
    with ProviderDouble() as double:
        f = tmp_path / "vessels.toml"
        f.write_text(f'[vessels.anthropic]\nbase_url = "{double.base_url_for("anthropic")}"\n')
        monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-vessel-key-0123456789")
        double.script(Text("Closed todo 12.", usage=USAGE))
        routes = (parse_route(f"{wire}:*=anthropic:claude-sonnet-4-5"),)
        with proxied(double, tmp_path, routes=routes) as (proxy, _lines, _db):
            got = post(proxy.url, case, case.first(streamed), streamed)
            assert proxy.drain()
        assert [r.status for r in double.requests] == [200]
    assert got.status_code == 200, got.text
    usage = _usage_of(wire, got.text, streamed)
    for key, value in WANTED[wire].items():
        assert (
            usage.get(key) == value
            if not isinstance(value, dict)
            else {k: usage.get(key, {}).get(k) for k in value} == value
        ), (key, usage)
    log = jsonenc.loads((tmp_path / "proxy.log").read_text(encoding="utf-8").splitlines()[-1])
    for word in NAMED.get(wire, []):
        assert any(word.replace("_", " ") in n or word in n for n in log["notes"]), (word, log["notes"])

"""What the proxy tests share: a proxy in front of a provider double, and each wire's requests."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from helpers_common import HTTP
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.serve import Running, start
from toolreplay.testing import ProviderDouble
from wire_helpers import wire_path

KEY = "sk-proxy-test-key-0123456789abcdef"
TOOLS_ANTHROPIC = [{"name": "coop", "description": "the board", "input_schema": {"type": "object"}}]
TOOL_OPENAI = {"type": "function", "function": {"name": "coop", "parameters": {"type": "object"}}}


def served_upstreams(double: ProviderDouble) -> dict[str, str]:
    """Every served wire's base URL on the double's plain paths (the provider's own rules)."""
    from toolreplay.wires import get_wire

    wires = ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama")
    return {w: double.url + get_wire(w).http.base_suffix for w in wires}  # type: ignore[union-attr]


def kimi_vessel(double: ProviderDouble, tmp_path: Path, monkeypatch: Any) -> None:
    """The ``kimi`` vessel pointed at the double's Kimi paths (a ``vessels.toml`` in ``tmp_path``), with
    a Moonshot key in the environment."""
    vessels = tmp_path / "vessels.toml"
    vessels.write_text(f'[vessels.kimi]\nbase_url = "{double.base_url_for("kimi")}"\n', encoding="utf-8")
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(vessels))
    monkeypatch.setenv("MOONSHOT_API_KEY", "sk-moonshot-test-0000")


@contextmanager
def proxied(
    double: ProviderDouble, tmp: Path, *, record: bool = True, log: bool = True, **kw: Any
) -> Iterator[tuple[Running, list[str], Path]]:
    """A proxy on 127.0.0.1 in front of ``double``, its console lines and its store's path."""
    lines: list[str] = []
    db = tmp / "proxy.db"
    cfg = ProxyConfig(
        upstreams=served_upstreams(double),
        db=str(db),
        record=record,
        log=tmp / "proxy.log" if log else None,
        **kw,
    )
    running = start(cfg, say=lines.append)
    try:
        yield running, lines, db
    finally:
        running.close()


@dataclass(frozen=True)
class WireCase:
    """One wire's first request, its follow-up built from the whole answer, and how to post them."""

    wire: str
    path: Callable[[bool], str]
    headers: Mapping[str, str]
    first: Callable[[bool], dict[str, Any]]
    follow: Callable[[dict[str, Any], bool], dict[str, Any]]


def _anthropic_follow(answer: dict[str, Any], stream: bool) -> dict[str, Any]:
    call = next(b for b in answer["content"] if b["type"] == "tool_use")
    body = _anthropic_first(stream)
    body["messages"] += [
        {"role": "assistant", "content": answer["content"]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "status: closed"}],
        },
    ]
    return body


def _anthropic_first(stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 200, "tools": TOOLS_ANTHROPIC}
    body["messages"] = [{"role": "user", "content": "close todo 12"}]
    return body | ({"stream": True} if stream else {})


def _chat_first(stream: bool) -> dict[str, Any]:
    body = {
        "model": "gpt-4.1",
        "tools": [TOOL_OPENAI],
        "messages": [{"role": "user", "content": "close todo 12"}],
    }
    return body | ({"stream": True, "stream_options": {"include_usage": True}} if stream else {})


def _chat_follow(answer: dict[str, Any], stream: bool) -> dict[str, Any]:
    message = answer["choices"][0]["message"]
    said = {"role": "assistant", "content": message.get("content"), "tool_calls": message["tool_calls"]}
    body = _chat_first(stream)
    tool = {"role": "tool", "tool_call_id": message["tool_calls"][0]["id"], "content": "status: closed"}
    body["messages"] += [said, tool]
    return body


def _responses_first(stream: bool) -> dict[str, Any]:
    tool = {"type": "function", "name": "coop", "parameters": {"type": "object"}}
    body = {"model": "gpt-5", "tools": [tool], "input": [{"role": "user", "content": "close todo 12"}]}
    return body | ({"stream": True} if stream else {})


def _responses_follow(answer: dict[str, Any], stream: bool) -> dict[str, Any]:
    body = _responses_first(stream)
    call = next(i for i in answer["output"] if i["type"] == "function_call")
    out = {"type": "function_call_output", "call_id": call["call_id"], "output": "status: closed"}
    body["input"] += [*answer["output"], out]
    return body


def _gemini_first(stream: bool) -> dict[str, Any]:
    decl = {"functionDeclarations": [{"name": "coop", "parameters": {"type": "object"}}]}
    return {"contents": [{"role": "user", "parts": [{"text": "close todo 12"}]}], "tools": [decl]}


def _gemini_follow(answer: dict[str, Any], stream: bool) -> dict[str, Any]:
    body = _gemini_first(stream)
    said = answer["candidates"][0]["content"]
    reply = {"functionResponse": {"name": "coop", "response": {"result": "status: closed"}}}
    body["contents"] += [said, {"role": "user", "parts": [reply]}]
    return body


def _ollama_first(stream: bool) -> dict[str, Any]:
    tools = [TOOL_OPENAI]
    return {
        "model": "qwen3",
        "stream": stream,
        "tools": tools,
        "messages": [{"role": "user", "content": "close todo 12"}],
    }


def _ollama_follow(answer: dict[str, Any], stream: bool) -> dict[str, Any]:
    body = _ollama_first(stream)
    body["messages"] += [
        answer["message"],
        {"role": "tool", "content": "status: closed", "tool_name": "coop"},
    ]
    return body


def _path(wire: str, model: str = "") -> Callable[[bool], str]:
    """The wire's request path from the server root, streamed or whole (the model where the URL names it)."""
    return lambda stream: wire_path(wire, model, stream)


_ANTHROPIC_HEADERS = {
    "x-api-key": KEY,
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "fine-grained-tool-streaming-2025-05-14",
}
_BEARER = {"authorization": f"Bearer {KEY}"}
CASES = (
    WireCase(
        "anthropic",
        lambda s: _path("anthropic")(s) + "?beta=true",  # as Anthropic's SDK asks it
        _ANTHROPIC_HEADERS,
        _anthropic_first,
        _anthropic_follow,
    ),
    WireCase("openai-chat", _path("openai-chat"), _BEARER, _chat_first, _chat_follow),
    WireCase("openai-responses", _path("openai-responses"), _BEARER, _responses_first, _responses_follow),
    WireCase(
        "gemini", _path("gemini", "gemini-2.5-flash"), {"x-goog-api-key": KEY}, _gemini_first, _gemini_follow
    ),
    WireCase("ollama", _path("ollama"), _BEARER, _ollama_first, _ollama_follow),
)


def post(base: str, case: WireCase, body: dict[str, Any], stream: bool, **headers: str) -> httpx.Response:
    data = jsonenc.encode(body)
    sent = {"content-type": "application/json", "user-agent": "proxy-test/1", **case.headers, **headers}
    return HTTP.post(base + case.path(stream), content=data, headers=sent, timeout=30)


__all__ = ["CASES", "KEY", "WireCase", "post", "proxied", "served_upstreams"]

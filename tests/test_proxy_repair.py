"""``--repair`` against the doubles, which refuse with the provider's own text: a Chat client that drops
``reasoning_content`` before a Kimi thinking model fails as Moonshot fails it without the repair, and the
audit names the cause; with it, the reasoning the store kept goes back as the smallest edit."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers_common import loopback_server

pytest.importorskip("starlette")

from helpers_common import HTTP
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.repair import element_starts, splice
from toolreplay._proxy.serve import start
from toolreplay.testing import Call, Calls, ProviderDouble, Text
from toolreplay.wires.contract import Insertion

TOOL = {"type": "function", "function": {"name": "coop", "parameters": {"type": "object"}}}


def _first() -> dict[str, Any]:
    return {"model": "kimi-k2-thinking", "tools": [TOOL], "messages": [{"role": "user", "content": "list"}]}


def _exchange(repair: bool, tmp: Path) -> tuple[httpx.Response, bytes, bytes, list[str]]:
    lines: list[str] = []
    with ProviderDouble() as double:
        double.script(
            Calls([Call("coop", {"action": "list"})], reasoning="The board first."), Text("Listed.")
        )
        cfg = ProxyConfig(
            upstreams={"openai-chat": double.base_url_for("kimi")}, db=str(tmp / "r.db"), repair=repair
        )
        with start(cfg, say=lines.append) as proxy:
            url = proxy.url + "/v1/chat/completions"
            answer = HTTP.post(url, content=jsonenc.encode(_first())).json()
            message = answer["choices"][0]["message"]
            assert message["reasoning_content"] == "The board first."
            follow = _first()
            # the agent (a router, a client that knows no reasoning_content) drops it
            said = {"role": "assistant", "content": message["content"], "tool_calls": message["tool_calls"]}
            tool = {"role": "tool", "tool_call_id": message["tool_calls"][0]["id"], "content": "12 open"}
            follow["messages"] += [said, tool]
            sent = jsonenc.encode(follow)
            got = HTTP.post(url, content=sent)
            assert proxy.drain()
        return got, sent, double.requests[-1].raw, lines


def test_without_repair_the_request_fails_as_moonshot_fails_it_and_the_audit_says_why(tmp_path: Path) -> None:
    got, sent, reached, lines = _exchange(False, tmp_path)
    assert got.status_code == 400
    assert "reasoning_content is missing in assistant tool call message at index 1" in got.text
    assert reached == sent
    assert any("were dropped" in line for line in lines)


def test_with_repair_the_reasoning_goes_back_as_the_smallest_edit(tmp_path: Path) -> None:
    got, sent, reached, lines = _exchange(True, tmp_path)
    assert got.status_code == 200, got.text
    added = b'"reasoning_content":"The board first.",'
    at = reached.index(added)
    assert reached[:at] + reached[at + len(added) :] == sent  # every other byte as the agent sent it
    assert any("[repair]" in line and "reasoning_content put back" in line for line in lines)


def test_splice_inserts_after_each_elements_brace_and_nowhere_else() -> None:
    raw = b'{"messages": [ {"a": "},{"} , 7, {"b": [1, {"c": 2}]}], "x": {"messages": [{}]}}'
    starts = element_starts(raw, "messages")
    assert [raw[s : s + 1] for s in starts] == [b"{", b"7", b"{"]
    out = splice(
        raw, starts, [Insertion(2, b'"n":1,', ""), Insertion(1, b"skipped", ""), Insertion(0, b'"m":0,', "")]
    )
    assert jsonenc.loads(out)["messages"] == [{"m": 0, "a": "},{"}, 7, {"n": 1, "b": [1, {"c": 2}]}]


def _gemini_exchange(repair: bool, tmp: Path) -> tuple[httpx.Response, bytes, bytes, list[str]]:
    lines: list[str] = []
    decl = {"functionDeclarations": [{"name": "coop", "parameters": {"type": "object"}}]}
    first = {"contents": [{"role": "user", "parts": [{"text": "list"}]}], "tools": [decl]}
    with ProviderDouble() as double:
        double.script(Calls([Call("coop", {"action": "list"})]), Text("Listed."))
        cfg = ProxyConfig(upstreams={"gemini": double.url + "/v1beta"}, db=str(tmp / "g.db"), repair=repair)
        with start(cfg, say=lines.append) as proxy:
            url = proxy.url + "/v1beta/models/gemini-3-pro-preview:generateContent"
            answer = HTTP.post(url, content=jsonenc.encode(first)).json()
            part = answer["candidates"][0]["content"]["parts"][0]
            assert part["thoughtSignature"]
            follow = dict(first)
            dropped = {"role": "model", "parts": [{"functionCall": part["functionCall"]}]}  # no signature
            reply = {"functionResponse": {"name": "coop", "response": {"result": "12 open"}}}
            follow["contents"] = [*first["contents"], dropped, {"role": "user", "parts": [reply]}]
            sent = jsonenc.encode(follow)
            got = HTTP.post(url, content=sent)
            assert proxy.drain()
        return got, sent, double.requests[-1].raw, lines


@pytest.mark.slow
def test_a_gemini_signature_the_agent_dropped_fails_without_repair_and_goes_back_with_it(
    tmp_path: Path,
) -> None:
    got, sent, reached, lines = _gemini_exchange(False, tmp_path / "off")
    assert got.status_code == 400 and "missing a thought_signature in functionCall parts" in got.text
    assert reached == sent and any("were dropped" in line for line in lines)
    got, sent, reached, lines = _gemini_exchange(True, tmp_path / "on")
    assert got.status_code == 200, got.text
    at = reached.index(b'"thoughtSignature":')
    end = reached.index(b",", at) + 1
    assert reached[:at] + reached[end:] == sent
    assert any("[repair]" in line and "thoughtSignature put back on coop" in line for line in lines)


_HELD_STREAM = [
    {"delta": {"role": "assistant", "reasoning_content": "The board first."}, "finish_reason": None},
    {
        "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                  "function": {"name": "coop", "arguments": '{"action":"list"}'}}]},
        "finish_reason": None,
    },
    {"delta": {}, "finish_reason": "tool_calls"},
]  # fmt: skip


@contextmanager
def _holding_upstream(hold: float) -> Iterator[tuple[str, list[bytes]]]:
    """A Chat upstream whose first answer is a stream that stays open ``hold`` seconds after its final
    ``[DONE]`` (a provider may close late); every later request is answered at once. Keeps the bodies."""
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers["content-length"])))
            self.send_response(200)
            if len(bodies) > 1:
                answer = b'{"id":"c2","object":"chat.completion","model":"kimi-k2-thinking","choices":[]}'
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                return
            self.send_header("content-type", "text/event-stream")
            self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
            for choice in _HELD_STREAM:
                chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "kimi-k2-thinking",
                         "choices": [{"index": 0, **choice}]}  # fmt: skip
                self.wfile.write(b"data: " + jsonenc.encode(chunk) + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            time.sleep(hold)

        def log_message(self, *args: object) -> None:
            return None

    with loopback_server(Handler) as base:
        yield f"{base}/v1", bodies


@pytest.mark.slow
def test_a_repair_waits_for_the_answer_the_agent_already_has_whole(tmp_path: Path) -> None:
    """The agent reads the stream's final ``[DONE]`` and sends its next request while the upstream has
    not closed the stream yet (so the exchange is not handed to the recorder yet): the repair waits for
    that answer to be stored, and puts its reasoning back."""
    lines: list[str] = []
    with _holding_upstream(0.5) as (base, bodies):
        cfg = ProxyConfig(upstreams={"openai-chat": base}, db=str(tmp_path / "r.db"), repair=True)
        with start(cfg, say=lines.append) as proxy:
            url = proxy.url + "/v1/chat/completions"
            first = {**_first(), "stream": True}
            with HTTP.stream("POST", url, content=jsonenc.encode(first)) as streamed:
                for line in streamed.iter_lines():
                    if line == "data: [DONE]":
                        break
                call = _HELD_STREAM[1]["delta"]["tool_calls"][0]  # type: ignore[index]
                said = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{k: v for k, v in call.items() if k != "index"}],
                }
                tool = {"role": "tool", "tool_call_id": "call_1", "content": "12 open"}
                follow = {**first, "messages": [*first["messages"], said, tool]}
                got = HTTP.post(url, content=jsonenc.encode(follow))  # the first stream still open
            assert proxy.drain()
    assert got.status_code == 200, got.text
    assert b'"reasoning_content":"The board first.",' in bodies[1]
    assert any("[repair]" in line and "reasoning_content put back" in line for line in lines), lines

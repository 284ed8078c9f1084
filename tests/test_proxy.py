"""toolreplay proxy through a real uvicorn server on 127.0.0.1 in front of the provider doubles:
pass-through byte for byte on every wire, whole and streamed; every exchange recorded complete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from helpers_common import HTTP
from proxy_helpers import CASES, KEY, WireCase, post, proxied
from toolreplay import _jsonenc as jsonenc
from toolreplay._store import open_store
from toolreplay.testing import Call, Calls, ProviderDouble, Text
from toolreplay.wires import get_wire

CLOSE = Calls(
    [Call("coop", {"action": "close", "id": 12})], text="Closing it.", reasoning="The user wants 12 closed."
)
IDS = [c.wire for c in CASES]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_pass_through_is_byte_identical(case: WireCase, stream: bool, tmp_path: Path) -> None:
    # the same request to two doubles scripted alike: one direct, one through the proxy
    body = case.first(stream)
    with ProviderDouble() as direct, ProviderDouble() as behind:
        direct.script(CLOSE)
        behind.script(CLOSE)
        with proxied(behind, tmp_path) as (proxy, _, _):
            via = post(proxy.url, case, body, stream)
        plain = post(direct.url, case, body, stream)
        assert via.status_code == plain.status_code == 200
        sent = jsonenc.encode(body)
        assert behind.requests[-1].raw == sent  # what the double got is what the client sent
        assert via.content == plain.content  # and what the client got is what the double sent
        got = behind.requests[-1].headers
        for name, value in case.headers.items():
            assert got[name] == ("[redacted]" if KEY in value else value)
        assert got["user-agent"] == "proxy-test/1"
        # the path as the agent asked it, query and all (Anthropic's SDK asks ``/v1/messages?beta=true``)
        assert behind.requests[-1].path == direct.requests[-1].path == case.path(stream)


def _thinks(wire: str, body: dict[str, Any]) -> bool:
    double = get_wire(wire).double
    assert double is not None
    return double().thinks(None, str(body.get("model", "")), body)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_two_steps_are_recorded_as_one_reply_with_its_call_answer_and_issuer(
    case: WireCase, tmp_path: Path
) -> None:
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, lines, db):
        double.script(CLOSE, Text("Closed todo 12."))
        first = post(proxy.url, case, case.first(False), False)
        assert first.status_code == 200, first.text
        second = post(proxy.url, case, case.follow(first.json(), True), True, **{"x-session-id": "sess-1"})
        assert second.status_code == 200, second.text
        assert proxy.drain()
        store = open_store(str(db))
        (conv,) = store.list_conversations()
        assert (
            conv.agent == "proxy-test/1" and conv.upstream is not None and conv.upstream.startswith(case.wire)
        )
        h = store.load(conv.id)
        store.close()
    user, reply = h.messages
    assert user.text == "close todo 12"
    (call,) = reply.tool_uses
    assert (call.name, call.input, call.answer) == ("coop", {"action": "close", "id": 12}, "status: closed")
    assert reply.text == "Closed todo 12." and reply.status == "complete"
    issuers = {s.issuer for s in reply.steps if s.issuer is not None}
    assert {(i.wire, i.host) for i in issuers} == {(case.wire, "127.0.0.1")}
    assert reply.meta is not None and reply.meta["usage"]["input_tokens"] > 0
    reasoning = [p for s in reply.steps for p in s.reasoning]
    asked = case.first(False)
    # as the wire's double says the model thinks (the Chat double's gpt-4.1 does not: design 32)
    if _thinks(case.wire, asked):
        assert reasoning and all(case.wire in (p.data or {}) for p in reasoning)  # kept for its issuer
    assert not [line for line in lines if "[audit]" in line or "[not recorded]" in line], lines


def test_the_key_is_never_stored_logged_or_printed(tmp_path: Path) -> None:
    case = CASES[0]
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, lines, _):
        double.script(CLOSE, Text("done"))
        first = post(proxy.url, case, case.first(False), False)
        post(proxy.url, case, case.follow(first.json(), False), False)
        refused = post(proxy.url, case, {"model": "x"}, False, **{"content-encoding": "gzip"})
        assert refused.status_code == 400 and KEY not in refused.text
        assert proxy.drain()
        assert double.requests[0].has_key()  # the key went to its own wire's upstream
    for path in tmp_path.iterdir():
        assert KEY.encode() not in path.read_bytes(), path.name
    assert not any(KEY in line for line in lines)
    logged = [jsonenc.loads(line) for line in (tmp_path / "proxy.log").read_text().splitlines()]
    assert [r["status"] for r in logged] == [200, 200, 400]  # the refused one logged, not recorded
    assert "not valid gzip" in logged[2]["refused"] and logged[2]["conversation"] is None
    assert all(r["wire"] == "anthropic" and r["added_ms"] >= 0 for r in logged)
    assert logged[1]["conversation"] == logged[0]["conversation"]


def test_probes_and_side_paths(tmp_path: Path) -> None:

    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, _, _):
        assert HTTP.head(proxy.url + "/").status_code == 200
        assert HTTP.get(proxy.url + "/api/hello").status_code == 200
        # a side path passes through to its wire's upstream as it is (the double has no /v1/models: 404)
        got = HTTP.get(proxy.url + "/v1/models", headers={"anthropic-version": "2023-06-01"})
        assert got.status_code == 404 and got.json() == {"error": {"message": "no route for GET /v1/models"}}
        ws = HTTP.get(proxy.url + "/v1/responses", headers={"upgrade": "websocket", "connection": "upgrade"})
        assert ws.status_code == 426 and ws.json()["error"]["message"].endswith("use HTTP")

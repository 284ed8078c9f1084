"""Gemini's REST stream on the pass-through recorder: ``:streamGenerateContent`` without ``alt=sse`` answers
one JSON array of the same chunks SSE carries (framing ``json-array``). Through a real proxy on 127.0.0.1
in front of the Gemini double, the exchange is recorded as with ``alt=sse``: the reply's words, its call,
its usage; an array cut off mid-way is recorded as the interrupted reply it is, what came before kept,
and the agent's array is ended with Gemini's error element (as an SSE stream is with its error event)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

from helpers_common import HTTP
from proxy_helpers import KEY, proxied
from toolreplay import _jsonenc as jsonenc
from toolreplay._history import History
from toolreplay._store import open_store
from toolreplay.testing import Call, Calls, CutStream, ProviderDouble, Text

PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
ASK = {
    "contents": [{"role": "user", "parts": [{"text": "close todo 12"}]}],
    "tools": [{"functionDeclarations": [{"name": "coop", "parameters": {"type": "object"}}]}],
}
CLOSE = Calls([Call("coop", {"action": "close", "id": 12})], text="Closing it now.")


def _recorded(tmp: Path, query: str, item: Any) -> tuple[bytes, History, list[dict[str, Any]]]:
    """One streamed request through the proxy: the bytes the agent got, the stored conversation, the log."""
    with ProviderDouble() as double, proxied(double, tmp) as (proxy, lines, db):
        double.script(item)
        got = HTTP.post(
            proxy.url + PATH + query, content=jsonenc.encode(ASK), timeout=30,
            headers={"x-goog-api-key": KEY, "content-type": "application/json"},
        )  # fmt: skip
        assert got.status_code == 200, got.text
        assert proxy.drain()
        assert not [line for line in lines if "[not recorded]" in line], lines
    store = open_store(str(db))
    try:
        (conv,) = store.list_conversations()
        h = store.load(conv.id)
    finally:
        store.close()
    log = [jsonenc.loads(x) for x in (tmp / "proxy.log").read_text(encoding="utf-8").splitlines()]
    return got.content, h, log


@pytest.mark.parametrize("query", ["?alt=sse", ""], ids=["sse", "json-array"])
def test_a_streamed_answer_is_recorded_whole_in_either_framing(tmp_path: Path, query: str) -> None:
    data, h, log = _recorded(tmp_path, query, CLOSE)
    if not query:  # the REST default: one JSON array of the chunks
        chunks = jsonenc.loads(data)
        assert isinstance(chunks, list) and len(chunks) > 1
    user, reply = h.messages
    assert user.text == "close todo 12"
    # a reply that called is in progress (its call waits for its answer), its words in its step
    assert reply.status == "in_progress" and [t.text for s in reply.steps for t in s.said] == [
        "Closing it now."
    ]
    (call,) = reply.tool_uses
    assert (call.name, call.input) == ("coop", {"action": "close", "id": 12})
    assert reply.meta is not None and reply.meta["usage"]["input_tokens"] > 0
    assert reply.meta["usage"]["output_tokens"] > 0
    assert log[-1]["stream"] is True and "cut" not in log[-1]


@pytest.mark.parametrize("query", ["?alt=sse", ""], ids=["sse", "json-array"])
def test_a_stream_cut_off_mid_way_is_recorded_as_interrupted(tmp_path: Path, query: str) -> None:
    cut = CutStream(after_events=2, then=Text("Closing todo 12 now, as asked."))
    data, h, log = _recorded(tmp_path, query, cut)
    if not query:  # the double left the array open: the proxy ends it with Gemini's error, then ``]``
        *chunks, error = jsonenc.loads(data)
        assert len(chunks) == 2 and error["error"]["status"] == "INTERNAL"
    _user, reply = h.messages
    assert reply.status == "interrupted" and reply.text and "Closing todo 12 now".startswith(reply.text)
    assert reply.meta is not None and reply.meta["interrupted"]
    assert log[-1]["cut"] == "the upstream's stream ended before its final event"


def test_an_array_cut_inside_an_element_yields_the_elements_before_it() -> None:
    from toolreplay._proxy.exchange import array_payloads

    whole = b'[{"a": [1, "]"]}\n,\r\n{"b": 2} ,{"c": {"d": 3}}]'
    assert [jsonenc.loads(p) for p in array_payloads(whole)] == [{"a": [1, "]"]}, {"b": 2}, {"c": {"d": 3}}]
    for cut, n in ((len(whole) - 1, 3), (len(whole) - 6, 2), (12, 0), (1, 0), (0, 0)):
        assert len(list(array_payloads(whole[:cut]))) == n, whole[:cut]
    assert list(array_payloads(b'{"not": "an array"}')) == []

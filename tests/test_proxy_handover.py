"""A recorded routed answer's exchange is handed over off the event loop once the answer is out (design
63): the agent has its answer's end without waiting for the record and the memory's entry, and the next
request waits for that hand-over before it asks the memory what it continues."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("anthropic")

import anthropic

from proxy_helpers import TOOLS_ANTHROPIC, kimi_vessel, served_upstreams
from toolreplay._proxy import worker
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.handover import HandOvers
from toolreplay._proxy.model_routes import parse_route
from toolreplay._proxy.recent import Recent
from toolreplay._proxy.serve import start
from toolreplay._store import open_store
from toolreplay.testing import Call, Calls, ProviderDouble, Text

ASK: dict[str, Any] = dict(model="claude-sonnet-4-5", max_tokens=1000, tools=TOOLS_ANTHROPIC)
#: How long the first hand-over is held up (longer than the agent takes to send its next request).
SLOW = 0.4


def _next(msgs: list[dict[str, Any]], msg: Any) -> list[dict[str, Any]]:
    said = {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]}
    call = next(b for b in msg.content if b.type == "tool_use")
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "ok"}]}
    return [*msgs, said, result]


@pytest.mark.slow
def test_the_answer_is_out_before_its_hand_over_and_the_next_request_waits_for_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(worker, "QUIET", 60.0)  # the recorder writes only when drained: the memory answers
    monkeypatch.setattr(worker, "MAX_WAIT", 120.0)
    remembered: list[tuple[str, float]] = []  # (thread, when the entry was in)
    remember = Recent.remember

    def slow(self: Recent, *args: Any) -> None:
        if not remembered:
            time.sleep(SLOW)  # the first hand-over held up past the agent's next request
        remember(self, *args)
        remembered.append((threading.current_thread().name, time.monotonic()))

    monkeypatch.setattr(Recent, "remember", slow)
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "close todo 12 and 13"}]
    with ProviderDouble() as double:
        kimi_vessel(double, tmp_path, monkeypatch)
        double.script(
            Calls([Call("coop", {"action": "close", "id": 12})]),
            Calls([Call("coop", {"action": "close", "id": 13})]),
            Text("Both closed."),
        )
        config = ProxyConfig(
            upstreams=served_upstreams(double), db=str(tmp_path / "t.db"),
            routes=(parse_route("claude-*=kimi:kimi-k2"),),
        )  # fmt: skip
        with start(config, say=lambda _: None) as proxy:
            client = anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-agent", max_retries=0)
            with client.messages.stream(**ASK, messages=msgs) as stream:
                first = stream.get_final_message()
            out = time.monotonic()  # the agent has the stream's end
            msgs = _next(msgs, first)
            msgs = _next(msgs, client.messages.create(**ASK, messages=msgs))  # waits for the first's
            client.messages.create(**ASK, messages=msgs)
            assert proxy.drain()
            translator = proxy.proxy.translator
            assert translator is not None and translator.recent is not None
            hits = translator.recent.hits
    assert [name for name, _ in remembered] == ["toolreplay-proxy-handover"] * 3
    assert out < remembered[0][1]  # the answer went out before its exchange was handed over
    assert hits == 2  # each next request found the exchange before it in the memory: it waited for it
    assert [r.status for r in double.requests] == [200, 200, 200], [r.rejected for r in double.requests]
    sent = double.requests[2].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "tool"]
    store = open_store(str(tmp_path / "t.db"))
    try:
        (conv,) = store.list_conversations()
        kept = [(m.role, m.text, len(m.tool_uses)) for m in store.load(conv.id).messages]
        assert kept == [("user", "close todo 12 and 13", 0), ("assistant", "Both closed.", 2)]  # one loop
    finally:
        store.close()


def test_a_hand_over_that_fails_is_logged_and_the_next_ones_go_on(caplog: pytest.LogCaptureFixture) -> None:
    handovers, done = HandOvers(), []

    def broken() -> None:
        raise KeyError("gone")

    handovers.later(broken)
    handovers.later(lambda: done.append(1))
    handovers.wait()
    assert done == [1]
    assert "an exchange was not handed over: KeyError" in caplog.text
    handovers.close()
    handovers.later(lambda: done.append(2))  # once the thread is gone: here and now
    assert done == [1, 2]


def test_a_request_waits_for_a_stuck_hand_over_no_longer_than_its_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handovers, release = HandOvers(), threading.Event()
    handovers.later(lambda: release.wait(5))
    try:
        assert handovers.wait(timeout=0.05) is False
        assert "hand-over is taking over 0.05 s; going on without it" in caplog.text
    finally:
        release.set()
    assert handovers.wait() is True
    handovers.close()

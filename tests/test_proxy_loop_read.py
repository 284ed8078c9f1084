"""A recorded routed request is translated on the event loop where nothing it needs can wait (design 61):
a new conversation, or one the memory continues, on SQLite (read on the loop's own connection); a
conversation to load from the store (a proxy restarted), and every request on PostgreSQL (a server's
round trip), on the translation thread. Either way the upstream is sent the same bytes and the store
keeps the same conversation."""

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
from store_fixtures import store_url  # noqa: F401
from toolreplay._proxy import worker
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.model_routes import parse_route
from toolreplay._proxy.serve import Running, start
from toolreplay._proxy.translated import Translator
from toolreplay._store import open_store
from toolreplay._store.sqlite import SQLiteStore
from toolreplay.testing import Call, Calls, ProviderDouble, Text

ASK: dict[str, Any] = dict(model="claude-sonnet-4-5", max_tokens=1000, tools=TOOLS_ANTHROPIC)
THREAD = "toolreplay-proxy-translate"


def _local(db: str) -> bool:
    return not db.startswith("postgresql://")


def _started(db: str, double: ProviderDouble) -> Running:
    routes = (parse_route("claude-*=kimi:kimi-k2"),)
    running = start(ProxyConfig(upstreams=served_upstreams(double), db=db, routes=routes), say=lambda _: None)
    translator = running.proxy.translator
    assert translator is not None
    deadline = time.monotonic() + 30
    while _local(db) and translator.continued.loop_store is None:  # opened on the translation thread
        assert time.monotonic() < deadline, "the loop's connection was never opened"
        time.sleep(0.01)
    return running


def _state_worked_out(proxy: Running) -> None:
    recent = proxy.proxy.translator.recent if proxy.proxy.translator is not None else None
    assert recent is not None
    deadline = time.monotonic() + 10
    while not (recent._pending and all(e._state is not None for e in recent._pending.values())):
        assert time.monotonic() < deadline, "the remembered exchange's state was not worked out"
        time.sleep(0.005)


def _next(msgs: list[dict[str, Any]], msg: Any) -> list[dict[str, Any]]:
    said = {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]}
    call = next((b for b in msg.content if b.type == "tool_use"), None)
    if call is None:
        return [*msgs, said, {"role": "user", "content": "and now?"}]
    return [
        *msgs,
        said,
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "ok"}]},
    ]


@pytest.mark.slow
def test_a_recorded_request_is_translated_on_the_loop_unless_the_store_could_make_it_wait(
    store_url: str,  # noqa: F811 - the fixture from store_fixtures
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # the recorder writes only when drained: the second request finds its exchange in the memory alone
    monkeypatch.setattr(worker, "QUIET", 60.0)
    monkeypatch.setattr(worker, "MAX_WAIT", 120.0)
    where: list[bool] = []  # per translation: on the translation thread
    made = Translator._made

    def spied(self: Translator, *args: Any) -> Any:
        where.append(threading.current_thread().name.startswith(THREAD))
        return made(self, *args)

    monkeypatch.setattr(Translator, "_made", spied)
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "close todo 12"}]
    with ProviderDouble() as double:
        kimi_vessel(double, tmp_path, monkeypatch)
        double.script(
            Calls([Call("coop", {"action": "close", "id": 12})]), Text("Closed."), Text("Still here.")
        )
        with _started(store_url, double) as proxy:
            client = anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-agent", max_retries=0)
            first = client.messages.create(**ASK, messages=msgs)  # a new conversation
            _state_worked_out(proxy)  # once the answer is out, before the next request asks for it
            msgs = _next(msgs, first)
            msgs = _next(msgs, client.messages.create(**ASK, messages=msgs))  # continued from the memory
            assert proxy.drain()
        with _started(store_url, double) as proxy:  # restarted: the conversation is loaded from the store
            client = anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-agent", max_retries=0)
            assert client.messages.create(**ASK, messages=msgs).content[0].type == "text"
            assert proxy.drain()
        assert [r.status for r in double.requests] == [200, 200, 200], [r.rejected for r in double.requests]
        third = double.requests[2].body["messages"]
        assert [m["role"] for m in third] == ["user", "assistant", "tool", "assistant", "user"]
    assert where == ([False, False, True] if _local(store_url) else [True, True, True])
    store = open_store(store_url)
    try:
        (conv,) = store.list_conversations()
        kept = [(m.role, m.text, len(m.tool_uses)) for m in store.load(conv.id).messages]
        assert kept == [
            ("user", "close todo 12", 0), ("assistant", "Closed.", 1),
            ("user", "and now?", 0), ("assistant", "Still here.", 0),
        ]  # fmt: skip
    finally:
        store.close()


def test_only_a_file_of_this_machine_is_read_by_the_loop(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "t.db") as on_disk, SQLiteStore(":memory:") as in_memory:
        assert on_disk.local and not in_memory.local  # another connection to ":memory:" is another database

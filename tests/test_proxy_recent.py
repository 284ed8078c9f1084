"""The routed path's memory (design 54): a routed conversation continued from memory, without waiting for
the recorder, stores exactly what it stores when every request is read back from the store, and sends the
upstream the same bytes (the reasoning the agent never saw, the tokens it sends back resolved alike); a
second session with the same opening is not taken for the first; a cut answer retried, a proxy restarted
on the same store, both continue from the store. On SQLite and on PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("anthropic")

import anthropic
from bench.proxy import free_port

from proxy_helpers import TOOLS_ANTHROPIC, served_upstreams
from store_fixtures import store_url, two_stores  # noqa: F401
from toolreplay._history import History
from toolreplay._proxy import worker
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.exchange import Exchange
from toolreplay._proxy.model_routes import parse_route
from toolreplay._proxy.recent import Recent
from toolreplay._proxy.serve import Running, start
from toolreplay._store import open_store
from toolreplay.testing import Call, Calls, CutStream, ProviderDouble, Text

KIMI_KEY = "sk-moonshot-vessel-key-9876543210"
ASK: dict[str, Any] = dict(
    model="claude-sonnet-4-5", max_tokens=4000, tools=TOOLS_ANTHROPIC,
    thinking={"type": "enabled", "budget_tokens": 1024},
)  # fmt: skip
SCRIPT = (
    Calls([Call("coop", {"action": "close", "id": 12})], reasoning="A: the user wants todo 12 closed."),
    Calls([Call("coop", {"action": "list"})], reasoning="B: list the board first."),
    Calls([Call("coop", {"action": "archive", "id": 12})], reasoning="A: then archive it."),
    CutStream(after_events=3, then=Text("B: an answer that never finishes")),
    Text("B: listed."),
    Text("A: closed and archived."),
    Text("A: still here after the restart."),
)


@contextmanager
def _proxy(db: str, double: ProviderDouble, remember: bool) -> Iterator[Running]:
    routes = (parse_route("claude-*=kimi:kimi-k2-thinking"),)
    cfg = ProxyConfig(upstreams=served_upstreams(double), db=db, routes=routes, remember=remember)
    with start(cfg, say=lambda _line: None) as running:
        yield running


def _client(url: str, session: str) -> Any:
    headers = {"x-claude-code-session-id": session}
    return anthropic.Anthropic(base_url=url, api_key="sk-ant-agent", max_retries=0, default_headers=headers)


def _after(msgs: list[dict[str, Any]], msg: Any, result: str = "done") -> list[dict[str, Any]]:
    """``msgs`` continued by the answer ``msg`` (its thinking blocks, with our tokens, sent back as the
    agent got them) and its call's result, or, for an answer of words, the user's next message."""
    said = {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]}
    call = next((b for b in msg.content if b.type == "tool_use"), None)
    if call is None:
        return [*msgs, said, {"role": "user", "content": "are you still there?"}]
    answer = [{"type": "tool_result", "tool_use_id": call.id, "content": result}]
    return [*msgs, said, {"role": "user", "content": answer}]


def _streamed(client: Any, msgs: list[dict[str, Any]]) -> Any:
    with client.messages.stream(**ASK, messages=msgs) as s:
        return s.get_final_message()


def _session(db: str, double: ProviderDouble, remember: bool) -> tuple[list[bytes], int]:
    """Two agents' sessions through one proxy, then the first again through a new proxy on the same
    store: what the upstream was sent, and how many requests the memory answered."""
    first = [{"role": "user", "content": "close todo 12"}]
    done = len(double.requests)
    double.script(*SCRIPT)
    with _proxy(db, double, remember) as proxy, _client(proxy.url, "sess-a") as a, _client(
        proxy.url, "sess-b"
    ) as b:  # fmt: skip
        a1 = _streamed(a, first)
        b1 = b.messages.create(**ASK, messages=first)  # the same opening, another session
        msgs_a = _after(first, a1, "closed")
        a2 = _streamed(a, msgs_a)
        msgs_b = _after(first, b1, "12 open")
        with pytest.raises(anthropic.APIError):
            _streamed(b, msgs_b)  # cut: stored interrupted, never seen
        b.messages.create(**ASK, messages=msgs_b)  # the agent asks again
        assert proxy.drain()  # written: the memory's entries now name their conversations
        msgs_a = _after(msgs_a, a2, "archived")
        a3 = a.messages.create(**ASK, messages=msgs_a)
        assert proxy.drain()
        hits = proxy.proxy.translator.recent.hits if proxy.proxy.translator.recent else 0
        if remember:
            _memory_is_the_store(proxy, db)
    with _proxy(db, double, remember) as proxy, _client(proxy.url, "sess-a") as a:
        a.messages.create(**ASK, messages=_after(msgs_a, a3))  # a restart: from the store
        assert proxy.drain()
    sent = double.requests[done:]
    assert [r.status for r in sent] == [200] * len(SCRIPT), [r.rejected for r in sent]
    return [r.raw for r in sent], hits


def _shape(h: History) -> tuple[Any, ...]:
    """A stored conversation but for its id and the times it was written at."""
    return tuple(replace(m, created_at=None) for m in h.messages)


def _memory_is_the_store(proxy: Running, db: str) -> None:
    """Each remembered conversation's state is what the store holds of it."""
    recent = proxy.proxy.translator.recent
    assert recent is not None
    store = open_store(db)
    try:
        entries = [e for held in recent._heads.values() for e in held or () if e.cid is not None]
        assert len(entries) == 2
        for e in entries:
            assert _shape(e.state()) == _shape(store.load(e.cid))
    finally:
        store.close()


def _dump(db: str) -> list[tuple[Any, ...]]:
    store = open_store(db)
    try:
        out = []
        for c in store.list_conversations():
            h = store.load(c.id)
            out.append((_shape(h), h.tools, tuple(store.load_usage(c.id))))
        return sorted(out, key=repr)
    finally:
        store.close()


@pytest.mark.slow
def test_a_routed_session_from_memory_stores_and_sends_what_it_does_from_the_store(
    two_stores: tuple[str, str],  # noqa: F811 - the fixture from store_fixtures
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the recorder writes only when asked to: every request before a drain finds its exchange unwritten
    monkeypatch.setattr(worker, "QUIET", 60.0)
    monkeypatch.setattr(worker, "MAX_WAIT", 120.0)
    known: list[bool] = []  # each time the recorder asked the memory for the conversation to extend
    asked = Recent.known
    monkeypatch.setattr(Recent, "known", lambda self, ex: known.append(bool(got := asked(self, ex))) or got)
    fast, slow = two_stores
    port = free_port()  # each run its own double (its ids and cache counts), on the same port
    vessels = tmp_path / "vessels.toml"
    vessels.write_text(
        f'[vessels.kimi]\nbase_url = "http://127.0.0.1:{port}/vessel/kimi/v1"\n', encoding="utf-8"
    )
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(vessels))
    monkeypatch.setenv("MOONSHOT_API_KEY", KIMI_KEY)
    with ProviderDouble(port=port) as double:
        assert double.base_url_for("kimi") == f"http://127.0.0.1:{port}/vessel/kimi/v1"
        sent_fast, hits = _session(fast, double, remember=True)
    with ProviderDouble(port=port) as double:
        sent_slow, none = _session(slow, double, remember=False)
    assert hits == 4 and none == 0  # a2, b2 and its retry (unwritten), a3 (written)
    assert known.count(True) == 4  # ... and the recorder extended the four without loading them back
    assert sent_fast == sent_slow
    assert b"A: the user wants todo 12 closed." in sent_fast[2]  # Kimi's own reasoning, from memory
    assert b"toolreplay.r1." not in b"".join(sent_fast)  # our tokens resolved, never forwarded
    assert b"A: the user wants" not in sent_fast[4] and b"B: list" not in sent_fast[5]
    stored = _dump(fast)
    assert stored == _dump(slow)
    assert len(stored) == 2  # one conversation per session


def _refused(n: int) -> Exchange:
    return Exchange(
        started=0.0, wire="anthropic", kind="refused", path="/v1/messages", model=None, upstream="",
        agent="", session=None, body=None, request_bytes=0, status=400, refused=f"test {n}",
    )  # fmt: skip


@pytest.mark.slow
def test_the_recorder_gives_way_to_a_request_in_hand_and_not_to_a_drain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker, "QUIET", 0.05)
    monkeypatch.setattr(worker, "MAX_WAIT", 30.0)
    handled: list[int] = []
    rec = worker.RecorderThread(None).start()
    rec.heard = lambda ex, _recorded: handled.append(int((ex.refused or "0").split()[-1]))
    try:
        with rec.serving():  # a request being translated
            rec.expect()
            rec.submit(_refused(1))
            time.sleep(0.3)
            assert handled == []  # it waits while the request is in hand
        time.sleep(0.3)
        assert handled == [1]  # ... and comes once it has been quiet for QUIET
        rec.expect()  # a request on its way: its exchange waits...
        with rec.serving():
            rec.expect()
            rec.submit(_refused(2))
            assert rec.settle(5.0)  # ... but not for someone waiting for the store
            assert handled == [1, 2]
        rec.submit(_refused(3))
        assert rec.drain(5.0) and handled == [1, 2, 3]
    finally:
        rec.close()


def _asked(n: int, history: History, heads: tuple[str, ...]) -> Exchange:
    return Exchange(
        started=0.0, wire="anthropic", kind="generate", path="/v1/messages", model="m", upstream="",
        agent="", session=None, body=None, request_bytes=0, status=200, history=history, heads=heads,
        ticket=n,
    )  # fmt: skip


def test_the_same_history_sent_again_and_again_is_left_to_the_store_and_not_kept() -> None:
    from toolreplay._history import Message
    from toolreplay._proxy.matching import prefix_heads
    from toolreplay._proxy.recent import CROWD, Base

    history = History("", (Message("u1", "user", "close todo 12"),))
    heads = tuple(prefix_heads(history.messages))
    recent = Recent()
    recent.remember(1, Base(None, 0, heads), _asked(1, history, heads))
    assert (hit := recent.find(heads, None)) is not None and hit.pending
    recent.remember(2, Base(None, 0, heads), _asked(2, history, heads))
    assert recent.find(heads, None) is None  # two conversations would have it: the store says which
    for n in range(3, 3 * CROWD):
        recent.remember(n, Base(None, 0, heads), _asked(n, history, heads))
    assert recent._heads[heads[-1]] is None  # not one entry more per request
    assert recent.find(heads, None) is None and recent.touched(heads)
    for n in range(1, 3 * CROWD):
        recent.heard(_asked(n, history, heads), None)
    assert not recent.touched(heads) and not recent._pending


def test_a_store_the_recorder_cannot_open_is_said_and_the_exchanges_still_count_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A recorder whose store fails to open used to die with its thread, and every drain and settle after
    it waited out its timeout while the queue grew; now it says why once and goes on, recording nothing."""
    from toolreplay.errors import StoreError

    monkeypatch.setattr(worker, "QUIET", 0.0)

    def cannot_open() -> Any:
        raise StoreError("proxy.db: not a usable SQLite database (database is locked)")

    with caplog.at_level("ERROR", logger="toolreplay.proxy"):
        rec = worker.RecorderThread(cannot_open).start()
        try:
            for n in (1, 2):
                rec.expect()  # as the proxy does when a request arrives
                rec.submit(_refused(n))
            assert rec.drain(5.0)  # the thread is alive and counted both off
        finally:
            rec.close()
    assert [r.getMessage() for r in caplog.records] == [
        "toolreplay proxy: nothing is recorded: proxy.db: not a usable SQLite database (database is locked)"
    ]


LOOP = (
    Calls([Call("coop", {"action": "list"})], reasoning="R1: list the board."),
    Calls([Call("coop", {"action": "close", "id": 12})], reasoning="R2: close it."),
    Text("done"),
)


def _foreign(db: str) -> None:
    """Another process writes, at the routed conversation's head, a conversation of its own: a copy of the
    routed one whose replies' reasoning is another (``R1`` -> ``Y1``), seen after it."""
    from toolreplay import _jsonenc as jsonenc
    from toolreplay.model import Reasoning, Step

    def other(step: Step) -> Step:
        def y(p: Any) -> Any:
            if not isinstance(p, Reasoning) or p.data is None:
                return p
            return replace(
                p, text=p.text.replace("R", "Y"), data=jsonenc.loads(jsonenc.dumps(p.data).replace("R", "Y"))
            )

        return replace(step, said=tuple(y(p) for p in step.said))

    store = open_store(db)
    try:
        (routed,) = store.list_conversations()
        held, written = store.load(routed.id), store.written(routed.id)
        assert written is not None
        messages = tuple(replace(m, steps=tuple(other(s) for s in m.steps)) for m in held.messages)
        store.import_history(History("proxy-foreign", messages, held.tools))
        store.set_origin("proxy-foreign", {"agent": "another proxy"}, session="sess-a", head=written[0])
    finally:
        store.close()


def _loop(db: str, double: ProviderDouble, remember: bool, foreign: str) -> tuple[list[bytes], int]:
    """A tool loop: the first answer written, the second not yet when the third request comes (its
    conversation stays at one head: the store finds it there, the memory knows where it goes); another
    process's write at that head meanwhile (``foreign``: before the second is written, or after)."""
    first = [{"role": "user", "content": "close todo 12"}]
    done = len(double.requests)
    double.script(*LOOP)
    with _proxy(db, double, remember) as proxy, _client(proxy.url, "sess-a") as a:
        r1 = a.messages.create(**ASK, messages=first)
        assert proxy.drain()
        msgs = _after(first, r1, "12 open")
        r2 = a.messages.create(**ASK, messages=msgs)
        if foreign:
            _foreign(db)
        if foreign == "written":
            assert proxy.drain()  # the second exchange goes into the foreign conversation, newer at the head
        a.messages.create(**ASK, messages=_after(msgs, r2, "closed"))
        assert proxy.drain()
        recent = proxy.proxy.translator.recent
        hits = recent.hits if recent is not None else 0
    sent = double.requests[done:]
    assert [r.status for r in sent] == [200] * len(LOOP), [r.rejected for r in sent]
    return [r.raw for r in sent], hits


@pytest.mark.slow
@pytest.mark.parametrize("foreign", ["", "pending", "written"])
def test_a_tool_loop_continues_from_memory_where_the_store_finds_its_conversation_and_not_another(
    two_stores: tuple[str, str],  # noqa: F811 - the fixture from store_fixtures
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    foreign: str,
) -> None:
    """The memory used to leave a request to the store (a wait for the recorder and a load) whenever the
    store found the conversation at the head of an exchange not written yet, which is every request of a
    tool loop faster than the recorder; now it answers there where what the store finds is the conversation
    that exchange goes into, and not where another writer put another conversation at that head, before
    the exchange was written or after (the recorder then writes it there: not as foreseen)."""
    monkeypatch.setattr(worker, "QUIET", 60.0)
    monkeypatch.setattr(worker, "MAX_WAIT", 120.0)
    port = free_port()
    vessels = tmp_path / "vessels.toml"
    vessels.write_text(
        f'[vessels.kimi]\nbase_url = "http://127.0.0.1:{port}/vessel/kimi/v1"\n', encoding="utf-8"
    )
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(vessels))
    monkeypatch.setenv("MOONSHOT_API_KEY", KIMI_KEY)
    fast, slow = two_stores
    with ProviderDouble(port=port) as double:
        sent_fast, hits = _loop(fast, double, True, foreign)
    with ProviderDouble(port=port) as double:
        sent_slow, _ = _loop(slow, double, False, foreign)
    assert sent_fast == sent_slow and _dump(fast) == _dump(slow)
    mark = b"Y1: list the board." if foreign else b"R1: list the board."
    assert mark in sent_fast[2] and b"R1: list" in sent_fast[1]  # the conversation the store finds
    assert hits == (1 if foreign else 2)  # the second request (written); the third (unwritten) alone


def test_an_unwritten_exchange_goes_into_the_conversation_its_request_continued() -> None:
    from toolreplay._history import Message
    from toolreplay._proxy.live_audit import LiveAudit
    from toolreplay._proxy.matching import Continued, prefix_heads
    from toolreplay._proxy.recent import Base
    from toolreplay._proxy.record import Recorded

    history = History("", (Message("u1", "user", "close todo 12"), Message("a1", "assistant", "")))
    heads = tuple(prefix_heads(history.messages))
    recent = Recent()
    recent.remember(1, Base(None, 0, heads), _asked(1, history, heads))  # a new conversation
    recent.heard(_asked(1, history, heads), Recorded("c1", None, LiveAudit(), True, heads[-1], None))
    hit = recent.find(heads, None)
    assert hit is not None and not hit.pending and recent.agrees(hit, Continued("c1", 2))
    recent.remember(2, hit.base(heads), _asked(2, history, heads))  # moves c1 on at the same head
    hit = recent.find(heads, None)
    assert hit is not None and hit.pending
    assert recent.agrees(hit, Continued("c1", 2)) and recent.agrees(hit, None)
    assert not recent.agrees(hit, Continued("another", 2))  # another writer's, at that head
    recent.remember(3, hit.base(heads), _asked(3, history, heads))
    hit3 = recent.find(heads, None)
    assert hit3 is not None and recent.agrees(hit3, Continued("c1", 2))
    # the second written elsewhere (another conversation newer at the head): it and what follows it are
    # not known to go into c1 any more
    recent.heard(
        _asked(2, history, heads), Recorded("another", None, LiveAudit(), False, heads[-1], heads[-1])
    )
    assert not recent.agrees(hit3, Continued("c1", 2)) and not recent.agrees(hit3, Continued("another", 2))


def test_an_unwritten_exchange_that_moves_its_conversation_on_is_not_taken_for_it_found_there() -> None:
    from toolreplay._history import Message
    from toolreplay._proxy.live_audit import LiveAudit
    from toolreplay._proxy.matching import Continued, prefix_heads
    from toolreplay._proxy.recent import Base
    from toolreplay._proxy.record import Recorded

    history = History("", (Message("u1", "user", "close todo 12"), Message("a1", "assistant", "")))
    heads = tuple(prefix_heads(history.messages))
    recent = Recent()
    recent.remember(1, Base(None, 0, heads), _asked(1, history, heads))
    recent.heard(_asked(1, history, heads), Recorded("c1", None, LiveAudit(), True, heads[-1], None))
    more = History("", (*history.messages, Message("u3", "user", "and 13")))
    longer = tuple(prefix_heads(more.messages))
    hit = recent.find(longer, None)
    assert hit is not None and hit.holds == 2
    recent.remember(2, hit.base(longer), _asked(2, more, longer))  # c1 moves on to the new head
    hit = recent.find(longer, None)
    assert hit is not None and hit.pending and hit.holds == 3 and hit.entry.into() == "c1"
    assert recent.agrees(hit, Continued("c1", 2)) and recent.agrees(hit, None)  # not written yet
    assert not recent.agrees(hit, Continued("c1", 3))  # there before it is written: another writer's doing


def test_the_same_heads_are_asked_again_only_once_the_database_has_changed(
    store_url: str,  # noqa: F811 - the fixture from store_fixtures
) -> None:
    """A tool loop's requests carry the same heads: the routed path asks the store for them again only
    once something was written to it since, by another connection (the recorder's, another process's)
    or its own; PostgreSQL gives no mark, so it is asked every time."""
    from toolreplay._history import Message
    from toolreplay._proxy.matching import Asked, Continued, prefix_heads

    mine, other = open_store(store_url), open_store(store_url)
    try:
        asked_for: list[tuple[str, ...]] = []
        find = mine.find_heads
        mine.find_heads = lambda h, s=None: asked_for.append(tuple(h)) or find(h, s)  # type: ignore[method-assign]
        heads = tuple(prefix_heads([Message("u1", "user", "close todo 12")]))
        asked = Asked()
        assert asked.found(mine, heads, None) is None and asked.found(mine, heads, None) is None
        marked = mine.changes() is not None
        assert marked == store_url.endswith(".db") and len(asked_for) == (1 if marked else 2)
        other.import_history(History("c1", (Message("m1", "user", "close todo 12"),)))
        other.set_origin("c1", {"agent": "another process"}, session=None, head=heads[-1])
        assert asked.found(mine, heads, None) == Continued("c1", 1)  # another connection wrote
        mine.set_head("c1", "elsewhere")
        assert asked.found(mine, heads, None) is None  # its own write
        n = len(asked_for)
        assert asked.found(mine, heads, "sess-a") is None and len(asked_for) == n + 1  # another session
        others = tuple(prefix_heads([Message("u9", "user", "open todo 3")]))
        assert asked.found(mine, others, "sess-a") is None and len(asked_for) == n + 2  # other heads
        assert asked.found(mine, others, "sess-a") is None and len(asked_for) == n + 2 + (not marked)
        assert asked.found(mine, (), "sess-a") is None and len(asked_for) == n + 2 + (not marked)  # none
    finally:
        mine.close()
        other.close()

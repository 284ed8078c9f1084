"""The recorder's own CPU per exchange (design 54): a new conversation's id is found in one query however
many conversations of that second and head exist, and the live audit reads the request as the recorder
parsed it, working out the body paths (a parse of every prefix of the body) only for a call carried as
text. What the store holds, and what the audit says, is what the former code stored and said: multi-
exchange sessions of each kind (a pass-through conversation that grows, one that flattens a call into
text, routed requests each a new conversation) are recorded by this code and by a reference of the
former one (its id search and its audit, in this file), on SQLite and PostgreSQL, and their rows compared.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from bench.recorder import passthrough, routed

from store_fixtures import two_stores  # noqa: F401
from toolreplay._audit.body import RequestBody
from toolreplay._audit.report import StoredCallFate, audit_request
from toolreplay._history import History
from toolreplay._proxy import record
from toolreplay._proxy.exchange import Exchange
from toolreplay._proxy.live_audit import LiveAudit
from toolreplay._proxy.record import Recorded
from toolreplay._proxy.worker import RecorderThread
from toolreplay._replay import ReplaySettings
from toolreplay._store import Store, open_store

NOW = datetime(2026, 12, 2, 9, 30, 5, tzinfo=UTC)


class _Clock(datetime):
    """The recorder's clock stopped: both recordings give the same ids and times."""

    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return NOW


def _old_new_id(store: Store, heads: Any) -> str:
    """The former id search: one query per candidate."""
    base = f"proxy-{NOW.strftime('%Y%m%d-%H%M%S')}-{(heads[-1] if heads else '0')[:6]}"
    cid, n = base, 2
    while store.exists(cid):
        cid, n = f"{base}-{n}", n + 1
    return cid


def _old_fates(
    request: RequestBody, parsed: History, history: History, settings: ReplaySettings
) -> tuple[StoredCallFate, ...]:
    """The former live audit's fates: the whole audit of the request, parsed again, every path mapped."""
    return audit_request(request, history, settings=settings).stored or ()


def _flattened() -> list[Exchange]:
    """An Anthropic conversation of three requests whose third carries the first call as text (the
    audit's paths are needed), after two new conversations of the same opening (ids ``-2``, ``-3``)."""
    ask = {"model": "claude-sonnet-4-5", "max_tokens": 100}
    first = [{"role": "user", "content": "close todo 12"}]
    use = {"type": "tool_use", "id": "toolu_a1", "name": "coop", "input": {"action": "close", "id": 12}}
    answers = [
        [{"type": "text", "text": "Closing."}, use],
        [{"type": "text", "text": "Done."}],
        [{"type": "text", "text": "You are welcome."}],
    ]
    second = [*first, {"role": "assistant", "content": answers[0]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a1",
                                            "content": "closed"}]}]  # fmt: skip
    said = 'I called coop({"action": "close", "id": 12}) -> closed'
    flat = [*first, {"role": "assistant", "content": said}, {"role": "user", "content": "thanks"}]
    out = []
    for k, (msgs, content) in enumerate(
        [
            (first, answers[0]),
            (first, answers[0]),
            (first, answers[0]),
            (second, answers[1]),
            (flat, answers[2]),
        ]
    ):
        raw = json.dumps({**ask, "messages": msgs}).encode()
        answer = json.dumps({"id": f"msg_{k}", "type": "message", "role": "assistant", "content": content,
                             "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                             "usage": {"input_tokens": 10 + k, "output_tokens": 3}}).encode()  # fmt: skip
        out.append(Exchange(
            started=0.0, wire="anthropic", kind="generate", path="/v1/messages", model=None,
            upstream="https://api.anthropic.com", agent="claude-cli/2", session=None, body=None,
            request_bytes=len(raw), status=200, answer=answer, answer_bytes=len(answer), received=raw,
        ))  # fmt: skip
    return out


def _shape(h: History) -> tuple[Any, ...]:
    """A stored conversation but for the times its messages were written at."""
    return (h.id, h.tools, tuple(replace(m, created_at=None) for m in h.messages))


def _exchanges() -> list[Exchange]:
    return [*_flattened(), *passthrough(8), *routed(3)]


def _rows(store: Store) -> dict[str, list[Any]]:
    """Every row the recorder writes, but for ``seen`` (the time of the write, to the microsecond)."""
    tables = {
        "conversations": "SELECT id, tools, requests, origin, session, head FROM conversations ORDER BY id",
        "messages": "SELECT * FROM messages ORDER BY conversation_id, position",
        "tool_uses": "SELECT * FROM tool_uses ORDER BY conversation_id, message_id, position",
        "usage": "SELECT * FROM usage ORDER BY conversation_id, message_id, step",
    }
    return {
        name: store.transact(lambda c, q=q: [tuple(r) for r in c.execute(q).fetchall()], "read", read=True)  # type: ignore[attr-defined]
        for name, q in tables.items()
    }


def _record(db: str, exchanges: list[Exchange]) -> tuple[dict[str, list[Any]], list[LiveAudit]]:
    store = open_store(db)
    heard: list[Recorded | None] = []
    rec = RecorderThread(None)
    rec.heard = lambda _ex, r: heard.append(r)
    try:
        for ex in exchanges:
            rec._handle(ex, store, None)
        assert rec.failures == 0
        return _rows(store), [r.audit if r is not None else LiveAudit() for r in heard]
    finally:
        store.close()


@pytest.mark.slow
def test_sessions_store_and_audit_what_the_former_recorder_did(
    two_stores: tuple[str, str],  # noqa: F811 - the fixture from store_fixtures
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    new_db, old_db = two_stores
    exchanges = _exchanges()
    monkeypatch.setattr(record, "datetime", _Clock)
    recalled: list[str] = []
    real_recall = record.Written.recall

    def checked(self: record.Written, store: Store, cid: str) -> History | None:
        """The writer's memory of a conversation is what the store loads of it (but for the times)."""
        got = real_recall(self, store, cid)
        if got is not None:
            assert _shape(got) == _shape(store.load(cid))
            recalled.append(cid)
        return got

    monkeypatch.setattr(record.Written, "recall", checked)
    rows, audits = _record(new_db, exchanges)
    assert len(recalled) >= 8, recalled  # the growing sessions were extended from memory
    with monkeypatch.context() as m:
        m.setattr(record, "_new_id", _old_new_id)
        m.setattr("toolreplay._audit.report.stored_fates", _old_fates)
        m.setattr(record.Written, "recall", lambda self, store, cid: None)  # loaded back each time
        m.setattr(record, "collapses", lambda calls: True)  # a new reply begun, its calls, finished
        old_rows, old_audits = _record(old_db, exchanges)
    assert [len(rows[t]) for t in rows] == [len(old_rows[t]) for t in old_rows]
    for table in rows:
        assert rows[table] == old_rows[table], table
    assert audits == old_audits
    ids = [r[0] for r in rows["conversations"]]
    assert any(i.endswith("-3") for i in ids), ids  # the same opening, the same second: -2, -3
    said = [line for a in audits for line in a.lines if "as text" in line]
    assert len(said) == 1 and "coop" in said[0] and "text of messages[1]" in said[0], said
    assert sum(a.counts.get("as_call", 0) for a in audits) > 20  # the growing session's calls


def test_a_new_id_is_found_in_one_query_however_many_are_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record, "datetime", _Clock)
    store = open_store(str(tmp_path / "ids.db"))
    heads = ["abcdef0123"]
    base = f"proxy-{NOW.strftime('%Y%m%d-%H%M%S')}-abcdef"
    for cid in [base, *(f"{base}-{n}" for n in range(2, 41))]:
        store.set_origin(cid, {"agent": "a"}, session=None, head=cid)
    asked: list[str] = []
    store._conn.set_trace_callback(asked.append)  # type: ignore[attr-defined]
    try:
        assert record._new_id(store, heads) == f"{base}-41"
    finally:
        store._conn.set_trace_callback(None)  # type: ignore[attr-defined]
        store.close()
    lookups = [q for q in asked if "FROM conversations WHERE id" in q]
    assert len(lookups) <= 3, lookups  # 16, then 32 candidates: not one query per id taken (41)


def test_the_live_audit_parses_a_long_request_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import toolreplay.wires as wires

    parsed: list[int] = []
    real = wires.parse_request

    def counted(wire: str, body: Any) -> Any:
        parsed.append(len(body.get("messages", ())))
        return real(wire, body)

    store = open_store(str(tmp_path / "audit.db"))
    rec = RecorderThread(None)
    exchanges = list(passthrough(2))
    rec._handle(exchanges[0], store, None)
    monkeypatch.setattr(wires, "parse_request", counted)
    got: list[Recorded | None] = []
    rec.heard = lambda _ex, r: got.append(r)
    rec._handle(exchanges[1], store, None)
    store.close()
    assert got and got[0] is not None and got[0].audit.counts["as_call"] > 20, got
    assert len(parsed) == 1, parsed  # the recorder's own parse: before, one per prefix of the body too


def test_an_exchange_that_fails_after_the_memory_kept_it_leaves_the_store_and_the_next_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreplay._errors import StoreError

    monkeypatch.setattr(record, "datetime", _Clock)
    real_keep = record.Written.keep
    fail = [False]

    def keep_then_fail(self: record.Written, store: Store, cid: str, state: History) -> None:
        real_keep(self, store, cid, state)
        if fail[0]:
            fail[0] = False
            raise StoreError("the disk went away before the commit")

    monkeypatch.setattr(record.Written, "keep", keep_then_fail)
    ex = list(passthrough(4))

    def run(db: str, recall: bool) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
        store = open_store(db)
        rec = RecorderThread(None)
        with monkeypatch.context() as m:
            if not recall:
                m.setattr(record.Written, "recall", lambda self, store, cid: None)
            rec._handle(ex[0], store, None)
            before = _rows(store)
            fail[0] = True
            rec._handle(ex[1], store, None)  # written, remembered, then the transaction fails
            assert rec.failures == 1 and _rows(store) == before  # nothing half-written
            for e in (ex[1], ex[2], ex[3]):  # the agent's retry, then the session goes on
                rec._handle(e, store, None)
            assert rec.failures == 1
            return before, _rows(store)

    got, want = run(str(tmp_path / "mem.db"), True), run(str(tmp_path / "load.db"), False)
    assert got == want


def test_a_new_reply_is_written_as_a_live_turn_writes_it_where_the_store_would_merge_two_calls() -> None:
    from toolreplay._history import ToolCall

    read, other = ToolCall("read", {"path": "a"}), ToolCall("read", {"path": "b"})
    assert not record.collapses([read, other])
    assert record.collapses([read, ToolCall("read", {"path": "a"})])  # Gemini's id-less calls, twice
    assert not record.collapses([read, ToolCall("read", {"path": "a"}, call_id="c1")])
    assert record.collapses([ToolCall("x", {}, call_id="c1"), other, ToolCall("x", {}, call_id="c1")])
    assert not record.collapses([ToolCall("x", {}, call_id="c1"), ToolCall("x", {}, call_id="c2")])

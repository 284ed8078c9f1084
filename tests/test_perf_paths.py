# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""The fast paths of issue 7 keep behaviour: the store's clustered tool_uses migration upgrades a database
that has data in it (SQLite and PostgreSQL), and the store's JSON decoding stays exact."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from store_fixtures import (
    OLD_INSERT_MESSAGE,
    OLD_INSERT_TOOL_USE,
    before_steps,
    old_message_row,
    old_tool_use_rows,
    pg_database,  # noqa: F401
)
from toolreplay import _jsonenc as jsonenc
from toolreplay._history import History, Message, ToolCall, load_history
from toolreplay._store import open_store
from toolreplay._store import rows as R
from toolreplay._store import schema as S
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parent.parent
CLUSTERED = "0004_tool_uses_clustered"


def demo() -> History:
    """The demo as a database from before migration 0005 holds it (these tests start older)."""
    return before_steps(load_history(ROOT / "src" / "toolreplay" / "data" / "demo.json"))


def _before(name: str) -> tuple[S.Migration, ...]:
    return S.MIGRATIONS[: S.MIGRATION_NAMES.index(name)]


def test_clustered_migration_keeps_the_calls_of_an_older_sqlite_database(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    h = demo()
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(S.MIGRATIONS_TABLE["sqlite"])
        for m in _before(CLUSTERED):
            for statement in m.sqlite:
                conn.execute(statement)
            conn.execute(S.RECORD_MIGRATION, (m.name, "2026-01-01T00:00:00Z"))
        conn.execute(S.ENSURE_CONVERSATION, (h.id, R.tools_text(h.tools)))
        for pos, m in enumerate(h.messages):
            conn.execute(OLD_INSERT_MESSAGE, old_message_row(h.id, pos, m))
            conn.executemany(OLD_INSERT_TOOL_USE, old_tool_use_rows(h.id, m.id, m.tool_uses))
    finally:
        conn.close()
    with SQLiteStore(db) as s:
        assert s.applied_migrations() == sorted(S.MIGRATION_NAMES)
        assert s.load(h.id) == h
        sql = s._conn.execute("SELECT sql FROM sqlite_master WHERE name = 'tool_uses'").fetchone()[0]
        assert sql.rstrip().endswith("WITHOUT ROWID")
        # the foreign key to messages still holds on the new table
        with pytest.raises(Exception, match="FOREIGN KEY"):
            s._conn.execute(
                S.INSERT_TOOL_USE,
                (h.id, "no-such-message", 0, "x", "{}", None, None, 0, None, None, None, None),
            )
        reply = Message("late", "assistant", "more", (ToolCall("coop", {"a": 1}, "ok"),))
        s.append_message(h.id, reply)
        assert s.load(h.id).messages[-1] == reply


def test_clustered_migration_on_postgres(pg_database: str) -> None:
    import psycopg

    h = demo()
    with psycopg.connect(pg_database) as conn:
        cur = conn.cursor()
        with conn.transaction():
            cur.execute(S.MIGRATIONS_TABLE["postgres"])
            for m in _before(CLUSTERED):
                for statement in m.postgres:
                    cur.execute(statement)
                cur.execute(S.pg(S.RECORD_MIGRATION), (m.name, "2026-01-01T00:00:00Z"))
            cur.execute(S.pg(S.ENSURE_CONVERSATION), (h.id, R.tools_text(h.tools)))
            for pos, m in enumerate(h.messages):
                cur.execute(S.pg(OLD_INSERT_MESSAGE), old_message_row(h.id, pos, m))
                cur.executemany(S.pg(OLD_INSERT_TOOL_USE), old_tool_use_rows(h.id, m.id, m.tool_uses))
    with open_store(pg_database) as s:
        assert CLUSTERED in s.applied_migrations()
        assert s.load(h.id) == h


@pytest.mark.parametrize(
    "text",
    [
        '{"n": 123456789012345678901234}',
        '{"n": [1.5, 123456789012345678901]}',
        "[[[[-99999999999999999999]]]]",
        '{"s": "12345678901234567890123", "f": 0.1}',
        '{"a": 1, "b": {"c": [true, null, "x"]}}',
        "1e300",
        '"plain text"',
        "NaN",
    ],
)
def test_store_json_decoding_is_exact(text: str) -> None:
    import json

    got = R.loads(text)
    want = json.loads(text)
    assert repr(got) == repr(want)
    assert [type(x) for x in (got if isinstance(got, list) else [got])] == [
        type(x) for x in (want if isinstance(want, list) else [want])
    ]


def test_loaded_calls_reuse_the_stored_input_text(tmp_path: Path) -> None:
    call = ToolCall("coop", {"b": 2, "a": 1.0}, "ok")
    with SQLiteStore(tmp_path / "t.db") as s:
        s.append_message("c", Message("a", "assistant", "", (call,)))
        back = s.load("c").messages[0].tool_uses[0]
    assert back == call
    assert back.input_text == call.input_text == '{"b":2,"a":1.0}'


# --------------------------------------------------------------------------------------------------
# the turn loop renders its steps through a RenderCache: same bytes, only the reply in progress again


class _Scripted:
    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.bodies: list[bytes] = []

    async def send(self, vessel: Any, body: Mapping[str, Any], **kw: Any) -> Any:
        self.bodies.append(jsonenc.encode(body))
        return self.replies.pop(0)


@pytest.mark.parametrize("vessel", ["kimi", "anthropic", "gemini", "openai-responses"])
def test_turn_steps_render_through_the_cache_with_full_render_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vessel: str
) -> None:
    from toolreplay._loop import run_turn
    from toolreplay._render_cache import RenderCache
    from toolreplay._replay import prepare_turn_messages
    from toolreplay._tools import ToolRegistry
    from toolreplay._tools.coop import coop_tool
    from toolreplay.wires import render_wire
    from toolreplay.wires.reply import ParsedCall, Reply

    for var in ("MOONSHOT_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(var, "test-key-not-sent")
    seen: list[tuple[bytes, int]] = []
    real = RenderCache.render_body

    def spy(self: RenderCache, messages: Any, wire: str, opts: Any, *a: Any, **kw: Any) -> Any:
        body = real(self, messages, wire, opts, *a, **kw)
        full = render_wire(wire, prepare_turn_messages(tuple(messages), "native"), opts)
        assert jsonenc.encode(body) == jsonenc.encode(full)
        seen.append((jsonenc.encode(body), self.stats.reused_messages))
        return body

    monkeypatch.setattr(RenderCache, "render_body", spy)
    calls = [Reply(calls=(ParsedCall("coop", {"action": "close", "id": n}, f"call_{n}"),)) for n in (1, 2)]
    t = _Scripted(*calls, Reply(text="Closed both."))
    with SQLiteStore(tmp_path / "loop.db") as store:
        board_of(store).add("one")
        board_of(store).add("two")
        reg = ToolRegistry([coop_tool(board_of(store))])
        run_turn("c1", "Close #1 and #2.", vessel, reg, store=store, transport=t)  # type: ignore[arg-type]
        run_turn("c1", "Thanks.", vessel, reg, store=store, transport=_Scripted(Reply(text="ok")))  # type: ignore[arg-type]
    assert [b for b, _ in seen[:3]] == t.bodies
    # each continuation reused the messages before the reply in progress (here: the user message)
    assert [r for _, r in seen[:3]] == [0, 1, 2]

"""The store's view for long conversations, on SQLite and PostgreSQL: the outline (positions, ids, roles,
planning sizes), a window of messages by position, the message count, and each response's usage."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from store_fixtures import (  # noqa: F401
    PARTS_INSERT_TOOL_USE,
    STEPS_INSERT_MESSAGE,
    store,
    store_factory,
    store_url,
)
from toolreplay._history import History, Message, ToolCall
from toolreplay._store import Store
from toolreplay._store import rows as R
from toolreplay._store import schema as S
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tokens import replay_size
from toolreplay.wires.reply import Usage


def conversation(n: int = 10) -> History:
    messages = []
    for i in range(n):
        if i % 2 == 0:
            messages.append(Message(f"u{i}", "user", f"question {i}"))
        else:
            calls = (ToolCall("coop", {"i": i}, f"answer {i}"),) if i % 4 == 1 else ()
            messages.append(Message(f"a{i}", "assistant", f"reply {i}", calls))
    return History("long", tuple(messages))


def test_outline_and_range(store: Store) -> None:  # noqa: F811
    h = conversation()
    store.import_history(h)
    rows = store.outline("long")
    assert [r[:3] for r in rows] == [(i, m.id, m.role) for i, m in enumerate(h.messages)]
    assert [r[3] for r in rows] == [replay_size(m) for m in h.messages]
    assert store.counts("long") == (10, 3) and store.counts("none") == (0, 0)
    assert store.load_range("long", 4).messages == h.messages[4:]
    assert store.load_range("long", 2, 5).messages == h.messages[2:5]
    assert store.load_range("long", 20).messages == ()


def test_a_finished_reply_gets_its_size(store: Store) -> None:  # noqa: F811
    store.append_message("c", Message("u1", "user", "go"))
    store.begin_reply("c", "a2", vessel="kimi", created_at=None)
    empty = store.outline("c")[1][3]
    store.record_call("c", "a2", ToolCall("coop", {"action": "list"}, "nothing"))
    store.finish_reply("c", "a2", text="Nothing to do.")
    done = store.load("c").messages[1]
    assert store.outline("c")[1][3] == replay_size(done) > empty


def test_usage_per_step(store: Store) -> None:  # noqa: F811
    store.import_history(conversation(4))
    store.record_usage("long", "a1", 1, Usage(100, 5, 80, 20), "m-1")
    store.record_usage("long", "a1", 2, Usage(120, 7, 100, None))
    store.record_usage("long", "a3", 1, Usage(10, 1))
    got = store.load_usage("long")
    assert [(r.message_id, r.step, r.model) for r in got] == [
        ("a1", 1, "m-1"),
        ("a1", 2, None),
        ("a3", 1, None),
    ]
    assert got[0].usage == Usage(100, 5, 80, 20) and got[2].usage == Usage(10, 1, None, None)
    assert [r.message_id for r in store.load_usage("long", 2)] == ["a3"]
    assert [r.step for r in store.load_usage("long", 0, 2)] == [1, 2]


def test_sizes_of_messages_stored_before_are_computed_once(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    h = conversation(6)
    with SQLiteStore(db) as s:
        s.import_history(h)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE messages SET size = NULL")
    conn.commit()
    conn.close()
    with SQLiteStore(db) as s:
        assert [r[3] for r in s.outline("long")] == [replay_size(m) for m in h.messages]
        assert all(r[0] is not None for r in s._conn.execute("SELECT size FROM messages"))


def test_upgrade_keeps_messages_and_adds_sizes(tmp_path: Path) -> None:
    db = tmp_path / "v4.db"
    conn = sqlite3.connect(db, isolation_level=None)
    h = conversation(4)
    conn.execute(S.MIGRATIONS_TABLE["sqlite"])
    for m in S.MIGRATIONS[: S.MIGRATION_NAMES.index("0006_usage")]:
        for statement in m.sqlite:
            conn.execute(statement)
        conn.execute(S.RECORD_MIGRATION, (m.name, "2026-01-01T00:00:00Z"))
    conn.execute(S.ENSURE_CONVERSATION, (h.id, None))
    for pos, m in enumerate(h.messages):
        conn.execute(STEPS_INSERT_MESSAGE, R.message_row(h.id, pos, m)[:-2])  # no parts, sent columns yet
        conn.executemany(PARTS_INSERT_TOOL_USE, [r[:-2] for r in R.tool_use_rows(h.id, m.id, m.tool_uses)])
    conn.close()
    with SQLiteStore(db) as s:
        assert s.load(h.id) == h
        assert [r[3] for r in s.outline(h.id)] == [replay_size(m) for m in h.messages]
        with pytest.raises(Exception, match="FOREIGN KEY"):
            s.record_usage(h.id, "no-such-reply", 1, Usage(1, 1))


def test_a_migration_numbered_before_applied_ones_is_still_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Migrations run by name, in list order, whatever their numbers: a database that already has the
    # later-numbered usage and size migrations still gets one numbered before them that arrives later
    # (numbers are left free for work landing in another order).
    db = tmp_path / "gap.db"
    with SQLiteStore(db) as s:
        assert s.applied_migrations() == sorted(S.MIGRATION_NAMES)
    late = S.Migration("0005_arrives_later", sqlite=("CREATE TABLE later (x INTEGER)",), postgres=())
    at = S.MIGRATION_NAMES.index("0006_usage")
    migrations = (*S.MIGRATIONS[:at], late, *S.MIGRATIONS[at:])
    monkeypatch.setattr(S, "MIGRATIONS", migrations)
    monkeypatch.setattr(S, "MIGRATION_NAMES", tuple(m.name for m in migrations))
    with SQLiteStore(db) as s:
        assert "0005_arrives_later" in s.applied_migrations()
        assert s._conn.execute("SELECT COUNT(*) FROM later").fetchone() == (0,)


def _sums_hold(store: Store, cid: str) -> None:  # noqa: F811
    """Every row's running sums are the sums of the sizes and the calls through it, as stored now (a
    reply in progress keeps the size it was begun with until it is finished)."""
    h = store.load(cid)
    rows = store.outline(cid)
    for r, m in zip(rows, h.messages, strict=True):
        assert r[3] == replay_size(m if m.status != "in_progress" else Message(m.id, m.role))
    run = calls = 0
    for r, m in zip(rows, h.messages, strict=True):
        run, calls = run + r[3], calls + len(m.tool_uses)
        assert r[5] == run
    assert store.counts(cid) == (len(h.messages), calls)


def test_running_sums_follow_every_write(store: Store) -> None:  # noqa: F811
    store.import_history(conversation(8))
    _sums_hold(store, "long")
    store.append_message("long", Message("u9", "user", "more"))
    store.begin_reply("long", "a10", vessel="kimi", created_at=None)
    store.append_message("long", Message("u11", "user", "another writer meanwhile"))
    store.record_call("long", "a10", ToolCall("coop", {"action": "list"}, None, "c1"))
    _sums_hold(store, "long")
    store.record_call("long", "a10", ToolCall("coop", {"action": "list"}, "nothing", "c1"))  # fills in
    store.record_call("long", "a10", ToolCall("coop", {"action": "add"}, "added", "c2"))
    store.finish_reply("long", "a10", text="Listed and added. " * 20)
    _sums_hold(store, "long")
    store.delete_message("long", "a3")
    store.delete_messages("long", ["u0", "a10"])
    _sums_hold(store, "long")
    line = store.line("long", 5)
    assert line.head == 0 and line.last_user == 4
    assert line.total == sum(r[3] for r in store.outline("long", 0, 5))


def test_line_and_outline_from_a_reach(store: Store) -> None:  # noqa: F811
    h = History("s", (Message("s0", "system", "Be brief."), *conversation(10).messages))
    store.import_history(h)
    rows = store.outline("s")
    line = store.line("s", 11)
    assert (line.head, line.base, line.last_user) == (1, rows[0][3], 9)
    assert line.total == rows[-1][5] - rows[0][3]
    # from the first message whose running size reaches the bytes asked, or the start when earlier
    assert [r[0] for r in store.outline("s", 10, 11, reach=rows[6][5])] == [6, 7, 8, 9, 10]
    assert [r[0] for r in store.outline("s", 8, 11, reach=rows[9][5])] == [8, 9, 10]
    assert store.positions("s", ["u2", "a3", "nope"]) == {"u2": 3, "a3": 4}


def test_sums_of_a_conversation_stored_before_are_computed_once(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with SQLiteStore(db) as s:
        s.import_history(conversation(6))
    conn = sqlite3.connect(db)
    conn.execute("UPDATE messages SET size = NULL, run_size = NULL, run_calls = NULL")
    conn.commit()
    conn.close()
    with SQLiteStore(db) as s:
        assert s.counts("long") == (6, 2)  # counted without the sums
        s.append_message("long", Message("u6", "user", "after the upgrade"))
        assert s.line("long", 7).total == sum(replay_size(m) for m in s.load("long").messages)
        _sums_hold(s, "long")


def test_the_stored_planning_sizes_use_the_replay_bounds(tmp_path: Path) -> None:
    """The planning sizes the store keeps assume the replay's own default bounds, not a copy of them: a
    call beyond the default call window and answer characters beyond the default cut do not count."""
    from toolreplay._replay import DEFAULT_SETTINGS

    calls, chars = DEFAULT_SETTINGS.max_calls, DEFAULT_SETTINGS.max_chars

    def reply(mid: str, n: int, answer: int) -> Message:
        made = tuple(ToolCall("coop", {"i": 1}, "x" * answer) for _ in range(n))
        return Message(mid, "assistant", "done", made)

    s = SQLiteStore(str(tmp_path / "b.db"))
    replies = [reply("w", calls, chars), reply("o", calls + 1, chars), reply("c", calls, chars + 9)]
    replies.append(reply("s", calls - 1, chars))
    replies.append(reply("l", calls, chars - 1))
    s.import_history(History("b", (Message("u", "user", "go"), *replies)))
    size = {r[1]: r[3] for r in s.outline("b")}
    # one call more than the window counts as the window; an answer cut at the bound counts as cut
    assert size["o"] == size["w"] == size["c"]
    # and the bounds are not lower than the replay's: one call less, one character less count less
    assert size["s"] < size["w"] and size["l"] < size["w"]

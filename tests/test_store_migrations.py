# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""Migration 0013 on every backend (see store_fixtures): a database made by the schema before it, with
stored render fragments, opens, drops their tables and reads, writes and removes as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from store_fixtures import store_url  # noqa: F401
from toolreplay._history import History, Message, ToolCall
from toolreplay._store import open_store
from toolreplay._store import schema as S
from toolreplay._store.sql import Tx

DROP = "0013_drop_render_fragments"
#: A fragment row as migration 0010 stored it (design 35).
INSERT_FRAGMENT = """INSERT INTO render_fragments
    (conversation_id, key, seq, message_id, stem, calls, declares, items) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_SET = "INSERT INTO render_fragment_sets (conversation_id, key, used) VALUES (?, ?, ?)"
FRAGMENT_TABLES = {
    "sqlite": "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ({})",
    "postgres": "SELECT tablename FROM pg_tables WHERE tablename IN ({})",
}
NAMES = "'render_fragments', 'render_fragment_sets'"


def _history() -> History:
    call = ToolCall("coop", {"id": 1}, "closed", call_id="c1")
    return History(
        "old",
        (
            Message("u1", "user", "one"),
            Message("a2", "assistant", "done", (call,)),
            Message("u3", "user", "3"),
        ),
    )


def _tables(store: object) -> list[str]:
    s = store  # an SQLStore: its dialect names the catalog to ask
    q = FRAGMENT_TABLES[s.dialect.name].format(NAMES)  # type: ignore[attr-defined]
    rows = s.transact(lambda c: c.execute(q).fetchall(), "catalog", read=True)  # type: ignore[attr-defined]
    return sorted(r[0] for r in rows)


def test_a_database_with_render_fragments_drops_them_and_reads_as_before(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = S.MIGRATIONS[: S.MIGRATION_NAMES.index(DROP)]
    with monkeypatch.context() as m:  # the schema of the release before 0013
        m.setattr(S, "MIGRATIONS", before)
        m.setattr(S, "MIGRATION_NAMES", tuple(x.name for x in before))
        old = open_store(store_url)
        try:
            old.import_history(_history())
            sql = old.dialect.sql  # type: ignore[attr-defined]

            def fill(c: Tx) -> None:
                for seq, mid in enumerate(("u1", "a2", "u3")):
                    c.execute(sql(INSERT_FRAGMENT), ("old", "k" * 32, seq, mid, mid, seq % 2, None, "[{}]"))
                c.execute(sql(INSERT_SET), ("old", "k" * 32, 1))

            old.transact(fill, "fragments")  # type: ignore[attr-defined]
            assert _tables(old) == ["render_fragment_sets", "render_fragments"]
        finally:
            old.close()
    store = open_store(store_url)
    try:
        assert DROP in store.applied_migrations()  # type: ignore[attr-defined]
        assert _tables(store) == []
        assert store.load("old") == _history()
        store.delete_message("old", "a2")  # wrote to the fragment rows before 0013
        store.append_message("old", Message("a4", "assistant", "again"))
        assert [m.id for m in store.load("old").messages] == ["u1", "u3", "a4"]
        store.delete_conversation("old")
        assert not store.exists("old")
    finally:
        store.close()
    reopened = open_store(store_url)
    try:
        assert reopened.migrate() == []  # type: ignore[attr-defined]
    finally:
        reopened.close()


@pytest.mark.slow
def test_connections_opening_a_new_sqlite_file_at_once_all_open_it(tmp_path: Path) -> None:
    """The proxy's recorder and its routed path open a new file at the same moment: the one switching to
    WAL while another creates the schema was told "database is locked" at once (no busy handler for that
    switch), and the recorder's thread died. Each of three connections, 40 times over, opens the file."""
    import threading

    from toolreplay._store.sqlite import SQLiteStore

    failed: list[str] = []
    for n in range(40):
        path = str(tmp_path / f"race-{n}.db")
        start = threading.Barrier(3)

        def open_it(path: str = path, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                SQLiteStore(path).close()
            except Exception as exc:
                failed.append(repr(exc))

        threads = [threading.Thread(target=open_it) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failed, failed[:3]


STEPS = "0015_answer_steps"


def test_answer_ids_of_0014_name_their_reply_after_0015(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = S.MIGRATIONS[: S.MIGRATION_NAMES.index(STEPS)]
    with monkeypatch.context() as m:  # the schema of the release before 0015: one id per reply
        m.setattr(S, "MIGRATIONS", before)
        m.setattr(S, "MIGRATION_NAMES", tuple(x.name for x in before))
        old = open_store(store_url)
        try:
            old.import_history(_history())
            sql = old.dialect.sql  # type: ignore[attr-defined]
            update = sql("UPDATE messages SET answer_id = ? WHERE conversation_id = ? AND id = ?")
            old.transact(lambda c: c.execute(update, ("resp_old", "old", "a2")), "answer")  # type: ignore[attr-defined]
        finally:
            old.close()
    store = open_store(store_url)
    try:
        assert STEPS in store.applied_migrations()  # type: ignore[attr-defined]
        assert store.find_answer("resp_old") == ("old", "a2", None)  # the reply as it is
        store.set_answer_id("old", "a2", "resp_new", 2)
        assert store.find_answer("resp_old") == ("old", "a2", None)  # its steps then were never kept
        store.delete_message("old", "a2")  # its answer ids go with it
        assert store.find_answer("resp_new") is None and store.find_answer("resp_old") is None
        store.set_answer_id("old", "u1", "resp_x", 1)
        store.delete_conversation("old")
        assert store.find_answer("resp_x") is None
    finally:
        store.close()

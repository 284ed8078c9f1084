"""What only the PostgreSQL store has: its URL handling, errors, connections, migrations under concurrency.

The Protocol's behaviour on PostgreSQL is checked by tests/test_store.py (every test there runs on both
backends); this file covers the rest. Tests that need a server use ``TOOLREPLAY_TEST_PG`` (see
tests/store_fixtures.py) and skip with the reason when it is unset.
"""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from helpers_load import pg_positions
from store_fixtures import (
    OLD_INSERT_MESSAGE,
    OLD_INSERT_TOOL_USE,
    _fresh_pg_database,
    before_steps,
    old_message_row,
    old_tool_use_rows,
)
from toolreplay._errors import ConfigError, StoreError
from toolreplay._history import History, Message, ToolCall, load_history
from toolreplay._store import open_store
from toolreplay._store import rows as R
from toolreplay._store import schema as S
from toolreplay._store.board import board_of
from toolreplay._store.postgres import PostgresStore, public_url
from toolreplay._store.sqlite import SQLiteStore

pytestmark = pytest.mark.slow  # PostgreSQL: see docs/design.md, design 26


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh, empty PostgreSQL database (skips when TOOLREPLAY_TEST_PG is unset)."""
    yield from _fresh_pg_database(request)


def psql(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, params)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else []


OTHER_SESSIONS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
)

# --------------------------------------------------------------------------------------------------
# no server needed


def test_public_url_drops_only_the_password() -> None:
    assert public_url("postgresql://agent:s3cret-pw@db.internal:5432/tr?sslmode=require") == (
        "postgresql://agent@db.internal:5432/tr?sslmode=require"
    )
    assert public_url("postgresql://agent@db/tr") == "postgresql://agent@db/tr"
    assert public_url("postgres://:pw@db/tr") == "postgres://@db/tr"


def test_unreachable_server_is_a_clear_error_without_the_password() -> None:
    url = "postgresql://agent:hunter2-not-shown@127.0.0.1:1/toolreplay"
    with pytest.raises(StoreError) as err:
        PostgresStore(url, connect_timeout=2)
    msg = str(err.value)
    assert msg.startswith("postgresql://agent@127.0.0.1:1/toolreplay: cannot connect to PostgreSQL (")
    assert "hunter2" not in msg and "\n" not in msg


def test_cli_names_the_database_without_the_password() -> None:
    url = "postgresql://agent:hunter2-not-shown@127.0.0.1:1/toolreplay"
    done = subprocess.run(
        [sys.executable, "-m", "toolreplay", "history", "list", "--db", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Error: postgresql://agent@127.0.0.1:1/toolreplay: cannot connect" in done.stderr
    assert "hunter2" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_missing_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the postgres extra were not installed
    with pytest.raises(ConfigError, match=r"pip install 'toolreplay\[postgres\]'"):
        open_store("postgresql://agent@127.0.0.1:1/toolreplay")


# --------------------------------------------------------------------------------------------------
# with a server


def test_selected_by_the_environment_and_migrated_once(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLREPLAY_DB", pg_url)
    with open_store() as s:  # type: ignore[attr-defined]
        assert isinstance(s, PostgresStore)
        assert s.applied_migrations() == sorted(S.MIGRATION_NAMES)
        assert s.migrate() == []  # nothing left to apply
        assert repr(s) == f"PostgresStore({pg_url!r})"
    names = psql(pg_url, "SELECT name FROM schema_migrations ORDER BY name")
    assert [r[0] for r in names] == sorted(S.MIGRATION_NAMES)


OPEN = "import sys; from toolreplay._store.postgres import PostgresStore; PostgresStore(sys.argv[1]).close()"


def test_many_processes_opening_a_blank_database_migrate_it_once(pg_url: str) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", OPEN, pg_url], stderr=subprocess.PIPE) for _ in range(6)]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err.decode()
    rows = psql(pg_url, "SELECT name, COUNT(*) FROM schema_migrations GROUP BY name ORDER BY name")
    assert rows == [(n, 1) for n in sorted(S.MIGRATION_NAMES)]


def test_upgrade_from_the_first_schema(pg_url: str) -> None:
    import psycopg

    h = before_steps(load_history("src/toolreplay/data/demo.json"))
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute(S.MIGRATIONS_TABLE["postgres"])  # type: ignore[arg-type]
        for statement in S.MIGRATIONS[0].postgres:
            conn.execute(statement)  # type: ignore[arg-type]
        conn.execute(S.pg(S.RECORD_MIGRATION), (S.MIGRATIONS[0].name, "2026-01-01T00:00:00Z"))  # type: ignore[arg-type]
        conn.execute(S.pg(S.ENSURE_CONVERSATION), (h.id, R.tools_text(h.tools)))  # type: ignore[arg-type]
        for pos, m in enumerate(h.messages):
            conn.execute(S.pg(OLD_INSERT_MESSAGE), old_message_row(h.id, pos, m))  # type: ignore[arg-type]
            for row in old_tool_use_rows(h.id, m.id, m.tool_uses):
                conn.execute(S.pg(OLD_INSERT_TOOL_USE), row)  # type: ignore[arg-type]
    with PostgresStore(pg_url) as s:
        assert s.applied_migrations() == sorted(S.MIGRATION_NAMES)
        assert s.load(h.id) == h
        assert board_of(s).add("after the upgrade").id == 1


def test_a_newer_schema_is_refused(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    psql(pg_url, S.pg(S.RECORD_MIGRATION), ("9999_from_the_future", "2030-01-01T00:00:00Z"))
    with pytest.raises(StoreError, match=r"newer toolreplay.*9999_from_the_future"):
        PostgresStore(pg_url)


def test_a_nul_character_is_refused_whole(pg_url: str) -> None:
    with PostgresStore(pg_url) as s:
        h = History("c", (Message("a", "user", "fine"), Message("b", "user", "nul \x00 here")))
        with pytest.raises(StoreError, match=r"'c'.*not written.*NUL") as err:
            s.import_history(h)
        assert "\n" not in str(err.value)
        assert not s.exists("c")
        s.begin_reply("c", "a1", vessel=None, created_at=None)
        with pytest.raises(StoreError, match="NUL"):
            s.record_call("c", "a1", ToolCall("t", {}, "binary \x00 answer"))
        assert s.load("c").messages[0].tool_uses == ()


def test_conversations_sort_as_on_sqlite(pg_url: str, tmp_path: Any) -> None:
    ids = ["b", "B", "a", "Ä", "_x", "10", "9", "a-b", "ab", "a b"]
    stamps = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00+02:00", "2026-01-01 00:00:00", "Z"]
    with PostgresStore(pg_url) as pg, SQLiteStore(tmp_path / "t.db") as lite:
        for s in (pg, lite):
            for k, cid in enumerate(ids):
                for j, stamp in enumerate(stamps[: 1 + k % 4]):
                    s.append_message(cid, Message(f"m{j}", "user", "x", created_at=stamp))
        assert pg.list_conversations() == lite.list_conversations()


def test_threads_share_one_store_and_keep_a_total_order(pg_url: str) -> None:
    with PostgresStore(pg_url, max_idle=2) as s:

        def work(i: int) -> None:
            for k in range(15):
                calls = tuple(ToolCall("t", {"i": i, "k": k, "c": j}, "ok") for j in range(3))
                s.append_message("c", Message(f"{i}-{k}", "assistant", "done", calls))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        h = s.load("c")
        assert len(h.messages) == 120 and all(len(m.tool_uses) == 3 for m in h.messages)
        for i in range(8):
            assert [m.id for m in h.messages if m.id.startswith(f"{i}-")] == [f"{i}-{k}" for k in range(15)]
        assert len(s._idle) <= 2  # the pool keeps at most max_idle connections
    assert pg_positions(pg_url, "c") == list(range(120))


def _append_in_child(s: PostgresStore) -> None:
    s.append_message("c", Message("child", "user", "from the forked child"))
    s.close()


def test_a_forked_child_does_not_use_or_end_the_parents_sessions(pg_url: str) -> None:
    with PostgresStore(pg_url) as s:
        s.append_message("c", Message("parent-1", "user", "x"))
        pids_before = {
            r[0]
            for r in psql(
                pg_url,
                OTHER_SESSIONS,
            )
        }
        child = multiprocessing.get_context("fork").Process(target=_append_in_child, args=(s,))
        child.start()
        child.join(30)
        assert child.exitcode == 0
        # the parent's pooled session survived the child's exit and still works
        pids_after = {
            r[0]
            for r in psql(
                pg_url,
                OTHER_SESSIONS,
            )
        }
        assert pids_before <= pids_after
        s.append_message("c", Message("parent-2", "user", "y"))
        assert [m.id for m in s.load("c").messages] == ["parent-1", "child", "parent-2"]


def test_a_cut_connection_is_replaced(pg_url: str) -> None:
    with PostgresStore(pg_url) as s:
        s.append_message("c", Message("m1", "user", "x"))
        assert s._idle  # a pooled connection, idle
        cut = psql(
            pg_url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        assert cut and all(r[0] for r in cut)
        # the write broke before its COMMIT, so it is safely sent again on a new connection
        s.append_message("c", Message("m2", "user", "y"))
        assert [m.id for m in s.load("c").messages] == ["m1", "m2"]

# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""The store: every Protocol guarantee, on every backend (see store_fixtures), plus SQLite's own set-up.

The backend-generic tests take the ``store``/``store_factory``/``store_url`` fixtures; the tests at the end
check what only SQLite has (the file, WAL, migrations from an older schema, queries per load).
"""

from __future__ import annotations

import dataclasses
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store_fixtures import (  # noqa: F401
    OLD_INSERT_MESSAGE,
    OLD_INSERT_TOOL_USE,
    backend_of,
    before_steps,
    old_message_row,
    old_tool_use_rows,
    pg_database,
    store,
    store_factory,
    store_url,
)
from toolreplay._errors import StoreError
from toolreplay._history import History, Message, ToolCall, ToolSpec, load_history
from toolreplay._store import ConversationInfo, ImportResult, Store, board, open_store
from toolreplay._store import rows as R
from toolreplay._store import schema as S
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parent.parent


def demo() -> History:
    return load_history(ROOT / "src" / "toolreplay" / "data" / "demo.json")


def replace_message(h: History, mid: str, **changes: object) -> History:
    msgs = tuple(dataclasses.replace(m, **changes) if m.id == mid else m for m in h.messages)  # type: ignore[arg-type]
    return dataclasses.replace(h, messages=msgs)


def turn(cid: str, mid: str, n_calls: int = 3, text: str = "done") -> Message:
    calls = tuple(
        ToolCall("coop", {"action": "close", "id": k}, f"status: closed {k}") for k in range(n_calls)
    )
    return Message(mid, "assistant", text, calls, created_at="2026-01-01T00:00:00Z", vessel="kimi")


# --------------------------------------------------------------------------------------------------
# round trip and import


def test_round_trip_is_exact(store: Store) -> None:
    h = demo()
    assert store.import_history(h) == ImportResult("demo-chief", added=12, unchanged=0)
    back = store.load("demo-chief")
    assert back == h
    assert back.tools == h.tools
    # created_at exactly as given, and never invented where the file has none (design 6)
    assert [m.created_at for m in back.messages] == [m.created_at for m in h.messages]
    assert back.messages[0].created_at is None
    # provider data beside the call, not in an id
    m09 = back.messages[back.index_of("m09")]
    assert m09.tool_uses[0].provider_data == {
        "gemini": {"thoughtSignature": "CiRkZW1vLXRob3VnaHQtc2lnbmF0dXJlLXN0b3JlZC1ieS1nZW1pbmktbTA5"}
    }
    assert isinstance(m09.tool_uses[0].input, str)  # the cut-short input stays raw text
    m07 = back.messages[back.index_of("m07")]
    assert (m07.tool_uses[0].name, m07.tool_uses[0].call_id) == ("mcp__coop__coop", "toolu_01A9")


def test_round_trip_keeps_every_field(store: Store) -> None:
    h = History(
        "c-odd",
        (
            Message("s", "system", "be brief"),
            Message("u1", "user", "", created_at="2026-01-01T00:00:00+02:00"),
            Message(
                "a1",
                "assistant",
                "ünïcødé ✓ 日本語",
                (
                    ToolCall("t", {"b": 1, "a": [1.5, None, True]}, "ok", call_id="x1", is_error=True),
                    ToolCall("t", "not json {", None),
                    ToolCall("t", [1, 2], "list input", provider_data={}),
                    ToolCall("t", 12345678901234567890123, "big int"),
                    ToolCall("t", None, ""),
                ),
                vessel="gemini",
                provider_data={"gemini": {"k": "v"}},
                status="interrupted",
                meta={"said_without_doing": True, "pieces": [0, 4]},
            ),
            Message("a2", "assistant", "x", meta={}),
        ),
        tools=(ToolSpec("t", "a tool", {"type": "object", "properties": {"b": {"type": "integer"}}}),),
    )
    store.import_history(h)
    back = store.load("c-odd")
    assert back == h
    a1 = back.messages[2]
    assert list(a1.tool_uses[0].input) == ["b", "a"]  # key order as stored (byte-stable arguments)
    assert a1.tool_uses[0].input_text == '{"b":1,"a":[1.5,null,true]}'
    assert a1.tool_uses[1].input_text == "not json {"
    assert back.messages[3].meta == {}


def test_import_is_idempotent(store: Store) -> None:
    h = demo()
    store.import_history(h)
    again = store.import_history(h)
    assert again == ImportResult("demo-chief", added=0, unchanged=12)
    assert store.load("demo-chief") == h
    assert store.list_conversations()[0].messages == 12


def test_import_appends_what_is_new(store: Store) -> None:
    h = demo()
    first = dataclasses.replace(h, messages=h.messages[:6])
    assert store.import_history(first).added == 6
    assert store.import_history(h) == ImportResult("demo-chief", added=6, unchanged=6)
    assert store.load("demo-chief") == h
    # a file holding only some stored messages changes nothing either
    assert store.import_history(dataclasses.replace(h, messages=h.messages[3:5])).unchanged == 2


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"text": "Closed #12 (edited)."}, "text"),
        ({"created_at": "2030-01-01T00:00:00Z"}, "created_at"),
        ({"vessel": "openai"}, "vessel"),
        ({"status": "interrupted"}, "status"),
        ({"meta": {"x": 1}}, "meta"),
        ({"tool_uses": ()}, "tool_uses (stored 1 calls, given 0)"),
        (
            {"tool_uses": (ToolCall("coop", {"action": "close", "id": 12, "text": "build is green"}, "no"),)},
            "tool_uses[0].answer",
        ),
        (
            {
                "tool_uses": (
                    ToolCall(
                        "coop", {"id": 12, "action": "close", "text": "build is green"}, "status: closed"
                    ),
                )
            },
            "tool_uses[0].input",
        ),
    ],
)
def test_conflicting_import_is_refused_whole(store: Store, changes: dict[str, object], named: str) -> None:
    h = demo()
    store.import_history(dataclasses.replace(h, messages=h.messages[:8]))
    changed = replace_message(h, "m05", **changes)
    with pytest.raises(StoreError) as err:
        store.import_history(changed)
    msg = str(err.value)
    assert "'demo-chief'" in msg and "'m05'" in msg and named in msg and "nothing" in msg
    assert "\n" not in msg
    # nothing of that import was written: m09..m12 were new in it and are still absent
    assert store.load("demo-chief") == dataclasses.replace(h, messages=h.messages[:8])


def test_new_message_before_a_stored_one_is_refused(store: Store) -> None:
    h = demo()
    store.import_history(dataclasses.replace(h, messages=h.messages[2:4]))
    with pytest.raises(StoreError, match=r"'m01' is new but comes before the stored message 'm03'"):
        store.import_history(h)
    assert len(store.load("demo-chief").messages) == 2


def test_reordered_stored_messages_are_refused(store: Store) -> None:
    h = demo()
    store.import_history(h)
    swapped = dataclasses.replace(h, messages=(h.messages[1], h.messages[0]))
    with pytest.raises(StoreError, match="different order"):
        store.import_history(swapped)


def test_tools_set_once_then_conflicts(store: Store) -> None:
    h = demo()
    store.import_history(dataclasses.replace(h, tools=None))
    assert store.load("demo-chief").tools is None
    store.import_history(h)
    assert store.load("demo-chief").tools == h.tools
    with pytest.raises(StoreError, match="tool definitions differ"):
        store.import_history(dataclasses.replace(h, tools=(ToolSpec("other"),)))


def test_bad_messages_are_refused(store: Store) -> None:
    bad_role = History("c", (Message("m1", "robot", "x"),))  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="role 'robot'"):
        store.import_history(bad_role)
    dup = History("c", (Message("m1", "user", "x"), Message("m1", "user", "y")))
    with pytest.raises(StoreError, match="appears twice"):
        store.import_history(dup)
    calls_on_user = History("c", (Message("m1", "user", "x", (ToolCall("t", {}),)),))
    with pytest.raises(StoreError, match="only assistant"):
        store.import_history(calls_on_user)
    assert not store.exists("c")


def test_empty_history_creates_the_conversation(store: Store) -> None:
    assert store.import_history(History("empty", ())) == ImportResult("empty", 0, 0)
    assert store.exists("empty")
    assert store.load("empty") == History("empty", ())


def test_load_missing_conversation(store: Store) -> None:
    assert not store.exists("nope")
    with pytest.raises(StoreError, match="no conversation 'nope'"):
        store.load("nope")


def test_list_conversations(store: Store) -> None:
    assert store.list_conversations() == []
    store.import_history(demo())
    store.append_message("b", Message("u", "user", "hi"))
    assert store.list_conversations() == [
        ConversationInfo("b", 1, 0, None),
        ConversationInfo("demo-chief", 12, 4, "2026-11-02T11:30:00Z"),
    ]


# --------------------------------------------------------------------------------------------------
# appending and the live turn


def test_append_message(store: Store) -> None:
    store.append_message("c", Message("u1", "user", "close #1"))
    store.append_message("c", turn("c", "a1"))
    store.append_message("c", turn("c", "a1"))  # a retried append changes nothing
    h = store.load("c")
    assert [m.id for m in h.messages] == ["u1", "a1"]
    assert len(h.messages[1].tool_uses) == 3
    with pytest.raises(StoreError, match=r"'a1' is already stored with a different text"):
        store.append_message("c", turn("c", "a1", text="other"))


def test_turn_loop_records_each_call(store_factory: Callable[[], Store]) -> None:
    writer, reader = store_factory(), store_factory()
    writer.append_message("c", Message("u1", "user", "close #1 and #2"))
    writer.begin_reply("c", "a1", vessel="kimi", created_at="2026-01-01T00:00:01Z")
    h = reader.load("c")
    assert h.messages[1] == Message(
        "a1", "assistant", "", created_at="2026-01-01T00:00:01Z", vessel="kimi", status="in_progress"
    )
    # recorded before it runs, then again with its answer: one call, answered
    writer.record_call("c", "a1", ToolCall("coop", {"action": "close", "id": 1}, None, call_id="call_0"))
    assert reader.load("c").messages[1].tool_uses[0].answer is None  # committed at once
    writer.record_call(
        "c", "a1", ToolCall("coop", {"action": "close", "id": 1}, "status: closed", call_id="call_0")
    )
    # a provider reusing the id in the next round of the same turn: a second call, not an overwrite
    writer.record_call(
        "c", "a1", ToolCall("coop", {"action": "close", "id": 2}, "status: closed", call_id="call_0")
    )
    writer.record_call(
        "c", "a1", ToolCall("coop", {"action": "list"}, "none open", provider_data={"g": {"s": "x"}})
    )
    writer.finish_reply("c", "a1", text="Closed both.", meta={"rounds": 2}, provider_data={"p": 1})
    a1 = reader.load("c").messages[1]
    assert a1.text == "Closed both." and a1.status == "complete"
    assert a1.meta == {"rounds": 2} and a1.provider_data == {"p": 1}
    assert [(c.input, c.answer) for c in a1.tool_uses] == [
        ({"action": "close", "id": 1}, "status: closed"),
        ({"action": "close", "id": 2}, "status: closed"),
        ({"action": "list"}, "none open"),
    ]
    assert a1.tool_uses[2].provider_data == {"g": {"s": "x"}}
    with pytest.raises(StoreError, match="already complete"):
        writer.record_call("c", "a1", ToolCall("coop", {}, "late"))


def test_interrupted_reply_keeps_its_calls(store: Store) -> None:
    store.begin_reply("c", "a1", vessel=None, created_at=None)
    store.record_call("c", "a1", ToolCall("coop", {"action": "close", "id": 1}, "status: closed"))
    store.finish_reply("c", "a1", text="", status="interrupted")
    m = store.load("c").messages[0]
    assert m.status == "interrupted" and len(m.tool_uses) == 1


def test_live_turn_errors(store: Store) -> None:
    store.append_message("c", Message("u1", "user", "hi"))
    with pytest.raises(StoreError, match="no message 'zz'"):
        store.record_call("c", "zz", ToolCall("t", {}))
    with pytest.raises(StoreError, match="is a user message, not a reply"):
        store.record_call("c", "u1", ToolCall("t", {}))
    with pytest.raises(StoreError, match="already stored; a reply needs a new id"):
        store.begin_reply("c", "u1", vessel=None, created_at=None)
    store.begin_reply("c", "a1", vessel=None, created_at=None)
    with pytest.raises(StoreError, match="status 'done'"):
        store.finish_reply("c", "a1", text="x", status="done")
    with pytest.raises(StoreError, match="no message 'zz'"):
        store.finish_reply("c", "zz", text="x")


def test_positions_are_a_total_order_across_writers(store_factory: Callable[[], Store]) -> None:
    a, b = store_factory(), store_factory()
    for k in range(5):
        a.append_message("c", Message(f"a{k}", "user", "x"))
        b.append_message("c", Message(f"b{k}", "user", "y"))
    assert [m.id for m in a.load("c").messages] == [x for k in range(5) for x in (f"a{k}", f"b{k}")]


WRITER = """
import os, sys, time
from toolreplay._history import Message, ToolCall
from toolreplay._store import open_store
url, name, n, gate = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = open_store(url)
for k in range(n):
    calls = tuple(ToolCall("coop", {"w": name, "k": k, "c": j}, "ok") for j in range(3))
    s.append_message("shared", Message(f"{name}-{k}", "assistant", "done", calls))
    if k == n // 2:  # half written: go on only once the reader has read in the middle of the writes
        deadline = time.monotonic() + 60
        while not os.path.exists(gate):
            if time.monotonic() > deadline:
                sys.exit(f"{name}: the reader never read while the writers wrote")
            time.sleep(0.005)
s.close()
"""


@pytest.mark.slow
def test_many_processes_append_without_loss(store_url: str, store: Store, tmp_path: Path) -> None:
    """4 processes x 20 replies of 3 calls on one conversation; a reader checks every reply it sees.

    The writers pause half-way until the reader has loaded the conversation with some but not all of
    their replies in it, so the reader provably reads while they write (a fast machine could otherwise
    finish every write before the first read, and the check of partial replies would check nothing).
    """
    store.append_message("shared", Message("start", "user", "go"))
    gate = tmp_path / "reader-read"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, store_url, f"w{i}", "20", str(gate)], stderr=subprocess.PIPE
        )
        for i in range(4)
    ]
    seen_partial: list[str] = []
    reads_during_writes = 0
    while any(p.poll() is None for p in procs):
        replies = store.load("shared").messages[1:]
        seen_partial += [m.id for m in replies if len(m.tool_uses) != 3]
        if 0 < len(replies) < 80:
            reads_during_writes += 1
            gate.touch()
        time.sleep(0.01)
    for p in procs:
        _, err = p.communicate()
        assert p.returncode == 0, err.decode()
    h = store.load("shared")
    assert not seen_partial
    assert reads_during_writes >= 1  # the reader read while the writers wrote
    assert len(h.messages) == 81 and len({m.id for m in h.messages}) == 81
    for i in range(4):
        mine = [m.id for m in h.messages if m.id.startswith(f"w{i}-")]
        assert mine == [f"w{i}-{k}" for k in range(20)]  # each writer's own order kept
        assert all(len(m.tool_uses) == 3 for m in h.messages if m.id.startswith(f"w{i}-"))


def test_threads_share_one_store(store: Store) -> None:
    def work(i: int) -> None:
        for k in range(10):
            store.append_message("t", turn("t", f"{i}-{k}", 2))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.load("t").messages) == 40


# --------------------------------------------------------------------------------------------------
# the todo board


def test_todos(store: Store) -> None:
    assert board_of(store).todos() == []
    a = board_of(store).add("fix the flaky build")
    b = board_of(store).add("update the README")
    assert (a.id, a.status, a.note) != (b.id, "x", "y") and b.id > a.id
    assert board_of(store).get(a.id) == a
    closed = board_of(store).update(a.id, status="closed", note="build green")
    assert closed is not None and (closed.status, closed.note, closed.text) == (
        "closed",
        "build green",
        a.text,
    )
    assert closed.created_at == a.created_at
    assert [t.id for t in board_of(store).todos("open")] == [b.id]
    assert [t.id for t in board_of(store).todos("closed")] == [a.id]
    assert [t.id for t in board_of(store).todos()] == [a.id, b.id]
    assert board_of(store).update(999, status="closed") is None
    assert board_of(store).get(999) is None
    with pytest.raises(StoreError, match="not open or closed"):
        board_of(store).update(a.id, status="done")


def test_reopened_store_sees_everything(store_factory: Callable[[], Store], store_url: str) -> None:
    first = store_factory()
    first.import_history(demo())
    board_of(first).add("x")
    first.close()
    again = store_factory()
    assert again.load("demo-chief") == demo()
    assert len(board_of(again).todos()) == 1
    assert backend_of(store_url) in ("sqlite", "postgres")


# --------------------------------------------------------------------------------------------------
# property: any history survives the round trip exactly

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_calls = st.lists(
    st.builds(
        ToolCall,
        name=st.text(min_size=1, max_size=12),
        input=_json,
        answer=st.none() | st.text(max_size=30),
        call_id=st.none() | st.text(max_size=6),
        is_error=st.booleans(),
        provider_data=st.none() | st.dictionaries(st.text(max_size=4), _json, max_size=2),
    ),
    max_size=4,
)


@st.composite
def histories(draw: st.DrawFn) -> History:
    ids = draw(st.lists(st.text(min_size=1, max_size=10), min_size=0, max_size=6, unique=True))
    msgs = []
    for mid in ids:
        role = draw(st.sampled_from(["user", "assistant"]))
        msgs.append(
            Message(
                mid,
                role,
                draw(st.text(max_size=20)),
                tuple(draw(_calls)) if role == "assistant" else (),
                created_at=draw(st.none() | st.text(max_size=10)),
                vessel=draw(st.none() | st.sampled_from(["kimi", "gemini"])),
                status=draw(st.sampled_from(["complete", "interrupted", "in_progress"])),
                meta=draw(st.none() | st.dictionaries(st.text(max_size=4), _json, max_size=2)),
            )
        )
    return History(draw(st.text(min_size=1, max_size=10)), tuple(msgs))


@given(histories())
def test_any_history_round_trips(h: History) -> None:
    with SQLiteStore(":memory:") as s:
        s.import_history(h)
        assert s.load(h.id) == h
        assert s.import_history(h) == ImportResult(h.id, 0, len(h.messages))


# --------------------------------------------------------------------------------------------------
# SQLite only: the file, its mode, its migrations


def test_default_path_and_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with SQLiteStore() as s:
        assert Path(s.path) == tmp_path / "xdg" / "toolreplay" / "toolreplay.db"
    assert (tmp_path / "xdg" / "toolreplay" / "toolreplay.db").is_file()
    monkeypatch.setenv("TOOLREPLAY_DB", str(tmp_path / "env" / "x.db"))
    with open_store() as s:  # type: ignore[attr-defined]
        assert s.path == str(tmp_path / "env" / "x.db")
    with open_store(f"sqlite:///{tmp_path}/url.db") as s:  # type: ignore[attr-defined]
        assert s.path == f"{tmp_path}/url.db"


def test_wal_busy_timeout_and_blank_migrations(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "t.db") as s:
        assert s.applied_migrations() == sorted(S.MIGRATION_NAMES)
    conn = sqlite3.connect(tmp_path / "t.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"conversations", "messages", "tool_uses", "todos", "schema_migrations"} <= tables
    finally:
        conn.close()
    with SQLiteStore(tmp_path / "t.db") as s:
        assert s._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
        assert s.migrate() == []  # reopening applies nothing


def test_upgrade_from_the_first_schema(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(S.MIGRATIONS_TABLE["sqlite"])
        for statement in S.MIGRATIONS[0].sqlite:
            conn.execute(statement)
        conn.execute(S.RECORD_MIGRATION, (S.MIGRATIONS[0].name, "2026-01-01T00:00:00Z"))
        h = before_steps(demo())
        conn.execute(S.ENSURE_CONVERSATION, (h.id, R.tools_text(h.tools)))
        for pos, m in enumerate(h.messages):
            conn.execute(OLD_INSERT_MESSAGE, old_message_row(h.id, pos, m))
            conn.executemany(OLD_INSERT_TOOL_USE, old_tool_use_rows(h.id, m.id, m.tool_uses))
    finally:
        conn.close()
    with SQLiteStore(db) as s:
        assert s.applied_migrations() == sorted(S.MIGRATION_NAMES)
        assert s.load("demo-chief") == h  # data intact
        assert board_of(s).add("after the upgrade").id == 1  # the new table works
        assert s.import_history(h).unchanged == 12


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "t.db") as s:
        s._conn.execute(S.RECORD_MIGRATION, ("9999_from_the_future", "2030-01-01T00:00:00Z"))
    with pytest.raises(StoreError, match=r"newer toolreplay.*9999_from_the_future"):
        SQLiteStore(tmp_path / "t.db")


def test_not_a_database(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite at all, just text" * 100)
    with pytest.raises(StoreError, match=r"bad\.db"):
        SQLiteStore(bad)


def test_unwritable_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="cannot create its directory"):
        SQLiteStore(tmp_path / "file" / "sub" / "t.db")


@pytest.mark.slow
def test_big_conversation_loads_with_one_query_per_table(tmp_path: Path) -> None:
    msgs = tuple(
        turn("big", f"m{i}", 1) if i % 2 else Message(f"m{i}", "user", f"question {i}") for i in range(10_000)
    )
    h = History("big", msgs)
    with SQLiteStore(tmp_path / "big.db") as s:
        s.import_history(h)
        statements: list[str] = []
        s._conn.set_trace_callback(statements.append)
        back = s.load("big")
        s._conn.set_trace_callback(None)
    assert back == h
    selects = [q for q in statements if q.lstrip().upper().startswith("SELECT")]
    # the conversation, its messages, its tool uses: a query count that does not grow with the messages
    # (how fast the load is on an idle machine is the bench's to say: bench/ "store load")
    assert len(selects) == 3, selects


@pytest.mark.slow
def test_ten_thousand_calls_on_one_reply(store: Store) -> None:
    calls = tuple(ToolCall("coop", {"i": i}, f"answer {i}") for i in range(10_000))
    m = Message("a", "assistant", "many", calls)
    store.append_message("c", m)
    assert store.load("c").messages[0] == m


def test_postgres_spelling_of_the_schema(pg_database: str) -> None:
    """Every migration's PostgreSQL statements apply, and the shared queries (via ``pg``) round-trip."""
    import psycopg

    h = demo()
    with psycopg.connect(pg_database) as conn:
        cur = conn.cursor()
        with conn.transaction():
            cur.execute(S.MIGRATIONS_TABLE["postgres"])
            for m in S.MIGRATIONS:
                for statement in m.statements("postgres"):
                    cur.execute(statement)
                cur.execute(S.pg(S.RECORD_MIGRATION), (m.name, "2026-01-01T00:00:00Z"))
        with conn.transaction():
            cur.execute(S.pg(S.ENSURE_CONVERSATION), (h.id, R.tools_text(h.tools)))
            start = cur.execute(S.pg(S.NEXT_POSITION), (h.id,)).fetchone()[0]  # type: ignore[index]
            cur.executemany(
                S.pg(S.INSERT_MESSAGE), [R.message_row(h.id, start + k, m) for k, m in enumerate(h.messages)]
            )
            cur.executemany(
                S.pg(S.INSERT_TOOL_USE),
                [r for m in h.messages for r in R.tool_use_rows(h.id, m.id, m.tool_uses)],
            )
        tools = cur.execute(S.pg(S.CONVERSATION_EXISTS), (h.id,)).fetchone()[0]  # type: ignore[index]
        rows = cur.execute(S.pg(S.LOAD_MESSAGES), (h.id,)).fetchall()
        calls = cur.execute(S.pg(S.LOAD_TOOL_USES), (h.id,)).fetchall()
        assert R.history_from_rows(h.id, tools, rows, calls) == h
        assert cur.execute(S.pg(S.LIST_CONVERSATIONS)).fetchall() == [
            ("demo-chief", 12, 4, "2026-11-02T11:30:00Z", None)  # no origin: not the proxy's
        ]
        assert cur.execute(S.pg(board.INSERT), ("x", "t0", "t0")).fetchone() == (1,)
        assert sorted(r[0] for r in cur.execute(S.pg(S.APPLIED_MIGRATIONS))) == sorted(S.MIGRATION_NAMES)


def test_text_that_is_not_unicode_is_refused_whole(store: Store) -> None:
    h = History("c", (Message("a", "user", "fine"), Message("b", "user", "lone \ud800 surrogate")))
    with pytest.raises(StoreError, match=r"\\ud800"):
        store.import_history(h)
    assert not store.exists("c")

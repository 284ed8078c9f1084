# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""One turn at a time per conversation, and a reply whose writer is gone reads as interrupted (design 40;
issue 27, items 4, 7 and 12), on SQLite and PostgreSQL.

* 16 turns started at once on one conversation, each on its own store (its own connection, as 16
  processes would have): every question is followed by its own answer;
* a reply in progress reads as in progress while its writer runs, and as interrupted once its writer is
  gone: a real ``toolreplay turn`` process SIGKILLed mid-stream, whose shown words are kept;
* SIGTERM is handled as Ctrl-C: the reply is marked interrupted by the process itself, which then
  ends by the signal (a shell reports 143).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from store_fixtures import _fresh_pg_database, store, store_factory, store_url  # noqa: F401
from toolreplay._history import Message
from toolreplay._loop import TurnOptions, run_turn
from toolreplay._store import Store
from toolreplay._store.turns import WRITER, Writer
from toolreplay.testing import Hang, Item, ProviderDouble, RecordedRequest, Text

N_TURNS = 16
SHOWN = "Counting the open todos one by one"


def _echo(request: RecordedRequest) -> Item:
    """Answer each question with its own words, so a reply can be paired with its question."""
    question = request.body["messages"][-1]["content"]
    return Text(f"answer to {question}")


@pytest.mark.slow
def test_sixteen_concurrent_turns_never_interleave(store_factory: Callable[[], Store]) -> None:
    stores = [store_factory() for _ in range(N_TURNS)]
    errors: list[BaseException] = []
    with ProviderDouble(responder=_echo, delay=0.02) as double:
        opts = TurnOptions(base_url=double.base_url_for("kimi"), timeout=120)
        start = threading.Barrier(N_TURNS)

        def one(i: int) -> None:
            try:
                start.wait()
                run_turn("shared", f"question {i}", "kimi", store=stores[i], options=opts)
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(N_TURNS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    assert errors == []
    messages = stores[0].load("shared").messages
    assert len(messages) == 2 * N_TURNS
    pairs = [(messages[i], messages[i + 1]) for i in range(0, len(messages), 2)]
    for question, answer in pairs:
        assert (question.role, answer.role) == ("user", "assistant"), [m.id for m in messages]
        assert answer.text == f"answer to {question.text}" and answer.status == "complete"
    assert sorted(q.text for q, _ in pairs) == sorted(f"question {i}" for i in range(N_TURNS))
    # each request saw the whole conversation before it: one turn at a time
    for r in double.requests:
        sent = r.body["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant"] * (len(sent) // 2) + ["user"]


def _begin_reply(store: Store, lock_token: str) -> None:
    store.append_message("c", Message("u1", "user", "hi"))
    w = Writer("somehost", 4242, None, lock_token).as_json()
    store.begin_reply("c", "a2", vessel="kimi", created_at=None, meta={WRITER: w})


def test_a_reply_whose_writer_holds_the_lock_reads_in_progress(store_factory: Callable[[], Store]) -> None:
    writer_store, reader = store_factory(), store_factory()
    lock = writer_store.try_lock_turn("c")
    assert lock is not None
    assert writer_store.try_lock_turn("c") is None and reader.try_lock_turn("c") is None  # held
    _begin_reply(writer_store, lock.token)
    assert reader.load("c").messages[1].status == "in_progress"
    lock.release()  # let go without finishing the reply: the way a dead process lets go
    reply = reader.load("c").messages[1]
    assert reply.status == "interrupted"
    assert reply.meta is not None and "ended without finishing it" in reply.meta["error"]
    assert [m.status for m in reader.load_range("c", 0).messages] == ["complete", "interrupted"]
    again = reader.try_lock_turn("c")  # free again
    assert again is not None
    assert reader.load("c").messages[1].status == "interrupted"  # another holder is not its writer
    again.release()


def test_a_reply_without_a_writer_is_never_judged(store: Store) -> None:
    """Replies stored before design 40, or by callers of the store that hold no lock, stay as stored."""
    store.append_message("c", Message("u1", "user", "hi"))
    store.begin_reply("c", "a2", vessel="kimi", created_at=None)
    assert store.load("c").messages[1].status == "in_progress"


def _turn_process(db: str, url: str, *extra: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "toolreplay", "turn", "count them", "-v", "kimi", "--cid", "c"]
    cmd += ["--db", db, "--base-url", url, *extra]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for(predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _stalled_stream(double: ProviderDouble) -> None:
    double.script(Hang(seconds=60, after_events=6, then=Text(SHOWN + ", and the rest never comes.")))


def _words_stored(store: Store) -> bool:
    return store.exists("c") and len(m := store.load("c").messages) == 2 and "Counting" in m[1].text


@pytest.mark.slow
def test_a_killed_turn_reads_interrupted_with_the_words_it_showed(store_url: str, store: Store) -> None:
    with ProviderDouble() as double:
        _stalled_stream(double)
        with _turn_process(store_url, double.base_url_for("kimi")) as proc:
            _wait_for(lambda: _words_stored(store), "the shown words in the store")
            assert store.load("c").messages[1].status == "in_progress"  # its writer runs, holding the lock
            proc.kill()  # SIGKILL: no handler runs
            proc.communicate(timeout=30)
        # PostgreSQL lets go of a dead client's lock when its backend reads the closed socket and exits,
        # a moment after the kill, not at it: the reply reads interrupted once that has happened.
        _wait_for(lambda: store.load("c").messages[1].status == "interrupted", "the writer's lock let go")
        reply = store.load("c").messages[1]
        assert reply.status == "interrupted" and reply.text.startswith("Counting")
        from click.testing import CliRunner

        from toolreplay._cli import cli

        shown = CliRunner().invoke(cli, ["history", "show", "c", "--db", store_url])
        assert "interrupted" in shown.output and "in progress" not in shown.output, shown.output
        double.script(Text("Two."))
        result = run_turn("c", "how many?", "kimi", store=store, options=TurnOptions(base_url=double.url))
        assert result.reply.status == "complete"
        assert [m.status for m in store.load("c").messages] == ["complete", "interrupted"] + ["complete"] * 2


@pytest.mark.slow
def test_sigterm_is_handled_as_ctrl_c(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    with ProviderDouble() as double:
        _stalled_stream(double)
        with _turn_process(db, double.base_url_for("kimi")) as proc:
            _wait_for(lambda: len(double.requests) == 1 and _raw_reply(db) is not None, "the reply row")
            time.sleep(0.5)  # the stream has begun
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGTERM, err  # ended by the signal, after its cleanup
    assert "Traceback" not in err
    status, text = _raw_reply(db) or ("", "")
    assert status == "interrupted", status  # written by the process itself, not read so by a reader
    assert text.startswith("Counting")


def _raw_reply(db: str) -> tuple[str, str] | None:
    """The reply's row as stored (no reader's judgement in between)."""
    if not Path(db).exists():
        return None
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT status, text FROM messages WHERE id = 'a2'").fetchone()
    return (str(row[0]), str(row[1])) if row else None

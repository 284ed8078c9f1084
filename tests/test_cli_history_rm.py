# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""``toolreplay history rm CONVERSATION [MESSAGE]``: asks first (naming what goes), ``--yes`` skips the
question, unknown ids get one line and change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from store_fixtures import store_url  # noqa: F401
from toolreplay._cli import cli
from toolreplay._history import History, Message, ToolCall
from toolreplay._store import open_store
from toolreplay._store.sqlite import SQLiteStore


def _conversation(cid: str) -> History:
    calls = (ToolCall("coop", {"id": 1}, "closed 1"), ToolCall("coop", {"id": 2}, "closed 2"))
    return History(
        cid,
        (
            Message("u1", "user", "close them"),
            Message("a2", "assistant", "closed", calls),
            Message("u3", "user", "thanks"),
        ),
    )


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "rm.db")
    with SQLiteStore(path) as s:
        s.import_history(_conversation("c"))
        s.import_history(_conversation("keep"))
    return path


def _ids(db: str, cid: str) -> list[str] | None:
    with SQLiteStore(db) as s:
        return [m.id for m in s.load(cid).messages] if s.exists(cid) else None


def test_rm_conversation_asks_and_yes_removes(db: str) -> None:
    res = CliRunner().invoke(cli, ["history", "rm", "c", "--db", db], input="y\n")
    assert res.exit_code == 0, res.output
    assert "Remove conversation 'c' (3 messages, 2 calls)? [y/N]" in res.output
    assert res.output.rstrip().endswith("Removed conversation 'c' (3 messages, 2 calls).")
    assert _ids(db, "c") is None and _ids(db, "keep") == ["u1", "a2", "u3"]


@pytest.mark.parametrize("answer", ["n\n", "\n"])
def test_rm_answered_no_removes_nothing(db: str, answer: str) -> None:
    res = CliRunner().invoke(cli, ["history", "rm", "c", "a2", "--db", db], input=answer)
    assert res.exit_code == 0, res.output
    assert "Remove message 'a2' of conversation 'c' (1 message, 2 calls)? [y/N]" in res.output
    assert "Nothing removed." in res.output
    assert _ids(db, "c") == ["u1", "a2", "u3"]


@pytest.mark.parametrize("flag", ["--yes", "-y"])
def test_rm_message_with_yes_does_not_ask(db: str, flag: str) -> None:
    res = CliRunner().invoke(cli, ["history", "rm", "c", "a2", flag, "--db", db])
    assert res.exit_code == 0, res.output
    assert "?" not in res.output
    assert res.output == "Removed message 'a2' of conversation 'c' (1 message, 2 calls).\n"
    assert _ids(db, "c") == ["u1", "u3"] and _ids(db, "keep") == ["u1", "a2", "u3"]
    with SQLiteStore(db) as s:
        assert sum(len(m.tool_uses) for m in s.load("c").messages) == 0


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["nope"], "Error: no conversation 'nope' in "),
        (["nope", "u1"], "Error: no conversation 'nope' in "),
        (["c", "zz"], "Error: conversation 'c': no message 'zz'"),
    ],
)
def test_rm_unknown_ids_one_line(db: str, args: list[str], said: str) -> None:
    res = CliRunner().invoke(cli, ["history", "rm", *args, "--yes", "--db", db])
    assert res.exit_code == 1
    assert res.output.startswith(said) and res.output.count("\n") == 1, res.output
    assert _ids(db, "c") == ["u1", "a2", "u3"]


def _listed(url: str) -> list[str]:
    store = open_store(url)
    try:
        return sorted(c.id for c in store.list_conversations())
    finally:
        store.close()


@pytest.mark.parametrize("args", [["c"], ["c", "a2"]])
def test_rm_refuses_while_a_turn_runs(store_url: str, args: list[str]) -> None:
    """A running turn holds the conversation's turn lock (here held by this test, as a turn in another
    process would): removing under it would leave the turn writing into a deleted conversation."""
    store = open_store(store_url)
    try:
        store.import_history(_conversation("c"))
        store.import_history(_conversation("keep"))
        lock = store.try_lock_turn("c")
        assert lock is not None
        try:
            res = CliRunner().invoke(cli, ["history", "rm", *args, "--yes", "--db", store_url])
            other = CliRunner().invoke(cli, ["history", "rm", "keep", "--yes", "--db", store_url])
        finally:
            lock.release()
        assert [m.id for m in store.load("c").messages] == ["u1", "a2", "u3"]
    finally:
        store.close()
    assert res.exit_code == 1, res.output
    assert "conversation 'c': a turn on it is running; nothing removed" in res.output
    assert other.exit_code == 0, other.output  # another conversation's lock is its own
    assert _listed(store_url) == ["c"]
    res = CliRunner().invoke(cli, ["history", "rm", *args, "--yes", "--db", store_url])
    assert res.exit_code == 0, res.output  # the turn ended: removed


def test_rm_is_in_the_help() -> None:
    res = CliRunner().invoke(cli, ["history", "--help"])
    assert res.exit_code == 0 and "rm" in res.output and "remove" in res.output
    res = CliRunner().invoke(cli, ["history", "rm", "--help"], prog_name="toolreplay")
    assert "--yes" in res.output and "--db" in res.output
    assert "Usage: toolreplay history rm [OPTIONS] CONVERSATION [MESSAGE]" in res.output  # MESSAGE optional
    assert "``" not in res.output  # help is plain text, not reStructuredText

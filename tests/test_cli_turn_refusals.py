"""turn and chat refuse what cannot be sent before storing anything, and say what a failed turn left."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers_cli import conversations, one_line_error, run
from toolreplay._cli import cli
from toolreplay._errors import ConfigError
from toolreplay._store.sqlite import SQLiteStore
from toolreplay.testing import Error, NotJSON, ProviderDouble, Text


@pytest.fixture(scope="module")
def _server() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.fixture
def double(_server: ProviderDouble) -> ProviderDouble:
    _server.clear()
    return _server


# -- turn and chat: refused before storing; a failed turn says what it left ----------------------------


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["", "--conversation", "c"], "Invalid value for 'TEXT': must not be empty"),
        (["  ", "--conversation", "c"], "Invalid value for 'TEXT': must not be empty"),
        (["hi", "--conversation", " "], "Invalid value for '--cid' / '--conversation': must not be empty"),
    ],
)
def test_turn_refuses_empty_text_or_conversation(tmp_path: Path, args: list[str], problem: str) -> None:
    db = tmp_path / "t.db"
    res = run("turn", *args, "--vessel", "kimi", "--db", str(db), "--base-url", "http://127.0.0.1:9")
    assert res.exit_code == 2 and problem in res.stderr
    assert conversations(db) == []


def test_run_turn_refuses_empty_text_before_storing(tmp_path: Path) -> None:
    from toolreplay._loop import run_turn

    with SQLiteStore(tmp_path / "t.db") as s:
        with pytest.raises(ConfigError, match="needs the user's text"):
            run_turn("c", " \n", "kimi", store=s)
        with pytest.raises(ConfigError, match="needs a conversation id"):
            run_turn("", "hi", "kimi", store=s)
        assert s.list_conversations() == []


@pytest.mark.keyless  # needs the key unset
def test_a_turn_refused_before_sending_says_nothing_was_stored(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    res = run("turn", "hi", "--vessel", "openai", "--conversation", "c", "--db", str(db))
    line = one_line_error(res)
    assert (
        line == "Error: openai: set OPENAI_API_KEY or point base_url (--base-url) at a local server "
        "(nothing was stored)"
    )
    assert conversations(db) == []


def test_a_turn_refused_with_a_400_says_nothing_was_stored(double: ProviderDouble, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    double.script(Error(400, "messages: bad shape"))
    res = run(
        "turn", "hi", "--vessel", "anthropic", "--conversation", "c", "--db", str(db),
        "--base-url", double.base_url_for("anthropic"),
    )  # fmt: skip
    line = one_line_error(res)
    assert "messages: bad shape" in line and line.endswith("(nothing was stored)")
    assert conversations(db) == []


def test_a_failed_turn_says_its_reply_is_stored_interrupted(double: ProviderDouble, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    double.script(NotJSON())  # answered, if unreadably: the provider may have worked on (and billed) it
    res = run(
        "turn", "hi", "--vessel", "anthropic", "--conversation", "c", "--db", str(db),
        "--base-url", double.base_url_for("anthropic"),
    )  # fmt: skip
    line = one_line_error(res)
    assert "Bad Gateway" in line and line.endswith("(the reply a2 is stored as interrupted)")
    with SQLiteStore(db) as s:
        assert [(m.id, m.status) for m in s.load("c").messages] == [("u1", "complete"), ("a2", "interrupted")]


def test_chat_says_what_a_failed_turn_left_and_where_a_switch_sends(
    double: ProviderDouble, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    url = double.base_url_for("kimi")
    double.script(Text("Hello."))
    script = "hi\n/vessel gemini\nhello\n/vessel kimi " + url + "\n/exit\n"
    res = CliRunner().invoke(
        cli,
        ["chat", "--vessel", "kimi", "--conversation", "c", "--db", str(db), "--base-url", url],
        input=script,
    )
    out = res.output
    assert res.exit_code == 0, out
    assert "kimi> Hello." in out
    # The chat's base URL is kept across a switch (the double serves every wire on it).
    assert f"vessel: gemini at {url}" in out
    assert "gemini> ok" in out
    assert f"vessel: kimi at {url}" in out
    with SQLiteStore(db) as s:
        assert [m.vessel for m in s.load("c").messages] == [None, "kimi", None, "gemini"]


def test_chat_refuses_an_empty_conversation_id(tmp_path: Path) -> None:
    res = run("chat", "--vessel", "kimi", "--conversation", "", "--db", str(tmp_path / "t.db"))
    assert res.exit_code == 2 and "'--conversation': must not be empty" in res.stderr

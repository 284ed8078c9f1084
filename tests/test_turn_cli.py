"""`toolreplay turn`, `chat` and `check` through the real CLI entry, against the provider doubles."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolreplay._cli import cli
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore
from toolreplay.testing import Call, Calls, Error, ProviderDouble, Text


@pytest.fixture(scope="module")
def _server() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.fixture
def double(_server: ProviderDouble) -> ProviderDouble:
    _server.clear()  # one server for the module (stopping one takes half a second), fresh per test
    return _server


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "cli.db"
    with SQLiteStore(path) as s:
        board_of(s).add("fix the flaky build")
        board_of(s).add("update the README")
    return path


def test_turn_prints_the_reply_and_the_calls(double: ProviderDouble, db: Path, tmp_path: Path) -> None:
    double.script(Calls([Call("coop", {"action": "close", "id": 1})]), Text("Closed #1."))
    dump = tmp_path / "dump"
    res = CliRunner().invoke(
        cli,
        ["turn", "Close #1, the build is green.", "--vessel", "kimi", "--conversation", "c1",
         "--tools", "coop", "--db", str(db), "--base-url", double.base_url_for("kimi"),
         "--dump-requests", str(dump)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert res.stdout == "Closed #1.\n"
    assert '⚙ coop {"action":"close","id":1}' in res.stderr and "-> status: closed" in res.stderr
    with SQLiteStore(db) as s:
        assert board_of(s).get(1).status == "closed"  # type: ignore[union-attr]
    names = sorted(p.name for p in dump.iterdir())
    assert "0001-kimi-request.json" in names and "0002-kimi-request.json" in names
    second = json.loads((dump / "0002-kimi-request.json").read_text(encoding="utf-8"))
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "functions.coop:0",
        "name": "coop",
        "content": "status: closed",
    }


def test_turn_json_prints_the_stored_records(double: ProviderDouble, db: Path) -> None:
    double.script(Text("Closed #2."))
    res = CliRunner().invoke(
        cli,
        ["turn", "Close #2.", "--vessel", "gemini", "--conversation", "c2", "--tools", "coop", "--json",
         "--db", str(db), "--base-url", double.base_url_for("gemini")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    record = json.loads(res.stdout)
    assert record["id"] == "c2" and [m["id"] for m in record["messages"]] == ["u1", "a2"]
    reply = record["messages"][1]
    assert reply["vessel"] == "gemini" and reply["meta"]["said_without_doing"]["action"] == "close"
    assert "said without doing" in res.stderr


def test_turn_surfaces_the_providers_message(double: ProviderDouble, db: Path) -> None:
    double.script(Error(400, "messages.0.content: text content blocks must be non-empty"))
    res = CliRunner().invoke(
        cli,
        ["turn", "hi", "--vessel", "anthropic", "--conversation", "c3", "--db", str(db),
         "--base-url", double.base_url_for("anthropic")],
    )  # fmt: skip
    assert res.exit_code == 1
    assert "HTTP 400: messages.0.content: text content blocks must be non-empty" in res.output
    assert "Traceback" not in res.output


def test_turn_dry_tools_and_system_file(double: ProviderDouble, db: Path, tmp_path: Path) -> None:
    system = tmp_path / "system.txt"
    system.write_text("You keep the board.", encoding="utf-8")
    double.script(Calls([Call("coop", {"action": "close", "id": 2})]), Text("Closed #2 (dry)."))
    res = CliRunner().invoke(
        cli,
        ["turn", "Close #2.", "--vessel", "openai", "--conversation", "c4", "--tools", "coop", "--dry-tools",
         "--system", f"@{system}", "--db", str(db), "--base-url", double.base_url_for("openai")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "dry run [dry run] coop close 2: not executed" in res.stderr
    assert double.requests[0].body["messages"][0] == {"role": "system", "content": "You keep the board."}
    with SQLiteStore(db) as s:
        assert board_of(s).get(2).status == "open"  # type: ignore[union-attr]


def test_chat_streams_switches_vessels_and_shows_history(double: ProviderDouble, db: Path) -> None:
    double.script(
        Calls([Call("coop", {"action": "list"})]),
        Text("Two todos are open."),
        Text("Closed #1."),  # said without doing: flagged in the chat
    )
    script = "\n".join(
        [
            "What is open?",
            "/vessel",
            f"/vessel anthropic {double.base_url_for('anthropic')}",
            "Close #1.",
            "/vessel nosuch",
            "/frob",
            "/history",
            "/exit",
            "never sent",
        ]
    )
    res = CliRunner().invoke(
        cli,
        ["chat", "--vessel", "kimi", "--conversation", "talk", "--tools", "coop", "--db", str(db),
         "--base-url", double.base_url_for("kimi")],
        input=script + "\n",
    )  # fmt: skip
    out = res.output
    assert res.exit_code == 0, out
    assert "conversation talk on kimi; tools: coop." in out
    assert 'kimi> \n  ⚙ coop {"action":"list"}' in out and "#1 open  fix the flaky build" in out
    assert "Two todos are open." in out
    assert "vessel: kimi" in out and "vessel: anthropic at http://127.0.0.1" in out
    assert "anthropic> Closed #1." in out and "⚠ said without doing: 'Closed #1.'" in out
    assert "unknown vessel 'nosuch'" in out and "unknown command /frob" in out
    assert "talk: 4 messages, 1 call " in out and "[said without doing]" in out
    assert len(double.requests) == 3  # "never sent" came after /exit
    with SQLiteStore(db) as s:
        assert [m.vessel for m in s.load("talk").messages if m.role == "assistant"] == ["kimi", "anthropic"]


def test_chat_keeps_going_after_a_provider_error(double: ProviderDouble, db: Path) -> None:
    double.script(Error(401, "invalid x-api-key"), Text("Hello."))
    res = CliRunner().invoke(
        cli,
        ["chat", "--vessel", "anthropic", "--db", str(db), "--base-url", double.base_url_for("anthropic")],
        input="hi\nhi again\n",
    )
    assert res.exit_code == 0, res.output
    assert (
        "error: anthropic: HTTP 401: invalid x-api-key" in res.output and "nothing was stored" in res.output
    )
    assert "anthropic> Hello." in res.output
    assert "conversation chat-" in res.output


def test_check_online_against_the_double(double: ProviderDouble) -> None:
    double.script(Text("Yes, #14 is still open."), Error(400, "tool_use ids must be unique"))
    res = CliRunner().invoke(
        cli, ["check", "--vessel", "kimi", "--vessel", "openai", "--base-url", double.url + "/v1"]
    )
    assert res.exit_code == 1
    lines = res.output.splitlines()
    assert lines[0] == "demo-chief: 4 stored calls, sent to 2 vessel(s)"
    assert lines[1] == "kimi    accepted: 'Yes, #14 is still open.'"
    assert lines[2].startswith("openai  rejected: openai: HTTP 400: tool_use ids must be unique")
    # the demo's calls travelled as calls
    sent = double.requests[0].body["messages"]
    assert sum(len(m.get("tool_calls", [])) for m in sent) == 4


def test_check_offline_validates_every_vessel() -> None:
    res = CliRunner().invoke(cli, ["check", "--offline"])
    assert res.exit_code == 0, res.output
    body = res.output.splitlines()[1:]
    assert len(body) >= 11 and all(line.split()[1] == "valid" for line in body)


@pytest.mark.keyless  # needs the key unset
def test_check_needs_a_key_or_a_vessel() -> None:
    res = CliRunner().invoke(cli, ["check"])
    assert res.exit_code == 1 and "no vessel has its key set" in res.output
    res = CliRunner().invoke(cli, ["check", "--vessel", "kimi"])
    assert res.exit_code == 1 and "cannot be checked: kimi: set MOONSHOT_API_KEY" in res.output
    res = CliRunner().invoke(cli, ["check", "--vessel", "claude"])
    assert res.exit_code == 1 and "cannot be checked: the claude vessel" in res.output


def test_check_with_a_history_file(double: ProviderDouble, tmp_path: Path) -> None:
    hist = tmp_path / "h.json"
    hist.write_text(
        json.dumps({"id": "mine", "messages": [
            {"id": "m1", "role": "user", "text": "Close #12."},
            {"id": "m2", "role": "assistant", "text": "Closed #12.", "tool_uses": [
                {"tool_name": "coop", "tool_input": {"action": "close", "id": 12}},
                {"tool_name": "result", "tool_input": "status: closed"}]},
            {"id": "m3", "role": "user", "text": "Thanks."}]}),
        encoding="utf-8",
    )  # fmt: skip
    res = CliRunner().invoke(
        cli,
        ["check", "--history", str(hist), "--vessel", "gemini", "--base-url", double.base_url_for("gemini")],
    )
    assert res.exit_code == 0, res.output
    assert res.output.startswith("mine: 1 stored calls")
    parts = [p for c in double.requests[0].body["contents"] for p in c["parts"]]
    assert any("functionCall" in p for p in parts) and any("functionResponse" in p for p in parts)


def test_turn_options_are_given_by_name_only() -> None:
    """Two flags (``dry_tools``, ``send_key``) and two optional strings (``model``, ``base_url``) must not be
    swappable by position, neither in the turn's options nor in the CLI's packing of them."""
    from typing import Any, cast

    from toolreplay._cli._sending import turn_settings
    from toolreplay._loop import TurnOptions

    with pytest.raises(TypeError):
        cast(Any, TurnOptions)("a system prompt")
    with pytest.raises(TypeError):
        cast(Any, turn_settings)(None, None, None, 8, True, None)
    made = turn_settings(
        system=None, model="m", base_url="http://b", max_requests=3, dry_tools=True, dump_requests=None
    )
    assert (made.model, made.base_url, made.dry_tools, made.send_key, made.max_requests) == (
        "m", "http://b", True, False, 3,
    )  # fmt: skip

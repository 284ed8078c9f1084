"""A turn whose first request fails before the provider answered anything leaves the conversation as it
was (design 28): through the real transport, against a port nobody listens on, then the provider double."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolreplay import ConnectionFault, TurnOptions, open_store, run_turn
from toolreplay._cli import cli
from toolreplay._history import History, Message
from toolreplay.testing import ProviderDouble, Text


def _refused_port() -> int:
    """A loopback port that was free a moment ago: nothing listens there, so connecting is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_port_leaves_the_conversation_and_the_next_body_has_the_text_once(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "t.db"))
    try:
        store.import_history(
            History("c", (Message("u1", "user", "before"), Message("a2", "assistant", "ok")))
        )
        refused = TurnOptions(base_url=f"http://127.0.0.1:{_refused_port()}")
        with pytest.raises(ConnectionFault):
            run_turn("c", "say hi", "kimi", store=store, options=refused)
        assert [m.id for m in store.load("c").messages] == ["u1", "a2"]
        with ProviderDouble() as d:
            d.script(Text("Hi."))
            run_turn("c", "say hi", "kimi", store=store, options=TurnOptions(base_url=d.base_url_for("kimi")))
            body = d.requests[0].body
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert users == ["before", "say hi"]
        assert [m.id for m in store.load("c").messages] == ["u1", "a2", "u3", "a4"]
    finally:
        store.close()


def test_the_cli_says_nothing_was_stored(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    url = f"http://127.0.0.1:{_refused_port()}"
    args = ["turn", "hi", "-v", "kimi", "--conversation", "c", "--db", db, "--base-url", url]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1
    assert res.output.rstrip().endswith("(nothing was stored)"), res.output
    res = CliRunner().invoke(cli, ["history", "list", "--db", db, "--json"])
    assert res.output.strip() == "[]"

"""The proxy's command line and its store records: refusals before listening, and `history list`
naming the agent and the upstream of what the proxy recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolreplay._cli import cli
from toolreplay._history import Message
from toolreplay._proxy.matching import Continued, continued, head_of, prefix_heads
from toolreplay._store import open_store


def test_beyond_loopback_without_a_token_is_refused() -> None:
    result = CliRunner().invoke(cli, ["proxy", "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "give --token TOKEN" in result.output


def test_an_upstream_of_an_unknown_wire_or_not_http_is_refused() -> None:
    bad = CliRunner().invoke(cli, ["proxy", "--upstream", "nope=http://x"])
    assert bad.exit_code == 1 and "unknown wire 'nope'" in bad.output
    ftp = CliRunner().invoke(cli, ["proxy", "--upstream", "anthropic=ftp://x"])
    assert ftp.exit_code == 1 and "http:// or https://" in ftp.output
    size = CliRunner().invoke(cli, ["proxy", "--max-body", "lots"])
    assert size.exit_code == 2 and "32MB" in size.output


def test_history_list_names_the_agent_and_the_upstream(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    store = open_store(db)
    store.set_origin(
        "p1", {"agent": "claude-cli/2.0", "upstream": "anthropic api.anthropic.com"}, session="s", head="h"
    )
    store.append_message("p1", Message("u1", "user", "hi", created_at="2026-12-01T00:00:00Z"))
    store.append_message("plain", Message("u1", "user", "hi", created_at="2026-11-01T00:00:00Z"))
    assert store.find_heads(["h", "x"]) == [("p1", "h")]
    assert store.find_heads(["h"], "other") == []
    store.set_head("p1", "h2", "ignored: it has one")
    assert store.find_heads(["h2"], "s") == [("p1", "h2")]
    store.close()
    got = CliRunner().invoke(cli, ["history", "list", "--json", "--db", db])
    rows = {r["id"]: r for r in json.loads(got.output)}
    assert rows["p1"]["agent"] == "claude-cli/2.0" and rows["p1"]["upstream"] == "anthropic api.anthropic.com"
    assert "agent" not in rows["plain"]
    table = CliRunner().invoke(cli, ["history", "list", "--db", db], terminal_width=200)
    assert "claude-cli/2.0" in table.output


def test_a_message_carried_again_is_not_hashed_again_and_its_head_follows_what_precedes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every request of a conversation carries its system prompt and its big tool answers again (the read
    # memo gives them as the same objects): each is hashed once after the same head, not on every request
    import hashlib

    from toolreplay._proxy import matching

    hashed: list[int] = []
    sha256 = hashlib.sha256
    monkeypatch.setattr(matching.hashlib, "sha256", lambda b: hashed.append(len(b)) or sha256(b))
    prompt = Message("s1", "system", "you are an agent " * 2000)
    ask, reply = Message("u2", "user", "close 12"), Message("a3", "assistant", "")
    first = prefix_heads([prompt, ask, reply])
    assert len(hashed) == 3
    again = prefix_heads([prompt, ask, reply, Message("u4", "user", "and 13")])
    assert again[:3] == first and len(hashed) == 4  # the last message alone
    other = prefix_heads([Message("s0", "system", "another prompt"), prompt, ask])
    assert len(hashed) == 7 and other[1] != first[0]  # after another head: hashed again, its own digest
    monkeypatch.setattr(matching, "_AFTER", matching.ByIdentity(16))  # as if never seen
    assert prefix_heads([Message("s0", "system", "another prompt"), prompt, ask]) == other


def test_the_longest_stored_prefix_wins_and_replies_match_by_role() -> None:
    a = [Message("s1", "system", "be brief"), Message("u2", "user", "close  12")]
    b = [*a, Message("a3", "assistant", "done", meta={"x": 1}), Message("u4", "user", "and 13")]
    request = [Message("m1", "system", "be brief"), Message("m2", "user", "close 12"),
               Message("m3", "assistant", "Done, differently worded"), Message("m4", "user", "and 13"),
               Message("m5", "assistant", "")]  # fmt: skip
    heads = prefix_heads(request)
    found = [("short", head_of(a)), ("long", head_of(b)), ("other", head_of([Message("u", "user", "x")]))]
    assert continued(found, heads) == Continued("long", 4)
    cut = [*a, Message("a3", "assistant", "half", meta={"cut": True})]  # a reply the agent never saw
    assert head_of(cut) == head_of(a)

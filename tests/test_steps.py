# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""A reply as an ordered record (design 16-17): steps, reasoning with its issuer, answer parts.

The file form round-trips, both stores keep it (and a database from before migration 0005 upgrades and
still reads), and a history without steps reads exactly as it did.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from store_fixtures import (  # noqa: F401
    OLD_INSERT_MESSAGE,
    OLD_INSERT_TOOL_USE,
    old_message_row,
    old_tool_use_rows,
    store,
    store_factory,
    store_url,
)
from toolreplay._errors import HistoryError, StoreError
from toolreplay._history import (
    History,
    Issuer,
    Message,
    Part,
    Reasoning,
    Step,
    Text,
    ToolCall,
    history_to_dict,
    load_history,
)
from toolreplay._steps import host_of, parts_text
from toolreplay._store import Store
from toolreplay._store import schema as S
from toolreplay._store.sqlite import SQLiteStore

CLAUDE = Issuer("anthropic", "api.anthropic.com", "claude-sonnet-4-5")
THINK = {"anthropic": {"type": "thinking", "thinking": "Look it up first.", "signature": "c2lnMQ=="}}
IMAGE = Part("image", media_type="image/png", data="iVBORw0KGgo=")


def two_steps() -> History:
    """A reply that called, read the answer, called again, then answered (with thinking each time)."""
    calls = (
        ToolCall("find_order", {"id": 7}, "order 7: shipped", "toolu_1"),
        ToolCall("screenshot", {"id": 7}, None, "toolu_2", parts=(Part("text", text="the page"), IMAGE)),
    )
    steps = (
        Step((Reasoning("Look it up first.", THINK), Text("Let me look the order up.")), 1, CLAUDE),
        Step((Reasoning("", {"anthropic": {"type": "redacted_thinking", "data": "b3BhcXVl"}}),), 1, CLAUDE),
        Step((Reasoning("Done.", THINK),), 0, CLAUDE),
    )
    reply = Message("a2", "assistant", "Order 7 has shipped.", calls, steps=steps)
    return History("c", (Message("u1", "user", "Where is order 7?"), reply))


def test_a_parts_answer_reads_as_text_where_only_text_travels() -> None:
    c = two_steps().messages[1].tool_uses[1]
    assert c.answer == "the page\n[image (image/png, 12 characters of base64)]"
    assert parts_text((Part("document", media_type="application/pdf", url="https://x/a.pdf"),)) == (
        "[document (application/pdf, https://x/a.pdf)]"
    )


def test_step_calls_groups_the_calls_and_a_reply_without_steps_is_one_step() -> None:
    reply = two_steps().messages[1]
    groups = reply.step_calls()
    assert [len(calls) for _, calls in groups] == [1, 1, 0]
    assert groups[0][0].words == "Let me look the order up."
    legacy = Message("a", "assistant", "ok", reply.tool_uses)
    assert [(s.calls, s.said) for s, _ in legacy.step_calls()] == [(2, ())]


def test_the_file_form_round_trips(tmp_path: Path) -> None:
    h = two_steps()
    d = history_to_dict(h)
    assert d["messages"][1]["steps"][0]["issuer"] == CLAUDE.as_json()
    assert d["messages"][1]["tool_uses"][3]["parts"][1] == {"kind": "image", "media_type": "image/png",
                                                            "data": "iVBORw0KGgo="}  # fmt: skip
    assert load_history(d) == h
    import json

    f = tmp_path / "h.json"
    f.write_text(json.dumps(d), encoding="utf-8")
    assert load_history(f) == h


@pytest.mark.parametrize(
    ("steps", "problem"),
    [
        ([{"calls": 1}], "steps: the steps hold 1 calls, the reply 2"),
        ([{"calls": 0}, {"calls": 2}], "steps: only the last step may have no calls"),
        ([{"calls": 2, "said": [{"kind": "thought"}]}], "steps[0].said[0].kind: kind 'thought'"),
        ([{"calls": 2, "issuer": {"wire": "x", "host": 1}}], "steps[0].issuer: wire, host and model"),
        ({"calls": 2}, "steps: must be a list"),
    ],
)
def test_a_bad_step_record_is_refused_naming_the_field(steps: object, problem: str) -> None:
    d = history_to_dict(two_steps())
    d["messages"][1]["steps"] = steps
    with pytest.raises(HistoryError, match=re.escape("message 1 (id a2): " + problem)):
        load_history(d)


def test_a_bad_part_is_refused() -> None:
    d = history_to_dict(two_steps())
    d["messages"][1]["tool_uses"][3]["parts"] = [{"kind": "video"}]
    with pytest.raises(HistoryError, match=r"tool_uses\[3\]\.parts\[0\]\.kind"):
        load_history(d)


def test_both_stores_keep_steps_reasoning_and_parts(store: Store) -> None:
    h = two_steps()
    store.import_history(h)
    assert store.load("c") == h
    assert store.load("c").messages[1].steps[0].issuer == CLAUDE
    assert store.import_history(h).unchanged == 2
    changed = History(
        "c", (h.messages[0], Message("a2", "assistant", h.messages[1].text, h.messages[1].tool_uses))
    )
    with pytest.raises(StoreError, match="steps"):
        store.import_history(changed)


def test_a_live_reply_stores_its_steps_when_it_finishes(store: Store) -> None:
    h = two_steps()
    reply = h.messages[1]
    store.append_message("c", h.messages[0])
    store.begin_reply("c", "a2", vessel="anthropic", created_at=None)
    for c in reply.tool_uses:
        store.record_call("c", "a2", ToolCall(c.name, c.input, None, c.call_id))
        store.record_call("c", "a2", c)
    store.finish_reply("c", "a2", text=reply.text, steps=reply.steps)
    got = store.load("c").messages[1]
    assert got.steps == reply.steps and got.tool_uses == reply.tool_uses


def test_steps_that_no_longer_fit_the_calls_are_ignored_on_load(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "t.db") as s:
        s.append_message("c", Message("u", "user", "hi"))
        s.begin_reply("c", "a", vessel=None, created_at=None)
        s.finish_reply("c", "a", text="", status="interrupted", steps=())
        s._conn.execute("UPDATE messages SET steps = ? WHERE id = 'a'", ('[{"calls": 3}]',))
        assert s.load("c").messages[1].steps == ()


def test_a_database_from_before_steps_upgrades_and_reads_as_before(tmp_path: Path) -> None:
    h = History(
        "c", (Message("u1", "user", "hi"), Message("a1", "assistant", "ok", (ToolCall("t", {}, "x"),)))
    )
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(S.MIGRATIONS_TABLE["sqlite"])
        for m in S.MIGRATIONS[: S.MIGRATION_NAMES.index("0005_reply_steps_answer_parts")]:
            for statement in m.sqlite:
                conn.execute(statement)
            conn.execute(S.RECORD_MIGRATION, (m.name, "2026-01-01T00:00:00Z"))
        conn.execute(S.ENSURE_CONVERSATION, ("c", None))
        for pos, m in enumerate(h.messages):
            conn.execute(OLD_INSERT_MESSAGE, old_message_row("c", pos, m))
            conn.executemany(OLD_INSERT_TOOL_USE, old_tool_use_rows("c", m.id, m.tool_uses))
    finally:
        conn.close()
    with SQLiteStore(db) as s:
        assert "0005_reply_steps_answer_parts" in s.applied_migrations()
        assert s.load("c") == h
        assert s.load("c").messages[1].steps == ()


def test_host_of() -> None:
    assert host_of("https://API.x.ai/v1") == "api.x.ai"
    assert host_of("claude") == ""
    assert host_of("http://[::1]:8000/v1") == "::1"

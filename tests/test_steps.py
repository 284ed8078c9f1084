# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""A reply as an ordered record (design 16-17): steps, reasoning with its issuer, answer parts.

The file form round-trips, both stores keep it (and a database from before migration 0005 upgrades and
still reads), and a history without steps reads exactly as it did.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import replace
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
from toolreplay._replay import (
    Mode,
    ReplaySettings,
    ReplayStep,
    TurnMessage,
    prepare_turn_messages,
    turn_steps,
)
from toolreplay._steps import Audience, answer_text, host_of
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
    assert answer_text((Part("document", media_type="application/pdf", url="https://x/a.pdf"),)) == (
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


# --------------------------------------------------------------------------------------------------
# the replay seam: steps replay as steps, reasoning only to its issuer (design 16-19)


def _audience(issuer: Issuer, *shared: str) -> ReplaySettings:
    return ReplaySettings(audience=Audience(issuer.wire, issuer.host, issuer.model, frozenset(shared)))


def _reply_turn(h: History, settings: ReplaySettings, mode: Mode = "native") -> TurnMessage:
    return next(t for t in prepare_turn_messages(h, mode, settings=settings) if t.role == "assistant")


def test_same_issuer_gets_every_step_whole() -> None:
    h = two_steps()
    t = _reply_turn(h, _audience(CLAUDE))
    assert [len(s.calls) for s in t.steps] == [1, 1, 0]
    assert t.steps[0].said == h.messages[1].steps[0].said  # reasoning verbatim, words beside it
    assert t.calls == tuple(c for s in t.steps for c in s.calls)
    assert t.text == "Order 7 has shipped." and t.warnings == ()


@pytest.mark.parametrize(
    "settings",
    [
        _audience(Issuer("anthropic", "api.z.ai", "claude-sonnet-4-5")),  # another host
        _audience(Issuer("anthropic", "api.anthropic.com", "claude-opus-4-1")),  # another model
        _audience(Issuer("openai-chat", "api.anthropic.com", "claude-sonnet-4-5")),  # another wire
        ReplaySettings(),  # no audience: to no one
    ],
)
def test_every_other_vessel_gets_no_reasoning_and_a_warning_names_it(settings: ReplaySettings) -> None:
    t = _reply_turn(two_steps(), settings)
    assert [len(s.calls) for s in t.steps] == [1, 1, 0]
    assert all(isinstance(p, Text) for s in t.steps for p in s.said)
    assert t.steps[0].said == (Text("Let me look the order up."),)  # the words still ride with the call
    assert len(t.warnings) == 3 and all("1 piece of reasoning not replayed" in w for w in t.warnings)


def test_models_a_profile_says_share_signatures_get_them() -> None:
    settings = _audience(
        Issuer("anthropic", "api.anthropic.com", "claude-x"), "claude-sonnet-4-5", "claude-x"
    )
    assert _reply_turn(two_steps(), settings).warnings == ()


def test_plain_and_prose_replay_no_reasoning_and_show_every_word() -> None:
    for mode in ("plain", "prose"):
        t = _reply_turn(two_steps(), _audience(CLAUDE), mode)  # type: ignore[arg-type]
        assert t.steps == () and t.calls == ()
        assert t.text == "Let me look the order up.\n\nOrder 7 has shipped."


def test_the_window_cuts_a_step_keeping_its_last_calls_without_its_reasoning() -> None:
    calls = tuple(ToolCall("t", {"n": n}, f"r{n}") for n in range(5))
    steps = (Step((Reasoning("a", THINK),), 3, CLAUDE), Step((Reasoning("b", THINK), Text("two")), 2, CLAUDE))
    h = History("c", (Message("u", "user", "go"), Message("a", "assistant", "done", calls, steps=steps)))
    t = _reply_turn(h, replace(_audience(CLAUDE), max_calls=3))
    assert [[c.input["n"] for c in s.calls] for s in t.steps] == [[2], [3, 4]]
    assert t.steps[0].said == () and t.steps[1].said == steps[1].said
    assert t.warnings == (
        "message a: step 1: 1 piece of reasoning not replayed: cut by the call window (design 19)",
    )
    # a step wholly before the window is left out with its words
    t = _reply_turn(h, replace(_audience(CLAUDE), max_calls=2))
    assert len(t.steps) == 1 and t.warnings == ()
    # ids stay derived from the position in the reply
    assert [c.call_id for c in t.calls] == ["replay_a_3", "replay_a_4"]


def test_a_reply_without_steps_replays_as_before() -> None:
    calls = (ToolCall("t", {}, "x"), ToolCall("t", {"b": 1}, "y"))
    h = History("c", (Message("u", "user", "go"), Message("a", "assistant", "ok", calls)))
    t = _reply_turn(h, _audience(CLAUDE))
    assert t.steps == () and len(t.calls) == 2
    assert turn_steps(t) == (ReplayStep((), t.calls),)


def test_a_reply_in_progress_replays_its_steps_in_every_mode() -> None:
    h = two_steps()
    reply = replace(h.messages[1], text="", status="in_progress", steps=h.messages[1].steps[:2])
    h = History("c", (h.messages[0], reply))
    for mode in ("native", "plain"):
        t = _reply_turn(h, _audience(CLAUDE), mode)  # type: ignore[arg-type]
        assert [len(s.calls) for s in t.steps] == [1, 1] and t.text == ""
        has_reasoning = any(isinstance(p, Reasoning) for s in t.steps for p in s.said)
        assert has_reasoning == (mode == "native")

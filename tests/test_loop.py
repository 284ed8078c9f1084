"""The turn loop with a scripted transport: storing, ids, tools, dry runs, failures, the flag."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from toolreplay._errors import (
    BadRequestError,
    ConfigError,
    ConnectionFault,
    ProviderTimeout,
    ResponseFormatError,
    ServerError,
)
from toolreplay._history import History, Issuer, Message, Step, Text, ToolCall, ToolSpec
from toolreplay._loop import (
    CallFinished,
    CallStarted,
    Flagged,
    TextDelta,
    TurnEvent,
    TurnOptions,
    merge_provider_data,
    next_id,
    run_turn,
    run_turn_async,
)
from toolreplay._replay import NO_ANSWER
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import Tool, ToolRegistry
from toolreplay._tools.coop import coop_tool
from toolreplay._vessels import get_vessel
from toolreplay.wires import get_wire
from toolreplay.wires.reply import ParsedCall, Reply, Usage


class Scripted:
    """Stands in for the Transport: answers each send with the next scripted Reply (or raises)."""

    def __init__(self, *replies: Reply | Exception) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.vessels: list[str] = []

    async def send(self, vessel: Any, body: Mapping[str, Any], **kw: Any) -> Reply:
        self.bodies.append(dict(body))
        self.vessels.append(vessel.name)
        r = self.replies.pop(0)
        if isinstance(r, Exception):
            raise r
        if kw.get("on_text") and r.text:
            kw["on_text"](r.text)
        return r


def close_call(n: int, call_id: str | None = "call_1") -> Reply:
    return Reply(calls=(ParsedCall("coop", {"action": "close", "id": n}, call_id),), usage=Usage(10, 2, 4))


def text(t: str) -> Reply:
    return Reply(text=t, usage=Usage(12, 3, 8), finish_reason="stop")


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # The scripted transport sends nothing, but a turn refuses a remote vessel without its key up front.
    for var in ("MOONSHOT_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(var, "test-key-not-sent")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "loop.db")
    board_of(s).add("fix the flaky build")
    board_of(s).add("update the README")
    yield s
    s.close()


def turn(store: SQLiteStore, t: Scripted, text_: str, vessel: str = "kimi", **kw: Any) -> Any:
    reg = kw.pop("registry", ToolRegistry([coop_tool(board_of(store))]))
    return run_turn("c1", text_, vessel, reg, store=store, transport=t, **kw)


def test_a_turn_runs_the_tool_records_the_call_and_finishes(store: SQLiteStore) -> None:
    events: list[TurnEvent] = []
    t = Scripted(close_call(1), text("Closed #1."))
    res = turn(store, t, "Close #1, the build is green.", on_event=events.append)
    assert res.reply.text == "Closed #1." and res.stopped == "answer" and res.requests == 2
    assert res.usage == Usage(22, 5, 12)
    assert board_of(store).get(1).status == "closed"  # type: ignore[union-attr]
    h = store.load("c1")
    assert [(m.id, m.role, m.status) for m in h.messages] == [
        ("u1", "user", "complete"),
        ("a2", "assistant", "complete"),
    ]
    stored = h.messages[1]
    assert stored.tool_uses == (ToolCall("coop", {"action": "close", "id": 1}, "status: closed", "call_1"),)
    assert stored.vessel == "kimi" and stored.created_at and h.messages[0].created_at
    assert stored.meta is not None and stored.meta["requests"] == 2 and stored.meta["stopped"] == "answer"
    assert stored.meta["finish_reason"] == "stop"
    assert stored.meta["usage"] == {"input_tokens": 22, "output_tokens": 5, "cached_tokens": 12}
    assert "said_without_doing" not in stored.meta
    # the continuation request carries the call in the wire's shape, with its final Kimi id
    second = t.bodies[1]["messages"]
    assert second[-2]["tool_calls"][0]["function"] == {
        "name": "coop",
        "arguments": '{"action":"close","id":1}',
    }
    assert second[-1] == {
        "role": "tool",
        "tool_call_id": "functions.coop:0",
        "name": "coop",
        "content": "status: closed",
    }
    assert [type(e).__name__ for e in events] == ["CallStarted", "CallFinished", "TextDelta"]
    started = events[0]
    assert isinstance(started, CallStarted) and started.call_id == "replay_a2_0"
    finished = events[1]
    assert isinstance(finished, CallFinished) and finished.answer == "status: closed" and finished.executed


def test_next_turn_keeps_the_earlier_bytes(store: SQLiteStore) -> None:
    t = Scripted(close_call(1), text("Closed #1."), text("Yes, #1 is closed."))
    turn(store, t, "Close #1.", vessel="anthropic")
    turn(store, t, "Is it closed?", vessel="anthropic")
    inside, later = t.bodies[1]["messages"], t.bodies[2]["messages"]
    # the in-turn continuation request is a prefix of the next turn's request, element-wise
    assert later[: len(inside)] == inside
    assert inside[1]["content"][0] == {
        "type": "tool_use",
        "id": "replay_a2_0",
        "name": "coop",
        "input": {"action": "close", "id": 1},
    }
    assert [m["role"] for m in later] == ["user", "assistant", "user", "assistant", "user"]


def test_vessels_change_between_turns(store: SQLiteStore) -> None:
    t = Scripted(
        close_call(1), text("Closed #1."), close_call(2, None), text("Closed #2."), text("Both closed.")
    )
    turn(store, t, "Close #1.", vessel="kimi")
    turn(store, t, "Close #2.", vessel="gemini")
    turn(store, t, "Status?", vessel="anthropic")
    assert t.vessels == ["kimi", "kimi", "gemini", "gemini", "anthropic"]
    gem = t.bodies[3]["contents"]
    calls = [p["functionCall"] for c in gem for p in c["parts"] if "functionCall" in p]
    assert [c["args"] for c in calls] == [{"action": "close", "id": 1}, {"action": "close", "id": 2}]
    anth = t.bodies[4]["messages"]
    ids = [b["id"] for m in anth if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert ids == ["replay_a2_0", "replay_a4_0"]
    h = store.load("c1")
    assert [m.vessel for m in h.messages if m.role == "assistant"] == ["kimi", "gemini", "anthropic"]


def test_dry_run_records_and_executes_nothing(store: SQLiteStore) -> None:
    events: list[TurnEvent] = []
    t = Scripted(close_call(1), text("Closed #1."))
    res = turn(store, t, "Close #1.", options=TurnOptions(dry_tools=True), on_event=events.append)
    assert board_of(store).get(1).status == "open"  # type: ignore[union-attr]
    assert res.reply.tool_uses[0].answer == "[dry run] coop close 1: not executed"
    assert res.reply.meta is not None and res.reply.meta["dry_tools"] is True
    fin = next(e for e in events if isinstance(e, CallFinished))
    assert fin.dry and not fin.executed


def test_broken_arguments_are_recorded_and_answered_with_an_error(store: SQLiteStore) -> None:
    broken = Reply(
        calls=(ParsedCall("coop", '{"action": "close", "id": 1', "c9", input_error="unterminated"),)
    )
    t = Scripted(broken, text("Sorry, retrying later."))
    res = turn(store, t, "Close #1.")
    call = store.load("c1").messages[1].tool_uses[0]
    assert call.input == '{"action": "close", "id": 1' and call.is_error
    assert call.answer is not None and "cannot be used (unterminated)" in call.answer
    assert board_of(store).get(1).status == "open"  # type: ignore[union-attr]
    assert res.reply.status == "complete"
    # replayed as an input excerpt, never as broken JSON
    assert t.bodies[1]["messages"][-2]["tool_calls"][0]["function"]["arguments"].startswith(
        '{"input_excerpt"'
    )


def test_request_limit_stops_and_keeps_the_calls(store: SQLiteStore) -> None:
    t = Scripted(close_call(1), close_call(2, "call_2"), text("unused"))
    res = turn(store, t, "Close everything.", options=TurnOptions(max_requests=2))
    assert res.stopped == "request_limit" and res.requests == 2 and len(t.bodies) == 2
    stored = store.load("c1").messages[1]
    assert stored.status == "interrupted" and len(stored.tool_uses) == 2
    assert stored.meta is not None and stored.meta["stopped"] == "request_limit"
    with pytest.raises(ConfigError, match="max_requests must be at least 1"):
        TurnOptions(max_requests=0)
    # the old names still work
    assert TurnOptions(max_steps=3).max_requests == 3 and res.steps == res.requests


def test_a_failure_mid_turn_leaves_an_interrupted_reply_that_replays(store: SQLiteStore) -> None:
    t = Scripted(close_call(1), BadRequestError("kimi: HTTP 400: bad thing", status=400))
    with pytest.raises(BadRequestError, match="bad thing"):
        turn(store, t, "Close #1.")
    stored = store.load("c1").messages[1]
    assert stored.status == "interrupted" and stored.tool_uses[0].answer == "status: closed"
    assert stored.meta is not None and stored.meta["error"] == "kimi: HTTP 400: bad thing"
    t2 = Scripted(text("Done before."))
    turn(store, t2, "Did it work?")
    msgs = t2.bodies[0]["messages"]
    assert msgs[1]["tool_calls"][0]["function"]["name"] == "coop"
    assert msgs[2]["content"] == "status: closed"


def test_an_error_on_the_first_request_leaves_nothing_behind(store: SQLiteStore) -> None:
    t = Scripted(BadRequestError("anthropic: HTTP 400: messages: bad", status=400))
    with pytest.raises(BadRequestError):
        turn(store, t, "Hello", vessel="anthropic")
    assert not store.exists("c1")  # the turn made the conversation: it goes too
    turn(store, Scripted(text("Hi.")), "First", vessel="anthropic")
    t = Scripted(BadRequestError("anthropic: HTTP 400: messages: bad", status=400))
    with pytest.raises(BadRequestError):
        turn(store, t, "Hello", vessel="anthropic")
    assert [m.id for m in store.load("c1").messages] == ["u1", "a2"]
    t2 = Scripted(text("Hi."))
    turn(store, t2, "Hello again", vessel="anthropic")
    users = [m["content"][0]["text"] for m in t2.bodies[0]["messages"] if m["role"] == "user"]
    assert users == ["First", "Hello again"]
    assert [m.id for m in store.load("c1").messages] == ["u1", "a2", "u3", "a4"]


@pytest.mark.parametrize(
    "error",
    [
        ServerError("kimi: HTTP 500: down", status=500),
        BadRequestError("kimi: HTTP 302: (empty body)", status=302),
    ],
)
def test_an_error_status_on_the_first_request_leaves_nothing(store: SQLiteStore, error: Exception) -> None:
    """A 5xx after its retries and a redirect (never followed) are the provider not answering (design 28)."""
    with pytest.raises(type(error)):
        turn(store, Scripted(error), "Hello")
    assert not store.exists("c1")


@pytest.mark.parametrize(
    "error",
    [
        ProviderTimeout("kimi: the turn took longer than 1 s"),
        ResponseFormatError("kimi: the answer is not JSON"),
    ],
)
def test_a_failure_the_provider_may_have_worked_on_keeps_the_interrupted_reply(
    store: SQLiteStore, error: Exception
) -> None:
    with pytest.raises(type(error)):
        turn(store, Scripted(error), "Hello")
    h = store.load("c1")
    assert [(m.role, m.status, m.tool_uses, m.text) for m in h.messages] == [
        ("user", "complete", (), "Hello"),
        ("assistant", "interrupted", (), ""),
    ]


def test_streamed_text_before_a_cut_keeps_the_interrupted_reply(store: SQLiteStore) -> None:
    class CutAfterText(Scripted):
        async def send(self, vessel: Any, body: Mapping[str, Any], **kw: Any) -> Reply:
            kw["on_text"]("Half an ans")
            raise ConnectionFault("kimi: the stream was cut")

    with pytest.raises(ConnectionFault):
        turn(store, CutAfterText(), "Hello")
    assert [(m.id, m.status, m.text) for m in store.load("c1").messages] == [
        ("u1", "complete", "Hello"),
        ("a2", "interrupted", "Half an ans"),  # the words shown are kept (issue 27, item 7)
    ]


def test_words_shown_before_a_later_step_fails_follow_its_steps(store: SQLiteStore) -> None:
    class CutInStepTwo(Scripted):
        async def send(self, vessel: Any, body: Mapping[str, Any], **kw: Any) -> Reply:
            if not self.bodies:
                return await super().send(vessel, body, **kw)
            self.bodies.append(dict(body))
            kw["on_text"]("So far")
            raise KeyboardInterrupt  # Ctrl-C while the second answer streams

    with pytest.raises(KeyboardInterrupt):
        turn(store, CutInStepTwo(close_call(1)), "Close #1.")
    reply = store.load("c1").messages[1]
    assert reply.status == "interrupted" and reply.text == "So far" and len(reply.tool_uses) == 1


@pytest.mark.slow
def test_streamed_words_are_stored_as_they_come_in_batches(store: SQLiteStore, tmp_path: Path) -> None:
    """A process killed mid-stream keeps what it showed, up to the last batch (issue 27, item 7)."""
    seen: list[tuple[str, str]] = []

    class Slow(Scripted):
        async def send(self, vessel: Any, body: Mapping[str, Any], **kw: Any) -> Reply:
            for piece in ("One ", "two ", "three."):
                kw["on_text"](piece)
                with SQLiteStore(store.path) as other:  # what another process reads meanwhile
                    m = other.load("c1").messages[1]
                    seen.append((m.status, m.text))
                await asyncio.sleep(0.6 if piece == "two " else 0.0)
            return Reply(text="One two three.")

    turn(store, Slow(), "Count.")
    # the first words at once, then nothing until the batch interval has passed
    assert seen == [("in_progress", "One "), ("in_progress", "One "), ("in_progress", "One two three.")]
    assert store.load("c1").messages[1].text == "One two three."


def test_a_crashing_tool_is_kept_unanswered(store: SQLiteStore) -> None:
    def boom(args: Mapping[str, Any]) -> str:
        raise RuntimeError("disk on fire")

    reg = ToolRegistry([coop_tool(board_of(store)), Tool(ToolSpec("boom"), boom)])
    t = Scripted(
        Reply(calls=(ParsedCall("coop", {"action": "close", "id": 1}, "a"), ParsedCall("boom", {}, "b"))),
    )
    with pytest.raises(RuntimeError, match="disk on fire"):
        turn(store, t, "Go.", registry=reg)
    stored = store.load("c1").messages[1]
    assert stored.status == "interrupted"
    assert [(c.name, c.answer) for c in stored.tool_uses] == [("coop", "status: closed"), ("boom", None)]
    t2 = Scripted(text("ok"))
    turn(store, t2, "Again?", registry=reg)
    tool_msgs = [m for m in t2.bodies[0]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_msgs] == ["status: closed", NO_ANSWER]


def test_said_without_doing_is_flagged_and_stored(store: SQLiteStore) -> None:
    events: list[TurnEvent] = []
    t = Scripted(text("Closed #2."))
    res = turn(store, t, "Close #2.", on_event=events.append)
    assert res.flag is not None and res.flag["action"] == "close" and res.flag["words"] == "Closed"
    stored = store.load("c1").messages[1]
    assert stored.meta is not None and stored.meta["said_without_doing"]["tool"] == "coop"
    assert isinstance(events[-1], Flagged)
    # an intention is not a claim; a real close is supported
    t = Scripted(text("I'll close #2 now."), close_call(2), text("Closed #2."))
    assert turn(store, t, "Close #2.").flag is None
    assert turn(store, t, "Close #2.").flag is None


def test_no_tools_this_turn_declares_the_history_tools_with_choice_none(store: SQLiteStore) -> None:
    t = Scripted(close_call(1), text("Closed #1."), text("It is closed."))
    turn(store, t, "Close #1.", vessel="openai")
    turn(store, t, "Is it?", vessel="openai", registry=None)
    body = t.bodies[2]
    assert body["tool_choice"] == "none" and body["tools"][0]["function"]["name"] == "coop"


def test_text_pieces_and_provider_data_of_several_steps(store: SQLiteStore) -> None:
    first = Reply(
        text="Let me close it.",
        calls=(ParsedCall("coop", {"action": "close", "id": 1}, "c1"),),
        provider_data={"openai-chat": {"reasoning_content": "think 1"}},
    )
    t = Scripted(
        first, Reply(text="Closed #1.", provider_data={"openai-chat": {"reasoning_content": "think 2"}})
    )
    res = turn(store, t, "Close #1.")
    # design 16: the words before the call ride with it in its step; the reply's text is its final words
    assert res.reply.text == "Closed #1."
    kimi = Issuer("openai-chat", "api.moonshot.ai", "kimi-k2-0905-preview")
    assert res.reply.steps == (Step((Text("Let me close it."),), 1, kimi),)
    assert res.reply.meta is not None and res.reply.meta["text_pieces"] == ["Let me close it.", "Closed #1."]
    stored = store.load("c1").messages[1]
    assert stored.steps == res.reply.steps and stored.text == "Closed #1."
    assert stored.provider_data == {"openai-chat": {"reasoning_content": "think 2"}}
    # the continuation request ends with the tool results (no prefill text after them)
    assert t.bodies[1]["messages"][-1]["role"] == "tool"


def test_ids_and_helpers() -> None:
    h = History("c", (Message("u1", "user", "x"), Message("a3", "assistant", "y")))
    assert next_id(None, "u") == "u1"
    assert next_id(h, "a") == "a4"  # position 3 is free by number, but a3 is taken
    assert next_id(h, "u") == "u3"
    assert merge_provider_data(None, {"g": {"a": 1}}) == {"g": {"a": 1}}
    assert merge_provider_data({"g": {"a": 1}, "x": 1}, {"g": {"b": 2}}) == {"g": {"a": 1, "b": 2}, "x": 1}
    assert merge_provider_data({"g": 1}, None) == {"g": 1}


def test_imported_ids_are_skipped(store: SQLiteStore) -> None:
    store.import_history(
        History("c1", (Message("u1", "user", "old"), Message("u3", "assistant", "old reply")))
    )
    turn(store, Scripted(text("hi")), "new")
    # position 3 would be u3, which the import already holds: the next free number is taken
    assert [m.id for m in store.load("c1").messages] == ["u1", "u3", "u4", "a4"]


@pytest.mark.keyless  # needs the key unset
def test_a_turn_that_cannot_be_sent_stores_nothing(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigError, match=r"set ANTHROPIC_API_KEY or point base_url \(--base-url\)"):
        run_turn("c9", "hi", "anthropic", store=store)
    with pytest.raises(ConfigError, match="is not an http"):
        run_turn("c9", "hi", "kimi", store=store, options=TurnOptions(base_url="ftp://x"))
    assert not store.exists("c9")


def test_run_turn_refuses_a_running_loop(store: SQLiteStore) -> None:
    async def inner() -> None:
        with pytest.raises(ConfigError, match="await run_turn_async"):
            run_turn("c1", "x", "kimi", store=store)

    asyncio.run(inner())


def test_text_answered_whole_still_reaches_the_ui(store: SQLiteStore) -> None:
    class Whole(Scripted):
        async def send(self, vessel: Any, body: Mapping[str, Any], **kw: Any) -> Reply:
            assert kw["stream"] is True
            return await super().send(vessel, body, **{**kw, "on_text": None})

    events: list[TurnEvent] = []
    turn(store, Whole(text("All done.")), "hi", on_event=events.append)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["All done."]


def test_messages_other_writers_append_meanwhile_wait_for_the_next_turn(store: SQLiteStore) -> None:
    def interloper(args: Mapping[str, Any]) -> str:
        store.append_message("c1", Message("x1", "user", "a message from another writer"))
        return "done"

    reg = ToolRegistry([Tool(ToolSpec("poke"), interloper)])
    t = Scripted(Reply(calls=(ParsedCall("poke", {}, "p1"),)), text("Poked."), text("Seen it."))
    turn(store, t, "Poke.", registry=reg)
    assert "another writer" not in json.dumps(t.bodies[1])  # the turn sees its own past only
    assert [m.id for m in store.load("c1").messages] == ["u1", "a2", "x1"]
    turn(store, t, "And now?", registry=reg)
    contents = [m.get("content") for m in t.bodies[2]["messages"]]
    assert contents.index("a message from another writer") < contents.index("And now?")


def test_the_default_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOOLREPLAY_DB", str(tmp_path / "default.db"))
    res = run_turn("d", "hi", "kimi", transport=Scripted(text("hello")))
    assert res.reply.text == "hello"
    with SQLiteStore(tmp_path / "default.db") as s:
        assert [m.text for m in s.load("d").messages] == ["hi", "hello"]


def test_run_turn_async_directly(store: SQLiteStore) -> None:
    seen: list[str] = []
    res = asyncio.run(
        run_turn_async(
            "c2",
            "hi",
            "ollama",
            None,
            store=store,
            transport=Scripted(text("hello")),  # type: ignore[arg-type]
            on_event=lambda e: seen.append(e.text) if isinstance(e, TextDelta) else None,
        )
    )
    assert res.reply.text == "hello" and seen == ["hello"]
    assert res.user_message.id == "u1" and res.reply.id == "a2"


@pytest.mark.parametrize("vessel", ["kimi", "anthropic", "gemini", "codex"])
def test_a_later_turn_sends_the_bytes_of_a_render_of_its_history(store: SQLiteStore, vessel: str) -> None:
    """Each turn renders its window afresh (a new process in the CLI): the third turn's request is the
    body :func:`toolreplay.render` gives for the stored conversation up to its user message."""
    import toolreplay

    t = Scripted(close_call(1), text("Closed #1."), close_call(2, None), text("Closed #2."), text("Fine."))
    for words in ("Close #1.", "Close #2.", "Status?"):
        turn(store, t, words, vessel=vessel)
    h = store.load("c1")
    stop = History("c1", h.messages[:-1])  # the last request: up to its user message, reply in progress
    want = toolreplay.render(stop, vessel, tools=[coop_tool(board_of(store)).spec])
    got = t.bodies[-1]
    key = get_wire(get_vessel(vessel).wire).list_key
    assert got[key] == want[key]

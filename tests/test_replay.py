"""The replay seam: reply_calls (vocabulary, bounds, ids) and prepare_turn_messages (three modes)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers_common import DEMO, SECTION_2
from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError, HistoryError
from toolreplay._history import History, Message, ToolCall, load_history, normalize_tool_uses, pair_tool_uses
from toolreplay._replay import (
    NO_ANSWER,
    ReplayCall,
    ReplaySettings,
    cut_answer,
    prepare_turn_messages,
    replay_name,
    reply_calls,
)
from toolreplay._vessels import get_vessel


def reply(*calls: ToolCall, mid: str = "m", text: str = "done") -> Message:
    return Message(mid, "assistant", text, tuple(calls))


# --------------------------------------------------------------------------------------------------
# reply_calls


def test_section_2_exact() -> None:
    h = load_history(SECTION_2)
    (call,) = reply_calls(h.messages[1])
    assert call.as_json() == {
        "id": "replay_m2_0",
        "name": "coop",
        "input": {"action": "close", "id": 12},
        "arguments": '{"action":"close","id":12}',
        "answer": "status: closed",
    }
    assert call.patches == ()
    assert reply_calls(h.messages[3]) == ()


def test_only_the_last_12_of_15_calls() -> None:
    m = reply(*(ToolCall("coop", {"n": i}, f"ok {i}") for i in range(15)), mid="m7")
    calls = reply_calls(m)
    assert [c.input["n"] for c in calls] == list(range(3, 15))
    assert [c.call_id for c in calls] == [f"replay_m7_{i}" for i in range(3, 15)]  # absolute positions
    assert [c.input["n"] for c in reply_calls(m, settings=ReplaySettings(max_calls=2))] == [13, 14]


def test_600_character_input_travels_as_excerpt() -> None:
    big = {"text": "x" * 600}
    (c,) = reply_calls(reply(ToolCall("coop", big, "ok")))
    assert list(c.input) == ["input_excerpt"] and "input_excerpt" in c.patches
    excerpt = c.input["input_excerpt"]
    assert len(excerpt) == 500 and excerpt == jsonenc.dumps(big)[:500]
    assert json.loads(c.arguments) == {"input_excerpt": excerpt}  # valid JSON, never broken


@pytest.mark.parametrize(
    "stored",
    [
        '{"action": "add", "text": "' + "y" * 700,  # cut short by the provider
        "plain words, not JSON",
        [1, 2, 3],
        42,
        "x" * 600,
    ],
)
def test_inputs_that_are_not_objects_travel_as_excerpt(stored: Any) -> None:
    (c,) = reply_calls(reply(ToolCall("coop", stored, "ok")))
    text = stored if isinstance(stored, str) else jsonenc.dumps(stored)
    assert c.input == {"input_excerpt": text[:500]}
    assert json.loads(c.arguments) == c.input
    assert len(c.input["input_excerpt"]) <= 500


def test_object_text_travels_as_the_object() -> None:
    (c,) = reply_calls(reply(ToolCall("coop", '{"action": "close",  "id": 12}', "ok")))
    assert c.input == {"action": "close", "id": 12} and c.arguments == '{"action":"close","id":12}'
    assert c.patches == ()
    spaced = "{" + " " * 800 + '"a": 1}'  # long only because of its spaces: the compact object fits
    (c,) = reply_calls(reply(ToolCall("coop", spaced, "ok")))
    assert c.input == {"a": 1}
    (c,) = reply_calls(reply(ToolCall("coop", None, "ok")))
    assert (c.input, c.arguments) == ({}, "{}")


def test_arguments_are_stable_text() -> None:
    (c,) = reply_calls(reply(ToolCall("coop", {"z": "ü✓", "a": [1, {"b": None}]}, "ok")))
    assert c.arguments == '{"z":"ü✓","a":[1,{"b":null}]}'  # key order as stored, compact, non-ASCII kept


def test_mcp_names_replay_in_one_vocabulary() -> None:
    (c,) = reply_calls(reply(ToolCall("mcp__coop__coop", {"action": "list"}, "none")))
    assert (c.name, c.stored_name, c.patches) == ("coop", "mcp__coop__coop", ("renamed",))
    assert replay_name("mcp__my-server__search_docs") == "search_docs"
    assert replay_name("mcp__srv__a__b") == "a__b"
    assert replay_name("coop") == "coop"
    assert replay_name("mcp__coop__coop", {"coop": "board"}) == "board"
    assert replay_name("Bash", {"Bash": "shell"}) == "shell"


def test_answers_are_bounded_with_a_marker() -> None:
    long = "é" * 10_000
    (c,) = reply_calls(reply(ToolCall("t", {}, long)))
    assert len(c.answer) <= 500 and "answer_cut" in c.patches
    assert c.answer.startswith("é" * 400) and c.answer.endswith(" …[cut: 10000 characters in all]")
    exact = "a" * 500
    assert cut_answer(exact, 500) == exact
    assert len(cut_answer("a" * 501, 500)) == 500
    assert cut_answer("a" * 501, 500) == cut_answer("a" * 501, 500)  # deterministic
    (c,) = reply_calls(reply(ToolCall("t", {}, long)), settings=ReplaySettings(max_chars=100))
    assert len(c.answer) <= 100


def test_missing_answer_is_said() -> None:
    (c,) = reply_calls(reply(ToolCall("t", {}, None)))
    assert c.answer == NO_ANSWER and "no_answer" in c.patches


def test_provider_data_and_errors_travel_beside_the_call() -> None:
    pd = {"gemini": {"thoughtSignature": "sig"}}
    (c,) = reply_calls(reply(ToolCall("t", {}, "boom", call_id="toolu_1", is_error=True, provider_data=pd)))
    assert c.is_error and c.provider_data == pd and c.provider_call_id == "toolu_1"
    assert c.call_id == "replay_m_0"  # the provider's id is never replayed as the id


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="max_calls"):
        ReplaySettings(max_calls=0)
    with pytest.raises(ConfigError, match="max_chars"):
        ReplaySettings(max_chars=10)


# --------------------------------------------------------------------------------------------------
# prepare_turn_messages


def test_modes_on_section_2() -> None:
    h = load_history(SECTION_2)
    native = prepare_turn_messages(h, "native")
    assert [len(t.calls) for t in native] == [0, 1, 0, 0]
    plain = prepare_turn_messages(h, "plain")
    assert [t.text for t in plain] == [t.text for t in native] and all(not t.calls for t in plain)
    prose = prepare_turn_messages(h, "prose")
    assert all(not t.calls for t in prose)
    assert prose[2].text == (
        "[Tool calls made in the previous reply]\n"
        '- coop({"action":"close","id":12}) -> status: closed\n\nAnd #13?'
    )
    assert [t.as_json()["message_id"] for t in native] == ["m1", "m2", "m3", "m4"]


def test_prose_keeps_the_records_of_consecutive_replies() -> None:
    h = History(
        "c",
        (
            Message("u1", "user", "go"),
            reply(ToolCall("a", {}, "1"), mid="r1", text="first"),
            reply(ToolCall("b", {}, "2"), mid="r2", text="second"),
            Message("u2", "user", "next"),
        ),
    )
    text = prepare_turn_messages(h, "prose")[3].text
    assert "- a({}) -> 1" in text and "- b({}) -> 2" in text and text.endswith("\n\nnext")


def test_textless_replies_are_left_out_unless_asked() -> None:
    h = History("c", (Message("u", "user", "x"), reply(ToolCall("t", {}, "ok"), mid="r", text="")))
    assert [t.message_id for t in prepare_turn_messages(h)] == ["u"]
    kept = prepare_turn_messages(h, settings=ReplaySettings(skip_textless=False))
    assert [t.message_id for t in kept] == ["u", "r"] and len(kept[1].calls) == 1


@pytest.mark.parametrize("mode", ["native", "plain", "prose"])
@pytest.mark.parametrize("status", ["in_progress", "interrupted"])
def test_unfinished_replies_carry_their_calls_in_every_mode(mode: Any, status: Any) -> None:
    """design 4: the reply in progress travels with its calls although it has no text yet."""
    r = Message(
        "r",
        "assistant",
        "",
        (ToolCall("coop", {"action": "close", "id": 1}, "status: closed"),),
        status=status,
    )
    turns = prepare_turn_messages(History("c", (Message("u", "user", "close #1"), r)), mode)
    assert [t.message_id for t in turns] == ["u", "r"]
    assert turns[1].calls[0].answer == "status: closed"


def test_upto_cuts_after_the_message() -> None:
    h = load_history(SECTION_2)
    assert [t.message_id for t in prepare_turn_messages(h, upto="m2")] == ["m1", "m2"]
    with pytest.raises(HistoryError, match="no message with id 'zz' in conv-1"):
        prepare_turn_messages(h, upto="zz")
    with pytest.raises(ConfigError, match="unknown replay mode 'loud'"):
        prepare_turn_messages(h, "loud")  # type: ignore[arg-type]


def test_demo_replay() -> None:
    gemini = ReplaySettings(audience=get_vessel("gemini").audience())
    turns = {t.message_id: t for t in prepare_turn_messages(load_history(DEMO), "native", settings=gemini)}
    assert turns["m07"].calls[0].name == "coop"
    assert turns["m09"].calls[0].patches == ("input_excerpt",)
    assert turns["m09"].calls[0].provider_data == {
        "gemini": {"thoughtSignature": "CiRkZW1vLXRob3VnaHQtc2lnbmF0dXJlLXN0b3JlZC1ieS1nZW1pbmktbTA5"}
    }
    assert turns["m11"].calls == ()
    # the signature goes back only to the model that made it (design 17), and the warning names it
    other = ReplaySettings(audience=get_vessel("anthropic").audience())
    m09 = next(
        t
        for t in prepare_turn_messages(load_history(DEMO), "native", settings=other)
        if t.message_id == "m09"
    )
    assert m09.calls[0].provider_data is None
    assert m09.warnings == (
        "message m09: step 1: its calls' provider data (signatures) not replayed: made by gemini "
        "generativelanguage.googleapis.com gemini-2.5-flash, not this vessel",
    )
    # a vessel whose wire never carries a signature (Chat, Ollama) loses nothing it could take: no warning
    for name in ("openai-compatible", "ollama"):
        for mode in ("native", "plain"):
            chat = ReplaySettings(audience=get_vessel(name).audience())
            turns = prepare_turn_messages(load_history(DEMO), mode, settings=chat)
            assert [w for t in turns for w in t.warnings if "not replayed" in w] == [], (name, mode)


def test_ten_thousand_calls_replay_the_last_12() -> None:
    m = reply(*(ToolCall("coop", {"i": i}, "ok") for i in range(10_000)), mid="big")
    calls = reply_calls(m)
    assert len(calls) == 12 and calls[-1].call_id == "replay_big_9999"


# --------------------------------------------------------------------------------------------------
# properties

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)
_entry = st.one_of(
    st.fixed_dictionaries(
        {"tool_name": st.sampled_from(["coop", "result", "mcp__coop__coop", ""]), "tool_input": _json}
    ),
    st.fixed_dictionaries(
        {"name": st.text(max_size=5), "input": _json}, optional={"answer": _json, "id": _json}
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_use"), "name": st.text(max_size=5), "input": _json},
        optional={"id": st.sampled_from(["a", "b"])},
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_result"), "content": _json},
        optional={"tool_use_id": st.sampled_from(["a", "b", "z"]), "is_error": _json},
    ),
    st.dictionaries(st.text(max_size=8), _json, max_size=3),
    _json,
)
stored_tool_uses = st.one_of(
    _json, st.lists(_entry, max_size=16), st.lists(_entry, max_size=6).map(json.dumps)
)


@given(stored_tool_uses, st.integers(40, 600))
def test_any_stored_tool_uses_replay_or_fail_cleanly(raw: Any, limit: int) -> None:
    try:
        calls, _warnings = pair_tool_uses(normalize_tool_uses(raw))
    except HistoryError as exc:
        assert "\n" not in str(exc)
        return
    settings = ReplaySettings(max_chars=limit)
    replayed = reply_calls(Message("m", "assistant", "x", calls), settings=settings)
    assert len(replayed) == min(len(calls), 12)
    for c in replayed:
        assert isinstance(c, ReplayCall)
        assert isinstance(c.answer, str) and len(c.answer) <= limit
        assert isinstance(c.input, dict) and json.loads(c.arguments) == c.input
        if "input_excerpt" in c.patches:
            assert list(c.input) == ["input_excerpt"] and len(c.input["input_excerpt"]) <= limit
        assert not c.name.startswith("mcp__") or c.name == c.stored_name


_small_json = st.recursive(
    st.none() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)
_mid = st.one_of(
    st.text(st.sampled_from([*"ab1-_. ", "é"]), min_size=1, max_size=18),
    st.builds(lambda n: f"conversation-{n:04d}", st.integers(0, 9999)),
    st.builds(lambda n, sep: f"m{sep}{n}", st.integers(0, 20), st.sampled_from(["-", "_", ""])),
)


@st.composite
def histories(draw: st.DrawFn) -> History:
    ids = draw(st.lists(_mid, min_size=1, max_size=8, unique=True))
    msgs = []
    for mid in ids:
        if draw(st.booleans()):
            msgs.append(Message(mid, "user", draw(st.text(max_size=5))))
            continue
        calls = draw(
            st.lists(
                st.builds(
                    ToolCall,
                    st.sampled_from(["coop", "mcp__coop__coop"]),
                    _small_json,
                    st.none() | st.text(max_size=30),
                ),
                max_size=14,
            )
        )
        status = draw(st.sampled_from(["complete", "complete", "interrupted", "in_progress"]))
        msgs.append(Message(mid, "assistant", draw(st.text(max_size=5)), tuple(calls), status=status))
    return History("h", tuple(msgs))


@given(histories())
def test_call_ids_unique_within_a_history(h: History) -> None:
    settings = ReplaySettings(skip_textless=False)
    turns = prepare_turn_messages(h, "native", settings=settings)
    ids = [c.call_id for t in turns for c in t.calls]
    assert len(ids) == len(set(ids))
    assert all(isinstance(c.answer, str) for t in turns for c in t.calls)


@given(histories(), st.sampled_from(["native", "plain", "prose"]))
def test_appending_never_changes_earlier_turns(h: History, mode: Any) -> None:
    full = prepare_turn_messages(h, mode)
    for k in range(len(h.messages)):
        part = prepare_turn_messages(History(h.id, h.messages[:k]), mode)
        assert full[: len(part)] == part

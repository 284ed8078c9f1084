"""Chat requests through the translation's memos (design 53): opencode's and every compatible client's
request N+1 reads its earlier messages from the read memo, each message alone (a tool message's pairing
with the call before it is the assembler's). Every kept opencode and corpus Chat body for every vessel, a
conversation growing request by request, edits to its last and middle messages, interleaved sessions
under a budget that evicts, random conversations and the body read from its bytes give exactly what the
uncached path gives."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from memo_checks import (
    agent_bodies,
    corpus_bodies,
    edits_and_interleaved_sessions_alike,
    every_body_alike_cached_or_not,
    every_prefix_alike,
    grown,
    loaded_continuing,
    middle_change_read_again,
    prefixes_alike_through_one_memo,
    spellings_alike_from_slices,
    unchanged_turn_shares_messages,
)
from test_translate import VESSELS
from toolreplay.wires import get_wire

WIRE = get_wire("openai-chat")


def _call(k: int, name: str = "bash") -> dict[str, Any]:
    args = orjson.dumps({"command": f"ls src/module_{k}", "description": "List"}).decode()
    return {"id": f"call_memo{k:04d}", "type": "function", "function": {"name": name, "arguments": args}}


def _long_body() -> dict[str, Any]:
    """The last captured opencode request, grown by rounds of a call (now and then two, or with Kimi's
    ``reasoning_content``) and its results to some 200 messages."""
    body = copy.deepcopy(agent_bodies("opencode-chat", "openai-chat")[-1])
    msgs = body["messages"]
    k = 0
    while len(msgs) < 200:
        calls = [_call(k), _call(k + 1000, "read")] if k % 5 == 3 else [_call(k)]
        said: dict[str, Any] = {"role": "assistant", "content": f"Step {k}.", "tool_calls": calls}
        if k % 4 == 1:
            said["reasoning_content"] = f"I should look at module {k}."
        msgs.append(said)
        msgs.extend(
            {"role": "tool", "tool_call_id": c["id"], "content": f"file_{k}.py\n" * 20} for c in calls
        )
        if k % 9 == 8:
            msgs.append({"role": "assistant", "content": f"Done with part {k}."})
            msgs.append({"role": "user", "content": [{"type": "text", "text": f"Now part {k + 1}."}]})
        k += 1
    return body


@pytest.mark.slow
@pytest.mark.parametrize("vessel", VESSELS)
def test_every_opencode_and_corpus_body_translates_alike_cached_or_not(vessel: str) -> None:
    # the corpus's tool declarations in another key order among the bodies: not one conversation
    bodies = [*agent_bodies("opencode-chat", "openai-chat"), *corpus_bodies("openai-chat"), _long_body()]
    every_body_alike_cached_or_not(WIRE, bodies, vessel)


def test_an_unchanged_turn_reads_into_the_same_message_objects() -> None:
    unchanged_turn_shares_messages(WIRE, _long_body())


@pytest.mark.slow
@pytest.mark.parametrize("vessel", ["anthropic", "kimi", "openai-responses", "gemini"])
def test_a_growing_conversation_translates_alike_request_after_request(vessel: str) -> None:
    every_prefix_alike(WIRE, _long_body(), vessel)


def _edited(body: dict[str, Any], at: int) -> dict[str, Any]:
    """``body`` with message ``at``'s words changed in their middle (same length, same ends)."""
    out = copy.deepcopy(body)
    m = out["messages"][at]
    text = m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
    mid = len(text) // 2
    text = text[:mid] + ("#" if text[mid] != "#" else "%") + text[mid + 1 :]
    if isinstance(m["content"], str):
        m["content"] = text
    else:
        m["content"][0]["text"] = text
    return out


def _editable(body: dict[str, Any], at: int) -> bool:
    content = body["messages"][at].get("content")
    return isinstance(content, str) and bool(content)


@pytest.mark.slow
def test_interleaved_sessions_and_edits_to_the_last_and_middle_messages_translate_alike() -> None:
    long = _long_body()
    other = copy.deepcopy(long)
    other["messages"][1]["content"] = "another session"
    steps = range(3, len(long["messages"]) + 1, 5)
    edits_and_interleaved_sessions_alike(WIRE, (long, other), steps, _edited, _editable, "anthropic")


@pytest.mark.slow
def test_every_body_reads_alike_from_its_slices_in_any_spelling() -> None:
    long = _long_body()
    bodies = [*agent_bodies("opencode-chat", "openai-chat"), *corpus_bodies("openai-chat")]
    bodies += [grown(WIRE, long, k) for k in range(2, len(long["messages"]) + 1, 11)]
    spellings_alike_from_slices(WIRE, bodies)


def test_unchanged_entries_are_neither_parsed_nor_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _long_body()
    grown = copy.deepcopy(body)
    grown["messages"].append({"role": "user", "content": "one more"})
    assert loaded_continuing(WIRE, body, grown, monkeypatch) < 1_000 < 40_000 < len(orjson.dumps(body))


def test_a_message_changed_in_the_middle_is_read_again_from_its_bytes() -> None:
    body = _long_body()
    at = next(i for i, m in enumerate(body["messages"]) if m["role"] == "tool" and i > 50)
    middle_change_read_again(WIRE, body, _edited(body, at))


_TEXT = st.text(alphabet="ab \n", max_size=6)
_MOVES = ["call", "calls", "reasoning", "text", "prompt", "system", "orphan", "unanswered"]


def _conversation(moves: list[tuple[str, str]]) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "start"}]
    for k, (move, text) in enumerate(moves):
        cid = f"call_{k % 3}"  # ids repeat across turns, as agents reuse them
        if move in ("call", "calls", "reasoning", "unanswered"):
            calls = [_call(k % 3), _call(k % 3 + 7)] if move == "calls" else [_call(k % 3)]
            said: dict[str, Any] = {"role": "assistant", "content": text or None, "tool_calls": calls}
            if move == "reasoning":
                said["reasoning_content"] = text or "hm"
            msgs.append(said)
            if move != "unanswered":  # the answers in reverse order: pairing is by id
                msgs.extend(
                    {"role": "tool", "tool_call_id": c["id"], "content": text} for c in reversed(calls)
                )
        elif move == "text":
            msgs.append({"role": "assistant", "content": text or "done"})
        elif move in ("prompt", "system"):
            msgs.append({"role": "user" if move == "prompt" else "system", "content": text or "go"})
        else:
            msgs.append({"role": "tool", "tool_call_id": cid, "content": "?"})
    return msgs


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_MOVES), _TEXT), min_size=1, max_size=12))
def test_random_conversations_translate_alike_as_they_grow(moves: list[tuple[str, str]]) -> None:
    msgs = _conversation(moves)
    bodies = ({"model": "gpt-4.1", "messages": msgs[:k]} for k in range(1, len(msgs) + 1))
    prefixes_alike_through_one_memo(WIRE, bodies, "anthropic")

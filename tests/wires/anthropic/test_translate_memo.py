"""The translation's memos (design 53): the read memo and the incremental renders give exactly what the
uncached path gives, request after request of a growing conversation, after edits to its last messages
(Claude Code moves its ``cache_control`` marker to the last message each time), across interleaved
sessions and under a budget that evicts."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from helpers_common import TESTS
from test_translate import VESSELS, _issuer, vessel_of
from toolreplay import jsonenc
from toolreplay._proxy.translate import Translated, prepared_request, read_inbound, translate_request
from toolreplay._proxy.translate_renders import Renders
from toolreplay._render_options import render_options
from toolreplay._transport.request import prepare
from toolreplay.jsonenc import Spliced
from toolreplay.wires import get_wire
from toolreplay.wires.anthropic.request import parse_request
from toolreplay.wires.read_memo import READ_MEMO, ReadMemo, json_key

AGENTS = TESTS / "data" / "agents"
WIRE = get_wire("anthropic")


def _claude_bodies() -> list[dict[str, Any]]:
    run = json.loads((AGENTS / "claude.json").read_text(encoding="utf-8"))
    return [json.loads(r["body_text"]) for r in run["requests"] if r["wire"] == "anthropic"]


def _corpus_bodies() -> list[dict[str, Any]]:
    from corpus_loader import exchanges

    return [ex.request for ex in exchanges(wire="anthropic", with_request=True) if ex.request is not None]


def _uncached(body: dict[str, Any], vessel: str) -> Translated:
    v = vessel_of(vessel)
    return translate_request(WIRE, parse_request(dict(body)), None, v, issuer=_issuer(v))


def _cached(body: dict[str, Any], vessel: str, renders: Renders, memo: ReadMemo | None = None) -> Translated:
    v = vessel_of(vessel)
    h = parse_request(dict(body), memo=memo) if memo is not None else read_inbound(WIRE, body)
    return translate_request(WIRE, h, None, v, issuer=_issuer(v), renders=renders)


def _same(a: Translated, b: Translated) -> None:
    assert jsonenc.encode(b.body) == jsonenc.encode(a.body)
    if b.sent is not None:  # the body as sent, its list the render's kept JSON: the same bytes
        assert jsonenc.encode(b.sent) == jsonenc.encode(a.body)
    assert b.history == a.history
    assert b.notes == a.notes
    assert b.answer_id == a.answer_id
    assert (b.tool_names, b.free_form, b.upstream_stream) == (a.tool_names, a.free_form, a.upstream_stream)


def _grown(body: dict[str, Any], k: int) -> dict[str, Any]:
    """``body`` cut to its first ``k`` messages, the prompt-cache marker on the last one's last block
    only (as Claude Code sends request k)."""
    out = copy.deepcopy(body)
    msgs = out["messages"][:k]
    for m in msgs:
        if isinstance(m["content"], list):
            for b in m["content"]:
                b.pop("cache_control", None)
    last = msgs[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    if last["content"]:
        last["content"][-1]["cache_control"] = {"type": "ephemeral"}
    out["messages"] = msgs
    return out


def _long_body() -> dict[str, Any]:
    """The last captured Claude Code request, grown by rounds of a call and its result."""
    body = copy.deepcopy(_claude_bodies()[-1])
    for k in range(30):
        body["messages"].append({"role": "assistant", "content": [
            {"type": "text", "text": f"Step {k}."},
            {"type": "tool_use", "id": f"toolu_01memo{k:04d}", "name": "Bash", "input": {"command": "ls"}},
        ]})  # fmt: skip
        body["messages"].append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_01memo{k:04d}", "content": f"file_{k}.py"},
        ]})  # fmt: skip
        if k % 7 == 6:
            body["messages"].append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
            body["messages"].append({"role": "user", "content": [{"type": "text", "text": f"Now {k}."}]})
    return body


def test_an_unchanged_turn_reads_into_the_same_message_objects() -> None:
    # the read memo's point: request N+1 reads its earlier turns into the very messages request N got
    memo = ReadMemo()
    body = _long_body()
    first = parse_request(_grown(body, len(body["messages"]) - 2), memo=memo)
    second = parse_request(_grown(body, len(body["messages"])), memo=memo)
    assert first.messages[0] is second.messages[0]
    shared = [a is b for a, b in zip(first.messages[:-2], second.messages, strict=False)]
    assert sum(shared) >= len(shared) - 2


@pytest.mark.parametrize("vessel", [*VESSELS, "glm"])
def test_every_claude_and_corpus_body_translates_alike_cached_or_not(vessel: str) -> None:
    READ_MEMO.clear()
    renders = Renders()
    for body in [*_claude_bodies(), *_corpus_bodies(), _long_body()]:
        want = _uncached(body, vessel)
        _same(want, _cached(body, vessel, renders))
        _same(want, _cached(body, vessel, renders))  # the second time from the memos


@pytest.mark.parametrize(
    "vessel",
    ["openai", *(pytest.param(v, marks=pytest.mark.slow) for v in ("kimi", "anthropic", "glm", "gemini"))],
)
def test_a_growing_conversation_translates_alike_request_after_request(vessel: str) -> None:
    READ_MEMO.clear()
    renders = Renders()
    body = _long_body()
    for k in range(1, len(body["messages"]) + 1):
        grown = _grown(body, k)
        _same(_uncached(grown, vessel), _cached(grown, vessel, renders))


@pytest.mark.parametrize("vessel", [*VESSELS, "glm"])
def test_a_conversation_is_sent_with_its_lists_kept_json_as_the_same_request(vessel: str) -> None:
    """Request after request, the vessel's request is prepared with the render's kept JSON of the body's
    list (only what the conversation added encoded each time) and is byte for byte the request prepared
    from the body; an edit in the middle and a conversation cut shorter too."""
    READ_MEMO.clear()
    renders = Renders()
    body, v = _long_body(), vessel_of(vessel)
    n = len(body["messages"])
    edited = _grown(body, n)
    edited["messages"][n // 2] = {"role": "user", "content": "an edit in the middle"}
    kept = tools = 0
    for grown in [*(_grown(body, k) for k in range(n - 12, n + 1)), edited, _grown(body, n - 30)]:
        done = _cached(grown, vessel, renders)
        kept += done.sent is not None
        # the tools, the same objects request after request, go as the JSON encoded the first time
        tools += isinstance((done.sent or {}).get("tools"), Spliced)
        want = prepare(v, done.body, model=v.model, stream=done.upstream_stream)
        assert prepared_request(v, done) == want
    # every one of them, but where the vessel places cache markers (on copies of the elements they mark)
    assert kept == (0 if render_options(v).cache_breakpoints else 15)
    assert tools == kept


@pytest.mark.parametrize("vessel", ["anthropic", "glm"])
def test_an_anthropic_vessel_resumes_under_a_system_prompt_of_blocks(vessel: str) -> None:
    # Claude Code's system prompt is a list of blocks, whose layout the reader keeps in each system
    # message's sent: the render through the skeleton places it, so the cache resumes, request after request
    READ_MEMO.clear()
    renders = Renders()
    body = _long_body()
    h = read_inbound(WIRE, body)
    assert [m.sent is not None and "anthropic" in m.sent for m in h.messages if m.role == "system"] == [
        True
    ] * 3
    n = len(body["messages"])
    for k in range(n - 10, n + 1):
        grown = _grown(body, k)
        _same(_uncached(grown, vessel), _cached(grown, vessel, renders))
    cache = renders.cache_of(h.messages)
    assert cache is not None
    stats = cache.stats
    assert (stats.full, stats.resumed, stats.fallbacks) == (1, 10, 0)
    assert stats.reused_messages > 10 * stats.rendered_messages / 11  # each request: its last turn or two
    # the cache markers Anthropic's finish placed went on copies: the cached elements are unmarked, so an
    # earlier request (the conversation cut back) renders with its own markers alone
    for k in (n - 5, n - 9, n):
        grown = _grown(body, k)
        _same(_uncached(grown, vessel), _cached(grown, vessel, renders))
    assert cache.stats.resumed == 13 and cache.stats.fallbacks == 0


@pytest.mark.slow
def test_interleaved_sessions_and_edits_to_the_last_messages_translate_alike() -> None:
    renders, memo = Renders(size=2), ReadMemo(budget=40_000)  # small: entries are evicted on the way
    long = _long_body()
    other = copy.deepcopy(long)
    other["messages"][0]["content"] = [{"type": "text", "text": "another session"}]
    n = len(long["messages"])
    for k in range(2, n + 1, 3):
        for body in (long, other):
            grown = _grown(body, k)
            _same(_uncached(grown, "openai"), _cached(grown, "openai", renders, memo))
            edited = copy.deepcopy(grown)
            last = edited["messages"][-1]["content"]
            if isinstance(last, list) and last and last[-1].get("type") == "text":
                last[-1]["text"] += " (edited)"
            else:
                edited["messages"][-1]["content"] = "edited"
            _same(_uncached(edited, "openai"), _cached(edited, "openai", renders, memo))
    assert memo.groups.cost <= memo.groups.budget and memo.turns.cost <= memo.turns.budget


_TEXT = st.text(alphabet="ab \n", max_size=6)
#: A system prompt as Claude Code sends it (blocks, the last with a marker), as a string, or none.
_SYSTEMS: dict[str, Any] = {
    "none": None,
    "string": "You are a coding agent.",
    "blocks": [
        {"type": "text", "text": "You are Claude Code."},
        {"type": "text", "text": "Be brief.\n", "cache_control": {"type": "ephemeral"}},
    ],
}


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["call", "text", "prompt", "orphan", "mark"]), _TEXT),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(sorted(_SYSTEMS)),
    st.sampled_from(["openai", "anthropic", "glm", "openai-responses", "gemini"]),
)
def test_random_conversations_translate_alike_as_they_grow(
    moves: list[tuple[str, str]], system: str, vessel: str
) -> None:
    # calls and results, closing words, user prompts, results with no call, markers moved: every prefix
    memo, renders = ReadMemo(), Renders()
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    top = {"system": _SYSTEMS[system]} if _SYSTEMS[system] is not None else {}
    for k, (move, text) in enumerate(moves):
        if move == "call":
            cid = f"toolu_{k % 3}"  # ids repeat across turns, as agents reuse them
            msgs.append({"role": "assistant", "content": [
                {"type": "text", "text": text or "x"},
                {"type": "tool_use", "id": cid, "name": "Read", "input": {"p": text}},
            ]})  # fmt: skip
            msgs.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": text}]}
            )
        elif move == "text":
            msgs.append({"role": "assistant", "content": text or "done"})
        elif move == "prompt":
            msgs.append({"role": "user", "content": [{"type": "text", "text": text or "go"}]})
        elif move == "orphan":
            msgs.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "?"}]}
            )
        else:
            body = _grown({"messages": msgs}, len(msgs))
            msgs = body["messages"]
        body = {"model": "claude-sonnet-4-5", "max_tokens": 100, **copy.deepcopy(top), "messages": msgs}
        assert parse_request(copy.deepcopy(body), memo=memo) == parse_request(copy.deepcopy(body))
        _same(_uncached(body, vessel), _cached(body, vessel, renders, memo))
    cache = renders.cache_of(read_inbound(WIRE, body).messages)
    assert cache is not None and cache.stats.fallbacks == 0
    if top:  # the system prompt stands first, unchanged: every render after the first resumed
        assert (cache.stats.full, cache.stats.resumed) == (1, len(moves) - 1)


def test_values_json_cannot_tell_apart_are_not_memoized() -> None:
    # orjson writes NaN as null and refuses integers past 64 bits: such a message is read every time
    assert json_key({"x": math.nan}) is None
    assert json_key({"x": 1 << 70}) is None
    assert json_key({"x": None}) == b'{"x":null}'
    memo = ReadMemo()
    nan = {"messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"x": math.nan}}]}]}  # fmt: skip
    null = {"messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"x": None}}]}]}  # fmt: skip
    a = parse_request(nan, memo=memo)
    b = parse_request(null, memo=memo)
    assert math.isnan(a.messages[0].tool_uses[0].input["x"])
    assert b.messages[0].tool_uses[0].input == {"x": None}


@pytest.mark.parametrize("vessel", ["openai", "anthropic"])
def test_a_turn_continuing_a_stored_conversation_translates_alike(vessel: str, tmp_path: Path) -> None:
    # the recording proxy merges the store's replies in: new message objects, compared by content
    from dataclasses import replace

    from toolreplay._store import open_store

    renders = Renders()
    body = _long_body()
    store = open_store(str(tmp_path / "memo.db"))
    v = vessel_of(vessel)
    for k in range(len(body["messages"]) - 12, len(body["messages"]) + 1, 2):
        grown = _grown(body, k)
        h = parse_request(dict(grown))
        last = max(i for i, m in enumerate(h.messages) if m.role == "assistant")
        cid = store.import_history(
            replace(h, id=f"memo-{k}", messages=h.messages[: last + 1])
        ).conversation_id
        want = translate_request(WIRE, h, store.load(cid), v, issuer=_issuer(v))
        got = translate_request(
            WIRE, read_inbound(WIRE, grown), store.load(cid), v, issuer=_issuer(v), renders=renders
        )
        _same(want, got)
    store.close()

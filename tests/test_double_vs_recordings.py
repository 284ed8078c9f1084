"""The doubles' streams compared with the real recorded streams of tests/corpus, event kind by event kind,
beyond the claims tests/corpus/STREAMS.md spells out (issue 16):

- every kind of event that all real streams with tool calls of a provider carry appears in the double's
  streams with calls, in the same order;
- the double sends no kind of event that no real stream of that provider holds;
- usage figures sit on the kinds of events where real streams put them: on every kind that carries them in
  all recordings, and on no kind that never does.

An event's kind is its type and what it holds (``content_block_start:tool_use``; a Chat chunk's
``role+call``); repeats in a row count once. Each wire is compared with the recordings of its own provider
(OpenAI's models for Chat and Responses; Gemini 2.x and 3 apart).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

import pytest

from corpus_loader import DONE, Exchange, exchanges
from toolreplay.testing.answers import Answer, AnswerCall, answer_events
from toolreplay.wires.reply import Usage

# -- kinds ------------------------------------------------------------------------------------------------


def _chat(e: Any) -> list[str]:
    if e == DONE:
        return ["[DONE]"]
    if not e.get("choices"):
        return ["usage"] if e.get("usage") else ["empty"]
    choice, out = e["choices"][0], []
    delta = choice.get("delta") or {}
    if delta.get("role"):
        out.append("role")
    out += ["call" if tc.get("id") else "arguments" for tc in delta.get("tool_calls") or []]
    if delta.get("content"):
        out.append("text")
    if delta.get("reasoning_content"):
        out.append("reasoning")
    if choice.get("finish_reason"):
        out.append("finish:" + choice["finish_reason"])
    return out or ["empty"]


def _anthropic(e: Any) -> list[str]:
    kind = e["type"]
    if kind == "content_block_start":
        return [f"{kind}:{e['content_block']['type']}"]
    if kind == "content_block_delta":
        return [f"{kind}:{e['delta']['type']}"]
    return [] if kind == "ping" else [kind]


def _responses(e: Any) -> list[str]:
    kind = e["type"]
    return [f"{kind}:{e['item']['type']}"] if kind.startswith("response.output_item.") else [kind]


def _gemini(e: Any) -> list[str]:
    out = []
    for cand in (e.get("candidates") or [])[:1]:
        for p in (cand.get("content") or {}).get("parts") or []:
            kind = "functionCall" if "functionCall" in p else ("thought" if p.get("thought") else "text")
            out.append(kind if kind != "text" or "text" in p else "other")
        if cand.get("finishReason"):
            out.append("finish")
    return out


def _ollama(e: Any) -> list[str]:
    if e.get("done"):
        return ["final"]
    message = e.get("message") or {}
    out = [
        k
        for k, key in (("thinking", "thinking"), ("text", "content"), ("calls", "tool_calls"))
        if message.get(key)
    ]
    return out or ["empty"]


KINDS: dict[str, Callable[[Any], list[str]]] = {
    "openai-chat": _chat,
    "anthropic": _anthropic,
    "openai-responses": _responses,
    "gemini": _gemini,
    "ollama": _ollama,
}
CALL_KIND = {
    "openai-chat": "call",
    "anthropic": "content_block_start:tool_use",
    "openai-responses": "response.output_item.added:function_call",
    "gemini": "functionCall",
    "ollama": "calls",
}


#: Whether an event carries usage figures, as each wire puts them.
USAGE: dict[str, Callable[[Any], bool]] = {
    "openai-chat": lambda e: bool(e.get("usage")),
    "anthropic": lambda e: "usage" in e or "usage" in (e.get("message") or {}),
    "openai-responses": lambda e: bool((e.get("response") or {}).get("usage")),
    "gemini": lambda e: "totalTokenCount" in (e.get("usageMetadata") or {}),
    "ollama": lambda e: "eval_count" in e or "prompt_eval_count" in e,
}


def _usage(wire: str, e: Any) -> bool:
    """Whether the event carries usage figures."""
    return e != DONE and USAGE[wire](e)


def _sequence(wire: str, events: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for e in events:
        for kind in KINDS[wire](e):
            if not out or out[-1] != kind:
                out.append(kind)
    return out


def _usage_labels(wire: str, events: Iterable[Any]) -> tuple[set[str], set[str]]:
    """(labels of events with usage, labels of events without), a label being an event's kinds joined."""
    with_usage, without = set(), set()
    for e in events:
        label = "+".join(KINDS[wire](e))
        if label:
            (with_usage if _usage(wire, e) else without).add(label)
    return with_usage, without


# -- the recordings -----------------------------------------------------------------------------------------

GROUPS = ["openai-chat", "anthropic", "openai-responses", "gemini-2", "gemini-3", "ollama"]
#: The recordings a group's double is held to, by model: OpenAI's own models (recordings of other
#: servers differ), Gemini 2's apart from Gemini 3's.
BELONGS: dict[str, Callable[[str], bool]] = {
    "openai-chat": lambda model: model.startswith("gpt-"),
    "openai-responses": lambda model: model.startswith("gpt-"),
    "gemini-2": lambda model: model.startswith("gemini-2"),
    "gemini-3": lambda model: not model.startswith("gemini-2"),
}
#: The wires whose streams end with ``data: [DONE]`` (Chat's), kept as an event.
ENDS_WITH_DONE = frozenset({"openai-chat"})


def _wire(group: str) -> str:
    return {"gemini-2": "gemini", "gemini-3": "gemini"}.get(group, group)


def _belongs(group: str, ex: Exchange) -> bool:
    model = str(ex.model)
    return BELONGS.get(group, lambda model: True)(model)


@cache
def recorded(group: str) -> tuple[list[list[Any]], list[list[Any]]]:
    """(streams with calls, all streams) of the group, as decoded events."""
    wire = _wire(group)
    streams = [
        [e for e in ex.events() if e != DONE or wire in ENDS_WITH_DONE]
        for ex in exchanges(wire, streamed=True)
        if _belongs(group, ex)
    ]
    with_calls = [s for s in streams if CALL_KIND[wire] in _sequence(wire, s)]
    return with_calls, streams


def _positions(kinds: list[str], keep: set[str]) -> dict[str, tuple[int, int]]:
    """Each kept kind's first and last place in the sequence."""
    return {k: (kinds.index(k), len(kinds) - 1 - kinds[::-1].index(k)) for k in keep}


def _agreed_order(sequences: list[list[str]], keep: set[str]) -> set[tuple[str, str, int]]:
    """``(a, b, end)``: in every sequence, kind a's first (end 0) or last (end 1) place comes before b's."""
    places = [_positions(kinds, keep) for kinds in sequences]
    return {
        (a, b, end)
        for a in keep
        for b in keep
        for end in (0, 1)
        if a != b and all(p[a][end] < p[b][end] for p in places)
    }


# -- the double's streams ---------------------------------------------------------------------------------

ONE = AnswerCall("multiply", {"a": 1234, "b": 4567}, "call_x1", "c2ln")
TWO = AnswerCall("list_all", {}, "call_x2", None)
SHAPES = {
    "one call": ("", (ONE,), None),
    "parallel calls": ("", (ONE, TWO), None),
    "text before a call": ("Let me multiply.", (ONE,), None),
    "no arguments": ("", (TWO,), None),
    "thinking then a call": ("", (ONE,), "I should multiply."),
}
MODEL = {"gemini-2": "gemini-2.5-flash", "gemini-3": "gemini-3-pro-preview"}
ASKED = {"stream": True, "stream_options": {"include_usage": True}}
# Responses: the reasoning summary and the encrypted reasoning asked for, so the double sends them
REQUESTS = {
    "openai-responses": {
        **ASKED,
        "reasoning": {"summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }
}


def doubled(group: str, shape: str) -> list[Any]:
    text, calls, reasoning = SHAPES[shape]
    request = REQUESTS.get(group, ASKED)
    answer = Answer(7, MODEL.get(group, "gpt-5"), text, calls, reasoning, Usage(120, 30, 64), request)
    return [p if p != "[DONE]" else DONE for _, p in answer_events(_wire(group), answer)]


#: Kinds no public recording shows, sent as the provider's own code says.
UNRECORDED = {
    # api.Message.Thinking, filled chunk by chunk by ChatHandler (ollama/ollama server/routes.go)
    "ollama": {"thinking"},
}
CASES = [(g, s) for g in GROUPS for s in sorted(SHAPES)]


@pytest.mark.parametrize(("group", "shape"), CASES)
def test_every_kind_real_streams_with_calls_always_carry_comes_in_their_order(group: str, shape: str) -> None:
    wire = _wire(group)
    with_calls, _ = recorded(group)
    assert with_calls, f"no recorded {group} stream with calls"
    kinds = [_sequence(wire, s) for s in with_calls]
    always = set.intersection(*(set(k) for k in kinds))
    mine = _sequence(wire, doubled(group, shape))
    assert always <= set(mine), sorted(always - set(mine))
    order = _agreed_order(kinds, always)
    assert order, "the recordings agree on no order"
    assert order <= _agreed_order([mine], always), sorted(order - _agreed_order([mine], always))


@pytest.mark.parametrize(("group", "shape"), CASES)
def test_the_double_sends_no_kind_of_event_real_streams_never_hold(group: str, shape: str) -> None:
    wire = _wire(group)
    # every server of the wire: Chat's reasoning_content is DeepSeek's and xAI's, not OpenAI's
    streams = [
        [e for e in ex.events() if e != DONE or wire in ENDS_WITH_DONE]
        for ex in exchanges(wire, streamed=True)
    ]
    seen = set().union(*(_sequence(wire, s) for s in streams), UNRECORDED.get(wire, {}))
    mine = set(_sequence(wire, doubled(group, shape)))
    assert mine <= seen, sorted(mine - seen)


@pytest.mark.parametrize(("group", "shape"), CASES)
def test_usage_sits_where_real_streams_put_it(group: str, shape: str) -> None:
    wire = _wire(group)
    labels = [_usage_labels(wire, s) for s in recorded(group)[1]]
    always = set.union(*(w for w, _ in labels)) - set.union(*(wo for _, wo in labels))
    never = set.union(*(wo for _, wo in labels)) - set.union(*(w for w, _ in labels))
    with_usage, without = _usage_labels(wire, doubled(group, shape))
    assert with_usage, "the double's stream carries no usage"
    assert not (always & without), f"real streams always carry usage on {sorted(always & without)}"
    assert not (never & with_usage), f"real streams never carry usage on {sorted(never & with_usage)}"

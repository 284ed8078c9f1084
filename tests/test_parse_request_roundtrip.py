"""The round trip of issue 6 §1: render(W, parse(W, render(W, H))) is byte-equal to render(W, H).

For every vessel (so every wire, with its id policy and flags) and every generated history within the
replay bounds: at most 12 calls per reply (the window), inputs and answers within 500 characters, message
ids that are their own stems (at most 16 ASCII letters and digits: a derived call id names its message),
reply texts that are empty or not blank,
calls stored with or without provider ids and Gemini signatures, textless replies (which the replay leaves
out), and an in-progress reply at the end.
"""

from __future__ import annotations

import string
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolreplay._api import render
from toolreplay._history import History, Message, ToolCall, ToolSpec
from toolreplay._jsonenc import dumps, encode
from toolreplay._vessels import BUILTIN
from toolreplay.wires import parse_request

VESSELS = [v for v in BUILTIN.values() if v.wire != "claude-prompt"]
NAMES = ["coop", "get_weather", "mcp__coop__coop", "my.tool", "9lives", "search-v2"]

_ids = st.text(string.ascii_letters + string.digits, min_size=1, max_size=16)
_words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
# A blank (whitespace-only) reply text: Anthropic and Gemini leave it out (their servers reject it), so
# such a body cannot say where a reply with calls ended; "" (no text) and real text are in bounds.
_reply_text = _words.filter(lambda t: t == "" or bool(t.strip()))
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), _words)
_value = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
_dict_input = st.dictionaries(
    st.text(string.ascii_lowercase + "_", min_size=1, max_size=8), _value, max_size=4
)
_input = st.one_of(
    _dict_input.filter(lambda d: len(dumps(d)) <= 500),
    st.text(max_size=120),  # raw text the store kept (a cut-short input): replays as an input_excerpt
)


@st.composite
def _call(draw: st.DrawFn) -> ToolCall:
    sig = draw(st.one_of(st.none(), st.text(string.ascii_letters + "+/=", min_size=4, max_size=20)))
    return ToolCall(
        name=draw(st.sampled_from(NAMES)),
        input=draw(_input),
        answer=draw(st.one_of(st.none(), st.text(max_size=500))),
        call_id=draw(st.one_of(st.none(), st.text(string.ascii_letters + "_", min_size=3, max_size=12))),
        is_error=draw(st.booleans()),
        provider_data={"gemini": {"thoughtSignature": sig}} if sig else None,
    )


@st.composite
def histories(draw: st.DrawFn) -> History:
    n = draw(st.integers(0, 9))
    ids = draw(st.lists(_ids, min_size=n + 3, max_size=n + 3, unique=True))
    messages: list[Message] = []
    for k in range(draw(st.integers(0, 2))):
        messages.append(Message(ids.pop(), "system", draw(_words.filter(bool)) + str(k)))
    for _ in range(n):
        if draw(st.booleans()):
            messages.append(Message(ids.pop(), "user", draw(_words)))
        else:
            calls = tuple(draw(st.lists(_call(), max_size=12)))
            messages.append(Message(ids.pop(), "assistant", draw(_reply_text), calls))
    if messages and messages[-1].role == "user" and draw(st.booleans()):
        calls = tuple(draw(st.lists(_call(), min_size=1, max_size=4)))
        messages.append(Message(ids.pop(), "assistant", "", calls, status="in_progress"))
    tools = None
    if draw(st.booleans()):
        tools = (
            ToolSpec("coop", draw(_words), {"type": "object", "properties": {"id": {"type": "integer"}}}),
        )
    return History("h", tuple(messages), tools)


def _roundtrip(h: History, vessel: str, wire: str) -> tuple[bytes, bytes, tuple[str, ...]]:
    first = render(h, vessel)
    parsed = parse_request(wire, first)
    again = render(parsed, vessel)
    return encode(first), encode(again), parsed.warnings


@given(histories())
def test_render_parse_render_is_byte_equal_on_every_vessel(h: History) -> None:
    for v in VESSELS:
        first, again, _ = _roundtrip(h, v.name, v.wire)
        assert again == first, v.name


@given(histories())
def test_parse_is_deterministic_and_keeps_every_replayed_call(h: History) -> None:
    for v in VESSELS:
        body: dict[str, Any] = render(h, v.name)
        a, b = parse_request(v.wire, body), parse_request(v.wire, body)
        assert a == b
        sent = sum(len(m.tool_uses) for m in h.messages if m.text or m.status != "complete")
        assert sum(len(m.tool_uses) for m in a.messages) == sent, v.name
        assert all(c.answer is not None for m in a.messages for c in m.tool_uses)

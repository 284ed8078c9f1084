"""The round trip of issue 6 §1: render(W, parse(W, render(W, H))) is byte-equal to render(W, H).

For every vessel (so every wire, with its id policy and flags) and every generated history within the
replay bounds: at most 12 calls per reply (the window), inputs and answers within 500 characters, message
ids that are their own stems (at most 16 ASCII letters and digits: a derived call id names its message),
reply texts that are empty or not blank,
calls stored with or without provider ids and Gemini signatures, textless replies (which the replay leaves
out), and an in-progress reply at the end.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from helpers_fuzz import histories
from toolreplay._api import render
from toolreplay._history import History
from toolreplay._jsonenc import encode
from toolreplay._vessels import BUILTIN
from toolreplay.wires import parse_request
from wire_helpers import is_http

VESSELS = [v for v in BUILTIN.values() if is_http(v.wire)]


def _roundtrip(h: History, vessel: str, wire: str) -> tuple[bytes, bytes, tuple[str, ...]]:
    first = render(h, vessel)
    parsed = parse_request(wire, first)
    again = render(parsed, vessel)
    return encode(first), encode(again), parsed.warnings


@pytest.mark.slow
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

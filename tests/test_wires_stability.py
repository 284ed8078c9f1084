"""Byte stability: same history, same bytes; one more turn, the earlier message list unchanged; fast."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolreplay
from toolreplay.api import render
from toolreplay.history import History, history_from_dict, history_to_dict
from toolreplay.jsonenc import encode
from toolreplay.profiles import get_vessel
from wire_helpers import VESSELS, big_history, histories, message_list, same_prefix, truncated


@pytest.mark.parametrize("vessel", VESSELS)
@given(h=histories(min_messages=2), data=st.data())
def test_appending_never_changes_the_earlier_messages(vessel: str, h: History, data: st.DataObject) -> None:
    wire = get_vessel(vessel).wire
    k = data.draw(st.integers(1, len(h.messages) - 1), label="cut")
    short = message_list(wire, render(truncated(h, k), vessel))
    full = message_list(wire, render(h, vessel))
    assert same_prefix(short, full), (short, full)


@pytest.mark.parametrize("vessel", VESSELS)
@given(h=histories())
def test_same_history_same_bytes(vessel: str, h: History) -> None:
    first = encode(render(h, vessel))
    # a fresh copy of the history (new objects, same content) gives the same bytes
    again = encode(render(history_from_dict(history_to_dict(h)), vessel))
    assert first == again


@pytest.mark.parametrize("vessel", VESSELS)
@given(h=histories())
def test_orjson_encode_equals_the_stdlib_spelling(vessel: str, h: History) -> None:
    body = render(h, vessel)
    assert encode(body) == json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@pytest.mark.parametrize("vessel", VESSELS)
def test_demo_bytes_are_stable(vessel: str, demo_path: Path) -> None:
    a = toolreplay.encode(toolreplay.render(demo_path, vessel))
    b = toolreplay.encode(toolreplay.render(toolreplay.load_history(demo_path), vessel))
    assert a == b
    assert a == json.dumps(json.loads(a), ensure_ascii=False, separators=(",", ":")).encode()


def _best_of(n: int, fn: object) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - t)
    return best


@pytest.mark.parametrize("vessel", ["openai", "kimi", "codex", "anthropic", "gemini", "ollama", "claude"])
def test_ten_thousand_messages_render_fast_and_not_quadratic(vessel: str) -> None:
    big, quarter = big_history(10_000), big_history(2_500)
    t_big = _best_of(2, lambda: encode(render(big, vessel)))
    t_quarter = _best_of(2, lambda: encode(render(quarter, vessel)))
    assert t_big < 5.0
    # linear gives about 4x, quadratic 16x; allow for noise on a loaded machine
    assert t_big < 10 * t_quarter + 0.05, (t_big, t_quarter)

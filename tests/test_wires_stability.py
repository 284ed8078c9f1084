"""Byte stability: same history, same bytes; one more turn, the earlier message list unchanged; fast."""

from __future__ import annotations

import functools
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolreplay
from toolreplay._api import render
from toolreplay._history import History, history_from_dict, history_to_dict
from toolreplay._jsonenc import encode
from toolreplay._vessels import get_vessel
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


def _calls(fn: Callable[[], object]) -> int:
    """How many functions (Python and C) ``fn`` calls: a count of work, the same on a loaded machine."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def _best_of(n: int, fn: Callable[[], object]) -> float:
    """The least CPU time of ``n`` runs (this thread's own, so other processes on the machine count for
    little), with the garbage collector paused: its full collections over a large live heap grow faster
    than linearly and would hide what this measures (the renderer's own complexity)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(n):
            t = time.thread_time()
            fn()
            best = min(best, time.thread_time() - t)
    finally:
        gc.enable()
    return best


@functools.cache
def _big(n: int) -> History:
    return big_history(n)


VESSELS_TIMED = ["openai", "kimi", "codex", "anthropic", "gemini", "ollama", "claude"]


@pytest.mark.parametrize("vessel", VESSELS_TIMED)
def test_many_messages_render_with_linear_work(vessel: str) -> None:
    # 8x the messages: linear work is about 8x the calls (less, where parts repeat), a loop over the
    # earlier messages for each one 64x. Counted, not timed, so a loaded machine cannot fail it.
    small, large = big_history(500), big_history(4_000)
    c_small = _calls(lambda: encode(render(small, vessel)))
    c_large = _calls(lambda: encode(render(large, vessel)))
    assert c_large < 12 * c_small, (c_small, c_large)


@pytest.mark.slow
@pytest.mark.parametrize("vessel", VESSELS_TIMED)
def test_many_messages_render_in_linear_time(vessel: str) -> None:
    # How fast on an idle machine is the bench's to say (bench/); here only a ratio. Work inside one call
    # (a list copied per message) is not counted above, so it is timed: 8x the messages, linear about 8x
    # the time, quadratic 64x. The sizes are measured in turns and the best of three rounds is judged, so
    # a burst of load during one round does not fail it; a quadratic renderer fails every round.
    small, large = _big(2_500), _big(20_000)
    ratios = []
    for _ in range(3):
        t_small = _best_of(3, lambda: encode(render(small, vessel)))
        t_large = _best_of(3, lambda: encode(render(large, vessel)))
        ratios.append((t_large - 0.1) / t_small)
        if ratios[-1] < 24:
            return
    raise AssertionError(f"rendering 8x the messages took {min(ratios):.1f}x the time (rounds: {ratios})")

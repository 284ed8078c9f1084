"""The proxy benchmark's requests are what it says (no timing here): 200 messages that a Chat server takes."""

from __future__ import annotations

import sys

from conftest import ROOT

if str(ROOT) not in sys.path:  # the bench package lives beside src/, not inside it
    sys.path.insert(0, str(ROOT))

from bench.proxy import large_request, session_messages, small_request

from toolreplay._vessels import get_vessel
from toolreplay.wires import get_wire


def test_the_200_message_request_is_200_valid_chat_messages() -> None:
    body = large_request(stream=True)
    assert len(body["messages"]) == 200 and body["stream"] is True
    problems: list[str] = []
    get_wire("openai-chat").rules(get_vessel("openai"), body, problems)
    assert problems == []
    assert small_request(stream=False)["messages"] == [{"role": "user", "content": "list"}]


def test_a_session_grows_by_whole_rounds() -> None:
    # every step of a session extends the one before: the recording proxy continues one conversation
    short, longer = session_messages(4, 3), session_messages(6, 3)
    assert longer[: len(short)] == short and longer[-1]["role"] == "tool"


def test_memory_growth_is_read_after_the_warm_up_and_judged_against_the_line() -> None:
    from bench.proxy import _memory_lines, growth

    points = [(0, 40 * 1024), (100, 50 * 1024), (200, 51 * 1024), (1000, 52 * 1024)]
    assert growth(points, 200) == (51.0, 52.0, 1.0)
    mem = [(n, kb, kb, 0.0) for n, kb in points]
    streams = [(0, 52 * 1024), (64, 53 * 1024), (128, 56 * 1024)]
    flat, grown = _memory_lines(mem, streams)
    assert "+1.0 MB" in flat and flat.endswith("met") and "not met" not in flat
    assert "+3.0 MB" in grown and grown.endswith("not met")

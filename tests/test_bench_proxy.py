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

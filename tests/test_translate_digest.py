"""The answer's digest (design 49) is taken up where the conversation's last request left it (design
53): request after request, and across conversations that share or part from an opening, it is the
digest of the whole conversation hashed at once."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from toolreplay._proxy import translate_ids
from toolreplay._proxy.translate_ids import history_digest
from toolreplay.model import History, Message, ToolCall


def _whole(h: History) -> str:
    """The digest as its definition reads: every message's part, hashed at once."""
    d = hashlib.sha256(b"toolreplay translated answer")
    d.update(b"".join(translate_ids._said(m) for m in h.messages))
    return d.hexdigest()


_POOL = [
    Message(id=f"m{i}", role=("user", "assistant")[i % 2], text=f"words {i}",
            tool_uses=(ToolCall(name="Read", input={}, answer="ok", call_id=f"c{i}"),) if i % 2 else ())
    for i in range(12)
]  # fmt: skip


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(st.integers(0, 11), max_size=8), min_size=1, max_size=10))
def test_the_digest_taken_up_is_the_digest_of_the_whole(conversations: list[list[int]]) -> None:
    for picks in conversations:  # the same message objects again, in any order and length
        h = History(id="h", messages=tuple(_POOL[i] for i in picks))
        assert history_digest(h) == _whole(h)
        assert history_digest(h) == _whole(h)  # the same request again


def test_a_growing_conversation_and_an_edited_one() -> None:
    msgs = list(_POOL)
    for k in range(1, len(msgs) + 1):
        h = History(id="h", messages=tuple(msgs[:k]))
        assert history_digest(h) == _whole(h)
    edited = [*msgs[:5], Message(id="m5", role="assistant", text="other words"), *msgs[6:]]
    h = History(id="h", messages=tuple(edited))  # equal ids, another object and other words
    assert history_digest(h) == _whole(h) != _whole(History(id="h", messages=tuple(msgs)))


def test_equal_messages_that_are_other_objects_hash_alike() -> None:
    copies = tuple(Message(id=m.id, role=m.role, text=m.text, tool_uses=m.tool_uses) for m in _POOL)
    assert history_digest(History(id="h", messages=copies)) == _whole(History(id="h", messages=tuple(_POOL)))

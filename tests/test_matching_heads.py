"""The prefix heads a request is matched by (design 45) are the same whether they are taken up from the
conversation's last request (the shared messages found by identity) or worked out message by message."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from toolreplay._history import Message
from toolreplay._proxy.matching import _SEED, next_head, prefix_heads

#: A pool of messages, some equal but not the same objects, one a reply cut before the agent saw it.
POOL = [
    Message("s", "system", "be brief"),
    Message("u1", "user", "close todo 12"),
    Message("u1", "user", "close todo 12"),
    Message("a2", "assistant", "closed"),
    Message("a3", "assistant", "cut", meta={"cut": "the agent went away"}),
    Message("u4", "user", "and  archive it"),
    Message("u5", "user", "and archive it"),
]


def _walked(messages: list[Message]) -> list[str]:
    out, head = [], _SEED
    for m in messages:
        head = next_head(head, m)
        out.append(head)
    return out


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(st.sampled_from(range(len(POOL))), max_size=8), min_size=1, max_size=5))
def test_heads_taken_up_from_the_last_request_are_the_heads_walked(requests: list[list[int]]) -> None:
    for picks in requests:  # one conversation's requests, each sharing any prefix with the one before
        messages = [POOL[0], *(POOL[i] for i in picks)]
        assert prefix_heads(messages) == _walked(messages)
    assert prefix_heads([]) == []

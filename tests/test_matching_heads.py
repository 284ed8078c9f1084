"""The prefix heads a request is matched by (design 45) are the same whether they are taken up from the
conversation's last request (the shared messages found by identity) or worked out message by message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from toolreplay._history import Message
from toolreplay._proxy.matching import _SEED, RECENT_HEADS, continued, longest, next_head, prefix_heads

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


class _Rows:
    """A store's head lookup over ``rows`` (id, head, session), newest first, that counts its queries."""

    def __init__(self, rows: list[tuple[str, str, str | None]]) -> None:
        self.rows, self.asked = rows, 0

    def find_heads(self, heads: Sequence[str], session: str | None = None) -> list[tuple[str, str]]:
        self.asked += 1
        wanted = set(heads)
        return [
            (cid, head)
            for cid, head, s in self.rows
            if head in wanted and (session is None or s is None or s == session)
        ]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.integers(0, 40),
    st.lists(st.tuples(st.integers(0, 45), st.sampled_from([None, "a", "b"])), max_size=12),
    st.sampled_from([None, "a"]),
)
def test_the_longest_prefixes_asked_first_find_what_one_query_of_every_head_finds(
    depth: int, stored: list[tuple[int, str | None]], session: str | None
) -> None:
    """The store's match asked for the longest prefixes first (then the rest, where none of those is
    stored) is the match of one query of every head: the longest, the newest among equals, the
    session's; heads repeat where a message the agent never saw keeps the one before it."""
    heads = [f"h{i // 3 if i % 5 == 0 else i}" for i in range(depth)]
    rows = [(f"c{k}", f"h{i}", s) for k, (i, s) in enumerate(stored)]
    store = _Rows(rows)
    got = longest(cast(Any, store), heads, session)
    assert got == continued(_Rows(rows).find_heads(heads, session), heads)
    recent = continued(_Rows(rows).find_heads(heads[-RECENT_HEADS:], session), heads)
    assert store.asked == (0 if not heads else 1 if recent is not None else 1 + (depth > RECENT_HEADS))

"""The memos' caches (``wires.bounded``): a value kept by an object's identity lives no longer than the
object does elsewhere, and an id taken over by a new object never gives the old one's value."""

from __future__ import annotations

import gc

from toolreplay.model import Message
from toolreplay.wires.bounded import ByIdentity


def test_an_entry_goes_with_its_message_and_a_reused_id_finds_nothing() -> None:
    cache: ByIdentity[str] = ByIdentity(8)
    kept = Message("m1", "user", "kept")
    cache.put(kept, "of kept")
    m = Message("m2", "user", "x" * 100_000)  # a big tool answer, say
    cache.put(m, "of m")
    assert (cache.peek(m), cache.peek(kept), len(cache)) == ("of m", "of kept", 2)
    gone = id(m)
    del m
    gc.collect()
    assert len(cache) == 1 and cache.peek(kept) == "of kept"  # the message went: so did its entry
    for _ in range(1000):  # a new object at the old one's address is not taken for it
        new = Message("m3", "user", "new")
        if id(new) == gone:
            break
    assert cache.peek(new) is None and cache.take(new) is None


def test_an_object_without_weak_references_is_kept_with_its_value() -> None:
    cache: ByIdentity[int] = ByIdentity(2)
    tools = [{"name": "Read"}]  # a list takes no weak reference
    cache.put(tools, 1)
    assert cache.peek(tools) == 1 and cache.peek([{"name": "Read"}]) is None
    del tools
    gc.collect()
    assert len(cache) == 1  # kept, and so its id names no other object while it stands


def test_the_oldest_entries_go_past_the_size_and_a_taken_one_is_gone() -> None:
    cache: ByIdentity[int] = ByIdentity(2)
    ms = [Message(f"m{i}", "user", str(i)) for i in range(3)]
    for i, m in enumerate(ms):
        cache.put(m, i)
    assert [cache.peek(m) for m in ms] == [None, 1, 2]
    assert cache.take(ms[1]) == 1 and cache.peek(ms[1]) is None and len(cache) == 1
    assert cache.get(ms[0], lambda: 7) == 7 and cache.peek(ms[0]) == 7

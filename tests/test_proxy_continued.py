"""A routed body sliced from the body before it (design 57): whatever the next bytes are, what comes out is
what slicing them alone gives (the same top-level values in the same order, the same list entries, the
same layout), or nothing, and then the body is sliced alone. A body that is not a JSON object is never
taken as one."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from toolreplay._proxy.bodies import items, sliced
from toolreplay._proxy.continued import BACK, PROBE, Layout, Layouts, continued

KEY = "messages"
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_ENTRY = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": _JSON})
_SPELLINGS = (
    orjson.dumps,
    lambda v: json.dumps(v).encode(),
    lambda v: json.dumps(v, indent=1, ensure_ascii=False).encode(),
)


def _kept(plain: bytes) -> Layout:
    """``plain``'s layout as the routed path keeps it (sliced alone, its entries the list's)."""
    top = sliced(plain)
    assert top is not None
    entries = items(top.raws[KEY])
    assert entries is not None
    return Layout(plain, top.raws, KEY, tuple(entries))


def _check(plain: bytes, prev: Layout) -> bool:
    """``continued(plain, prev)`` is slicing ``plain`` alone, or nothing; whether it continued."""
    got = continued(plain, prev)
    if got is None:
        return False
    raws, layout = got
    alone = sliced(plain)
    assert alone is not None, "a body that is not surely a JSON object was taken as one"
    assert list(raws.items()) == list(alone.raws.items())
    assert list(layout.entries) == items(alone.raws[KEY])
    assert layout.at() == _kept(plain).at()
    return True


def _body(messages: list[Any], **more: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", KEY: messages, "system": "be brief", **more}


@given(
    st.lists(_ENTRY, max_size=6), st.lists(_ENTRY, max_size=4), st.integers(0, 8),
    st.sampled_from(range(len(_SPELLINGS))), st.sampled_from(range(len(_SPELLINGS))),
)  # fmt: skip
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
def test_a_next_body_is_what_slicing_it_alone_gives(
    first: list[Any], more: list[Any], cut: int, a: int, b: int
) -> None:
    # the next request: the first one cut back (an edit, a retry), then entries added, in any spelling
    prev = _kept(_SPELLINGS[a](_body(first)))
    nxt = _SPELLINGS[b](_body(first[: len(first) - cut % (len(first) + 1)] + more))
    _check(nxt, prev)


@given(st.lists(_ENTRY, min_size=1, max_size=5), st.data())
@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
def test_any_byte_changed_is_still_what_slicing_alone_gives(first: list[Any], data: st.DataObject) -> None:
    # a byte changed, put in or taken out anywhere (invalid JSON, invalid UTF-8, a bracket): never a wrong
    # reading, never a body that is not an object
    plain = orjson.dumps(_body(first))
    nxt = orjson.dumps(_body([*first, {"role": "user", "content": "next"}]))
    at = data.draw(st.integers(0, len(nxt)))
    byte = data.draw(st.sampled_from([b"", b"]", b"[", b",", b"}", b'"', b"\xff", b" ", b"0", b"\\"]))
    drop = data.draw(st.integers(0, 2))
    _check(nxt[:at] + byte + nxt[at + drop :], _kept(plain))


def _grown(n: int, marker_at: int | None = None) -> bytes:
    """A Claude Code-like request ``n`` messages in, the cache marker on message ``marker_at`` (the last)."""
    msgs: list[dict[str, Any]] = []
    for i in range(n):
        content: dict[str, Any] = {"type": "text", "text": f"message {i} " + "x" * 200}
        if i == (n - 1 if marker_at is None else marker_at):
            content["cache_control"] = {"type": "ephemeral"}
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": [content]})
    return json.dumps(_body(msgs, tools=[{"name": "Read"}], stream=True)).encode()


def test_a_conversation_request_after_request_continues_each_time() -> None:
    # the marker moves off the last message each time: the body before it is its head, the rest is read
    kept = Layouts()
    for n in range(1, 40):
        plain = _grown(n)
        got = kept.read(plain, KEY)
        assert (got is not None) == (n > 1), n
        layout = got[1] if got is not None else _kept(plain)
        if got is not None:
            alone = _kept(plain)
            assert list(got[0].items()) == list(alone.raws.items())
            assert layout.entries == alone.entries and layout.at() == alone.at()
        kept.keep(layout)


def test_what_does_not_continue_is_read_alone() -> None:
    prev = _kept(_grown(10))
    assert continued(_grown(11), prev) is not None
    # another system prompt (the tail differs), the marker further back than it may look, a shorter body
    assert continued(_grown(11).replace(b"be brief", b"be long!"), prev) is None
    assert continued(_grown(11, marker_at=10 - BACK - 1), prev) is None
    assert continued(_grown(5), prev) is None
    assert continued(b"not json at all", prev) is None


def test_a_duplicate_key_keeps_no_layout() -> None:
    # the decoder keeps one of two values: the bytes are not laid out as the values say
    plain = b'{"messages":[{"a":1}],"model":"x","messages":[{"a":1}]}'
    top = sliced(plain)
    assert top is not None
    assert Layout(plain, top.raws, KEY, (b'{"a":1}',)).at() is None
    prev = Layout(plain, top.raws, KEY, (b'{"a":1}',))
    assert continued(b'{"messages":[{"a":1},{"b":2}],"model":"x","messages":[{"a":1}]}', prev) is None


def test_bodies_that_open_alike_are_kept_apart() -> None:
    # conversations that open alike (the same long first message) each continue their own body
    kept = Layouts()
    opening = "o" * PROBE
    one = [{"role": "user", "content": opening}, {"role": "assistant", "content": "one"}]
    two = [{"role": "user", "content": opening}, {"role": "assistant", "content": "two"}]
    for msgs in (one, two):
        kept.keep(_kept(orjson.dumps(_body(msgs))))
    for msgs in (one, two):
        plain = orjson.dumps(_body([*msgs, {"role": "user", "content": "next"}]))
        got = kept.read(plain, KEY)
        assert got is not None and got[1].entries[1] == orjson.dumps(msgs[1])


@pytest.mark.parametrize("key", ["input", "contents"])
def test_another_list_key_is_not_read_from_this_one(key: str) -> None:
    kept = Layouts()
    kept.keep(_kept(_grown(3)))
    assert kept.read(_grown(4), key) is None
    assert kept.read(_grown(4), KEY) is not None

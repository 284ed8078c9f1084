"""What the read memo's tests of every memoized wire share (design 53): a body translated through the
memos (the routed path's read, from the body's values or from its bytes as the proxy slices them) against
the same body read and translated with none. Each wire's own tests (``tests/wires/<package>/``) build its
bodies: captured agents' requests, corpus bodies, conversations growing request by request."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from helpers_common import TESTS
from test_translate import _issuer, vessel_of
from toolreplay import jsonenc
from toolreplay._proxy.bodies import Sliced, items, json_value, sliced
from toolreplay._proxy.continued import Layout
from toolreplay._proxy.translate import Translated, read_inbound, translate_request, unsliced
from toolreplay._proxy.translate_renders import Renders
from toolreplay.model import History
from toolreplay.wires.contract import Wire
from toolreplay.wires.read_memo import READ_MEMO, ReadMemo

AGENTS = TESTS / "data" / "agents"


def agent_bodies(name: str, wire: str) -> list[dict[str, Any]]:
    """The request bodies of one kept agent run (``tests/data/agents/<name>.json``) on ``wire``."""
    run = json.loads((AGENTS / f"{name}.json").read_text(encoding="utf-8"))
    return [json.loads(r["body_text"]) for r in run["requests"] if r["wire"] == wire]


def corpus_bodies(wire: str) -> list[dict[str, Any]]:
    from corpus_loader import exchanges

    return [ex.request for ex in exchanges(wire=wire, with_request=True) if ex.request is not None]


def parsed(wire: Wire, body: Any, memo: ReadMemo | None = None) -> History:
    """The wire's reading of ``body`` (a copy: the reader shares the body's values), through ``memo``."""
    assert wire.translation is not None and wire.translation.memoized is not None
    if memo is None:
        assert wire.parse_request is not None
        return wire.parse_request(copy.deepcopy(body))
    return wire.translation.memoized.parse(copy.deepcopy(body), memo=memo)


def uncached(wire: Wire, body: dict[str, Any], vessel: str) -> Translated:
    v = vessel_of(vessel)
    return translate_request(wire, parsed(wire, body), None, v, issuer=_issuer(v))


def cached(
    wire: Wire, body: dict[str, Any], vessel: str, renders: Renders, memo: ReadMemo | None = None
) -> Translated:
    """``body`` read through ``memo`` (None: the proxy's, as the routed path reads it) and translated."""
    v = vessel_of(vessel)
    h = parsed(wire, body, memo) if memo is not None else read_inbound(wire, copy.deepcopy(body))
    return translate_request(wire, h, None, v, issuer=_issuer(v), renders=renders)


def same(a: Translated, b: Translated) -> None:
    assert jsonenc.encode(b.body) == jsonenc.encode(a.body)
    assert b.history == a.history
    assert b.history.warnings == a.history.warnings
    assert b.notes == a.notes
    assert b.answer_id == a.answer_id
    assert (b.tool_names, b.free_form, b.upstream_stream) == (a.tool_names, a.free_form, a.upstream_stream)


def encodings(body: dict[str, Any]) -> list[bytes]:
    """The same body as different agents write it: compact, spaced, every non-ASCII character escaped."""
    return [
        orjson.dumps(body),
        json.dumps(body).encode(),
        json.dumps(body, indent=1, ensure_ascii=True).encode(),
    ]


def read_sliced(wire: Wire, plain: bytes) -> History:
    """The history the routed path reads from ``plain``: its top-level slices, each list entry's bytes
    keying the memo; the body it reads is the whole parse's."""
    top = sliced_as_cold(plain, wire.list_key)
    if top is None:  # msgspec cannot tell: the proxy parses it whole
        return read_inbound(wire, json_value(plain))
    got = unsliced(wire, top)
    whole = json_value(plain)
    assert got.body == whole and list(got.body) == list(whole)
    return read_inbound(wire, got.body, raws=got.raws)


def sliced_as_cold(plain: bytes, key: str) -> Sliced | None:
    """``plain`` sliced as the routed path slices it (from the body before it where it continues a kept
    one, design 57), checked against its slicing alone: the same values in the same order, the same list
    entries."""
    top, cold = sliced(plain, key), sliced(plain)
    assert (top is None) == (cold is None)
    if top is not None and cold is not None:
        assert list(top.raws.items()) == list(cold.raws.items())
        if top.layout is not None:
            assert list(top.layout.entries) == items(cold.raws[key])
            assert top.layout.at() == Layout(plain, cold.raws, key, top.layout.entries).at()
    return top


def sliced_alike(wire: Wire, plain: bytes, renders: Renders, vessel: str = "openai") -> None:
    """``plain`` read from its slices and translated as the whole parse of it is."""
    v = vessel_of(vessel)
    history = read_sliced(wire, plain)
    want = uncached(wire, json_value(plain), vessel)
    assert history == want.history
    same(want, translate_request(wire, history, None, v, issuer=_issuer(v), renders=renders))


__all__ = [
    "agent_bodies",
    "cached",
    "corpus_bodies",
    "edits_and_interleaved_sessions_alike",
    "encodings",
    "every_body_alike_cached_or_not",
    "every_prefix_alike",
    "grown",
    "loaded_continuing",
    "middle_change_read_again",
    "parsed",
    "prefixes_alike_through_one_memo",
    "read_sliced",
    "same",
    "sliced_alike",
    "sliced_as_cold",
    "spellings_alike_from_slices",
    "uncached",
    "unchanged_turn_shares_messages",
]


def loaded_continuing(wire: Wire, first: dict[str, Any], grown: dict[str, Any], monkeypatch: Any) -> int:
    """How many bytes the routed path parses of ``grown`` read from its bytes right after ``first``
    (no entry with its bytes at hand is encoded to key the memo: that fails); its body and history are
    the whole parse's."""
    from toolreplay._proxy.translate import READ_MEMO as memo
    from toolreplay.wires import read_memo

    memo.clear()
    read_sliced(wire, orjson.dumps(first))
    loads: list[int] = []
    real = orjson.loads

    def counted(raw: Any) -> Any:
        loads.append(len(raw))
        return real(raw)

    def no_key(value: Any) -> bytes | None:
        raise AssertionError("a body value with its bytes at hand was encoded to key the memo")

    monkeypatch.setattr(read_memo, "json_key", no_key)
    monkeypatch.setattr("toolreplay._proxy.translate.orjson.loads", counted)
    top = sliced_as_cold(orjson.dumps(grown), wire.list_key)
    assert top is not None
    got = unsliced(wire, top)
    history = read_inbound(wire, got.body, raws=got.raws)
    monkeypatch.undo()
    assert got.body == grown and history == parsed(wire, grown)
    return sum(loads)


#: A wire's edit of one body: the body with its list entry ``at`` changed in its middle (a copy).
Edit = Callable[[dict[str, Any], int], dict[str, Any]]


def grown(wire: Wire, body: dict[str, Any], k: int) -> dict[str, Any]:
    """``body`` as its conversation stood ``k`` entries in: its list (``wire.list_key``) cut to ``k``."""
    return {**body, wire.list_key: copy.deepcopy(body[wire.list_key][:k])}


def every_body_alike_cached_or_not(wire: Wire, bodies: Iterable[dict[str, Any]], vessel: str) -> None:
    """Each of ``bodies`` translated through the memos, twice (the second time from them), as uncached:
    one read memo for all, a render cache per body (unrelated bodies that open alike are not one
    conversation)."""
    READ_MEMO.clear()
    for body in bodies:
        renders = Renders()
        want = uncached(wire, body, vessel)
        same(want, cached(wire, body, vessel, renders))
        same(want, cached(wire, body, vessel, renders))  # the second time from the memos


def unchanged_turn_shares_messages(wire: Wire, body: dict[str, Any]) -> None:
    """``body`` read after itself three entries short: the earlier turn's messages are the same objects."""
    memo = ReadMemo()
    n = len(body[wire.list_key])
    first = parsed(wire, grown(wire, body, n - 3), memo)
    second = parsed(wire, grown(wire, body, n), memo)
    shared = [a is b for a, b in zip(first.messages[:-2], second.messages, strict=False)]
    assert first.messages[0] is second.messages[0] and sum(shared) >= len(shared) - 2


def every_prefix_alike(wire: Wire, body: dict[str, Any], vessel: str) -> None:
    """``body`` grown entry by entry, each request through the memos as uncached."""
    READ_MEMO.clear()
    renders = Renders()
    for k in range(1, len(body[wire.list_key]) + 1):
        g = grown(wire, body, k)
        same(uncached(wire, g, vessel), cached(wire, g, vessel, renders))


def edits_and_interleaved_sessions_alike(
    wire: Wire,
    sessions: tuple[dict[str, Any], dict[str, Any]],
    steps: range,
    edited: Edit,
    editable: Callable[[dict[str, Any], int], bool],
    vessel: str,
) -> None:
    """Two sessions grown in turn by ``steps``, each request and its edits to its last and middle entries
    (where ``editable``) translated alike under caches small enough to evict on the way."""
    renders, memo = Renders(size=2), ReadMemo(budget=40_000)
    for k in steps:
        for body in sessions:
            g = grown(wire, body, k)
            same(uncached(wire, g, vessel), cached(wire, g, vessel, renders, memo))
            for at in (k - 1, k // 2):
                if editable(g, at):
                    e = edited(g, at)
                    same(uncached(wire, e, vessel), cached(wire, e, vessel, renders, memo))
    assert memo.groups.cost <= memo.groups.budget and memo.turns.cost <= memo.turns.budget


def spellings_alike_from_slices(wire: Wire, bodies: Iterable[dict[str, Any]]) -> None:
    """Each of ``bodies`` in every spelling read from its slices, twice (the second time from the memo,
    by the same bytes), as the whole parse of it is."""
    READ_MEMO.clear()
    for body in bodies:
        renders = Renders()
        for plain in encodings(body):
            sliced_alike(wire, plain, renders)
            sliced_alike(wire, plain, renders)


def middle_change_read_again(wire: Wire, body: dict[str, Any], edited: dict[str, Any]) -> None:
    """``edited`` (``body`` with an entry changed in its middle) read from its bytes right after ``body``:
    the changed entry is read again, not taken from the memo."""
    READ_MEMO.clear()
    read_sliced(wire, orjson.dumps(body))
    got = read_sliced(wire, orjson.dumps(edited))
    assert got == parsed(wire, edited) and got != parsed(wire, body)


def prefixes_alike_through_one_memo(wire: Wire, bodies: Iterable[dict[str, Any]], vessel: str) -> None:
    """Requests of one conversation, in order, read through one memo as with none and translated alike."""
    memo, renders = ReadMemo(), Renders()
    for body in bodies:
        assert parsed(wire, body, memo) == parsed(wire, body)
        same(uncached(wire, body, vessel), cached(wire, body, vessel, renders, memo))

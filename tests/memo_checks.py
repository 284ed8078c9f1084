"""What the read memo's tests of every memoized wire share (design 53): a body translated through the
memos (the routed path's read, from the body's values or from its bytes as the proxy slices them) against
the same body read and translated with none. Each wire's own tests (``tests/wires/<package>/``) build its
bodies: captured agents' requests, corpus bodies, conversations growing request by request."""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson

from helpers_common import TESTS
from test_translate import _issuer, vessel_of
from toolreplay import jsonenc
from toolreplay._proxy.bodies import json_value, sliced
from toolreplay._proxy.translate import Translated, read_inbound, translate_request, unsliced
from toolreplay._proxy.translate_renders import Renders
from toolreplay.model import History
from toolreplay.wires.contract import Wire
from toolreplay.wires.read_memo import ReadMemo

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
    top = sliced(plain)
    if top is None:  # msgspec cannot tell: the proxy parses it whole
        return read_inbound(wire, json_value(plain))
    got = unsliced(wire, top)
    whole = json_value(plain)
    assert got.body == whole and list(got.body) == list(whole)
    return read_inbound(wire, got.body, raws=got.raws)


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
    "encodings",
    "loaded_continuing",
    "parsed",
    "read_sliced",
    "same",
    "sliced_alike",
    "uncached",
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
    top = sliced(orjson.dumps(grown))
    assert top is not None
    got = unsliced(wire, top)
    history = read_inbound(wire, got.body, raws=got.raws)
    monkeypatch.undo()
    assert got.body == grown and history == parsed(wire, grown)
    return sum(loads)

"""A routed body read from its top-level slices (design 53): the proxy picks the route from the model alone
and reads the messages on the translation thread, each unchanged one taken from the memo by the bytes the
agent sent. Whatever the bytes (spacing, escapes, duplicate keys, numbers orjson reads as doubles or
refuses, NaN), the body, the history and the translation are those of the body parsed whole."""

from __future__ import annotations

import copy
import re
from typing import Any

import orjson
import pytest
from test_translate_memo import _claude_bodies, _corpus_bodies, _grown, _long_body, _same, _uncached

from memo_checks import encodings, loaded_continuing, sliced_as_cold
from test_translate import _issuer, vessel_of
from toolreplay._proxy.bodies import BodyError, Sliced, json_value, sliced
from toolreplay._proxy.translate import read_inbound, translate_request, unsliced
from toolreplay._proxy.translate_renders import Renders
from toolreplay.errors import WireError
from toolreplay.wires import get_wire
from toolreplay.wires.anthropic.request import parse_request
from toolreplay.wires.read_memo import READ_MEMO

WIRE = get_wire("anthropic")


def _read(plain: bytes) -> tuple[Any, Any]:
    """The body and history the routed path reads from ``plain`` (sliced), and those of the whole parse."""
    whole = json_value(plain)
    top = sliced_as_cold(plain, "messages")
    if top is None:  # msgspec cannot tell: the proxy parses it whole, as before
        return whole, parse_request(copy.deepcopy(whole))
    got = unsliced(WIRE, top)
    assert got.body == whole and list(got.body) == list(whole)
    return got.body, read_inbound(WIRE, got.body, raws=got.raws)


def _translated(plain: bytes, renders: Renders) -> None:
    v = vessel_of("openai")
    _, history = _read(plain)
    want = _uncached(json_value(plain), "openai")
    assert history == want.history
    _same(want, translate_request(WIRE, history, None, v, issuer=_issuer(v), renders=renders))


@pytest.mark.slow
def test_every_claude_and_corpus_body_reads_alike_from_its_slices() -> None:
    READ_MEMO.clear()
    renders = Renders()
    for body in [*_claude_bodies(), *_corpus_bodies(), _long_body()]:
        for plain in encodings(body):
            _translated(plain, renders)
            _translated(plain, renders)  # the second time from the memo, by the same bytes


def test_a_growing_conversation_reads_alike_request_after_request_in_any_spelling() -> None:
    # each request's earlier messages come from the memo by their bytes; a spelling that changes between
    # requests (another agent, another encoder) only misses
    READ_MEMO.clear()
    renders = Renders()
    body = _long_body()
    for k in range(1, len(body["messages"]) + 1, 7):
        for plain in encodings(_grown(body, k)):
            _translated(plain, renders)


def test_unchanged_messages_are_neither_parsed_nor_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _long_body()
    grown = copy.deepcopy(body)
    grown["messages"].append({"role": "user", "content": "one more"})
    # the new message and the small top-level values; no earlier message, no system prompt, no tools
    assert loaded_continuing(WIRE, body, grown, monkeypatch) < 1_000 and len(orjson.dumps(body)) > 90_000


@pytest.mark.parametrize(
    "plain",
    [
        # duplicate keys: the last value wins, at the first key's place, as in orjson
        b'{"model":"x","messages":[{"role":"user","content":"a","role":"user"}],"model":"claude-sonnet-4-5",'
        b'"max_tokens":5}',
        b'{"messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"}]}',
        # escapes and non-ASCII text, spelled both ways
        b'{"messages":[{"role":"user","content":"caf\\u00e9 \\"q\\" \\n \\ud83d\\ude00 caf\xc3\xa9"}]}',
        # an integer past 64 bits (orjson reads a double) and one past a double (orjson refuses: read whole)
        b'{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f",'
        b'"input":{"n":123456789012345678901234567890}}]}],"max_tokens":5}',
        b'{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f",'
        b'"input":{"n":1e400,"m":123456789012345678901234567890}}]}]}',
        b'{"messages":[{"role":"user","content":"a"}],"temperature":1e400}',
        # NaN and a lone surrogate: msgspec refuses them, so the whole parse decides
        b'{"messages":[{"role":"user","content":"a"}],"temperature":NaN}',
        b'{"messages":[{"role":"user","content":"\\ud800"}]}',
        # -0.0 and 1.0 are not 0 and 1
        b'{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f",'
        b'"input":{"a":-0.0,"b":1.0,"c":0,"d":1}}]}]}',
    ],
)
def test_hostile_spellings_read_as_the_whole_parse_reads_them(plain: bytes) -> None:
    READ_MEMO.clear()
    for _ in range(2):  # the second time from the memo
        top = sliced(plain)
        body = unsliced(WIRE, top).body if top is not None else json_value(plain)
        assert repr(body) == repr(json_value(plain))  # the same types too (1.0 is not 1, -0.0 not 0.0)
        # the same history, or the same failure (the reader refuses infinity as the whole parse has it)
        assert _outcome(lambda: _read(plain)[1]) == _outcome(lambda: parse_request(json_value(plain)))


def _outcome(read: Any) -> Any:
    try:
        return read()
    except ValueError as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize(
    ("plain", "problem"),
    [
        (b'{"model":"m","messages":"x"}', "no 'messages' list in the body"),
        (b'{"model":"m","messages":[1]}', "messages[0] is int, not an object"),
        (b'{"model":"m","messages":[{"role":"user","content":"a"},[]]}', "messages[1] is list, not an"),
    ],
)
def test_a_body_of_the_wrong_shape_is_named_as_before(plain: bytes, problem: str) -> None:
    top = sliced(plain)
    assert isinstance(top, Sliced)
    got = unsliced(WIRE, top)
    with pytest.raises(WireError, match=re.escape(problem)):
        read_inbound(WIRE, got.body, raws=got.raws)
    with pytest.raises(WireError, match=re.escape(problem)):
        parse_request(json_value(plain))


def test_what_is_not_surely_an_object_is_left_to_the_whole_parse() -> None:
    for plain in [b"[1]", b"", b'{"a":', b"\xef\xbb\xbf{}", b'{"a":"\xff"}']:
        assert sliced(plain) is None
    with pytest.raises(BodyError, match="not valid JSON"):
        json_value(b'{"a":')
    top = sliced(b'{"model":"claude-x","stream":true}')
    assert top is not None and top.get("model") == "claude-x" and top["stream"] is True and len(top) == 2


def test_a_message_changed_in_the_middle_is_read_again() -> None:
    # the same length and the same ends (what the lookup key holds), a different byte in between: the
    # earlier request's entry at that index is not taken, in place or by lookup
    READ_MEMO.clear()
    body = _long_body()
    at, k = next(
        (i, k)
        for i, m in enumerate(body["messages"])
        if isinstance(m["content"], list)
        for k, b in enumerate(m["content"])
        if b.get("type") == "text" and len(b["text"]) > 200
    )
    _read(orjson.dumps(body))
    edited = copy.deepcopy(body)
    block = edited["messages"][at]["content"][k]
    middle = len(block["text"]) // 2
    swapped = "#" if block["text"][middle] != "#" else "%"
    block["text"] = block["text"][:middle] + swapped + block["text"][middle + 1 :]
    got, history = _read(orjson.dumps(edited))
    assert got == edited and history == parse_request(copy.deepcopy(edited))
    assert history != parse_request(copy.deepcopy(body))

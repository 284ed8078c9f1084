"""Bad input, fuzzed: every wire's response parser, whole and streamed (hypothesis).

Answers are generated (text, reasoning, up to three calls with any arguments, broken ones included) and
turned into each wire's real body and stream events by the provider double's builders
(toolreplay.testing.answers). Streams go through the real transport (an ``httpx.MockTransport`` answers
with the framed bytes, SSE or NDJSON), so the framing and decoding are fuzzed with the parsers:

* a valid stream cut into chunks at random byte offsets (inside a UTF-8 character too), with ``\\n`` or
  ``\\r\\n`` line ends, parses to exactly the Reply of the whole body;
* mutated bodies, mutated event lists (events dropped, repeated, swapped, edited anywhere, arbitrary
  ones inserted, the stream stopped early) and damaged bytes give a Reply or a ProviderError (the
  transport's documented family: ResponseFormatError for a body not in the wire's shape, ConnectionFault
  for a stream cut short, the stream's own error events translated), always with a one-line message.

Example counts: the conftest profile (100, or 200 with CI set) per test and wire.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import string
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers_fuzz import json_values, mutated_bytes, mutated_json, only_documented
from toolreplay._errors import ProviderError
from toolreplay._transport.client import NO_RETRY, Transport
from toolreplay.testing.answers import Answer, AnswerCall, answer_body, answer_events
from toolreplay.wires import parse_response
from toolreplay.wires.reply import Reply, Usage
from wire_helpers import http_of

pytestmark = pytest.mark.slow  # fuzzing: see docs/design.md, design 26

VESSEL = {
    "openai-chat": "kimi",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
}
WIRES = sorted(VESSEL)
LOOPBACK = "http://127.0.0.1:9/v1"  # never connected to: the MockTransport answers
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
#: The request sent, a Chat body but on Gemini's wire.
REQUESTS = {"gemini": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}}

_names = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=20)
_ids = st.text(string.ascii_letters + string.digits + "_-.:", min_size=1, max_size=24)
_args = st.dictionaries(st.text(max_size=6), json_values, max_size=3) | st.text(max_size=20)
_calls = st.builds(
    AnswerCall,
    name=_names,
    args=_args,
    call_id=_ids,
    signature=st.none() | st.binary(min_size=1, max_size=12).map(lambda b: base64.b64encode(b).decode()),
)
answers = st.builds(
    Answer,
    seq=st.integers(1, 99),
    model=st.sampled_from(
        ["kimi-k2", "gpt-5", "claude-sonnet-4-5", "gemini-2.5-flash", "gemini-3-pro-preview", "qwen3"]
    ),
    text=st.text(max_size=60),
    calls=st.lists(_calls, max_size=3).map(tuple),
    reasoning=st.none() | st.text(min_size=1, max_size=30),
    usage=st.builds(Usage, st.integers(0, 10**6), st.integers(0, 10**5), st.integers(0, 10**6)),
    # what toolreplay sends with a stream (Chat's usage chunk comes only when asked for)
    request=st.just({"stream": True, "stream_options": {"include_usage": True}}),
)


def pieces_of(text: str, cuts: list[int]) -> list[str]:
    marks = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(marks) if b > a]


def frame(wire: str, events: list[tuple[str | None, Any]], crlf: bool = False) -> bytes:
    """The bytes a provider sends for ``events``: SSE (``event:``/``data:``) or NDJSON (Ollama's)."""
    out: list[str] = []
    for name, payload in events:
        data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        if http_of(wire).framing == "ndjson":
            out.append(data + "\n")
        else:
            out.append((f"event: {name}\n" if name else "") + f"data: {data}\n\n")
    text = "".join(out)
    return (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")


def chunks_of(data: bytes, cuts: list[int]) -> list[bytes]:
    marks = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(marks) if b > a]


def through_transport(wire: str, chunks: list[bytes], content_type: str | None = None) -> Reply:
    """What the real transport makes of a 200 answer sent as ``chunks`` (a stream unless told)."""
    ndjson = http_of(wire).framing == "ndjson"
    ctype = content_type or ("application/x-ndjson" if ndjson else "text/event-stream")

    def handler(request: httpx.Request) -> httpx.Response:
        async def body() -> AsyncIterator[bytes]:
            for c in chunks:
                yield c

        return httpx.Response(200, headers={"content-type": ctype}, content=body())

    async def go() -> Reply:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            transport = Transport(client=client, retry=NO_RETRY)
            request = REQUESTS.get(wire, REQUEST)
            return await transport.send(VESSEL[wire], request, stream=True, base_url=LOOPBACK)

    return asyncio.run(go())


@st.composite
def edited_events(draw: st.DrawFn, events: list[tuple[str | None, Any]]) -> list[tuple[str | None, Any]]:
    out = list(events)
    for _ in range(draw(st.integers(1, 3))):
        if not out:
            out.append((None, draw(json_values)))
            continue
        i = draw(st.integers(0, len(out) - 1))
        edit = draw(st.sampled_from(["drop", "repeat", "swap", "edit", "insert", "stop"]))
        if edit == "drop":
            del out[i]
        elif edit == "repeat":
            out.insert(i, out[i])
        elif edit == "swap":
            j = draw(st.integers(0, len(out) - 1))
            out[i], out[j] = out[j], out[i]
        elif edit == "edit" and not isinstance(out[i][1], str):
            out[i] = (out[i][0], draw(mutated_json(out[i][1], max_edits=2)))
        elif edit == "insert":
            out.insert(
                i, (draw(st.none() | st.sampled_from(["error", "ping", "message_stop"])), draw(json_values))
            )
        elif edit == "stop":
            del out[i:]
    return out


# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
@given(
    answer=answers,
    text_cuts=st.lists(st.integers(0, 200), max_size=6),
    byte_cuts=st.lists(st.integers(0, 10**5), max_size=12),
    crlf=st.booleans(),
)
def test_any_byte_split_of_a_stream_gives_the_body_reply(
    wire: str, answer: Answer, text_cuts: list[int], byte_cuts: list[int], crlf: bool
) -> None:
    expected = parse_response(wire, answer_body(wire, answer))
    events = answer_events(wire, answer, lambda text: pieces_of(text, text_cuts))
    reply = through_transport(wire, chunks_of(frame(wire, events, crlf), byte_cuts))
    assert reply == expected


@pytest.mark.parametrize("wire", WIRES)
@given(answer=answers, data=st.data())
def test_a_mutated_whole_body_gives_a_reply_or_the_documented_error(
    wire: str, answer: Answer, data: st.DataObject
) -> None:
    body = data.draw(mutated_json(answer_body(wire, answer)) | json_values, label="body")
    reply = only_documented(lambda: parse_response(wire, body), ProviderError)
    assert reply is None or isinstance(reply, Reply)


@pytest.mark.parametrize("wire", WIRES)
@given(answer=answers, data=st.data(), byte_cuts=st.lists(st.integers(0, 10**5), max_size=6))
def test_mutated_stream_events_give_a_reply_or_the_documented_error(
    wire: str, answer: Answer, data: st.DataObject, byte_cuts: list[int]
) -> None:
    events = data.draw(edited_events(answer_events(wire, answer)), label="events")
    chunks = chunks_of(frame(wire, events), byte_cuts)
    reply = only_documented(lambda: through_transport(wire, chunks), ProviderError)
    assert reply is None or isinstance(reply, Reply)


@pytest.mark.parametrize("wire", WIRES)
@given(answer=answers, data=st.data(), whole=st.booleans())
def test_damaged_bytes_give_a_reply_or_the_documented_error(
    wire: str, answer: Answer, data: st.DataObject, whole: bool
) -> None:
    raw = (
        json.dumps(answer_body(wire, answer)).encode() if whole else frame(wire, answer_events(wire, answer))
    )
    damaged = data.draw(mutated_bytes(raw), label="bytes")
    ctype = "application/json" if whole else None
    reply = only_documented(lambda: through_transport(wire, [damaged], ctype), ProviderError)
    assert reply is None or isinstance(reply, Reply)


# --------------------------------------------------------------------------------------------------
# what the fuzzing found


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"])  # JSON escapes the other separators
def test_found_json_text_holding_a_unicode_line_separator(wire: str, char: str) -> None:
    """httpx's aiter_lines splits at these (str.splitlines); SSE and NDJSON lines end only at CR/LF."""
    answer = Answer(
        1,
        "m",
        f"one{char}two",
        (AnswerCall("t", {"k": char}, "c1", None),),
        None,
        Usage(1, 1, 0),
        {"stream": True, "stream_options": {"include_usage": True}},
    )
    data = frame(wire, answer_events(wire, answer))
    assert char.encode() in data  # sent raw, as JSON allows
    assert through_transport(wire, chunks_of(data, [7, 8, 9])) == parse_response(
        wire, answer_body(wire, answer)
    )


def test_found_a_line_break_in_a_key_stays_out_of_the_message() -> None:
    with pytest.raises(ProviderError) as err:
        parse_response("openai-chat", {"\nerror\n": 1})
    assert "\n" not in str(err.value) and "\\n" in str(err.value)

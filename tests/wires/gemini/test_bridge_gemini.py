"""The Gemini bridge: real recorded Gemini streams read into deltas give the reply the wire's own parser
gives; what the writer streams and the whole body it writes parse under google-genai into the same
answer; written and read back, a reply comes back whole; the Gemini double's streams read as its answer."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_loader import Exchange, exchanges
from helpers_common import HTTP, loopback_server
from toolreplay.model import Issuer, Reasoning, ServerTool, Text, Usage
from toolreplay.wires.bridge import (
    CallBegin,
    CallEnd,
    Delta,
    Event,
    Failed,
    Finish,
    Outbound,
    ReasoningEnd,
    TextDelta,
    base64_token,
    collect,
    is_token,
    reply_deltas,
    seal,
    token_of,
)
from toolreplay.wires.doubles import Answer, AnswerCall, seeded
from toolreplay.wires.gemini import WIRE
from toolreplay.wires.gemini.bridge import BRIDGE, HIDDEN, Reader, Writer, finish_reason
from toolreplay.wires.gemini.double import gemini_events
from toolreplay.wires.gemini.response import StreamParser, parse_response
from toolreplay.wires.reply import ParsedCall, Reply

UPSTREAM = Issuer("openai-chat", "api.moonshot.ai", "kimi-k2-thinking")


def _read(events: list[Any]) -> list[Delta]:
    reader = Reader()
    out: list[Delta] = []
    for e in events:
        out += reader.feed(e)
    return out + reader.finish()


def _without_hosted(said: tuple[Any, ...]) -> tuple[Any, ...]:
    """``said`` without the parts Gemini's own tools made (no neutral delta carries them), the text around
    them then one piece, as a stream accumulator joins it."""
    out: list[Any] = []
    for p in said:
        if isinstance(p, ServerTool):
            continue
        if isinstance(p, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + p.text, out[-1].data or p.data)
        else:
            out.append(p)
    return tuple(out)


def _same(got: Reply, want: Reply) -> None:
    assert got.said == _without_hosted(want.said)
    assert got.text == want.text
    assert got.calls == want.calls
    assert got.usage == want.usage and got.model == want.model
    assert got.finish_reason == finish_reason(want.finish_reason, bool(want.calls))


def _streams() -> list[Any]:
    return [pytest.param(ex, id=ex.id) for ex in exchanges("gemini", streamed=True)]


def _answers() -> list[Any]:
    return [
        pytest.param(ex, id=ex.id)
        for ex in exchanges("gemini", streamed=False)
        if ex.response and "candidates" in ex.response
    ]


@pytest.mark.parametrize("ex", _streams())
def test_a_recorded_stream_reads_as_the_stream_parser_reads_it(ex: Exchange) -> None:
    parser = StreamParser()
    for e in ex.events():
        parser.feed(e)
    deltas = _read(ex.events())
    _same(collect(deltas), parser.finish())
    assert isinstance(deltas[-1], Finish) and sum(isinstance(d, Finish) for d in deltas) == 1
    begun = [d.index for d in deltas if isinstance(d, CallBegin)]
    assert begun == list(range(len(begun))) == [d.index for d in deltas if isinstance(d, CallEnd)]


@pytest.mark.parametrize("ex", _answers())
def test_a_recorded_whole_answer_read_as_one_chunk_is_the_same_reply(ex: Exchange) -> None:
    assert ex.response is not None
    _same(collect(_read([ex.response])), parse_response(ex.response))


def test_streamed_arguments_begin_the_call_when_it_opens() -> None:
    (ex,) = (e for e in exchanges("gemini") if e.id.endswith("google-stream-tool-call-arguments.stream"))
    events = ex.events()
    reader = Reader()
    first = reader.feed(events[0])
    assert [type(d) for d in first][-1] is CallBegin  # the name came: the call starts before its arguments
    assert not any(isinstance(d, CallEnd) for d in first)


def test_finish_reasons_errors_and_a_stream_broken_off() -> None:
    chunk = {"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "MAX_TOKENS"}]}
    assert collect(_read([chunk])).finish_reason == "length"
    chunk["candidates"][0]["finishReason"] = "PROHIBITED_CONTENT"
    assert collect(_read([chunk])).finish_reason == "refusal"
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 3}}
    assert _read([blocked])[-1] == Finish("refusal", Usage(3, None, None))
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    deltas = _read([{"candidates": [{"content": {"parts": [{"text": "a"}]}}]}, error])
    assert deltas[-2:] == [Failed("The model is overloaded.", 503), Finish("error", Usage())]
    broken = _read([{"candidates": [{"content": {"parts": [{"text": "t", "thought": True}]}}]}])
    assert isinstance(broken[-3], ReasoningEnd) and isinstance(broken[-2], Failed)
    assert "finishReason" in broken[-2].message and broken[-1].reason == "error"


# -- the Gemini double ------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_double_s_stream_reads_as_its_answer(model: str, seed: int) -> None:
    calls = (AnswerCall("read", {"path": "a.txt"}, None, "c2ln"), AnswerCall("ls", {}, None, None))
    answer = Answer(1, model, "Reading both files now.", calls, "I should look.", Usage(40, 30, 8))
    for a in (answer, Answer(2, model, "Done.", (), None, Usage(7, 2, None))):
        reply = collect(_read([p for _, p in gemini_events(a, seeded(seed))]))
        assert reply.text == a.text and reply.model == model
        assert [(c.name, c.input, c.call_id) for c in reply.calls] == [
            (c.name, c.args, None) for c in a.calls
        ]
        assert [p.text for p in reply.said if isinstance(p, Reasoning)] == (
            [a.reasoning] if a.reasoning else []
        )
        assert reply.usage == a.usage
        assert reply.finish_reason == ("tool_calls" if a.calls else "stop")


def test_the_double_served_over_http_streams_what_the_reader_reads_as_its_script() -> None:
    from toolreplay.testing import Call, Calls, ProviderDouble
    from toolreplay.testing import Text as Said
    from toolreplay.testing import Usage as Counts

    script = Calls(
        [Call("read", {"path": "a.txt"})], text="Reading.", usage=Counts(30, 12), reasoning="Look."
    )
    body = {"contents": [{"role": "user", "parts": [{"text": "read a.txt"}]}]}
    with ProviderDouble() as double:
        double.script(script, Said("Done.", reasoning="Finished."))
        url = double.base_url_for("gemini") + "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        replies = []
        for _ in range(2):
            with HTTP.stream("POST", url, json=body, headers={"x-goog-api-key": "k"}) as r:
                lines = [ln for ln in r.iter_lines() if ln.startswith("data: ")]
            replies.append(collect(_read([json.loads(ln[6:]) for ln in lines])))
    calls, done = replies
    assert calls.text == "Reading." and [(c.name, c.input) for c in calls.calls] == [
        ("read", {"path": "a.txt"})
    ]
    assert [p.text for p in calls.said if isinstance(p, Reasoning)] == ["Look."]
    assert (calls.usage.input_tokens, calls.usage.output_tokens, calls.finish_reason) == (
        30,
        12,
        "tool_calls",
    )
    assert done.text == "Done." and done.finish_reason == "stop" and not done.calls


# -- writing, under google-genai ----------------------------------------------------------------------------


def _seal(piece: Reasoning) -> str:
    return seal(UPSTREAM, piece)


def _out(thinking: bool = True, ids: bool = False) -> Outbound:
    def call_id(index: int, upstream: str | None, name: str) -> str:
        return f"call_{index}_{name}" if ids else ""

    return Outbound(
        model="gemini-3-pro-preview", answer_id="resp-7", thinking=thinking, seal=_seal, call_id=call_id
    )


THOUGHT = Reasoning("The user wants the files listed.", {"openai-chat": {"reasoning_content": "The user..."}})
REPLY = Reply(
    "Listing them.",
    (
        ParsedCall("ls", {"path": ".", "all": True}, "functions.ls:0"),
        ParsedCall("read", {"path": "b.txt"}, "functions.read:1"),
    ),
    "tool_calls",
    Usage(120, 45, 100),
    None,
    "kimi-k2-thinking",
    (THOUGHT, Text("Listing them.")),
)


def _sse(events: list[Event]) -> bytes:
    return b"".join(b"data: " + json.dumps(p).encode() + b"\r\n\r\n" for _, p in events)


@contextmanager
def _serving(stream: bytes, whole: bytes) -> Iterator[tuple[str, list[Any]]]:
    """A loopback server answering Gemini's stream path with ``stream`` and its whole path with ``whole``;
    the request bodies it got, in order."""
    got: list[Any] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers.get("content-length") or 0))))
            streamed = ":streamGenerateContent" in self.path
            data = stream if streamed else whole
            self.send_response(200)
            self.send_header("content-type", "text/event-stream" if streamed else "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return None

    with loopback_server(Handler) as base:
        yield f"{base}", got


def _written(deltas: list[Delta], out: Outbound) -> list[Event]:
    writer = BRIDGE.writer(out)
    events = [e for d in deltas for e in writer.write(d)]
    return events + writer.close()


def _sdk_parts(responses: list[Any]) -> dict[str, Any]:
    """What a google-genai caller rebuilds from the responses: thoughts, words, calls, signatures, usage."""
    parts = [p for r in responses for p in r.candidates[0].content.parts or []]
    return {
        "thoughts": "".join(p.text or "" for p in parts if p.thought),
        "text": "".join(p.text or "" for p in parts if not p.thought),
        "calls": [
            (p.function_call.name, p.function_call.args, p.function_call.id) for p in parts if p.function_call
        ],
        "signed": [p.thought_signature.decode() for p in parts if p.thought_signature],
        "usage": responses[-1].usage_metadata,
        "finish": responses[-1].candidates[0].finish_reason,
    }


@pytest.mark.parametrize("ids", [False, True])
def test_google_genai_rebuilds_the_stream_and_the_body(ids: bool) -> None:
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    out = _out(ids=ids)
    body, notes = BRIDGE.body(REPLY, out)
    assert notes == []
    stream = _sse(_written(reply_deltas(REPLY), out))
    with _serving(stream, json.dumps(body).encode()) as (url, got):
        client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=url))
        try:
            streamed = list(
                client.models.generate_content_stream(model="gemini-3-pro-preview", contents="ls")
            )
            whole = client.models.generate_content(model="gemini-3-pro-preview", contents="ls")
            # the history sent back as google-genai holds it: the signatures go out as they came
            history = [types.Content(role="user", parts=[types.Part(text="ls")]), whole.candidates[0].content]
            client.models.generate_content(model="gemini-3-pro-preview", contents=history)
        finally:
            client.close()
    want = collect(reply_deltas(REPLY))
    for seen in (_sdk_parts(streamed), _sdk_parts([whole])):
        assert seen["thoughts"] == THOUGHT.text and seen["text"] == want.text
        expect_ids = [f"call_{i}_{c.name}" if ids else None for i, c in enumerate(want.calls)]
        assert seen["calls"] == [(c.name, c.input, i) for c, i in zip(want.calls, expect_ids, strict=True)]
        assert seen["signed"] == [_seal(THOUGHT)]  # the token, on the first call, never the upstream's data
        usage = seen["usage"]
        assert (usage.prompt_token_count, usage.candidates_token_count) == (120, 45)
        assert (usage.cached_content_token_count, usage.total_token_count) == (100, 165)
        assert seen["finish"] == types.FinishReason.STOP
    sent = [p for c in got[-1]["contents"] for p in c["parts"] if "thoughtSignature" in p]
    assert [token_of(p["thoughtSignature"]) for p in sent] == [_seal(THOUGHT)]
    assert "functionCall" in sent[0]


def test_reasoning_is_shown_only_when_asked_and_its_token_still_rides_on_the_next_part() -> None:
    events = _written(reply_deltas(REPLY), _out(thinking=False))
    writer = Writer(_out(thinking=False))
    for d in reply_deltas(REPLY):
        writer.write(d)
    assert writer.notes == [HIDDEN] == BRIDGE.body(REPLY, _out(thinking=False))[1]  # hidden, not silent
    assert BRIDGE.body(REPLY, _out())[1] == []
    parts = [p for _, e in events for p in e["candidates"][0]["content"]["parts"]]
    assert not any(p.get("thought") for p in parts)
    assert [token_of(p.get("thoughtSignature")) for p in parts if "thoughtSignature" in p] == [_seal(THOUGHT)]
    assert "reasoning_content" not in json.dumps([e for _, e in events])  # the upstream's data stays home
    assert all("id" not in p["functionCall"] for p in parts if "functionCall" in p)
    assert events[-1][1]["candidates"][0]["finishReason"] == "STOP" and "usageMetadata" in events[-1][1]


def test_what_gemini_cannot_carry_is_named_and_failures_are_google_errors() -> None:
    free = Reply("", (ParsedCall("apply_patch", "*** Begin Patch", "c1", kind="custom"),), "tool_calls")
    body, notes = BRIDGE.body(free, _out())
    assert body["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {
        "input": "*** Begin Patch"
    }
    assert notes and "free-form" in notes[0]
    writer = Writer(_out())
    assert writer.write(TextDelta("half")) and writer.write(Failed("upstream overloaded", 529)) == [
        (None, {"error": {"code": 529, "message": "upstream overloaded", "status": "INTERNAL"}})
    ]
    cut = Writer(_out())
    cut.write(TextDelta("half"))
    (event,) = cut.close()
    assert event[1]["error"]["code"] == 500 and cut.notes


def test_the_token_s_base64_form_is_base64_and_only_ours_match() -> None:
    from toolreplay.wires.gemini.signatures import is_base64

    events = _written(reply_deltas(REPLY), _out())
    (sig,) = [
        p["thoughtSignature"]
        for _, e in events
        for p in e["candidates"][0]["content"]["parts"]
        if "thoughtSignature" in p
    ]
    assert is_base64(sig) and is_token(sig) and not sig.startswith("toolreplay")
    assert not is_token("CiQBcsjafPV2cW5hxRdC0kCOI/dCb3tAP4qT8xHk6zLDoWvM0I8=")


# -- round trip -------------------------------------------------------------------------------------------

_words = st.text(min_size=1, max_size=20)
_args = st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=6), max_size=3)


@settings(max_examples=25, deadline=None)
@given(
    reasoning=st.lists(_words, max_size=2),
    text=st.text(max_size=30),
    calls=st.lists(st.tuples(_words, _args), max_size=3),
    thinking=st.booleans(),
)
def test_a_reply_written_and_read_back_is_the_same_reply(
    reasoning: list[str], text: str, calls: list[tuple[str, dict[str, Any]]], thinking: bool
) -> None:
    said: list[Reasoning | Text] = [Reasoning(r, {"anthropic": {"signature": "s"}}) for r in reasoning]
    if text:
        said.append(Text(text))
    parsed = tuple(ParsedCall(n, a, f"toolu_{i}") for i, (n, a) in enumerate(calls))
    reply = Reply(text, parsed, None, Usage(10, 5, 2), None, "claude-x", tuple(said))
    events = _written(reply_deltas(reply), _out(thinking, ids=True))
    back = collect(_read([e for _, e in events]))
    assert back.text == text and back.model == "gemini-3-pro-preview"
    assert [(c.name, c.input, c.call_id) for c in back.calls] == [
        (n, a, f"call_{i}_{n}") for i, (n, a) in enumerate(calls)
    ]
    assert [p.text for p in back.said if isinstance(p, Reasoning)] == (reasoning if thinking else [])
    parts = [p for _, e in events for p in e["candidates"][0]["content"]["parts"]]
    tokens = [token_of(p["thoughtSignature"]) for p in parts if "thoughtSignature" in p]
    assert tokens == [seal(UPSTREAM, p) for p in said if isinstance(p, Reasoning)]
    assert back.usage == Usage(10, 5, 2)
    assert back.finish_reason == ("tool_calls" if calls else "stop")


def test_an_answer_without_calls_is_signed_on_its_last_text_part_as_gemini_3_signs_it() -> None:
    reply = Reply("All done.", (), "end_turn", Usage(5, 3), None, "claude-x", (THOUGHT, Text("All done.")))
    out = _out(thinking=False)
    token = base64_token(_seal(THOUGHT))
    body, _ = BRIDGE.body(reply, out)
    assert body["candidates"][0]["content"]["parts"] == [{"text": "All done.", "thoughtSignature": token}]
    events = _written(reply_deltas(reply), out)
    assert events[-1][1]["candidates"][0]["content"]["parts"] == [{"text": "", "thoughtSignature": token}]
    read = parse_response(body)  # the wire's own parser: the token is where a Gemini signature would be
    assert read.said == (Text("All done.", {"gemini": {"thoughtSignature": token}}),)
    assert collect(_read([e for _, e in events])).said == read.said
    assert WIRE.bridge is not None and WIRE.bridge() is BRIDGE


def test_the_token_reads_back_in_either_base64_alphabet_and_a_text_signature_survives_the_deltas() -> None:
    token = _seal(THOUGHT)
    form = base64_token(token)
    standard = base64.b64encode(token.encode()).decode()
    assert token_of(form) == token_of(standard) == token_of(standard.rstrip("=")) == token_of(token) == token
    assert token_of(base64.b64encode(b"toolreplay.r2.x").decode()) is None and token_of(b"x") is None
    signed = Reply("hi", said=(Text("hi", {"gemini": {"thoughtSignature": "c2ln"}}),))
    assert collect(reply_deltas(signed)).said == signed.said

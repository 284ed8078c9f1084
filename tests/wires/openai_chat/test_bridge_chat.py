"""The Chat bridge (design 51): its reader over every recorded Chat stream agrees with the stream parser,
piece by piece; its writer's chunks and its whole bodies read back, under the openai SDK over real HTTP,
as the reply they were written from."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_loader import DONE, Exchange, exchanges
from helpers_bridge_http import Written, read_all, serving, write_all
from toolreplay.model import Reasoning, Text, Usage
from toolreplay.wires.bridge import (
    Begin,
    CallBegin,
    CallDelta,
    CallEnd,
    Delta,
    Failed,
    Finish,
    Outbound,
    ReasoningDelta,
    ReasoningEnd,
    TextDelta,
    collect,
    reply_deltas,
)
from toolreplay.wires.doubles import Answer, AnswerCall, empty_first, token_pieces, whole
from toolreplay.wires.openai_chat.bridge import BRIDGE, HIDDEN, NO_USAGE
from toolreplay.wires.openai_chat.bridge_read import ChatReader, neutral_reason
from toolreplay.wires.openai_chat.double import chat_body, chat_events, error_event
from toolreplay.wires.openai_chat.response import WIRE, StreamParser, parse_response
from toolreplay.wires.reply import ParsedCall, Reply

STREAMS = list(exchanges("openai-chat", streamed=True))


def _ids(index: int, upstream: str | None, name: str) -> str:
    return upstream or f"call_agent_{index}"


OUT = Outbound(model="gpt-4.1", answer_id="chatcmpl-tr1", thinking=True, call_id=_ids, created=1_764_000_000)
REPLY = Reply(
    text="Let me look. Then close it.",
    calls=(
        ParsedCall("coop", {"action": "list"}, "toolu_01A"),
        ParsedCall("coop", {"action": "close", "id": 12, "note": "done ✓"}, None),
    ),
    usage=Usage(120, 30, 96),
    model="kimi-k2-thinking",
    said=(
        Reasoning("The user wants the board.", {"openai-chat": {"reasoning_content": "x"}}),
        Text("Let me look. Then close it."),
    ),
)


# -- the reader over the recordings ---------------------------------------------------------------------


@pytest.mark.parametrize("ex", STREAMS, ids=[e.id for e in STREAMS])
def test_the_reader_agrees_with_the_stream_parser_on_every_recording(ex: Exchange) -> None:
    reader, parser, deltas = ChatReader(), StreamParser(), []
    for event in ex.events():
        got = reader.feed(event)
        deltas += got
        if event == DONE:
            parser.mark_done()
        else:  # the words each chunk carries come with that chunk, not later
            assert "".join(d.text for d in got if isinstance(d, TextDelta)) == parser.feed(event)
    deltas += reader.finish()
    want, back = parser.finish(), collect(deltas)
    assert back.said == want.said and back.text == want.text and back.calls == want.calls
    assert back.usage == want.usage and back.model == want.model
    assert back.finish_reason == neutral_reason(want.finish_reason, bool(want.calls))
    _well_formed(deltas)


def _well_formed(deltas: list[Delta]) -> None:
    """Begin first and once, Finish last and once, every call begun before its pieces and ended before the
    finish, every reasoning piece ended before the words after it."""
    assert isinstance(deltas[0], Begin) and isinstance(deltas[-1], Finish)
    assert sum(isinstance(d, Begin | Finish) for d in deltas) == 2
    open_calls: set[int] = set()
    thinking = False
    for d in deltas:
        if isinstance(d, CallBegin):
            assert d.index not in open_calls and d.name
            open_calls.add(d.index)
        elif isinstance(d, CallDelta | CallEnd):
            assert d.index in open_calls
            if isinstance(d, CallEnd):
                open_calls.discard(d.index)
        thinking = isinstance(d, ReasoningDelta) or (thinking and not isinstance(d, ReasoningEnd))
        assert not (thinking and isinstance(d, TextDelta | CallBegin | Finish))
    assert not open_calls


def test_arguments_come_piece_by_piece_and_a_call_ends_when_the_next_begins() -> None:
    ex = next(
        e for e in STREAMS if e.id.endswith("test_chat_completion_multiple_tools_streaming_no_content.0")
    )
    reader = ChatReader()
    per_event = [reader.feed(e) for e in ex.events()]
    pieces = [d for ds in per_event for d in ds if isinstance(d, CallDelta)]
    assert len(pieces) > 4  # token-sized, as the server sent them
    second = next(ds for ds in per_event if any(isinstance(d, CallBegin) and d.index == 1 for d in ds))
    assert isinstance(second[0], CallEnd) and second[0].index == 0


def _chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {
        "id": "c1",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **top,
    }


def _frag(index: int, args: str, call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    fn: dict[str, Any] = {"arguments": args} | ({"name": name} if name else {})
    return {"tool_calls": [{"index": index, "function": fn} | ({"id": call_id} if call_id else {})]}


def test_calls_announced_together_and_argued_in_turns_stay_open_until_the_finish() -> None:
    events = [
        _chunk({"role": "assistant", **_frag(0, "", "a", "ls")}),
        _chunk(_frag(1, "", "b", "cat")),  # call 0's arguments are not whole yet: it stays open
        _chunk(_frag(0, '{"p": ')),
        _chunk(_frag(1, '{"f": "x"}')),
        _chunk(_frag(0, '"."}')),
        _chunk({}, "tool_calls"),
        DONE,
    ]
    reader = ChatReader()
    per_event = [reader.feed(e) for e in events]
    ends = [i for i, ds in enumerate(per_event) for d in ds if isinstance(d, CallEnd)]
    assert ends == [5, 5]  # both at the finish chunk, none when call 1 began
    deltas = [d for ds in per_event for d in ds]
    reply = collect(deltas)
    assert [(c.call_id, c.name, c.input) for c in reply.calls] == [
        ("a", "ls", {"p": "."}),
        ("b", "cat", {"f": "x"}),
    ]
    assert reply.finish_reason == "tool_calls"


def test_the_finish_waits_for_the_usage_chunk_or_done() -> None:
    reader = ChatReader()
    assert reader.feed(_chunk({"content": "hi"})) == [Begin("m", "c1"), TextDelta("hi")]
    assert reader.feed(_chunk({}, "length", usage=None)) == []  # the usage chunk may follow
    usage = {"prompt_tokens": 9, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 4}}
    assert reader.feed({"id": "c1", "choices": [], "usage": usage}) == [Finish("length", Usage(9, 2, 4))]
    assert reader.feed(DONE) == [] and reader.finish() == []
    plain = ChatReader()
    plain.feed(_chunk({"content": "hi"}))
    assert plain.feed(_chunk({}, "content_filter")) == [] and plain.feed(DONE) == [Finish("refusal")]


def test_reasoning_ends_at_the_first_words_with_the_data_the_whole_body_keeps() -> None:
    answer = Answer(
        3,
        "kimi-k2-thinking",
        "Listing.",
        (AnswerCall("ls", {}, "functions.ls:0", None),),
        "I look.",
        Usage(5, 2),
    )
    events = chat_events(answer)
    reader = ChatReader()
    per_event = [reader.feed(p) for _, p in events]
    first_words = next(ds for ds in per_event if any(isinstance(d, TextDelta) for d in ds))
    assert isinstance(first_words[0], ReasoningEnd)
    whole_said = parse_response(chat_body(answer)).said
    assert collect([d for ds in per_event for d in ds]).said == whole_said
    assert whole_said[0] == Reasoning("I look.", {WIRE: {"reasoning_content": "I look."}})


@pytest.mark.parametrize("cut", [token_pieces, whole, empty_first], ids=["tokens", "whole", "empty_first"])
@pytest.mark.parametrize("usage", [True, False], ids=["usage_chunk", "no_usage_chunk"])
def test_the_doubles_stream_reads_as_its_answer(cut: Any, usage: bool) -> None:
    calls = (
        AnswerCall("multiply", {"a": 1234, "b": 4567}, "call_1", None),
        AnswerCall("list_all", {}, "call_2", None),
    )
    request = {"stream_options": {"include_usage": True}} if usage else {}
    answer = Answer(1, "gpt-4.1", "Two calls.", calls, "Think first.", Usage(40, 7, 32), request)
    reply = collect(read_all(BRIDGE, chat_events(answer, cut)))
    assert reply.text == answer.text and reply.model == "gpt-4.1"
    assert [(c.name, c.input, c.call_id) for c in reply.calls] == [(c.name, c.args, c.call_id) for c in calls]
    assert [p.text for p in reply.said if isinstance(p, Reasoning)] == ["Think first."]
    assert reply.usage == (Usage(40, 7, 32) if usage else Usage()) and reply.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("kind", "status"), [("rate_limit", 429), ("invalid_request", 400), ("overloaded", None)]
)
def test_an_error_chunk_is_a_failure_with_the_providers_words(kind: str, status: int | None) -> None:
    reader = ChatReader()
    reader.feed(_chunk({"content": "partial"}))
    assert reader.feed(error_event(kind, "Slow down.")[1]) == [Failed("Slow down.", status)]
    assert reader.feed(DONE) == [] and reader.finish() == []


def test_a_stream_cut_short_ends_as_failed() -> None:
    reader = ChatReader()
    reader.feed(_chunk({"content": "partial"}))
    failed, finish = reader.finish()
    assert isinstance(failed, Failed) and "no finish_reason" in failed.message and finish == Finish("error")


# -- the writer and the body under the openai SDK -------------------------------------------------------

openai = pytest.importorskip("openai")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "coop",
            "strict": True,  # so the SDK's stream helper parses the arguments too
            "parameters": {"type": "object", "properties": {}, "additionalProperties": True},
        },
    }
]
HI = [{"role": "user", "content": "close todo 12"}]


def _served(out: Outbound = OUT) -> Written:
    events, _ = write_all(BRIDGE, reply_deltas(REPLY), out)
    body, _ = BRIDGE.body(REPLY, out)
    return Written("sse", events, body)


def _client(base: str) -> Any:
    return openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)


def _agent_ids() -> list[tuple[str, str, dict[str, Any]]]:
    return [(_ids(i, c.call_id, c.name), c.name, c.input) for i, c in enumerate(REPLY.calls)]


def test_the_sdks_stream_accumulator_rebuilds_the_reply() -> None:
    with (
        serving(_served()) as base,
        _client(base) as client,
        client.chat.completions.stream(model="gpt-4.1", messages=HI, tools=TOOLS) as stream,
    ):
        for _ in stream:
            pass
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert final.id == "chatcmpl-tr1" and final.model == "gpt-4.1" and final.created == OUT.created
    assert message.content == REPLY.text and message.role == "assistant"
    assert (message.model_extra or {}).get("reasoning_content") == "The user wants the board."
    calls = [(c.id, c.function.name, c.function.parsed_arguments) for c in message.tool_calls or []]
    assert calls == _agent_ids()
    assert final.choices[0].finish_reason == "tool_calls"
    assert final.usage is not None and (final.usage.prompt_tokens, final.usage.completion_tokens) == (120, 30)
    assert (
        final.usage.prompt_tokens_details is not None
        and final.usage.prompt_tokens_details.cached_tokens == 96
    )


def test_every_chunk_passes_the_sdks_strict_model_and_reads_as_the_reply() -> None:
    from openai.types.chat import ChatCompletionChunk

    with serving(_served()) as base, _client(base) as client:
        chunks = list(
            client.chat.completions.create(
                model="gpt-4.1", messages=HI, stream=True, stream_options={"include_usage": True}
            )
        )
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk.to_dict(), strict=True)
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert [d.role for d in deltas].count("assistant") == 1 and deltas[0].role == "assistant"
    assert "".join(d.content or "" for d in deltas) == REPLY.text
    frags = [f for d in deltas for f in d.tool_calls or []]
    heads = [(f.index, f.id, f.type, f.function.name) for f in frags if f.id]
    assert heads == [(i, cid, "function", name) for i, (cid, name, _) in enumerate(_agent_ids())]
    assert all(f.function.name is None and f.type is None for f in frags if not f.id)  # id and name once
    args = ["".join(f.function.arguments or "" for f in frags if f.index == i) for i in (0, 1)]
    assert [json.loads(a) for a in args] == [c.input for c in REPLY.calls]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 150
    assert all(c.id == "chatcmpl-tr1" and c.object == "chat.completion.chunk" for c in chunks)


def test_the_whole_body_passes_the_sdks_strict_model_and_reads_as_the_reply() -> None:
    from openai.types.chat import ChatCompletion

    written = _served()
    ChatCompletion.model_validate(written.body, strict=True)
    with serving(written) as base, _client(base) as client:
        got = client.chat.completions.create(model="gpt-4.1", messages=HI)
    message = got.choices[0].message
    assert message.content == REPLY.text and (message.model_extra or {}).get("reasoning_content")
    assert [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []
    ] == _agent_ids()
    assert got.usage is not None and got.usage.prompt_tokens_details is not None
    assert (
        got.usage.prompt_tokens_details.cached_tokens == 96 and got.choices[0].finish_reason == "tool_calls"
    )
    # the body and the stream say the same
    stream = collect(read_all(BRIDGE, written.events))
    assert (
        parse_response(written.body).calls == stream.calls
        and parse_response(written.body).text == stream.text
    )


def test_a_failure_reaches_the_sdk_as_its_error_after_the_words_before_it() -> None:
    deltas = [Begin("m"), TextDelta("Half"), Failed("Overloaded", 529)]
    events, _ = write_all(BRIDGE, deltas, OUT)
    assert events[-1][1] != "[DONE]"  # OpenAI ends a failed stream with the error chunk
    seen: list[str] = []
    with (
        serving(Written("sse", events)) as base,
        _client(base) as client,
        pytest.raises(openai.APIError, match="Overloaded"),
    ):
        for chunk in client.chat.completions.create(model="gpt-4.1", messages=HI, stream=True):
            seen += [c.delta.content or "" for c in chunk.choices]
    assert "".join(seen) == "Half"


def test_hidden_reasoning_and_usage_not_asked_for_are_named() -> None:
    out = Outbound(model="gpt-4.1", answer_id="chatcmpl-tr2", call_id=_ids, usage_chunk=False)
    events, notes = write_all(BRIDGE, reply_deltas(REPLY), out)
    payloads = [p for _, p in events if isinstance(p, dict)]
    assert not any("reasoning_content" in c["delta"] for p in payloads for c in p["choices"])
    assert all(p["choices"] and "usage" not in p for p in payloads) and events[-1] == (None, "[DONE]")
    assert notes == [HIDDEN, NO_USAGE]
    body, body_notes = BRIDGE.body(REPLY, out)
    assert "reasoning_content" not in body["choices"][0]["message"] and body_notes == [HIDDEN]


def test_the_same_deltas_write_the_same_bytes() -> None:
    first, _ = write_all(BRIDGE, reply_deltas(REPLY), OUT)
    again, _ = write_all(BRIDGE, reply_deltas(REPLY), OUT)
    assert json.dumps(first) == json.dumps(again)


# -- round trip -----------------------------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_calls = st.lists(
    st.tuples(
        st.text(min_size=1, max_size=12),
        st.dictionaries(st.text(max_size=6), _json, max_size=3),
        st.none() | st.text(min_size=1, max_size=20),
    ),
    max_size=3,
)


@settings(max_examples=30, deadline=None)
@given(
    reasoning=st.text(max_size=30),
    text=st.text(max_size=40),
    calls=_calls,
    counts=st.tuples(st.integers(0, 10**6), st.integers(0, 10**5)),
)
def test_a_reply_written_and_read_back_is_the_same_reply(
    reasoning: str, text: str, calls: list[tuple[str, dict[str, Any], str | None]], counts: tuple[int, int]
) -> None:
    said = ([Reasoning(reasoning, {"anthropic": {"signature": "sig"}})] if reasoning else []) + (
        [Text(text)] if text else []
    )
    parsed = tuple(ParsedCall(n, a, cid) for n, a, cid in calls)
    reply = Reply(text, parsed, None, Usage(counts[0], counts[1], counts[0] // 2), None, "m", tuple(said))
    events, _ = write_all(BRIDGE, reply_deltas(reply), OUT)
    back = collect(read_all(BRIDGE, events))
    assert back.text == text and back.model == OUT.model
    assert [p.text for p in back.said if isinstance(p, Reasoning)] == ([reasoning] if reasoning else [])
    assert [(c.call_id, c.name, c.input) for c in back.calls] == [
        (_ids(i, c.call_id, c.name), c.name, c.input) for i, c in enumerate(parsed)
    ]
    assert back.usage == reply.usage and back.finish_reason == ("tool_calls" if calls else "stop")
    parser = StreamParser()  # the recorder's own parser reads the same answer from the same chunks
    for _, payload in events:
        if payload == DONE:
            parser.mark_done()
        else:
            parser.feed(payload)
    parsed_back = parser.finish()
    assert (parsed_back.text, parsed_back.calls, parsed_back.usage) == (back.text, back.calls, back.usage)

"""The Anthropic Messages bridge: its reader over real recorded streams gives what the stream parser gives,
piece by piece as the events carry them; its streams and whole bodies parse under the official SDK's
strict mode, served over HTTP on 127.0.0.1, and the SDK's accumulator rebuilds the reply; what the
writer writes, read back, is what it was given."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus_loader import Exchange, exchanges
from helpers_bridge_http import Written, read_all, serving, write_all
from toolreplay import jsonenc
from toolreplay.model import Issuer, Reasoning, ServerTool, Text, Usage
from toolreplay.testing.answers import Answer, AnswerCall, signature_for, token_pieces, whole
from toolreplay.wires import get_wire
from toolreplay.wires.anthropic.bridge import BRIDGE
from toolreplay.wires.anthropic.bridge_read import STOP_REASONS
from toolreplay.wires.anthropic.bridge_write import HIDDEN
from toolreplay.wires.anthropic.double import anthropic_body, anthropic_events
from toolreplay.wires.anthropic.response import StreamParser, parse_response
from toolreplay.wires.bridge import (
    CallDelta,
    Delta,
    Event,
    Failed,
    Finish,
    Outbound,
    ReasoningDelta,
    ReasoningEnd,
    TextDelta,
    collect,
    is_token,
    reply_deltas,
    seal,
)
from toolreplay.wires.reply import ParsedCall, Reply

STREAMS = list(exchanges("anthropic", streamed=True))
KIMI = Issuer("openai-chat", "api.moonshot.ai", "kimi-k2-thinking")
OUT = Outbound(
    model="claude-sonnet-4-5",
    answer_id="msg_bridge1",
    thinking=True,
    seal=lambda piece: seal(KIMI, piece),
    call_id=lambda index, upstream, name: f"toolu_agent{index}",
)
HI = [{"role": "user", "content": "hi"}]


def read(events: Sequence[Any]) -> list[Delta]:
    reader = BRIDGE.reader()
    return [d for e in events for d in reader.feed(e)] + reader.finish()


def parsed(events: Sequence[Any]) -> Reply:
    parser = StreamParser()
    for e in events:
        parser.feed(e)
    return parser.finish()


def written(deltas: Sequence[Delta], out: Outbound = OUT) -> tuple[list[Event], list[str]]:
    return write_all(BRIDGE, deltas, out)


def _merged(said: Sequence[Any]) -> list[Any]:
    """A reply's pieces with hosted tools left out (no delta carries them) and adjacent words joined (a
    stream's text blocks next to each other are one run of words to a reader)."""
    out: list[Any] = []
    for p in said:
        if isinstance(p, ServerTool):
            continue
        if isinstance(p, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + p.text)
        else:
            out.append(p)
    return out


# -- the reader, over real streams ------------------------------------------------------------------------


@pytest.mark.parametrize("ex", STREAMS, ids=lambda ex: ex.id)
def test_a_recorded_stream_reads_into_what_the_stream_parser_gives(ex: Exchange) -> None:
    want = parsed(ex.events())
    got = collect(read(ex.events()))
    assert got.calls == want.calls
    assert got.text == want.text
    assert _merged(got.said) == _merged(want.said)
    assert got.usage == want.usage
    assert got.model == want.model
    assert got.finish_reason == STOP_REASONS[want.finish_reason or ""]


@pytest.mark.parametrize("ex", STREAMS, ids=lambda ex: ex.id)
def test_a_recorded_stream_gives_each_piece_on_the_event_that_carries_it(ex: Exchange) -> None:
    reader = BRIDGE.reader()
    for event in ex.events():
        got = reader.feed(event)
        delta = event.get("delta") or {}
        kind = delta.get("type") if event["type"] == "content_block_delta" else None
        if kind == "text_delta" and delta["text"]:
            assert isinstance(got[-1], TextDelta) and got[-1].text.endswith(delta["text"])
        elif kind == "thinking_delta":
            assert got == ([ReasoningDelta(delta["thinking"])] if delta["thinking"] else [])
        elif kind == "input_json_delta" and got:
            assert len(got) == 1 and got[0] == CallDelta(got[0].index, delta["partial_json"])  # type: ignore[union-attr]
        elif event["type"] == "message_stop":
            assert isinstance(got[-1], Finish)
        elif event["type"] in ("ping", "message_delta"):
            assert got == []


def test_a_thinking_block_ends_as_the_whole_block_the_answer_stores() -> None:
    (ex,) = [s for s in STREAMS if s.id.endswith("tool_chain_with_thinking_display_regression.0")]
    ends = [d.piece() for d in read(ex.events()) if isinstance(d, ReasoningEnd)]
    assert ends == [p for p in parsed(ex.events()).said if isinstance(p, Reasoning)]
    (block,) = [e.data["anthropic"] for e in ends if e.data]
    assert block["type"] == "thinking" and block["thinking"] == ends[0].text and block["signature"]


def test_a_message_that_arrives_whole_in_message_start_keeps_its_call() -> None:
    """Resumed after server-side code called a client tool, the message comes whole in message_start
    (content and stop_reason) and message_stop follows: the SDK's accumulator keeps its call, so must the
    stream parser and the reader."""
    (ex,) = [s for s in STREAMS if s.id.endswith("anthropic-programmatic-tool-calling.1.stream10")]
    want = (ParsedCall("rollDie", {"player": "player2"}, "toolu_013DE3qaKvBMheZXUhwkvpdF"),)
    assert parsed(ex.events()).calls == want
    got = collect(read(ex.events()))
    assert got.calls == want and got.finish_reason == "tool_calls"


def _events(*blocks: tuple[dict[str, Any], list[dict[str, Any]]], stop: str = "end_turn") -> list[Any]:
    start = {"id": "msg_1", "model": "claude", "usage": {"input_tokens": 3, "output_tokens": 1}}
    out: list[Any] = [{"type": "message_start", "message": start}]
    for i, (block, deltas) in enumerate(blocks):
        out.append({"type": "content_block_start", "index": i, "content_block": block})
        out += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
        out.append({"type": "content_block_stop", "index": i})
    end = {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 2}}
    return [*out, end, {"type": "message_stop"}]


def test_words_after_a_call_start_with_a_blank_line_as_the_whole_answer_has_them() -> None:
    events = _events(
        ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "First."}]),
        ({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}, []),
        ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "Then."}]),
        stop="tool_use",
    )
    got = collect(read(events))
    assert got.text == "First.\n\nThen." == parsed(events).text
    assert got.calls == (ParsedCall("f", {}, "toolu_1"),) and got.finish_reason == "tool_calls"
    assert got.usage == Usage(3, 2)


def test_an_error_event_is_failed_with_its_status_and_ends_the_stream() -> None:
    reader = BRIDGE.reader()
    reader.feed({"type": "message_start", "message": {"id": "m", "model": "c", "usage": {}}})
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert reader.feed(error) == [Failed("Overloaded", 529)]
    assert reader.feed({"type": "message_stop"}) == [] and reader.finish() == []


def test_a_stream_cut_before_message_stop_fails_naming_what_was_missing() -> None:
    deltas = read(_events(({"type": "text", "text": "Hi"}, []))[:-2])
    assert deltas[1] == TextDelta("Hi")
    failed, finish = deltas[-2:]
    assert isinstance(failed, Failed) and "message_stop" in failed.message
    assert finish == Finish("error", Usage(3, 1))


# -- the double's streams ---------------------------------------------------------------------------------

ANSWERS = {
    "text": Answer(1, "claude-x", "Nothing to do.", (), None, Usage(40, 5, 0)),
    "thinking and calls": Answer(
        2,
        "claude-x",
        "Let me look.",
        (AnswerCall("coop", {"action": "list", "n": [1, 2]}, "toolu_double2_0", None),
         AnswerCall("list_all", {}, "toolu_double2_1", None)),
        "I should list them first.",
        Usage(900, 30, 800, 50),
    ),
}  # fmt: skip


@pytest.mark.parametrize("cut", [token_pieces, whole], ids=["token pieces", "whole"])
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_doubles_stream_reads_into_the_doubles_answer(name: str, cut: Any) -> None:
    answer = ANSWERS[name]
    got = collect(read([payload for _, payload in anthropic_events(answer, cut)]))
    want = parse_response(anthropic_body(answer))
    assert (got.text, got.calls, got.said, got.usage) == (want.text, want.calls, want.said, want.usage)
    assert got.text == answer.text and [(c.name, c.input, c.call_id) for c in got.calls] == [
        (c.name, c.args, c.call_id) for c in answer.calls
    ]
    if answer.reasoning:
        (piece,) = [p for p in got.said if isinstance(p, Reasoning)]
        assert piece.text == answer.reasoning
        assert piece.data and piece.data["anthropic"]["signature"] == signature_for(
            answer.seq, -1, answer.model
        )
    assert got.usage == replace(answer.usage, cache_write_tokens=answer.usage.cache_write_tokens or 0)


# -- the writer and the body under the official SDK -------------------------------------------------------

THOUGHT = Reasoning("The user wants the files.", {"openai-chat": {"reasoning_content": "The user wants..."}})
REPLY = Reply(
    text="I will look.",
    calls=(
        ParsedCall("list_files", {"path": "."}, "functions.list_files:0"),
        ParsedCall("read", {"path": "a.py", "lines": [1, 2], "note": "ünï"}, "functions.read:1"),
    ),
    finish_reason="tool_calls",
    usage=Usage(1200, 80, 1000, 100),
    model="kimi-k2-thinking",
    said=(THOUGHT, Text("I will look.")),
)


@contextmanager
def served(reply: Reply, out: Outbound = OUT) -> Iterator[tuple[Any, list[Event], dict[str, Any]]]:
    """An Anthropic client (strict) of a server on 127.0.0.1 that streams the writer's events for
    ``reply`` to a request that streams and answers the body to one that does not."""
    anthropic = pytest.importorskip("anthropic")
    events, _ = written(reply_deltas(reply), out)
    body, _ = BRIDGE.body(reply, out)
    with (
        serving(Written("sse", events, body)) as base,
        anthropic.Anthropic(
            base_url=base, api_key="sk-ant-test", max_retries=0, _strict_response_validation=True
        ) as client,
    ):
        yield client, events, body


def _strict(events: list[Event], body: dict[str, Any]) -> None:
    """Every event is the SDK's own model in strict mode, named by its type; the body is a Message."""
    pydantic = pytest.importorskip("pydantic")
    types = pytest.importorskip("anthropic").types
    adapter = pydantic.TypeAdapter(types.RawMessageStreamEvent)
    for name, payload in events:
        assert name == payload["type"]
        if name != "ping":  # the SDK skips pings: they are no model of its own
            adapter.validate_python(payload, strict=True)
    types.Message.model_validate(body, strict=True)


def _final_and_created(client: Any) -> tuple[Any, Any]:
    with client.messages.stream(model="claude-sonnet-4-5", max_tokens=64, messages=HI) as stream:
        final = stream.get_final_message()
    return final, client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=HI)


def test_the_sdk_rebuilds_the_reply_from_the_stream_and_reads_the_same_body() -> None:
    with served(REPLY) as (client, events, body):
        _strict(events, body)
        final, created = _final_and_created(client)
    assert final.model_dump() == created.model_dump()
    assert (final.id, final.model, final.stop_reason) == ("msg_bridge1", "claude-sonnet-4-5", "tool_use")
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use", "tool_use"]
    thinking = final.content[0]
    assert thinking.thinking == THOUGHT.text and thinking.signature == seal(KIMI, THOUGHT)
    assert is_token(thinking.signature)
    assert final.content[1].text == REPLY.text
    assert [(b.id, b.name, b.input) for b in final.content[2:]] == [
        ("toolu_agent0", "list_files", {"path": "."}),
        ("toolu_agent1", "read", {"path": "a.py", "lines": [1, 2], "note": "ünï"}),
    ]
    u = final.usage
    assert (u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens) == (100, 1000, 100)
    assert u.output_tokens == 80
    assert get_wire("anthropic").parse_response(final.model_dump()).usage == REPLY.usage


def one_block_at_a_time(events: list[Event]) -> None:
    """The frame a real stream has: message_start and a ping first, message_delta and message_stop last;
    block indexes from 0 in order, each block ended before the next starts, every delta in the open one."""
    names = [n for n, _ in events]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    starts = [p["index"] for n, p in events if n == "content_block_start"]
    assert starts == list(range(len(starts)))
    open_index = None
    for name, payload in events:
        if name == "content_block_start":
            assert open_index is None
            open_index = payload["index"]
        elif name in ("content_block_delta", "content_block_stop"):
            assert payload["index"] == open_index
            open_index = None if name == "content_block_stop" else open_index
    assert open_index is None


def test_indexes_run_from_0_one_per_block_each_ended_before_the_next() -> None:
    events, _ = written(reply_deltas(REPLY))
    one_block_at_a_time(events)
    assert [p["content_block"]["type"] for n, p in events if n == "content_block_start"] == [
        "thinking", "text", "tool_use", "tool_use"
    ]  # fmt: skip
    signature = [p["delta"] for _, p in events if p.get("delta", {}).get("type") == "signature_delta"]
    assert signature == [{"type": "signature_delta", "signature": seal(KIMI, THOUGHT)}]


def test_without_thinking_asked_no_reasoning_is_shown_and_a_note_says_so() -> None:
    out = replace(OUT, thinking=False)
    with served(REPLY, out) as (client, events, body):
        _strict(events, body)
        final, created = _final_and_created(client)
    assert (
        [b.type for b in final.content]
        == [b.type for b in created.content]
        == ["text", "tool_use", "tool_use"]
    )
    assert THOUGHT.text not in jsonenc.dumps([p for _, p in events]) and "thinking" not in str(body)
    assert written(reply_deltas(REPLY), out)[1] == [HIDDEN] == BRIDGE.body(REPLY, out)[1]


def test_reasoning_without_readable_text_is_a_redacted_block_holding_the_token() -> None:
    opaque = Reasoning("", {"openai-responses": {"type": "reasoning", "encrypted_content": "gAAAA..."}})
    reply = replace(REPLY, said=(opaque, Text("Done.")), text="Done.", calls=(), finish_reason="stop")
    with served(reply) as (client, events, body):
        _strict(events, body)
        final, created = _final_and_created(client)
    assert final.model_dump() == created.model_dump()
    assert [b.type for b in final.content] == ["redacted_thinking", "text"]
    assert final.content[0].data == seal(KIMI, opaque) and final.stop_reason == "end_turn"


def test_a_stop_after_calls_is_tool_use_and_a_length_stop_is_max_tokens() -> None:
    as_gemini = replace(REPLY, finish_reason="stop")  # Gemini stops with STOP after its calls
    assert BRIDGE.body(as_gemini, OUT)[0]["stop_reason"] == "tool_use"
    events, _ = written(reply_deltas(REPLY, "stop"))
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    events, _ = written(reply_deltas(replace(REPLY, calls=()), "length"))
    assert events[-2][1]["delta"]["stop_reason"] == "max_tokens"
    assert BRIDGE.body(replace(REPLY, finish_reason="SAFETY"), OUT)[1][-1].startswith("stop reason 'SAFETY'")


def test_an_upstream_failure_reaches_the_sdk_as_anthropics_error_event() -> None:
    anthropic = pytest.importorskip("anthropic")
    deltas = [*reply_deltas(REPLY)[:4], Failed("upstream overloaded", 529)]
    events, _ = written(deltas)
    assert events[-1] == (
        "error",
        {"type": "error", "error": {"type": "overloaded_error", "message": "upstream overloaded"}},
    )
    cut, notes = written(reply_deltas(REPLY)[:4])  # closed without a finish
    assert cut[-1][1]["type"] == "error" and cut[-1][1]["error"]["type"] == "api_error"
    assert notes == ["the upstream's answer ended without its last event: sent as an error event"]
    with (
        serving(Written("sse", events)) as base,
        anthropic.Anthropic(base_url=base, api_key="k", max_retries=0) as client,
        pytest.raises(anthropic.APIStatusError, match="upstream overloaded"),
        client.messages.stream(model="c", max_tokens=8, messages=HI) as s,
    ):
        s.get_final_message()


# -- round trips: the writer's events read back by this wire's reader --------------------------------------

_words = st.text(min_size=1, max_size=20)
_piece = st.one_of(
    _words.map(Text), st.text(max_size=20).map(lambda t: Reasoning(t, {"gemini": {"thoughtSignature": "s"}}))
)
_args = st.dictionaries(
    st.text(max_size=6), st.integers() | st.text(max_size=6) | st.lists(st.booleans(), max_size=2), max_size=3
)
_calls = st.lists(
    st.tuples(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), _args, st.none() | _words), max_size=3
)
_usage = st.tuples(*[st.integers(0, 5000)] * 4).map(lambda n: Usage(n[0] + n[1] + n[2], n[3], n[1], n[2]))


def _reply(said: list[Any], calls: list[Any], usage: Usage) -> Reply:
    parsed_calls = tuple(ParsedCall(n, a, cid, {"gemini": {"thoughtSignature": "x"}}) for n, a, cid in calls)
    text = "".join(p.text for p in said if isinstance(p, Text))
    return Reply(text, parsed_calls, None, usage, None, "upstream-model", tuple(said))


def _as_shown(reply: Reply, out: Outbound) -> list[Any]:
    """The pieces an agent's reader gets back: reasoning as a block holding its token (none when thinking
    was not asked for), adjacent words joined."""
    out_said: list[Any] = []
    for p in reply.said:
        if isinstance(p, Reasoning):
            if not out.thinking:
                continue
            block = (
                {"type": "thinking", "thinking": p.text, "signature": out.seal(p)}
                if p.text
                else {"type": "redacted_thinking", "data": out.seal(p)}
            )
            out_said.append(Reasoning(p.text, {"anthropic": block}))
        else:
            out_said.append(p)
    return _merged(out_said)


def _interleaved(deltas: list[Delta], rnd: random.Random) -> list[Delta]:
    """The calls' deltas mixed as a server streaming calls side by side would send them (each call's own
    pieces in order, its arguments cut in up to three)."""
    calls: dict[int, list[Delta]] = {}
    rest: list[Delta] = []
    for d in deltas:
        if isinstance(d, CallDelta):
            cuts = sorted(rnd.sample(range(1, len(d.arguments)), min(2, len(d.arguments) - 1)))
            bounds = [0, *cuts, len(d.arguments)]
            calls[d.index] += [CallDelta(d.index, d.arguments[a:b]) for a, b in itertools.pairwise(bounds)]
        elif hasattr(d, "index"):
            calls.setdefault(d.index, []).append(d)  # type: ignore[union-attr]
        else:
            rest.append(d)
    mixed: list[Delta] = []
    queues = [q for q in calls.values() if q]
    while queues:
        q = rnd.choice(queues)
        mixed.append(q.pop(0))
        queues = [q for q in queues if q]
    return [*rest[:-1], *mixed, rest[-1]]


@given(
    said=st.lists(_piece, max_size=4), calls=_calls, usage=_usage, thinking=st.booleans(), rnd=st.randoms()
)
def test_what_the_writer_writes_reads_back_as_what_it_was_given(
    said: list[Any], calls: list[Any], usage: Usage, thinking: bool, rnd: random.Random
) -> None:
    reply = _reply(said, calls, usage)
    out = replace(OUT, thinking=thinking)
    deltas = reply_deltas(reply)
    for sent in (deltas, _interleaved(deltas, rnd)):
        events, notes = written(sent, out)
        one_block_at_a_time(events)
        back = collect(read_all(BRIDGE, events))
        assert _merged(back.said) == _as_shown(reply, out)
        assert back.text == reply.text
        assert sorted((c.call_id or "", c.name, jsonenc.dumps(c.input)) for c in back.calls) == [
            (f"toolu_agent{i}", c.name, jsonenc.dumps(c.input)) for i, c in enumerate(reply.calls)
        ]
        assert back.usage == usage and back.model == out.model
        assert back.finish_reason == ("tool_calls" if calls else "stop")
        hidden = not thinking and any(isinstance(p, Reasoning) for p in said)
        assert notes == ([HIDDEN] if hidden else [])
        assert BRIDGE.body(reply, out)[1] == notes
        body_reply = parse_response(BRIDGE.body(reply, out)[0])
        assert (body_reply.text, body_reply.usage) == (reply.text, usage)


def test_the_wire_loads_this_bridge() -> None:
    bridge = get_wire("anthropic").bridge
    assert bridge is not None and bridge() is BRIDGE

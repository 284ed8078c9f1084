"""The Responses bridge (design 51): real recorded Responses streams read into deltas make the reply the
whole-answer parser makes; what the writer writes is read by the official openai SDK (``responses.stream``,
``responses.create`` streamed and whole, strict pydantic) into the reply the deltas make; and a reply
written and read back is the same reply."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_loader import Exchange, exchanges
from helpers_bridge_http import Written, serving
from toolreplay import jsonenc
from toolreplay.errors import ToolreplayError
from toolreplay.model import Issuer, Reasoning, ServerTool, Text, Usage
from toolreplay.testing._routes import frame
from toolreplay.wires import get_wire
from toolreplay.wires.bridge import (
    Begin,
    CallBegin,
    CallDelta,
    CallEnd,
    Delta,
    Event,
    Failed,
    Finish,
    FinishReason,
    Outbound,
    ReasoningDelta,
    ReasoningEnd,
    TextDelta,
    collect,
    neutral_reply,
    reply_deltas,
    seal,
)
from toolreplay.wires.doubles import Answer, AnswerCall
from toolreplay.wires.openai_responses.bridge import BRIDGE
from toolreplay.wires.openai_responses.double import responses_events
from toolreplay.wires.openai_responses.response import WIRE, StreamParser, parse_response
from toolreplay.wires.reply import ParsedCall, Reply

KIMI = Issuer("openai-chat", "api.moonshot.ai", "kimi-k2-thinking")
OUT = Outbound(
    model="gpt-5.1-codex",
    answer_id="resp_tr0a1b2c",
    thinking=True,
    seal=lambda piece: seal(KIMI, piece),
    call_id=lambda index, upstream, name: f"call_tr{index}_{name}"[:40],
    created=1_760_000_000,
)

# -- the reader over real recordings ---------------------------------------------------------------------

RECORDED = [ex for ex in exchanges(WIRE, streamed=True)]
#: Recordings whose final object gives a reasoning item other bytes than its ``output_item.done``: OpenAI
#: encrypts the item again for the final object, and Copilot gives every event a new id. The reader keeps
#: the item as it was done (it cannot wait for the end); these keys alone may differ.
KNOWN: dict[str, frozenset[str]] = {
    "openai-responses/vercel-ai/openai-reasoning-encrypted-content.1.stream1": frozenset(
        {"encrypted_content"}
    ),
    "openai-responses/vercel-ai/azure-reasoning-encrypted-content.1.stream1": frozenset(
        {"encrypted_content"}
    ),
    "openai-responses/vercel-ai/programmatic-tool-calling.1.stream": frozenset({"encrypted_content"}),
    "openai-responses/vercel-ai/github-copilot-id-rotation.1.stream": frozenset({"id"}),
}


def _read(events: list[Any]) -> tuple[list[Delta], list[list[Delta]]]:
    reader = BRIDGE.reader()
    each = [reader.feed(e) for e in events]
    return [d for ds in each for d in ds] + reader.finish(), each


def _pieces(reply: Reply) -> tuple[str, list[Reasoning]]:
    """What a reply said: its words (the whole parser keeps each message apart; deltas join them) and its
    reasoning pieces."""
    words = "".join(p.text for p in reply.said if isinstance(p, Text))
    return words, [p for p in reply.said if isinstance(p, Reasoning)]


def _calls(reply: Reply) -> list[tuple[Any, ...]]:
    return [(c.name, c.input, c.call_id, c.kind, c.provider_data, c.input_error) for c in reply.calls]


def _whole(ex: Exchange) -> Reply:
    parser = StreamParser()
    for event in ex.events():
        if isinstance(event, Mapping):
            parser.feed(event)
    return parser.finish()


def _expected_finish(whole: Reply) -> FinishReason:
    if whole.finish_reason == "incomplete:content_filter":
        return "refusal"
    if (whole.finish_reason or "").startswith("incomplete"):
        return "length"
    return "tool_calls" if whole.calls else "stop"


@pytest.mark.parametrize("ex", RECORDED, ids=[ex.id for ex in RECORDED])
def test_a_recorded_stream_read_into_deltas_is_the_reply_the_parser_reads(ex: Exchange) -> None:
    deltas, _ = _read(ex.events())
    got, whole = collect(deltas), _whole(ex)
    assert isinstance(deltas[0], Begin) and deltas[0].model == whole.model
    assert [d for d in deltas if isinstance(d, Finish)] == [deltas[-1]]
    assert got.finish_reason == _expected_finish(whole)
    assert got.usage == whole.usage and got.model == whole.model
    assert _calls(got) == _calls(whole)
    (words, reasoning), (whole_words, whole_reasoning) = _pieces(got), _pieces(whole)
    assert words == whole_words
    assert [r.text for r in reasoning] == [r.text for r in whole_reasoning]
    allowed = KNOWN.get(ex.id, frozenset())
    for mine, theirs in zip(reasoning, whole_reasoning, strict=True):
        assert mine.data is not None and theirs.data is not None
        a, b = dict(mine.data[WIRE]), dict(theirs.data[WIRE])
        assert {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} <= allowed


def test_the_known_differences_are_still_there() -> None:
    """KNOWN names real differences: each listed recording still differs in its listed keys."""
    for ex in RECORDED:
        if ex.id in KNOWN:
            mine, theirs = _pieces(collect(_read(ex.events())[0]))[1], _pieces(_whole(ex))[1]
            assert any(m.data != t.data for m, t in zip(mine, theirs, strict=True)), ex.id


@pytest.mark.parametrize("ex", RECORDED, ids=[ex.id for ex in RECORDED])
def test_the_reader_gives_each_piece_as_its_event_arrives(ex: Exchange) -> None:
    _, each = _read(ex.events())
    kinds = {
        "response.output_text.delta": TextDelta,
        "response.function_call_arguments.delta": CallDelta,
        "response.reasoning_summary_text.delta": ReasoningDelta,
        "response.reasoning_text.delta": ReasoningDelta,
    }
    for event, deltas in zip(ex.events(), each, strict=True):
        if isinstance(event, Mapping) and event.get("delta") and event["type"] in kinds:
            pieces = [d for d in deltas if isinstance(d, kinds[event["type"]])]
            assert [getattr(d, "text", getattr(d, "arguments", None)) for d in pieces][-1].endswith(
                event["delta"]
            )


def _ev(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


CREATED = _ev("response.created", response={"id": "resp_1", "model": "gpt-5", "output": []})


def test_a_call_streams_with_its_own_index_and_ends_with_its_item_id() -> None:
    call = {"type": "custom_tool_call", "id": "ctc_9", "call_id": "call_9", "name": "apply_patch"}
    deltas, _ = _read(
        [
            CREATED,
            _ev("response.output_item.added", output_index=0, item={**call, "input": ""}),
            _ev("response.custom_tool_call_input.delta", output_index=0, item_id="x", delta="*** Begin"),
            _ev("response.custom_tool_call_input.done", output_index=0, item_id="x", input="*** Begin Patch"),
            _ev("response.output_item.done", output_index=0, item={**call, "input": "*** Begin Patch"}),
            _ev("response.completed", response={"status": "completed", "output": [], "usage": None}),
        ]
    )
    assert deltas[1:] == [
        CallBegin(0, "apply_patch", "call_9", "custom"),
        CallDelta(0, "*** Begin"),
        CallDelta(0, " Patch"),
        CallEnd(0, {WIRE: {"item_id": "ctc_9"}}),
        Finish("tool_calls"),
    ]


@pytest.mark.parametrize(
    ("details", "reason"),
    [({"reason": "max_output_tokens"}, "length"), ({"reason": "content_filter"}, "refusal")],
)
def test_an_incomplete_answer_ends_with_its_reason(details: dict[str, str], reason: str) -> None:
    final = {"status": "incomplete", "incomplete_details": details, "output": []}
    deltas, _ = _read([CREATED, _ev("response.incomplete", response=final)])
    assert deltas[-1] == Finish(reason)  # type: ignore[arg-type]


def test_a_failed_answer_and_an_error_event_end_as_failed_with_the_providers_words() -> None:
    failed = {"status": "failed", "error": {"code": "rate_limit_exceeded", "message": "Slow down."}}
    deltas, _ = _read([CREATED, _ev("response.failed", response=failed)])
    assert deltas[-2:] == [Failed("Slow down.", 429), Finish("error")]
    deltas, _ = _read([CREATED, _ev("error", code="server_error", message="Upstream broke.")])
    assert deltas[-2:] == [Failed("Upstream broke.", None), Finish("error")]


def test_a_stream_cut_before_its_final_event_ends_as_failed() -> None:
    deltas, _ = _read([CREATED, _ev("response.output_text.delta", output_index=0, delta="hi")])
    assert isinstance(deltas[-2], Failed) and "response.completed" in deltas[-2].message
    assert deltas[-1] == Finish("error")


def test_items_given_only_in_the_final_object_are_read_from_it() -> None:
    output = [
        {"type": "message", "id": "m", "content": [{"type": "output_text", "text": "Done."}]},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": '{"a":1}'},
    ]
    deltas, _ = _read(
        [CREATED, _ev("response.completed", response={"status": "completed", "output": output})]
    )
    reply = collect(deltas)
    assert reply.text == "Done." and _calls(reply) == [
        ("f", {"a": 1}, "c1", "function", {WIRE: {"item_id": "fc_1"}}, None)
    ]


# -- the writer under the official SDK -------------------------------------------------------------------

REPLY = Reply(
    text="I will look.",
    calls=(
        ParsedCall("shell", {"command": ["ls", "-la"]}, "toolu_01A", {"anthropic": {"x": 1}}),
        ParsedCall("apply_patch", "*** Begin Patch\n*** End Patch", "toolu_01B", kind="custom"),
    ),
    finish_reason="tool_use",
    usage=Usage(1200, 80, 1024),
    model="claude-sonnet-4-5",
    said=(
        Reasoning("Let me list the files.", {"anthropic": {"signature": "EqoB..."}}),
        Text("I will look."),
        ServerTool("web_search", {"anthropic": {}}),
    ),
)


def _events(reply: Reply, out: Outbound = OUT, reason: FinishReason | None = None) -> list[Event]:
    writer = BRIDGE.writer(out)
    events = [e for d in reply_deltas(reply, reason) for e in writer.write(d)] + writer.close()
    assert all(name == payload["type"] for name, payload in events)  # the SSE event name is the type
    return events


def _sse(events: list[Event]) -> bytes:
    return b"".join(frame(WIRE, e) for e in events)


Serve = Callable[..., Any]


@pytest.fixture
def served() -> Iterator[Serve]:
    """``serve(events=..., body=...)``: an openai client of a loopback server answering with them."""
    openai = pytest.importorskip("openai")
    with ExitStack() as stack:

        def serve(events: list[Event] | None = None, body: dict[str, Any] | None = None) -> Any:
            root = stack.enter_context(serving(Written("sse", events or [], body or {})))
            return stack.enter_context(openai.OpenAI(base_url=root + "/v1", api_key="sk-test", max_retries=0))

        yield serve


def _check_final(final: Any, reply: Reply) -> None:
    """The SDK's Response carries the reply the deltas make: words, calls, reasoning and its token, usage."""
    want = collect(reply_deltas(reply))
    assert final.id == OUT.answer_id and final.model == OUT.model and final.status == "completed"
    assert final.output_text == want.text
    calls = [i for i in final.output if i.type in ("function_call", "custom_tool_call")]
    assert [(c.call_id, c.name) for c in calls] == [
        (OUT.call_id(i, c.call_id, c.name), c.name) for i, c in enumerate(want.calls)
    ]
    assert [jsonenc.loads(calls[0].arguments), calls[1].input] == [c.input for c in want.calls]
    (reasoning,) = [i for i in final.output if i.type == "reasoning"]
    piece = want.said[0]
    assert isinstance(piece, Reasoning)
    assert [s.text for s in reasoning.summary] == [piece.text]
    assert reasoning.encrypted_content == seal(KIMI, piece) != "EqoB..."
    usage = final.usage
    assert (usage.input_tokens, usage.output_tokens, usage.input_tokens_details.cached_tokens) == (
        1200,
        80,
        1024,
    )


def test_the_sdk_stream_helper_rebuilds_the_reply(served: Serve) -> None:
    client = served(events=_events(REPLY))
    with client.responses.stream(model="gpt-5.1-codex", input="hi") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    _check_final(final, REPLY)


def test_the_sdk_reads_every_event_typed_with_the_same_ids_throughout(
    served: Serve,
) -> None:
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    events = _events(REPLY)
    strict = TypeAdapter(ResponseStreamEvent)
    for _, payload in events:
        strict.validate_python(payload, strict=True)
    client = served(events=events)
    typed = list(client.responses.create(model="gpt-5.1-codex", input="hi", stream=True))
    assert [e.sequence_number for e in typed] == list(range(len(events)))
    for e, (_, p) in zip(typed, events, strict=True):  # each read as its own event type, none left generic
        assert e.type == p["type"] and type(e).__module__.startswith("openai.types.responses.")
    added = {e.output_index: e.item for e in typed if e.type == "response.output_item.added"}
    done = {e.output_index: e.item for e in typed if e.type == "response.output_item.done"}
    assert sorted(added) == sorted(done) == [0, 1, 2, 3]
    for index, item in added.items():
        assert (item.id, getattr(item, "call_id", None)) == (
            done[index].id,
            getattr(done[index], "call_id", None),
        )
    assert [done[i].id for i in range(4)] == [
        "rs_tr0a1b2c_0",
        "msg_tr0a1b2c_1",
        "fc_tr0a1b2c_2",
        "ctc_tr0a1b2c_3",
    ]
    for e in typed:
        if hasattr(e, "item_id"):
            assert e.item_id == done[e.output_index].id


def test_the_whole_body_is_a_strict_response_the_sdk_reads(served: Serve) -> None:
    from openai.types.responses import Response

    body, notes = BRIDGE.body(REPLY, OUT)
    Response.model_validate(body, strict=True)
    assert notes == ["a hosted tool's run (web_search) is not carried"]
    assert body == _events(REPLY)[-1][1]["response"]  # the stream's final object, the same bytes
    client = served(body=body)
    _check_final(client.responses.create(model="gpt-5.1-codex", input="hi"), REPLY)


def test_bodies_that_end_short_or_fail_are_strict_responses_too() -> None:
    """Each wire's own word for a cut or a refusal, made neutral by its bridge, is Responses' own."""
    from openai.types.responses import Response

    cases = (
        ("anthropic", "max_tokens", "incomplete", "max_output_tokens"),
        ("gemini", "SAFETY", "incomplete", "content_filter"),
        ("openai-chat", "length", "incomplete", "max_output_tokens"),
        (WIRE, "incomplete:max_output_tokens", "incomplete", "max_output_tokens"),
        (WIRE, "failed", "failed", None),
    )
    for wire, word, status, why in cases:
        source = get_wire(wire).bridge
        assert source is not None
        body, _ = BRIDGE.body(neutral_reply(Reply("part", (), word, Usage(3, 1)), source()), OUT)
        Response.model_validate(body, strict=True)
        assert (body["status"], (body["incomplete_details"] or {}).get("reason")) == (status, why), wire


WHOLE = [ex for ex in exchanges(WIRE, streamed=False) if ex.response is not None]


@pytest.mark.parametrize("ex", WHOLE, ids=[ex.id for ex in WHOLE])
def test_a_recorded_whole_answer_written_back_reads_as_it_was(ex: Exchange) -> None:
    from openai.types.responses import Response

    assert ex.response is not None
    try:
        first = parse_response(ex.response)
    except ToolreplayError:
        pytest.skip("a recorded error answer")
    body, _ = BRIDGE.body(neutral_reply(first, BRIDGE), OUT)
    Response.model_validate(body, strict=True)
    again = parse_response(body)
    assert _pieces(again)[0] == _pieces(first)[0]
    counts = (first.usage.input_tokens, first.usage.output_tokens, first.usage.cached_tokens)
    assert (again.usage.input_tokens, again.usage.output_tokens, again.usage.cached_tokens) == tuple(
        n or 0 for n in counts
    )
    assert [(c.name, c.input, c.kind) for c in again.calls] == [
        (c.name, c.input, c.kind) for c in first.calls
    ]
    assert [r.text for r in _pieces(again)[1]] == [r.text for r in _pieces(first)[1]]
    assert BRIDGE.reason is not None
    assert BRIDGE.reason(again.finish_reason, bool(again.calls)) == BRIDGE.reason(
        first.finish_reason, bool(first.calls)
    )


def test_without_thinking_no_reasoning_is_shown_and_that_is_named() -> None:
    out = Outbound(model="gpt-5", answer_id="resp_x", call_id=OUT.call_id)
    writer = BRIDGE.writer(out)
    events = [e for d in reply_deltas(REPLY) for e in writer.write(d)] + writer.close()
    assert not [
        p for _, p in events if "reasoning" in p["type"] or p.get("item", {}).get("type") == "reasoning"
    ]
    assert len(writer.notes) == 1 and "reasoning is not shown" in writer.notes[0]


def test_the_same_deltas_write_the_same_bytes() -> None:
    assert _sse(_events(REPLY)) == _sse(_events(REPLY))


def test_text_data_is_never_shown_and_an_empty_text_opens_no_message() -> None:
    """A Gemini signature on an empty text part (TextDelta("", data)) is the upstream's: nothing of it is
    written, and no empty message item is opened for it."""
    signed = Text("", {"gemini": {"thoughtSignature": "c2ln"}})
    events = _events(Reply("", (), "STOP", Usage(), None, "gemini-3", (signed,)))
    assert [p["type"] for _, p in events] == [
        "response.created",
        "response.in_progress",
        "response.completed",
    ]
    assert "c2ln" not in _sse(events).decode()


def test_a_failure_part_way_is_a_failed_response_with_the_message(
    served: Serve,
) -> None:
    writer = BRIDGE.writer(OUT)
    deltas: list[Delta] = [Begin(), TextDelta("Star"), Failed("Overloaded.", 529), Finish("error")]
    events = [e for d in deltas for e in writer.write(d)] + writer.close()
    name, payload = events[-1]
    assert name == "response.failed" and payload["response"]["error"]["message"] == "Overloaded."
    client = served(events=events)
    typed = list(client.responses.create(model="gpt-5", input="hi", stream=True))
    assert typed[-1].type == "response.failed" and typed[-1].response.error.message == "Overloaded."
    cut = BRIDGE.writer(OUT)
    assert [e for d in deltas[:2] for e in cut.write(d)] and cut.close()[-1][0] == "response.failed"


# -- written and read back -------------------------------------------------------------------------------

_words = st.text(min_size=1, max_size=20)
_args = st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=6), max_size=3)


@settings(max_examples=25, deadline=None)
@given(
    reasoning=st.lists(_words, max_size=2),
    text=st.text(max_size=30),
    calls=st.lists(st.tuples(_words, _args | _words, st.booleans()), max_size=3),
    usage=st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), st.integers(0, 10**5)),
    reason=st.sampled_from([None, "length", "refusal"]),
)
def test_a_reply_written_and_read_back_is_the_same_reply(
    reasoning: list[str],
    text: str,
    calls: list[tuple[str, Any, bool]],
    usage: tuple[int, int, int],
    reason: FinishReason | None,
) -> None:
    said = [Reasoning(r, {"anthropic": {"signature": "s"}}) for r in reasoning] + (
        [Text(text)] if text else []
    )
    parsed = tuple(
        ParsedCall(n, a, f"id{i}", kind="custom") if isinstance(a, str) else ParsedCall(n, a, f"id{i}")
        for i, (n, a, _) in enumerate(calls)
    )
    reply = Reply(text, parsed, None, Usage(*usage), None, "m", tuple(said))
    events = _events(reply, reason=reason)
    back = collect(_read([p for _, p in events])[0])
    want = collect(reply_deltas(reply, reason))
    assert back.text == want.text and back.usage == want.usage and back.finish_reason == want.finish_reason
    assert [(c.name, c.input, c.kind) for c in back.calls] == [(c.name, c.input, c.kind) for c in want.calls]
    assert [c.call_id for c in back.calls] == [
        OUT.call_id(i, c.call_id, c.name) for i, c in enumerate(want.calls)
    ]
    shown = [p for p in back.said if isinstance(p, Reasoning)]
    assert [p.text for p in shown] == reasoning
    assert [p.data[WIRE]["encrypted_content"] for p in shown if p.data] == [
        seal(KIMI, p) for p in want.said if isinstance(p, Reasoning)
    ]


def test_the_doubles_stream_read_by_the_reader_is_its_answer() -> None:
    request = {"reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"]}
    calls = (
        AnswerCall("coop", {"action": "close", "id": 12}, "call_a", None),
        AnswerCall("ls", {}, "call_b", None),
    )
    answer = Answer(7, "gpt-5", "Closing it.", calls, "First I check.", Usage(50, 9, 32), request)
    deltas, _ = _read([payload for _, payload in responses_events(answer)])
    reply = collect(deltas)
    assert reply.text == answer.text and reply.model == "gpt-5" and reply.finish_reason == "tool_calls"
    assert [(c.name, c.input, c.call_id) for c in reply.calls] == [(c.name, c.args, c.call_id) for c in calls]
    (piece,) = [p for p in reply.said if isinstance(p, Reasoning)]
    assert (
        piece.text == "First I check."
        and piece.data
        and piece.data[WIRE]["encrypted_content"].startswith("enc:")
    )
    assert reply.usage == Usage(50, 9, 32)


def test_the_wire_hands_out_this_bridge() -> None:
    bridge = get_wire(WIRE).bridge
    assert bridge is not None and bridge() is BRIDGE
    assert isinstance(ReasoningEnd().piece(), Reasoning)


def test_a_reasoning_item_without_a_summary_reads_its_reasoning_text() -> None:
    """LM Studio and gpt-oss servers give the readable reasoning as content, not as a summary: stream and
    whole answer both read it (the whole parser read it as empty before)."""
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "Hm."}],
    }
    (piece,) = parse_response({"status": "completed", "output": [item]}).said
    assert isinstance(piece, Reasoning) and piece.text == "Hm." and piece.data == {WIRE: item}


def test_an_item_the_stream_left_unfinished_ends_as_the_final_object_gives_it_by_id() -> None:
    call = {"type": "function_call", "id": "fc_7", "call_id": "c7", "name": "f"}
    hidden = {"type": "web_search_call", "id": "ws_1"}  # listed first: positions do not match the stream
    deltas, _ = _read(
        [
            CREATED,
            _ev("response.output_item.added", output_index=1, item={"type": "reasoning", "id": "rs_1"}),
            _ev("response.reasoning_text.delta", output_index=1, delta="Hm"),
            _ev("response.output_item.added", output_index=2, item={**call, "arguments": ""}),
            _ev("response.function_call_arguments.delta", output_index=2, delta='{"a"'),
            _ev("response.completed", response={"output": [hidden, {**call, "arguments": '{"a":2}'}]}),
        ]
    )
    assert deltas[-4:] == [
        ReasoningEnd("Hm", None),
        CallDelta(0, ":2}"),
        CallEnd(0, {WIRE: {"item_id": "fc_7"}}),
        Finish("tool_calls"),
    ]


OTHERS = [
    ex for wire in ("anthropic", "openai-chat", "gemini", "ollama") for ex in exchanges(wire, streamed=True)
]


@pytest.mark.parametrize("ex", OTHERS, ids=[ex.id for ex in OTHERS])
def test_another_wires_recorded_stream_written_as_responses_is_strict_and_reads_back(ex: Exchange) -> None:
    """Codex on any model: a real stream of another wire, read by that wire's bridge and written here,
    is a stream every event of which the openai SDK's strict models take, and it reads back as it was
    (a usage the upstream did not give is written 0: Responses' usage has no empty counts)."""
    from openai.types.responses import Response, ResponseStreamEvent
    from pydantic import TypeAdapter

    source = get_wire(ex.wire).bridge
    assert source is not None
    reader = source().reader()
    deltas = [d for e in ex.events() for d in reader.feed(e)] + reader.finish()
    writer = BRIDGE.writer(OUT)
    events = [e for d in deltas for e in writer.write(d)] + writer.close()
    strict = TypeAdapter(ResponseStreamEvent)
    for _, payload in events:
        strict.validate_python(payload, strict=True)
    Response.model_validate(events[-1][1]["response"], strict=True)
    want, got = collect(deltas), collect(_read([p for _, p in events])[0])
    assert (got.text, got.finish_reason) == (want.text, want.finish_reason)
    assert [(c.name, c.input, c.kind) for c in got.calls] == [(c.name, c.input, c.kind) for c in want.calls]
    assert [r.text for r in _pieces(got)[1]] == [r.text for r in _pieces(want)[1]]
    counts = (want.usage.input_tokens, want.usage.output_tokens, want.usage.cached_tokens)
    assert (got.usage.input_tokens, got.usage.output_tokens, got.usage.cached_tokens) == tuple(
        n or 0 for n in counts
    )

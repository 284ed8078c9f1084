"""The Responses double answers like OpenAI's reasoning models (issue 16): the reasoning item carries its
summary only when ``reasoning.summary`` asks for one and ``encrypted_content`` only when ``include`` does;
a summary streams as part added, text deltas, text done, part done, in the order the real recordings of
tests/corpus show; usage counts the reasoning tokens inside the output; the official SDK validates it all
strictly, and the project's stream parser reads the stream as the whole body."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from corpus_loader import DONE, exchanges
from helpers_common import HTTP
from toolreplay.testing import Call, Calls, ProviderDouble
from toolreplay.testing.answers import Answer, answer_body, answer_events
from toolreplay.wires import get_wire
from toolreplay.wires.reply import Usage

SUMMARY = {"reasoning": {"effort": "low", "summary": "auto"}}
SECRET = {"include": ["reasoning.encrypted_content"]}
ASKS = {"nothing": {}, "summary": SUMMARY, "encrypted": SECRET, "both": {**SUMMARY, **SECRET}}
THOUGHT = "**Multiplying**\n\nI should multiply 3 by 4."


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def _post(double: ProviderDouble, asks: dict[str, Any], stream: bool) -> list[Any]:
    body = {"model": "gpt-5", "input": "hi", "stream": stream, **asks}
    answer = HTTP.post(double.url + "/v1/responses", json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    if not stream:
        return [answer.json()]
    return [
        httpx.Response(200, text=line[6:]).json() for line in answer.text.splitlines() if line[:6] == "data: "
    ]


def _reasoning_kinds(events: list[Any]) -> list[str]:
    """The event types from the reasoning item's added to its done, repeats in a row once."""
    out: list[str] = []
    inside = False
    for e in events:
        item = e.get("item") or {}
        if e["type"] == "response.output_item.added" and item.get("type") == "reasoning":
            inside = True
        if inside and (not out or out[-1] != e["type"]):
            out.append(e["type"])
        if e["type"] == "response.output_item.done" and item.get("type") == "reasoning":
            return out
    return out


def _recorded_reasoning() -> set[tuple[str, ...]]:
    """The reasoning items' event sequences in OpenAI's recorded streams."""
    out = set()
    for ex in exchanges("openai-responses", streamed=True):
        if str(ex.model).startswith("gpt-"):
            kinds = _reasoning_kinds([e for e in ex.events() if e != DONE])
            if kinds:
                out.add(tuple(kinds))
    return out


@pytest.mark.parametrize("asks", sorted(ASKS))
def test_summary_and_encrypted_content_only_when_asked(double: ProviderDouble, asks: str) -> None:
    double.script(Calls([Call("multiply", {"a": 3, "b": 4})], reasoning=THOUGHT))
    (body,) = _post(double, ASKS[asks], stream=False)
    item = body["output"][0]
    assert item["type"] == "reasoning" and item["id"].startswith("rs_")
    summary = [{"type": "summary_text", "text": THOUGHT}] if "reasoning" in ASKS[asks] else []
    assert item["summary"] == summary
    assert ("encrypted_content" in item) == ("include" in ASKS[asks])
    details = body["usage"]["output_tokens_details"]
    assert 0 < details["reasoning_tokens"] <= body["usage"]["output_tokens"]


@pytest.mark.parametrize("asks", sorted(ASKS))
def test_reasoning_events_come_in_a_recorded_order(double: ProviderDouble, asks: str) -> None:
    double.script(Calls([Call("multiply", {"a": 3, "b": 4})], reasoning=THOUGHT))
    events = _post(double, ASKS[asks], stream=True)
    kinds = _reasoning_kinds(events)
    recorded = _recorded_reasoning()
    assert tuple(kinds) in recorded, (kinds, recorded)
    assert ("response.reasoning_summary_text.delta" in kinds) == ("reasoning" in ASKS[asks])
    if "reasoning" in ASKS[asks]:
        deltas = [e["delta"] for e in events if e["type"] == "response.reasoning_summary_text.delta"]
        done = next(e for e in events if e["type"] == "response.reasoning_summary_part.done")
        assert "".join(deltas) == THOUGHT == done["part"]["text"] and done["summary_index"] == 0
    added = next(e for e in events if e["type"] == "response.output_item.added")
    assert added["item"]["summary"] == []  # the summary fills in as it streams
    assert [e["sequence_number"] for e in events] == list(range(len(events)))


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("asks", sorted(ASKS))
def test_sdk_strict_models_accept_reasoning_answers(double: ProviderDouble, asks: str, stream: bool) -> None:
    pydantic = pytest.importorskip("pydantic")
    pytest.importorskip("openai")
    from openai.types.responses import Response, ResponseStreamEvent

    double.script(Calls([Call("multiply", {"a": 3, "b": 4})], text="Let me.", reasoning=THOUGHT))
    payloads = _post(double, ASKS[asks], stream)
    if not stream:
        Response.model_validate(payloads[0], strict=True)
        return
    adapter = pydantic.TypeAdapter(ResponseStreamEvent)
    for payload in payloads:
        adapter.validate_python(payload, strict=True)
    Response.model_validate(payloads[-1]["response"], strict=True)


@pytest.mark.parametrize("asks", sorted(ASKS))
def test_stream_parser_reads_the_reasoning_stream_as_the_body(asks: str) -> None:
    a = Answer(3, "gpt-5", "Twelve.", (), THOUGHT, Usage(40, 20, 0), {"stream": True, **ASKS[asks]})
    wire = get_wire("openai-responses")
    parser = wire.stream_parser()
    text = "".join(parser.feed(p) for _, p in answer_events("openai-responses", a))
    whole = wire.parse_response(answer_body("openai-responses", a))
    assert parser.finish() == whole and text == whole.text == "Twelve."
    assert whole.provider_data is not None  # the reasoning item travels on, as the provider sent it

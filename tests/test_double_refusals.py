"""The doubles refuse what the providers refuse, and only that (issue 16, design 32): every request body a
provider took with a 200 in tests/corpus, the double takes too (through its HTTP server, with the model
the recording names); Anthropic's refusals of empty content and blank words reach the SDK as its
``BadRequestError`` with Anthropic's own text, while what Anthropic took (a blank text block beside a
call, an empty final assistant prefill) passes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from corpus_loader import Exchange, exchanges
from toolreplay.testing import ProviderDouble
from toolreplay.wires.anthropic.rules import BLANK_TEXT, EMPTY_MESSAGE, EMPTY_TEXT
from wire_helpers import wire_path

#: Recorded bodies that do not reach a provider's own endpoint whole, so the double (which serves the
#: providers' own paths) cannot judge them.
ELSEWHERE = {
    "azure": "Azure names the model in the URL (deployments/<name>), so its bodies carry none",
    "magistral-completion-replay": "the recording kept only the messages (model and settings sit apart)",
}


def _taken() -> list[Any]:
    out = []
    for ex in exchanges(with_request=True):
        if not any(mark in ex.id for mark in ELSEWHERE):
            out.append(pytest.param(ex, id=ex.id))
    return out


@pytest.fixture(scope="module")
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.mark.parametrize("ex", _taken())
def test_the_double_takes_every_body_the_provider_took(
    double: ProviderDouble, http: httpx.Client, ex: Exchange
) -> None:
    body = {**(ex.request or {}), "stream": False}
    body.pop("stream_options", None)  # Chat's, asked with stream: true, which the answer here does not use
    answer = http.post(double.url + wire_path(ex.wire, str(ex.model)), json=body, timeout=10)
    assert answer.status_code == 200, answer.text


HI = {"role": "user", "content": "hi"}
USE = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}
REFUSED = {
    "an empty user message": (
        [HI, {"role": "assistant", "content": "yes"}, {"role": "user", "content": ""}],
        EMPTY_MESSAGE.format(i=2),
    ),
    "an empty block list": ([{"role": "user", "content": []}], EMPTY_MESSAGE.format(i=0)),
    "an empty text block": ([{"role": "user", "content": [{"type": "text", "text": ""}]}], EMPTY_TEXT),
    "blank words only": ([HI, {"role": "assistant", "content": " \n"}, HI], BLANK_TEXT),
}
TAKEN = {
    "a blank text block beside a call": [
        HI,
        {"role": "assistant", "content": [{"type": "text", "text": " "}, USE]},
        RESULT,
    ],
    "an empty final assistant prefill": [HI, {"role": "assistant", "content": ""}],
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_anthropic_refuses_empty_content_and_blank_words(double: ProviderDouble, case: str) -> None:
    anthropic = pytest.importorskip("anthropic")
    messages, text = REFUSED[case]
    tools = [{"name": "f", "input_schema": {"type": "object"}}]
    with (
        anthropic.Anthropic(base_url=double.base_url_for("anthropic"), api_key="k", max_retries=0) as client,
        pytest.raises(anthropic.BadRequestError) as caught,
    ):
        client.messages.create(model="claude", max_tokens=8, messages=messages, tools=tools)
    assert caught.value.status_code == 400
    assert caught.value.body == {"type": "error", "error": {"type": "invalid_request_error", "message": text}}


@pytest.mark.parametrize("case", sorted(TAKEN))
def test_anthropic_takes_what_it_took(double: ProviderDouble, http: httpx.Client, case: str) -> None:
    body = {"model": "claude", "max_tokens": 8, "messages": TAKEN[case]}
    body["tools"] = [{"name": "f", "input_schema": {"type": "object"}}]
    assert http.post(double.url + "/v1/messages", json=body, timeout=10).status_code == 200


def test_gemini_signatures_are_demanded_of_gemini_3_only(double: ProviderDouble, http: httpx.Client) -> None:
    call = {"functionCall": {"name": "f", "args": {}}}
    answer = {"functionResponse": {"name": "f", "response": {"output": "ok"}}}
    user = {"role": "user", "parts": [{"text": "go"}]}
    body = {"contents": [user, {"role": "model", "parts": [call]}, {"role": "user", "parts": [answer]}]}
    older = http.post(f"{double.url}/v1beta/models/gemini-2.5-flash:generateContent", json=body, timeout=10)
    newer = http.post(
        f"{double.url}/v1beta/models/gemini-3-pro-preview:generateContent", json=body, timeout=10
    )
    assert older.status_code == 200 and newer.status_code == 400
    assert "missing a thought_signature" in newer.json()["error"]["message"]

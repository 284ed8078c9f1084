"""The doubles' answers pass the official SDKs' strict validation (issue 16), streamed and whole, for text,
one call, parallel calls, text before a call and thinking; the SDK clients see each scripted fault as
the provider's own error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from helpers_bridge_sdks import BODY_MODELS, EVENT_MODELS
from helpers_common import HTTP
from toolreplay.testing import Call, Calls, Error, ProviderDouble, StreamError, Text
from wire_helpers import wire_path

SCRIPTED = {
    "text": Text("Nothing to do."),
    "one call": Calls([Call("multiply", {"a": 1234, "b": 4567})]),
    "parallel calls": Calls([Call("multiply", {"a": 1, "b": 2}), Call("list_all")]),
    "text before a call": Calls([Call("multiply", {"a": 3, "b": 4})], text="Let me multiply."),
    "thinking": Calls([Call("list_all")], reasoning="I should list them."),
}
TOOL = {"type": "function", "name": "multiply", "parameters": {"type": "object", "properties": {}}}
HI = [{"role": "user", "content": "hi"}]
BODIES: dict[str, dict[str, Any]] = {
    "openai-chat": {"model": "gpt-4.1", "messages": HI},
    "openai-responses": {"model": "gpt-5", "input": "hi", "tools": [TOOL]},
    "anthropic": {"model": "claude", "max_tokens": 64, "messages": HI},
}

#: What a streamed request adds (Chat asks for its usage chunk).
STREAMED: dict[str, dict[str, Any]] = {"openai-chat": {"stream_options": {"include_usage": True}}}


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def _post(double: ProviderDouble, wire: str, stream: bool) -> list[Any]:
    """The answer's payloads: the body, or each stream event's data."""
    body = BODIES[wire]
    path = wire_path(wire, body["model"])
    if stream:
        body = {**body, "stream": True, **STREAMED.get(wire, {})}
    answer = HTTP.post(double.url + path, json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    if not stream:
        return [answer.json()]
    datas = [line[6:] for line in answer.text.splitlines() if line.startswith("data: ")]
    return [json.loads(d) for d in datas if d != "[DONE]"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("shape", sorted(SCRIPTED))
@pytest.mark.parametrize("wire", sorted(BODIES))
def test_sdk_strict_models_accept_every_answer(
    double: ProviderDouble, wire: str, shape: str, stream: bool
) -> None:
    body, event = BODY_MODELS[wire](), EVENT_MODELS[wire]()
    double.script(SCRIPTED[shape])
    payloads = _post(double, wire, stream)
    if not stream:
        body(payloads[0])
        return
    for payload in payloads:
        if payload.get("type") != "ping":  # the SDK reads pings apart from its event union
            event(payload)
    if "response" in payloads[-1]:  # Responses' last event holds the whole answer
        body(payloads[-1]["response"])


def test_gemini_sdk_models_accept_every_answer(double: ProviderDouble) -> None:
    types = pytest.importorskip("google.genai").types
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    for model in ("gemini-2.5-flash", "gemini-3-pro-preview"):
        for item in SCRIPTED.values():
            double.script(item, item)
            base = f"{double.url}/v1beta/models/{model}"
            # JSON mode: strict validation of python input would refuse enum names as plain strings
            whole = HTTP.post(f"{base}:generateContent", json=body, timeout=10).text
            types.GenerateContentResponse.model_validate_json(whole, strict=True)
            sse = HTTP.post(f"{base}:streamGenerateContent?alt=sse", json=body, timeout=10).text
            for line in sse.splitlines():
                if line.startswith("data: "):
                    types.GenerateContentResponse.model_validate_json(line[6:], strict=True)


def test_sdk_chat_tool_only_stream_gives_content_none(double: ProviderDouble) -> None:
    openai = pytest.importorskip("openai")
    double.script(SCRIPTED["one call"])
    with (
        openai.OpenAI(
            base_url=double.base_url_for("openai-chat"), api_key="sk-test", max_retries=0
        ) as client,
        client.chat.completions.stream(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}]) as s,
    ):
        final = s.get_final_completion()
    message = final.choices[0].message
    assert message.content is None
    assert message.tool_calls[0].function.arguments == '{"a":1234,"b":4567}'


def test_stream_options_without_stream_is_refused_like_openai(double: ProviderDouble) -> None:
    openai = pytest.importorskip("openai")
    with (
        openai.OpenAI(
            base_url=double.base_url_for("openai-chat"), api_key="sk-test", max_retries=0
        ) as client,
        pytest.raises(openai.BadRequestError, match="'stream_options' parameter is only allowed"),
    ):
        client.chat.completions.create(
            model="gpt-4.1",
            messages=[{"role": "user", "content": "hi"}],
            stream_options={"include_usage": True},
        )
    assert double.requests[-1].status == 400


FAULTS = [
    (Error(429, retry_after=0), "RateLimitError"),
    (Error(500), "InternalServerError"),
    (Error(401), "AuthenticationError"),
    (StreamError(kind="rate_limit"), "RateLimitError"),
    (StreamError(kind="invalid_request"), "BadRequestError"),
]


@pytest.mark.parametrize(("fault", "error"), FAULTS, ids=[repr(f) for f, _ in FAULTS])
def test_sdks_raise_the_providers_error_for_each_fault(
    double: ProviderDouble, fault: Any, error: str
) -> None:
    openai = pytest.importorskip("openai")
    anthropic = pytest.importorskip("anthropic")
    double.script(fault, fault, fault)
    with openai.OpenAI(
        base_url=double.base_url_for("openai-chat"), api_key="sk-test", max_retries=0
    ) as client:
        with pytest.raises(getattr(openai, error)):
            client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(getattr(openai, error)):
            client.responses.create(model="gpt-5", input="hi")
    base = double.base_url_for("anthropic")
    with (
        anthropic.Anthropic(base_url=base, api_key="k", max_retries=0) as client,
        pytest.raises(getattr(anthropic, error)),
    ):
        client.messages.create(model="claude", max_tokens=8, messages=HI)

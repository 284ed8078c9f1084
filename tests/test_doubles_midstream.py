"""An error event in the middle of a 200 stream, on every wire, reaches the official SDK the way the real
provider's does (issue 16): openai's Chat stream raises ``APIError`` with the error object as its body;
a Responses stream yields the numbered ``ResponseErrorEvent`` (strictly valid) and its stream helper finds
no final response; anthropic raises ``APIStatusError`` carrying the error type; google-genai raises
``ServerError`` or ``ClientError`` with the code; ollama raises ``ResponseError`` (tests/wires/
ollama/test_doubles_strict_ollama.py). The events before the error arrive first, each valid."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolreplay.testing import Call, Calls, ProviderDouble, StreamError

HI = [{"role": "user", "content": "hi"}]
KINDS = {  # kind -> (OpenAI type, Anthropic type, Google code)
    "overloaded": ("server_error", "overloaded_error", 503),
    "rate_limit": ("rate_limit_exceeded", "rate_limit_error", 429),
    "invalid_request": ("invalid_request_error", "invalid_request_error", 400),
}
AFTER = 3


def _fault(kind: str) -> StreamError:
    then = Calls([Call("multiply", {"a": 1234, "b": 4567})], text="Let me multiply.")
    return StreamError(f"{kind} in the middle", kind=kind, after_events=AFTER, then=then)  # type: ignore[arg-type]


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_openai_chat_stream_raises_api_error(double: ProviderDouble, kind: str) -> None:
    openai = pytest.importorskip("openai")
    double.script(_fault(kind))
    seen: list[Any] = []
    with (
        openai.OpenAI(base_url=double.base_url_for("openai-chat"), api_key="sk", max_retries=0) as client,
        pytest.raises(openai.APIError, match=f"{kind} in the middle") as caught,
    ):
        seen.extend(client.chat.completions.create(model="gpt-4.1", messages=HI, stream=True))
    assert len(seen) == AFTER and caught.value.body["type"] == KINDS[kind][0]


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_openai_responses_stream_yields_the_numbered_error_event(double: ProviderDouble, kind: str) -> None:
    openai = pytest.importorskip("openai")
    from openai.types.responses import ResponseErrorEvent

    double.script(_fault(kind), _fault(kind))
    with openai.OpenAI(
        base_url=double.base_url_for("openai-responses"), api_key="sk", max_retries=0
    ) as client:
        events = list(client.responses.create(model="gpt-5", input="hi", stream=True))
        with (
            pytest.raises(RuntimeError, match=r"response\.completed"),
            client.responses.stream(model="gpt-5", input="hi") as stream,
        ):
            stream.get_final_response()
    *before, error = events
    assert [e.sequence_number for e in events] == list(range(AFTER + 1))
    assert isinstance(error, ResponseErrorEvent)
    ResponseErrorEvent.model_validate(error.model_dump(), strict=True)
    assert (error.code, error.message) == (KINDS[kind][0], f"{kind} in the middle")
    assert [e.type for e in before][:2] == ["response.created", "response.in_progress"]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_anthropic_stream_raises_with_the_error_type(double: ProviderDouble, kind: str) -> None:
    anthropic = pytest.importorskip("anthropic")
    double.script(_fault(kind), _fault(kind))
    seen: list[Any] = []
    with anthropic.Anthropic(base_url=double.base_url_for("anthropic"), api_key="k", max_retries=0) as client:
        with pytest.raises(anthropic.APIStatusError) as caught:
            seen.extend(client.messages.create(model="claude", max_tokens=64, messages=HI, stream=True))
        assert caught.value.body["error"] == {"type": KINDS[kind][1], "message": f"{kind} in the middle"}
        with (
            pytest.raises(anthropic.APIStatusError, match=KINDS[kind][1]),
            client.messages.stream(model="claude", max_tokens=64, messages=HI) as stream,
        ):
            stream.get_final_message()
    # the SDK drops pings; the rest of the events before the error arrive
    assert seen[0].type == "message_start" and 0 < len(seen) <= AFTER


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_google_genai_stream_raises_with_the_code(double: ProviderDouble, kind: str) -> None:
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import errors, types

    double.script(_fault(kind))
    client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=double.url))
    seen: list[Any] = []
    expected = errors.ServerError if KINDS[kind][2] >= 500 else errors.ClientError
    try:
        with pytest.raises(expected, match=f"{kind} in the middle") as caught:
            seen.extend(client.models.generate_content_stream(model="gemini-3-pro-preview", contents="hi"))
    finally:
        client.close()
    assert caught.value.code == KINDS[kind][2] and len(seen) == AFTER
    assert seen[0].text == "Let me multiply."[: len(seen[0].text or "")]

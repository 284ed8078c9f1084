"""The doubles speak well enough for the official SDKs (what users' own agents use), streamed and whole."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolreplay.testing import Call, Calls, Error, ProviderDouble, Text, Usage


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


CLOSE = Calls([Call("coop", {"action": "close", "id": 12})], text="Closing.")


def test_openai_sdk_chat_and_responses(double: ProviderDouble) -> None:
    openai = pytest.importorskip("openai")
    double.script(CLOSE, Text("streamed answer", usage=Usage(50, 3, 32)), CLOSE, Text("streamed response"))
    with openai.OpenAI(
        base_url=double.base_url_for("openai-chat"), api_key="sk-test", max_retries=0
    ) as client:
        r = client.chat.completions.create(
            model="gpt-4.1", messages=[{"role": "user", "content": "close 12"}]
        )
        (call,) = r.choices[0].message.tool_calls
        assert call.function.name == "coop" and call.function.arguments == '{"action":"close","id":12}'
        chunks = client.chat.completions.create(
            model="gpt-4.1",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        parts = [c for c in chunks]
        assert "".join(c.choices[0].delta.content or "" for c in parts if c.choices) == "streamed answer"
        assert parts[-1].usage.prompt_tokens_details.cached_tokens == 32
        resp = client.responses.create(model="gpt-5", input="close 12")
        assert [i.type for i in resp.output] == ["message", "function_call"]
        with client.responses.stream(model="gpt-5", input="hi") as stream:
            for _ in stream:
                pass
            assert stream.get_final_response().output_text == "streamed response"


def test_openai_sdk_sees_the_real_error_text(double: ProviderDouble) -> None:
    openai = pytest.importorskip("openai")
    with openai.OpenAI(base_url=double.base_url_for("openai"), api_key="sk-test", max_retries=0) as client:
        with pytest.raises(openai.BadRequestError, match="must be a response to a preceding message"):
            client.chat.completions.create(
                model="gpt-4.1",
                messages=[
                    {"role": "user", "content": "hi"},
                    {"role": "tool", "tool_call_id": "x", "content": "r"},
                ],
            )
        double.script(Error(429, retry_after=0))
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])


def test_anthropic_sdk_messages_and_stream(double: ProviderDouble) -> None:
    anthropic = pytest.importorskip("anthropic")
    double.script(Calls([Call("coop", {"action": "list"})], reasoning="Let me look."), Text("streamed"))
    with anthropic.Anthropic(
        base_url=double.base_url_for("anthropic"), api_key="sk-ant", max_retries=0
    ) as client:
        msg = client.messages.create(
            model="claude", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        )
        assert [b.type for b in msg.content] == ["thinking", "tool_use"]
        assert msg.stop_reason == "tool_use"
        with client.messages.stream(
            model="claude", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            assert stream.get_final_text() == "streamed"


def test_google_genai_sdk_generate_and_stream(double: ProviderDouble) -> None:
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    double.script(Calls([Call("coop", {"action": "list"})]), Text("streamed from gemini"))
    client = genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=double.url))
    try:
        r = client.models.generate_content(model="gemini-2.5-flash", contents="list the todos")
        assert r.function_calls is not None
        assert [(c.name, c.args) for c in r.function_calls] == [("coop", {"action": "list"})]
        assert r.candidates[0].content.parts[0].thought_signature  # signed like Gemini 3
        pieces = client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi")
        assert "".join(c.text or "" for c in pieces) == "streamed from gemini"
    finally:
        client.close()
    assert [r.wire for r in double.requests] == ["gemini", "gemini"]

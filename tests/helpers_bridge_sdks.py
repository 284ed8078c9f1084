"""What each wire's official SDK rebuilds from a translated answer, streamed (its stream accumulator) or
whole, in strict mode where it has one; and each SDK's strict models over the events and bodies a writer
wrote (tests/test_bridge_matrix.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from helpers_bridge_matrix import HI

#: The model each agent asks for (the one its answer reports).
AGENT_MODEL = {
    "anthropic": "claude-sonnet-4-5",
    "openai-chat": "gpt-4.1",
    "openai-responses": "gpt-5",
    "gemini": "gemini-3-pro-preview",
    "ollama": "qwen3",
}
ANSWER_ID = {
    "anthropic": "msg_matrix1",
    "openai-chat": "chatcmpl-matrix1",
    "openai-responses": "resp_matrix1",
    "gemini": "matrix-1",
    "ollama": "unused",
}


@dataclass
class Seen:
    """The message as the SDK rebuilt it. ``usage``: (input with the cached part, output, cached), None
    where the wire has no field; ``tokens``: the signatures or ``encrypted_content`` it holds; ``ids``:
    every id it shows (calls' ids, and Responses' item ids)."""

    text: str = ""
    reasoning: str = ""
    calls: list[tuple[str | None, str, Any]] = field(default_factory=list)
    usage: tuple[int | None, int | None, int | None] = (None, None, None)
    tokens: list[str] = field(default_factory=list)
    finish: str | None = None
    model: str | None = None
    #: Responses' output items: (type, id).
    items: list[tuple[str, str]] = field(default_factory=list)


#: Plain HTTP on 127.0.0.1: no certificates to load for each client (a tenth of the matrix's time).
_LOOPBACK: dict[str, Any] = {"verify": False, "timeout": 10}


def _http(sdk: Any) -> Any:
    return sdk.DefaultHttpxClient(**_LOOPBACK)  # the SDK's own httpx (Anthropic's is a fork of it)


def _anthropic(base: str, stream: bool, thinking: bool) -> Seen:
    anthropic = pytest.importorskip("anthropic")
    ask: dict[str, Any] = {"model": AGENT_MODEL["anthropic"], "max_tokens": 2048, "messages": HI}
    if thinking:
        ask["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    with anthropic.Anthropic(
        base_url=base,
        api_key="k",
        max_retries=0,
        _strict_response_validation=True,
        http_client=_http(anthropic),
    ) as client:
        if stream:
            with client.messages.stream(**ask) as s:
                msg = s.get_final_message()
        else:
            msg = client.messages.create(**ask)
    seen = Seen()
    for b in msg.content:
        if b.type == "text":
            seen.text += b.text
        elif b.type == "thinking":
            seen.reasoning += b.thinking
            seen.tokens.append(b.signature)
        elif b.type == "redacted_thinking":
            seen.tokens.append(b.data)
        elif b.type == "tool_use":
            seen.calls.append((b.id, b.name, b.input))
    seen.finish, seen.model = msg.stop_reason, msg.model
    u = msg.usage
    cached = u.cache_read_input_tokens or 0
    seen.usage = (u.input_tokens + cached + (u.cache_creation_input_tokens or 0), u.output_tokens, cached)
    return seen


def _openai(base: str) -> Any:
    openai = pytest.importorskip("openai")
    return openai.OpenAI(
        base_url=base + "/v1",
        api_key="k",
        max_retries=0,
        _strict_response_validation=True,
        http_client=_http(openai),
    )


def _chat(base: str, stream: bool, thinking: bool) -> Seen:
    ask: dict[str, Any] = {"model": AGENT_MODEL["openai-chat"], "messages": HI}
    with _openai(base) as client:
        if stream:
            with client.chat.completions.stream(**ask, stream_options={"include_usage": True}) as s:
                for _ in s:
                    pass
                final = s.get_final_completion()
        else:
            final = client.chat.completions.create(**ask)
    m = final.choices[0].message
    seen = Seen(m.content or "", (m.model_extra or {}).get("reasoning_content") or "")
    seen.calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in m.tool_calls or []]
    seen.finish, seen.model = final.choices[0].finish_reason, final.model
    u = final.usage
    details = u.prompt_tokens_details
    seen.usage = (u.prompt_tokens, u.completion_tokens, (details.cached_tokens or 0) if details else None)
    return seen


def _responses(base: str, stream: bool, thinking: bool) -> Seen:
    ask: dict[str, Any] = {"model": AGENT_MODEL["openai-responses"], "input": HI}
    if thinking:
        ask |= {"reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"]}
    with _openai(base) as client:
        if stream:
            with client.responses.stream(**ask) as s:
                for _ in s:
                    pass
                final = s.get_final_response()
        else:
            final = client.responses.create(**ask)
    seen = Seen()
    for item in final.output:
        seen.items.append((item.type, item.id or ""))
        if item.type == "reasoning":
            seen.reasoning += "".join(p.text for p in item.summary)
            if item.encrypted_content:
                seen.tokens.append(item.encrypted_content)
        elif item.type == "message":
            seen.text += "".join(c.text for c in item.content if c.type == "output_text")
        elif item.type == "function_call":
            seen.calls.append((item.call_id, item.name, json.loads(item.arguments)))
    seen.finish, seen.model = final.status, final.model
    u = final.usage
    seen.usage = (u.input_tokens, u.output_tokens, u.input_tokens_details.cached_tokens or 0)
    return seen


def _gemini(base: str, stream: bool, thinking: bool) -> Seen:
    genai = pytest.importorskip("google.genai")
    types = genai.types
    options = types.HttpOptions(base_url=base, client_args=_LOOPBACK)
    client = genai.Client(api_key="k", http_options=options)
    config = types.GenerateContentConfig(thinking_config=types.ThinkingConfig(include_thoughts=thinking))
    model, contents = AGENT_MODEL["gemini"], HI[0]["content"]
    try:
        if stream:
            answers = list(
                client.models.generate_content_stream(model=model, contents=contents, config=config)
            )
        else:
            answers = [client.models.generate_content(model=model, contents=contents, config=config)]
    finally:
        client.close()
    seen = Seen()
    for part in (p for a in answers for p in a.candidates[0].content.parts or []):
        if part.thought:
            seen.reasoning += part.text or ""
        elif part.text:
            seen.text += part.text
        if part.function_call:
            fc = part.function_call
            seen.calls.append((fc.id, fc.name, fc.args))
        if part.thought_signature:
            seen.tokens.append(part.thought_signature.decode("ascii"))
    seen.finish, seen.model = answers[-1].candidates[0].finish_reason.value, answers[-1].model_version
    u = answers[-1].usage_metadata
    out = (u.candidates_token_count or 0) + (u.thoughts_token_count or 0)
    seen.usage = (u.prompt_token_count, out, u.cached_content_token_count or 0)
    return seen


def _ollama(base: str, stream: bool, thinking: bool) -> Seen:
    ollama = pytest.importorskip("ollama")
    client = ollama.Client(host=base, **_LOOPBACK)
    model = AGENT_MODEL["ollama"]
    if stream:
        parts = list(client.chat(model=model, messages=HI, stream=True, think=thinking))
    else:
        parts = [client.chat(model=model, messages=HI, stream=False, think=thinking)]
    seen = Seen()
    for p in parts:
        seen.text += p.message.content or ""
        seen.reasoning += p.message.thinking or ""
        # the SDK's ToolCall has no id: the ids are checked in the lines themselves
        seen.calls += [
            (None, c.function.name, dict(c.function.arguments)) for c in p.message.tool_calls or []
        ]
    final = parts[-1]
    assert final.done
    seen.finish, seen.model = final.done_reason, final.model
    assert all(p.model == model for p in parts)
    seen.usage = (final.prompt_eval_count, final.eval_count, None)
    return seen


#: (base URL, streamed, thinking asked) -> what the wire's SDK rebuilt.
SDKS: dict[str, Callable[[str, bool, bool], Seen]] = {
    "anthropic": _anthropic,
    "openai-chat": _chat,
    "openai-responses": _responses,
    "gemini": _gemini,
    "ollama": _ollama,
}


# -- the SDKs' strict models -------------------------------------------------------------------------------


def _adapter(kind: Any) -> Callable[[Any], Any]:
    pydantic = pytest.importorskip("pydantic")
    adapter = pydantic.TypeAdapter(kind)
    return lambda payload: adapter.validate_python(payload, strict=True)


def strict_events(wire: str, events: Sequence[tuple[str | None, Any]]) -> None:
    """Every event is its SDK's own model, validated strictly (Chat's ``[DONE]`` apart)."""
    check = EVENT_MODELS[wire]()
    for name, payload in events:
        if isinstance(payload, str):
            assert wire == "openai-chat" and payload == "[DONE]"
            continue
        if wire in NAMED_EVENTS:
            assert name == payload["type"]
        if name != "ping":
            check(payload)


def strict_body(wire: str, body: dict[str, Any]) -> None:
    """A whole body is its SDK's own model of a whole answer, validated strictly."""
    BODY_MODELS.get(wire, EVENT_MODELS[wire])()(body)


def _anthropic_event() -> Callable[[Any], Any]:
    return _adapter(pytest.importorskip("anthropic").types.RawMessageStreamEvent)


def _chat_event() -> Callable[[Any], Any]:
    from openai.types.chat import ChatCompletionChunk

    return lambda p: ChatCompletionChunk.model_validate(p, strict=True)


def _responses_event() -> Callable[[Any], Any]:
    from openai.types.responses import ResponseStreamEvent

    return _adapter(ResponseStreamEvent)


def _gemini_event() -> Callable[[Any], Any]:
    types = pytest.importorskip("google.genai").types
    # JSON, as google-genai reads it: its thoughtSignature is bytes sent as base64
    return lambda p: types.GenerateContentResponse.model_validate_json(json.dumps(p), strict=True)


def _ollama_event() -> Callable[[Any], Any]:
    ollama = pytest.importorskip("ollama")
    return lambda p: ollama.ChatResponse.model_validate(p, strict=True)


def _anthropic_body() -> Callable[[Any], Any]:
    message = pytest.importorskip("anthropic").types.Message
    return lambda b: message.model_validate(b, strict=True)


def _chat_body() -> Callable[[Any], Any]:
    from openai.types.chat import ChatCompletion

    return lambda b: ChatCompletion.model_validate(b, strict=True)


def _responses_body() -> Callable[[Any], Any]:
    from openai.types.responses import Response

    return lambda b: Response.model_validate(b, strict=True)


#: Each wire's SDK model of one stream event (SSE ``data`` or NDJSON line), as a strict check.
EVENT_MODELS: dict[str, Callable[[], Callable[[Any], Any]]] = {
    "anthropic": _anthropic_event,
    "openai-chat": _chat_event,
    "openai-responses": _responses_event,
    "gemini": _gemini_event,
    "ollama": _ollama_event,
}
#: Each wire's SDK model of a whole answer, where it is not the event's (Gemini's and Ollama's are).
BODY_MODELS: dict[str, Callable[[], Callable[[Any], Any]]] = {
    "anthropic": _anthropic_body,
    "openai-chat": _chat_body,
    "openai-responses": _responses_body,
}
#: The wires whose SSE event name is the payload's ``type``.
NAMED_EVENTS = frozenset({"anthropic", "openai-responses"})

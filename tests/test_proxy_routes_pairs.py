"""Routed models across wires, end to end (design 47): each agent wire's official SDK through a real
proxy on 127.0.0.1, routed to another wire's provider double, whole and streamed. Each runs a call and its
answer: the second upstream request must pass the upstream double's provider rules (which refuse with the
provider's own text when the upstream's reasoning or signature is missing), so it carries what only the
store kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

from proxy_helpers import TOOL_OPENAI, TOOLS_ANTHROPIC, proxied
from toolreplay._proxy.model_routes import parse_route
from toolreplay.testing import Call, Calls, ProviderDouble, Text
from toolreplay.wires import get_wire

AGENT_KEY = "sk-agent-own-key-0123456789abcdef"
CLOSE = Calls([Call("coop", {"action": "close", "id": 12})], reasoning="Closing todo 12 as asked.")
#: (the call's name and input the agent saw, the final words it got).
Seen = tuple[tuple[str, Any], str]


def _anthropic(url: str, model: str, streamed: bool) -> Seen:
    import anthropic

    ask: dict[str, Any] = dict(model=model, max_tokens=2000, tools=TOOLS_ANTHROPIC)
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "close todo 12"}]
    with anthropic.Anthropic(base_url=url, api_key=AGENT_KEY, max_retries=0) as client:

        def once() -> Any:
            if not streamed:
                return client.messages.create(**ask, messages=msgs)
            with client.messages.stream(**ask, messages=msgs) as s:
                return s.get_final_message()

        first = once()
        call = next(b for b in first.content if b.type == "tool_use")
        msgs.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]}
        )
        msgs.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "ok"}]}
        )
        done = once()
    return (call.name, call.input), "".join(b.text for b in done.content if b.type == "text")


def _chat(url: str, model: str, streamed: bool) -> Seen:
    import openai

    msgs: list[dict[str, Any]] = [{"role": "user", "content": "close todo 12"}]
    with openai.OpenAI(base_url=url + "/v1", api_key=AGENT_KEY, max_retries=0) as client:

        def once() -> Any:
            if not streamed:
                return client.chat.completions.create(model=model, messages=msgs, tools=[TOOL_OPENAI])
            with client.chat.completions.stream(model=model, messages=msgs, tools=[TOOL_OPENAI]) as s:
                for _ in s:
                    pass
                return s.get_final_completion()

        first = once().choices[0].message
        call = first.tool_calls[0]
        fn = {"name": call.function.name, "arguments": call.function.arguments}
        calls = [{"id": call.id, "type": "function", "function": fn}]
        msgs.append({"role": "assistant", "content": first.content, "tool_calls": calls})
        msgs.append({"role": "tool", "tool_call_id": call.id, "content": "ok"})
        done = once().choices[0].message
    return (call.function.name, json.loads(call.function.arguments)), done.content or ""


def _responses(url: str, model: str, streamed: bool) -> Seen:
    import openai

    tools: list[Any] = [{"type": "function", "name": "coop", "parameters": {"type": "object"}}]
    items: list[Any] = [{"role": "user", "content": "close todo 12"}]
    with openai.OpenAI(base_url=url + "/v1", api_key=AGENT_KEY, max_retries=0) as client:

        def once() -> Any:
            if not streamed:
                return client.responses.create(model=model, input=items, tools=tools)
            with client.responses.stream(model=model, input=items, tools=tools) as s:
                for _ in s:
                    pass
                return s.get_final_response()

        first = once()
        call = next(i for i in first.output if i.type == "function_call")
        items += [i.model_dump(exclude_none=True) for i in first.output]
        items.append({"type": "function_call_output", "call_id": call.call_id, "output": "ok"})
        done = once()
    return (call.name, json.loads(call.arguments)), done.output_text


def _gemini(url: str, model: str, streamed: bool) -> Seen:
    from google import genai
    from google.genai import types

    decl = types.FunctionDeclaration(name="coop", parameters_json_schema={"type": "object"})
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[decl])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="close todo 12")])]
    client = genai.Client(api_key=AGENT_KEY, http_options=types.HttpOptions(base_url=url))
    try:

        def once() -> tuple[list[Any], str]:
            if streamed:
                chunks = list(
                    client.models.generate_content_stream(model=model, contents=contents, config=config)
                )
            else:
                chunks = [client.models.generate_content(model=model, contents=contents, config=config)]
            parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]
            return parts, "".join(p.text or "" for p in parts if not p.thought)

        parts, _ = once()
        fc = next(p.function_call for p in parts if p.function_call)
        contents.append(types.Content(role="model", parts=parts))
        answer = types.Part.from_function_response(name="coop", response={"result": "ok"})
        contents.append(types.Content(role="user", parts=[answer]))
        _, text = once()
    finally:
        client.close()
    return (fc.name, dict(fc.args or {})), text


def _ollama(url: str, model: str, streamed: bool) -> Seen:
    import ollama

    msgs: list[Any] = [{"role": "user", "content": "close todo 12"}]
    client = ollama.Client(host=url)
    try:

        def once() -> Any:
            if not streamed:
                return client.chat(model=model, messages=msgs, tools=[TOOL_OPENAI]).message
            parts = list(client.chat(model=model, messages=msgs, tools=[TOOL_OPENAI], stream=True))
            calls = [c for p in parts for c in (p.message.tool_calls or [])]
            text = "".join(p.message.content or "" for p in parts)
            return ollama.Message(role="assistant", content=text, tool_calls=calls or None)

        first = once()
        call = first.tool_calls[0].function
        msgs += [first, {"role": "tool", "content": "ok", "tool_name": call.name}]
        done = once()
    finally:
        client._client.close()
    return (call.name, dict(call.arguments)), done.content or ""


AGENTS: dict[str, tuple[Callable[[str, str, bool], Seen], str, str]] = {
    # wire: (the SDK's two requests, the model the agent names, the SDK's package)
    "anthropic": (_anthropic, "claude-sonnet-4-5", "anthropic"),
    "openai-chat": (_chat, "gpt-4.1", "openai"),
    "gemini": (_gemini, "gemini-2.5-pro", "google.genai"),
    "ollama": (_ollama, "qwen3", "ollama"),
    "openai-responses": (_responses, "gpt-5", "openai"),
}
#: (agent wire, vessel, its model): one route each.
PAIRS = [
    ("anthropic", "gemini", "gemini-3-pro-preview"),
    ("openai-chat", "anthropic", "claude-sonnet-4-5"),
    ("openai-chat", "gemini", "gemini-3-pro-preview"),
    ("gemini", "kimi", "kimi-k2-thinking"),
    ("gemini", "anthropic", "claude-sonnet-4-5"),
    ("ollama", "kimi", "kimi-k2-thinking"),
    ("anthropic", "ollama", "qwen3"),
    ("openai-responses", "anthropic", "claude-sonnet-4-5"),
    ("openai-responses", "kimi", "kimi-k2-thinking"),
    ("anthropic", "openai-responses", "gpt-5"),
    ("gemini", "openai-responses", "gpt-5"),
]


@pytest.mark.slow
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("agent", "vessel", "model"), PAIRS, ids=[f"{a}-to-{v}" for a, v, _ in PAIRS])
def test_an_agent_on_another_wires_model_completes_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, vessel: str, model: str, streamed: bool
) -> None:
    from toolreplay._vessels import get_vessel

    drive, asked, package = AGENTS[agent]
    pytest.importorskip(package)
    upstream = get_vessel(vessel).wire
    with ProviderDouble() as double:
        f = tmp_path / "vessels.toml"
        f.write_text(f'[vessels.{vessel}]\nbase_url = "{double.base_url_for(vessel)}"\n', encoding="utf-8")
        monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
        double.script(CLOSE, Text("Closed todo 12."))
        with proxied(double, tmp_path, routes=(parse_route(f"{agent}:*={vessel}:{model}"),)) as (
            proxy,
            lines,
            _,
        ):
            call, text = drive(proxy.url, asked, streamed)
            assert proxy.drain()
        sent = double.requests
    assert call == ("coop", {"action": "close", "id": 12})
    assert text == "Closed todo 12."
    assert [r.vessel for r in sent] == [vessel, vessel]
    assert [r.status for r in sent] == [200, 200], [r.rejected for r in sent]
    # the upstream's own reasoning went back to it from the store (the agent asked to see none), and no
    # token of ours reached a provider
    # (a vessel that keeps nothing between requests gets its reasoning back sealed: Responses with store:
    # false, its encrypted_content)
    flag, field = get_wire(upstream).sealed_reasoning
    sealed = bool(flag) and get_vessel(vessel).has(flag)
    own = f'"{field}"'.encode() if sealed else b"Closing todo 12 as asked."
    assert own in sent[1].raw and own not in sent[0].raw
    assert not [r for r in sent if b"toolreplay.r1." in r.raw]
    assert not [line for line in lines if "[not recorded]" in line]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("agent", "vessel", "model"), PAIRS[:4], ids=[f"{a}-to-{v}" for a, v, _ in PAIRS[:4]]
)
def test_a_second_run_of_the_same_conversation_sends_the_same_upstream_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, vessel: str, model: str
) -> None:
    """Ids and tokens are pure functions of the conversation: a provider's prompt cache would hit."""
    drive, asked, package = AGENTS[agent]
    pytest.importorskip(package)

    runs: list[list[bytes]] = []
    for n in (1, 2):
        with ProviderDouble() as double:
            f = tmp_path / f"vessels{n}.toml"
            f.write_text(
                f'[vessels.{vessel}]\nbase_url = "{double.base_url_for(vessel)}"\n', encoding="utf-8"
            )
            monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
            double.script(CLOSE, Text("Closed todo 12."))
            work = tmp_path / f"run{n}"
            work.mkdir()
            with proxied(double, work, routes=(parse_route(f"*={vessel}:{model}"),)) as (proxy, _, _db):
                drive(proxy.url, asked, False)
                assert proxy.drain()
            runs.append([r.raw.replace(double.url.encode(), b"") for r in double.requests])
    assert runs[0] == runs[1] and len(runs[0]) == 2

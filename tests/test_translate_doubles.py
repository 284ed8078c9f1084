"""Translated conversations against the provider doubles over real HTTP on 127.0.0.1 (design 48-50): an
agent's tool loop (Claude Code's Anthropic body, opencode's Chat body, Gemini CLI's Gemini body) routed to
an upstream of another wire, step by step, each answer recorded as the proxy records it (the calls under
the ids the agent saw) and the agent's next request built the way that agent builds it (its wire drops
what it cannot carry). Every upstream request passes the double's provider checks; Kimi gets its own
``reasoning_content`` back byte for byte; a route switch mid-conversation gives each upstream only its
own reasoning; a second run sends byte-identical requests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from helpers_common import HTTP
from test_translate import forwards_token
from toolreplay import jsonenc
from toolreplay._issuers import host_of
from toolreplay._proxy.translate import Translated, read_inbound, translate_request
from toolreplay._vessels import Vessel
from toolreplay.model import History, Issuer, Message, Reasoning, Step, Text, ToolCall
from toolreplay.testing import Call, Calls, ProviderDouble
from toolreplay.testing import Text as Say
from toolreplay.wires import get_wire
from toolreplay.wires.bridge import base64_token
from toolreplay.wires.reply import Reply

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
PLAN = (
    Calls([Call("Write", {"path": "notes.txt"})], reasoning="First I write notes.txt.\n  Then read it."),
    Calls([Call("Read", {"path": "notes.txt"})], reasoning="Now I read it back."),
    Say("notes.txt holds hello.", reasoning="It worked."),
)


ASK = "Create notes.txt, then read it back."


def _first_anthropic() -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8000,
        "messages": [{"role": "user", "content": ASK}],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [{"name": n, "input_schema": SCHEMA} for n in ("Write", "Read")],
    }


def _first_chat() -> dict[str, Any]:
    return {
        "model": "gpt-5",
        "messages": [{"role": "user", "content": ASK}],
        "reasoning_effort": "low",
        "tools": [
            {"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in ("Write", "Read")
        ],
    }


def _first_responses() -> dict[str, Any]:
    # Codex: stateless, reasoning shown, encrypted
    return {
        "model": "gpt-5-codex",
        "instructions": "You are Codex.",
        "store": False,
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": ASK}]}],
        "tools": [
            {"type": "function", "name": n, "parameters": SCHEMA, "strict": False} for n in ("Write", "Read")
        ],
        "reasoning": {"effort": "medium", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }


def _first_gemini() -> dict[str, Any]:
    return {
        "contents": [{"role": "user", "parts": [{"text": ASK}]}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": True, "thinkingBudget": 2048}},
        "tools": [
            {"functionDeclarations": [{"name": n, "parametersJsonSchema": SCHEMA} for n in ("Write", "Read")]}
        ],
    }


#: Each agent's first request, as that agent sends it.
FIRST: dict[str, Callable[[], dict[str, Any]]] = {
    "anthropic": _first_anthropic,
    "openai-chat": _first_chat,
    "openai-responses": _first_responses,
    "gemini": _first_gemini,
}


def _shown(seen: Reply, t: Translated) -> list[Reasoning]:
    """The reasoning the agent was shown (and sends back where its wire has a place for it)."""
    return [p for p in seen.said if isinstance(p, Reasoning)] if t.thinking else []


def _next_anthropic(body: dict[str, Any], seen: Reply, t: Translated) -> dict[str, Any]:
    shown = _shown(seen, t)
    said: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": p.text, "signature": t.seal(p)} for p in shown
    ]
    said += [{"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.input} for c in seen.calls]
    results = [
        {"type": "tool_result", "tool_use_id": c.call_id, "content": f"{c.name}: ok"} for c in seen.calls
    ]
    turn = [{"role": "assistant", "content": said}, {"role": "user", "content": results}]
    return {**body, "messages": [*body["messages"], *turn]}


def _next_chat(body: dict[str, Any], seen: Reply, t: Translated) -> dict[str, Any]:
    # opencode: no place for a signature; its reasoning_content is dropped
    calls = [
        {
            "id": c.call_id,
            "type": "function",
            "function": {"name": c.name, "arguments": jsonenc.dumps(c.input)},
        }
        for c in seen.calls
    ]
    answers = [{"role": "tool", "tool_call_id": c.call_id, "content": f"{c.name}: ok"} for c in seen.calls]
    turn = [{"role": "assistant", "content": None, "tool_calls": calls}, *answers]
    return {**body, "messages": [*body["messages"], *turn]}


def _next_responses(body: dict[str, Any], seen: Reply, t: Translated) -> dict[str, Any]:
    shown = _shown(seen, t)
    items: list[dict[str, Any]] = [
        {
            "type": "reasoning",
            "id": f"rs_{t.answer_id[5:]}_{k}",
            "encrypted_content": t.seal(p),
            "summary": [{"type": "summary_text", "text": p.text}],
        }
        for k, p in enumerate(shown)
    ]
    items += [
        {
            "type": "function_call",
            "call_id": c.call_id,
            "name": c.name,
            "arguments": jsonenc.dumps(c.input),
        }
        for c in seen.calls
    ]
    items += [
        {"type": "function_call_output", "call_id": c.call_id, "output": f"{c.name}: ok"} for c in seen.calls
    ]
    return {**body, "input": [*body["input"], *items]}


def _next_gemini(body: dict[str, Any], seen: Reply, t: Translated) -> dict[str, Any]:
    shown = _shown(seen, t)
    # Gemini CLI: calls without ids, the first one with the signature it was shown
    parts: list[dict[str, Any]] = [{"functionCall": {"name": c.name, "args": c.input}} for c in seen.calls]
    if shown and parts:
        parts[0]["thoughtSignature"] = base64_token(t.seal(shown[-1]))  # google-genai's bytes
    answers = [{"functionResponse": {"name": c.name, "response": {"output": "ok"}}} for c in seen.calls]
    turn = [{"role": "model", "parts": parts}, {"role": "user", "parts": answers}]
    return {**body, "contents": [*body["contents"], *turn]}


#: The agent's next request after it ran ``seen``'s calls, as that agent's wire carries it.
NEXT: dict[str, Callable[[dict[str, Any], Reply, Translated], dict[str, Any]]] = {
    "anthropic": _next_anthropic,
    "openai-chat": _next_chat,
    "openai-responses": _next_responses,
    "gemini": _next_gemini,
}


def _recorded(t: Translated, seen: Reply, issuer: Issuer) -> History:
    """What the proxy stores: the request's messages, the answer as the next step of the reply in progress
    (or a reply of its own), its calls under the ids the agent saw."""
    calls = tuple(
        ToolCall(c.name, c.input, None, c.call_id, provider_data=c.provider_data) for c in seen.calls
    )
    said = seen.said or ((Text(seen.text),) if seen.text else ())
    step = Step(tuple(said), len(calls), issuer)
    msgs = list(t.history.messages)
    last = msgs[-1] if msgs else None
    if last is not None and last.role == "assistant" and last.status != "complete":
        steps = (*[s for s, _ in last.step_calls()], step)
        msgs[-1] = replace(last, tool_uses=(*last.tool_uses, *calls), steps=steps)
    else:
        msgs.append(Message(f"a{len(msgs) + 1}", "assistant", "", calls, steps=(step,), status="in_progress"))
    return replace(t.history, messages=tuple(msgs))


def _send(v: Vessel, t: Translated) -> Reply:
    wire = get_wire(v.wire)
    assert wire.http is not None
    url = wire.http.endpoint(v.base_url, v.model, False)
    answer = HTTP.post(
        url,
        content=jsonenc.dumps(t.body).encode(),
        headers={**wire.http.auth_headers(v, "x"), "content-type": "application/json"},
        timeout=10,
    )
    assert answer.status_code == 200, (v.name, answer.text)
    return wire.parse_response(answer.json())


def _loop(
    agent: str, route: list[str], thinking_model: bool = True, quiet: bool = False
) -> tuple[list[bytes], list[Any]]:
    """The agent's task through ``route`` (a vessel per step): the bytes of each upstream request, and
    each translation. ``quiet``: the agent asks for no thinking (so it is shown none)."""
    with ProviderDouble() as double:
        double.script(*PLAN)
        body, stored, made = FIRST[agent](), None, []
        if quiet:
            body = {k: v for k, v in body.items() if k not in ("thinking", "reasoning_effort")}
        inbound = get_wire(agent)
        for vessel in route:
            v = double.vessel(vessel)
            if vessel == "kimi" and thinking_model:
                v = replace(v, model="kimi-k2-thinking")
            if vessel == "gemini":
                v = replace(v, model="gemini-3-pro-preview")
            issuer = Issuer(v.wire, host_of(v.base_url), v.model)
            t = translate_request(inbound, read_inbound(inbound, body), stored, v, issuer=issuer)
            reply = _send(v, t)
            made.append(t)
            seen = t.agent_reply(reply)
            stored = _recorded(t, seen, Issuer(v.wire, host_of(v.base_url), reply.model or v.model))
            if not seen.calls:
                break
            body = NEXT[agent](body, seen, t)
        assert all(r.rejected is None for r in double.requests), [r.rejected for r in double.requests]
        return [r.raw for r in double.requests], made


ROUTES = [
    ("anthropic", ["kimi"] * 3),
    ("anthropic", ["gemini"] * 3),
    ("anthropic", ["openai-responses"] * 3),
    ("openai-responses", ["anthropic"] * 3),
    ("openai-responses", ["kimi"] * 3),
    ("openai-chat", ["anthropic"] * 3),
    ("openai-chat", ["gemini"] * 3),
    ("gemini", ["openai"] * 3),
    ("gemini", ["anthropic"] * 3),
    ("gemini", ["kimi"] * 3),
]


@pytest.mark.parametrize(("agent", "route"), ROUTES, ids=[f"{a}-{r[0]}" for a, r in ROUTES])
def test_an_agents_task_completes_on_another_wire_and_runs_again_byte_for_byte(
    agent: str, route: list[str]
) -> None:
    first, made = _loop(agent, route)
    assert len(first) == 3
    assert not any(forwards_token(jsonenc.loads(raw.decode())) for raw in first)
    again, _ = _loop(agent, route)
    assert again == first  # the ids are stable: a real provider's prompt cache would hit
    assert made[-1].answer_id != made[0].answer_id


def test_kimi_gets_its_own_reasoning_back_byte_for_byte_through_claude_code() -> None:
    sent, made = _loop("anthropic", ["kimi"] * 3)
    last = jsonenc.loads(sent[-1].decode())
    thoughts = [m.get("reasoning_content") for m in last["messages"] if m["role"] == "assistant"]
    assert thoughts == ["First I write notes.txt.\n  Then read it.", "Now I read it back."]
    assert not any("thinking turned off" in n for t in made for n in t.notes)


def test_the_store_gives_kimi_the_reasoning_claude_code_never_saw() -> None:
    sent, made = _loop("anthropic", ["kimi"] * 3, quiet=True)
    assert not made[0].thinking  # nothing shown: Claude Code's next requests carry no reasoning
    last = jsonenc.loads(sent[-1].decode())
    thoughts = [m.get("reasoning_content") for m in last["messages"] if m["role"] == "assistant"]
    assert thoughts == ["First I write notes.txt.\n  Then read it.", "Now I read it back."]
    assert "thinking" not in last  # the model thinks by itself; nothing had to be turned off


def test_the_store_gives_claude_its_thinking_blocks_through_a_chat_agent() -> None:
    sent, made = _loop("openai-chat", ["anthropic"] * 3)
    last = jsonenc.loads(sent[-1].decode())
    assert last["thinking"]["type"] == "enabled"
    heads = [m["content"][0]["type"] for m in last["messages"] if m["role"] == "assistant"]
    assert heads == ["thinking", "thinking"]
    assert not any("thinking turned off" in n for t in made for n in t.notes)


def test_a_route_switch_gives_each_upstream_only_its_own_reasoning() -> None:
    sent, made = _loop("anthropic", ["kimi", "anthropic", "kimi"])
    to_claude = sent[1].decode()
    assert "First I write" not in to_claude  # Kimi's reasoning stays with Kimi
    to_kimi = jsonenc.loads(sent[2].decode())
    assistant = [m for m in to_kimi["messages"] if m["role"] == "assistant"]
    assert assistant[0]["reasoning_content"] == "First I write notes.txt.\n  Then read it."
    assert "reasoning_content" not in assistant[1]  # Claude's step: nothing of Claude's goes to Kimi
    assert "signature" not in sent[2].decode()
    # Claude refuses thinking on a tool loop another model opened, Kimi a step without its reasoning:
    # each request goes with thinking off, said
    assert any("thinking turned off" in n for n in made[1].notes)
    assert any("thinking turned off" in n for n in made[2].notes)


def test_codex_on_claude_keeps_thinking_on_with_claudes_own_blocks_from_the_store() -> None:
    sent, made = _loop("openai-responses", ["anthropic"] * 3)
    last = jsonenc.loads(sent[-1].decode())
    assert last["thinking"]["type"] == "enabled"
    heads = [m["content"][0] for m in last["messages"] if m["role"] == "assistant"]
    assert [h["type"] for h in heads] == ["thinking", "thinking"]
    assert [h["thinking"] for h in heads] == [
        "First I write notes.txt.\n  Then read it.",
        "Now I read it back.",
    ]
    assert not any(h["signature"].startswith("toolreplay.r1.") for h in heads)  # Claude's own signatures
    assert made[-1].thinking and not any("thinking turned off" in n for t in made for n in t.notes)

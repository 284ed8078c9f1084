"""Anthropic bodies render back as sent (design 38): every recorded Messages request body of the
development corpus and every request the kept real agents sent (Claude Code, opencode's Anthropic
provider: tests/data/agents/), imported and rendered ``--as-sent``, is JSON-equal to the body sent; the
agents' bodies rendered for every other vessel are valid there with their calls as calls (issue 22)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from corpus_loader import Exchange, exchanges
from helpers_common import TESTS
from toolreplay import read_history, render
from toolreplay._audit.validate import validate_body
from toolreplay.model import History
from toolreplay.wires import get_wire

WIRE = "anthropic"
AGENTS = TESTS / "data" / "agents"
CORPUS = [pytest.param(ex, id=ex.id) for ex in exchanges(WIRE, with_request=True)]


def _agent_bodies(name: str) -> list[dict[str, Any]]:
    """The Messages bodies a kept real-agent run sent (its side requests, titles and the like, included)."""
    data = json.loads((AGENTS / f"{name}.json").read_text("utf-8"))
    return [
        json.loads(r["body_text"]) for r in data["requests"] if r.get("wire") == WIRE and r.get("body_text")
    ]


AGENT_BODIES = [
    pytest.param(body, id=f"{name}-{n}")
    for name in ("claude", "opencode-anthropic")
    for n, body in enumerate(_agent_bodies(name))
]


def _history(body: Any) -> History:
    (h,) = read_history(body, WIRE).conversations
    return h


@pytest.mark.parametrize("ex", CORPUS)
def test_a_recorded_anthropic_body_renders_back_as_it_was_sent(ex: Exchange) -> None:
    assert render(_history(ex.request), as_sent=True) == ex.request


@pytest.mark.parametrize("body", AGENT_BODIES)
def test_a_real_agent_body_renders_back_as_it_was_sent(body: dict[str, Any]) -> None:
    assert render(_history(body), as_sent=True) == body


def _calls(h: History) -> list[tuple[str, Any, str | None]]:
    return [(c.name, c.input, c.answer) for m in h.messages for c in m.tool_uses]


@pytest.mark.parametrize(
    "vessel", ["anthropic", "glm", "openai", "openai-compatible", "openai-responses", "gemini", "ollama"]
)
@pytest.mark.parametrize("body", AGENT_BODIES)
def test_a_real_agent_body_is_valid_for_every_other_vessel_with_its_calls_as_calls(
    body: dict[str, Any], vessel: str
) -> None:
    from toolreplay._vessels import get_vessel

    h = _history(body)
    got = render(h, vessel, model="m")
    assert validate_body(vessel, got) == []
    (again,) = read_history(got, get_vessel(vessel).wire).conversations
    assert [(n, a) for n, _, a in _calls(again)] == [(n, a) for n, _, a in _calls(h)]


def test_the_corpus_and_the_agents_have_anthropic_bodies() -> None:
    assert len(CORPUS) >= 70 and len(AGENT_BODIES) >= 7


def _claude_main() -> dict[str, Any]:
    """Claude Code's last main-loop request: 3 system blocks with their markers, calls, their results."""
    return _agent_bodies("claude")[-1]


def test_claude_codes_layout_is_kept_in_the_neutral_model() -> None:
    body = _claude_main()
    h = _history(body)
    head = [m for m in h.messages[:3]]
    assert [m.role for m in head] == ["system"] * 3 and len(body["system"]) == 3
    assert [m.sent and m.sent[WIRE].get("extra") for m in head] == [
        {k: v for k, v in b.items() if k not in ("type", "text")} or None for b in body["system"]
    ]
    assert all(c.call_id and c.call_id.startswith("toolu_") for m in h.messages for c in m.tool_uses)
    req = h.last_request
    assert req is not None and {"thinking", "max_tokens", "metadata", "stream"} <= set(req.fields)
    assert req.fields["max_tokens"] == body["max_tokens"]
    declared = {t.name: t for t in h.tools or ()}
    assert all(declared[t["name"]].sent == {WIRE: {"tool": t}} for t in body["tools"])


def test_is_error_written_out_is_kept_and_a_normal_render_keeps_its_own_rules() -> None:
    text = lambda t, **k: {"type": "text", "text": t, **k}  # noqa: E731
    use = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False}
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "system": [text("a"), text("b", cache_control={"type": "ephemeral"})],
        "tools": [
            {"name": "f", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web_search"},
        ],
        "messages": [
            {"role": "user", "content": [text("one"), text("two")]},
            {"role": "assistant", "content": [text("x"), use]},
            {"role": "user", "content": [result, text("go on")]},
            {"role": "system", "content": "a reminder"},
        ],
    }
    h = _history(body)
    (call,) = [c for m in h.messages for c in m.tool_uses]
    assert (
        call.call_id == "toolu_1" and call.sent is not None and call.sent[WIRE]["result"]["is_error"] is False
    )
    assert [p.text for p in h.messages[2].parts] == ["one", "two"]
    assert h.messages[-1].role == "system" and h.tools is not None and h.tools[1].kind == "hosted"
    assert render(h, as_sent=True) == body
    warnings: list[str] = []
    normal = render(h, "anthropic", warnings=warnings)
    assert normal["tools"][1] == body["tools"][1] and not any("web_search" in w for w in warnings)
    chat: list[str] = []
    assert [t["function"]["name"] for t in render(h, "openai", warnings=chat)["tools"]] == ["f"]
    assert any("'web_search' runs at the provider" in w for w in chat)
    assert validate_body("anthropic", normal) == []
    assert get_wire(WIRE).render_as_sent is not None


def test_a_normal_render_carries_claude_codes_settings_the_api_defines_and_names_the_others() -> None:
    body = _claude_main()
    warnings: list[str] = []
    got = render(_history(body), "anthropic", warnings=warnings)
    assert got["thinking"] == body["thinking"] and got["metadata"] == body["metadata"]
    assert "context_management" not in got and any("context_management" in w for w in warnings)
    assert validate_body("anthropic", got) == []


def test_images_and_documents_in_a_tool_result_are_kept_as_its_parts_and_given_back() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    pdf = {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}, "title": "A"}
    content = [{"type": "text", "text": "here"}, image, pdf]
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "tools": [{"name": "shot", "description": "", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "look"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_9", "name": "shot", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": content}],
            },
        ],
    }
    h = _history(body)
    (call,) = h.messages[1].tool_uses
    assert [p.kind for p in call.parts] == ["text", "image", "document"] and call.parts[2].name == "A"
    assert render(h, as_sent=True) == body
    said: list[str] = []
    render(h, "openai", warnings=said)
    assert any("image (image/png" in w for w in said)

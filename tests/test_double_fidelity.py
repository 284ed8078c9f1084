"""The doubles answer and refuse as the providers do (design 30, 32), over real HTTP on 127.0.0.1.

* Chat: only a model that thinks answers with ``reasoning_content`` (a vessel whose profile says so, a
  Moonshot thinking model or a body that turns thinking on, DeepSeek's reasoner...); OpenAI's own models
  and other compatible servers send none, whatever the script says.
* Moonshot refuses a thinking continuation without ``reasoning_content`` in its own error shape
  (``{"error": {"message", "type"}}``), not OpenAI's.
* Anthropic takes ``role: "system"`` entries inside ``messages`` (real clients send them and are
  answered); the validator says nothing of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from helpers_common import HTTP
from toolreplay._audit.validate import rule_problems
from toolreplay.testing import Call, Calls, ProviderDouble, Text
from toolreplay.wires.openai_chat.rules import KIMI_REASONING


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def _chat(double: ProviderDouble, target: str, body: dict[str, Any]) -> httpx.Response:
    return HTTP.post(double.base_url_for(target) + "/chat/completions", json=body, timeout=5)


ASK = [{"role": "user", "content": "Close todo 12."}]


@pytest.mark.parametrize(
    ("target", "model", "extra", "thinks"),
    [
        ("openai-chat", "gpt-4.1", {}, False),
        ("openai", "gpt-4.1", {}, False),
        ("openai-compatible", "qwen2.5-coder", {}, False),
        ("openai-chat", "deepseek-reasoner", {}, True),
        ("openai-chat", "glm-4.6", {}, True),
        ("kimi", "kimi-k2-thinking", {}, True),
        ("kimi", "kimi-k2-0905-preview", {}, False),
        ("kimi", "kimi-k2-0905-preview", {"thinking": {"type": "enabled"}}, True),
        ("kimi", "kimi-k2.5", {"thinking": {"type": "disabled"}}, False),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_chat_answers_with_reasoning_content_only_when_the_model_thinks(
    double: ProviderDouble, target: str, model: str, extra: dict[str, Any], thinks: bool, stream: bool
) -> None:
    double.script(Text("Closed.", reasoning="Hmm"))
    body: dict[str, Any] = {"model": model, "messages": ASK, **extra}
    if stream:
        body["stream"] = True
    resp = _chat(double, target, body)
    assert resp.status_code == 200, resp.text
    assert ("reasoning_content" in resp.text) is thinks
    assert ("Hmm" in resp.text) is thinks


def test_a_thinking_vessel_gets_reasoning_on_its_calls_too(double: ProviderDouble) -> None:
    double.script(Calls([Call("coop", {"action": "close", "id": 12})], reasoning="Close it."))
    message = _chat(double, "kimi", {"model": "kimi-k2.5", "messages": ASK}).json()["choices"][0]["message"]
    assert message["reasoning_content"] == "Close it." and message["tool_calls"]


KIMI_CALL = {"id": "functions.coop:0", "type": "function",
             "function": {"name": "coop", "arguments": '{"action":"close","id":12}'}}  # fmt: skip
KIMI_TOOLS = [{"type": "function", "function": {"name": "coop", "parameters": {"type": "object"}}}]


def test_moonshot_refuses_in_its_own_error_shape(double: ProviderDouble) -> None:
    answer = {"role": "tool", "tool_call_id": "functions.coop:0", "name": "coop", "content": "closed"}
    messages = [*ASK, {"role": "assistant", "content": None, "tool_calls": [KIMI_CALL]}, answer]
    resp = _chat(double, "kimi", {"model": "kimi-k2.5", "tools": KIMI_TOOLS, "messages": messages})
    assert resp.status_code == 400
    assert resp.json() == {"error": {"message": KIMI_REASONING.format(i=1), "type": "invalid_request_error"}}
    # every other refusal keeps OpenAI's shape
    other = _chat(double, "kimi", {"model": "kimi-k2.5", "messages": [{"role": "bot", "content": "x"}]})
    assert other.status_code == 400 and set(other.json()["error"]) == {"message", "type", "param", "code"}


CLAUDE_TOOLS = [{"name": "coop", "description": "todo board", "input_schema": {"type": "object"}}]
USE = {"type": "tool_use", "id": "toolu_1", "name": "coop", "input": {"action": "close", "id": 12}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "closed"}
REMINDER = {"role": "system", "content": "Reminder: the board changed since your last look."}


@pytest.mark.parametrize(
    "messages",
    [
        [*ASK, REMINDER, {"role": "assistant", "content": "On it."}, {"role": "user", "content": "Go."}],
        [*ASK, {"role": "assistant", "content": [USE]}, {"role": "user", "content": [RESULT]}, REMINDER],
        [REMINDER, *ASK],
        [*ASK, {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}],
    ],
    ids=["between-turns", "after-the-results", "first", "text-blocks"],
)
def test_anthropic_takes_system_entries_inside_messages(double: ProviderDouble, messages: list[Any]) -> None:
    double.script(Text("Done."))
    body = {"model": "claude-sonnet-4-5", "max_tokens": 256, "tools": CLAUDE_TOOLS, "messages": messages}
    resp = HTTP.post(double.base_url_for("anthropic") + "/v1/messages", json=body, timeout=5)
    assert resp.status_code == 200, resp.text
    assert rule_problems("anthropic", body) == []


def test_anthropic_still_refuses_other_roles(double: ProviderDouble) -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 256,
        "messages": [*ASK, {"role": "tool", "content": "x"}],
    }
    resp = HTTP.post(double.base_url_for("anthropic") + "/v1/messages", json=body, timeout=5)
    assert resp.status_code == 400
    assert "Input should be 'user' or 'assistant'" in resp.json()["error"]["message"]

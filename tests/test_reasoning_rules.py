"""The providers' reasoning rules, kept by the wire's own rules and so by the validator and the doubles alike.

For each rule a body that breaks it gets the provider's own error (status, shape and text) from the double
over real HTTP on 127.0.0.1, and the validator's line names the place; a body that keeps it passes both.
The rules, as the providers document or answer them:

* Anthropic: with thinking on, a request that continues a tool loop opens the loop's first assistant
  message with its thinking block; a thinking block goes back only to the model that wrote it.
* Moonshot (Kimi thinking models): every assistant tool-call message carries ``reasoning_content``.
* Responses: a ``function_call`` sent with its item id (``fc_...``) needs the reasoning item of the same
  answer before it, when the request carries its own history; a reasoning item needs what the model
  produced after it.
* Gemini: a function-call turn is answered by as many function responses as it has calls; a thought
  signature goes back only to the model that issued it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers_common import HTTP
from toolreplay._audit.validate import rule_problems
from toolreplay._vessels import BUILTIN
from toolreplay.testing import Call, Calls, ProviderDouble
from toolreplay.wires.anthropic.rules import FOREIGN_THINKING, THINKING_FIRST
from toolreplay.wires.doubles import signature_for as double_signature
from toolreplay.wires.gemini.rules import CORRUPTED_SIGNATURE, GEMINI_COUNT
from toolreplay.wires.openai_chat.rules import KIMI_REASONING
from wire_helpers import wire_url


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def _url(double: ProviderDouble, vessel: str, model: str | None = None) -> str:
    return wire_url(double.base_url_for(vessel), BUILTIN[vessel].wire, model or BUILTIN[vessel].model)


def _post(double: ProviderDouble, vessel: str, body: Any, model: str | None = None) -> httpx.Response:
    return HTTP.post(_url(double, vessel, model), content=json.dumps(body).encode(), timeout=5)


def _refusal(double: ProviderDouble, vessel: str, body: Any, model: str | None = None) -> dict[str, Any]:
    resp = _post(double, vessel, body, model)
    assert resp.status_code == 400, resp.text
    payload: dict[str, Any] = resp.json()
    return payload


# ------------------------------------------------------------------------- Anthropic: thinking comes first

TOOLS = [{"name": "coop", "description": "todo board", "input_schema": {"type": "object"}}]
ASK = {"role": "user", "content": "Close todo 12."}
THINKING = {"type": "thinking", "thinking": "Close it with coop.", "signature": "c2lnbmVk"}
USE = {"type": "tool_use", "id": "toolu_1", "name": "coop", "input": {"action": "close", "id": 12}}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "closed"}]}


def _claude(*messages: Any, thinking: str = "enabled") -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "thinking": {"type": thinking, "budget_tokens": 2048},
        "tools": TOOLS,
        "messages": [ASK, *messages],
    }


def test_anthropic_thinking_continuation_without_its_thinking_block(double: ProviderDouble) -> None:
    body = _claude({"role": "assistant", "content": [USE]}, RESULT)
    payload = _refusal(double, "anthropic", body)
    assert payload == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": THINKING_FIRST.format(i=1, found="tool_use")},
    }
    assert "Expected `thinking` or `redacted_thinking`, but found `tool_use`" in payload["error"]["message"]
    (line,) = [p for p in rule_problems("anthropic", body) if "thinking" in p]
    assert line.startswith("messages[1].content[0]: thinking is on")


def test_anthropic_words_before_the_call_do_not_stand_for_the_thinking(double: ProviderDouble) -> None:
    said = {"type": "text", "text": "Closing it."}
    body = _claude({"role": "assistant", "content": [said, USE]}, RESULT)
    message = _refusal(double, "anthropic", body)["error"]["message"]
    assert message == THINKING_FIRST.format(i=1, found="text")


@pytest.mark.parametrize(
    "messages",
    [
        ({"role": "assistant", "content": [THINKING, USE]}, RESULT),
        ({"role": "assistant", "content": [{"type": "redacted_thinking", "data": "b3BhcXVl"}, USE]}, RESULT),
        # the second step of the loop needs none: the loop's first assistant message has it
        (
            {"role": "assistant", "content": [THINKING, USE]},
            RESULT,
            {"role": "assistant", "content": [{**USE, "id": "toolu_2"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok"}]},
        ),
        # a closed loop and a new question: no continuation, no rule
        (
            {"role": "assistant", "content": [USE]},
            RESULT,
            {"role": "assistant", "content": "Closed."},
            {"role": "user", "content": "Thanks. Anything else open?"},
        ),
    ],
    ids=["thinking", "redacted", "second-step", "closed-loop"],
)
def test_anthropic_bodies_that_keep_the_rule(double: ProviderDouble, messages: tuple[Any, ...]) -> None:
    body = _claude(*messages)
    assert _post(double, "anthropic", body).status_code == 200
    assert rule_problems("anthropic", body) == []


def test_anthropic_without_thinking_the_rule_does_not_apply(double: ProviderDouble) -> None:
    body = {**_claude({"role": "assistant", "content": [USE]}, RESULT), "thinking": {"type": "disabled"}}
    assert _post(double, "anthropic", body).status_code == 200
    assert rule_problems("anthropic", body) == []


def test_anthropic_thinking_goes_back_only_to_the_model_that_wrote_it(double: ProviderDouble) -> None:
    double.script(
        Calls([Call("coop", {"action": "close", "id": 12}, call_id="toolu_1")], reasoning="Close it.")
    )
    first = {**_claude(), "model": "claude-opus-4-5"}
    answer = HTTP.post(_url(double, "anthropic"), json=first, timeout=5).json()
    assert [b["type"] for b in answer["content"]] == ["thinking", "tool_use"]
    body = {
        **_claude({"role": "assistant", "content": answer["content"]}, RESULT),
        "model": "claude-opus-4-5",
    }
    assert _post(double, "anthropic", body).status_code == 200
    assert rule_problems("anthropic", body) == []
    other = {**body, "model": "claude-sonnet-4-5"}
    message = _refusal(double, "anthropic", other)["error"]["message"]
    assert (
        message
        == FOREIGN_THINKING.format(i=1, j=0)
        == "messages.1.content.0: Invalid `signature` in `thinking` block"
    )
    (line,) = [p for p in rule_problems("anthropic", other) if "signature" in p]
    assert (
        line == "messages[1].content[0].signature: a thinking block 'claude-opus-4-5' wrote, "
        "sent to 'claude-sonnet-4-5'"
    )


# ------------------------------------------------------------------ Moonshot: reasoning_content on calls

KIMI_TOOLS = [{"type": "function", "function": {"name": "coop", "parameters": {"type": "object"}}}]
KIMI_CALL = {"id": "functions.coop:0", "type": "function",
             "function": {"name": "coop", "arguments": '{"action":"close","id":12}'}}  # fmt: skip
KIMI_ANSWER = {"role": "tool", "tool_call_id": "functions.coop:0", "name": "coop", "content": "closed"}


def _kimi(model: str = "kimi-k2.5", reasoning: str | None = None, **extra: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [KIMI_CALL]}
    if reasoning is not None:
        call["reasoning_content"] = reasoning
    messages = [{"role": "system", "content": "Be brief."}, ASK, call, KIMI_ANSWER]
    return {"model": model, "tools": KIMI_TOOLS, "messages": messages, **extra}


@pytest.mark.parametrize("model", ["kimi-k2.5", "kimi-k2-thinking", "kimi-k2.6"])
def test_kimi_thinking_tool_call_without_reasoning_content(double: ProviderDouble, model: str) -> None:
    body = _kimi(model)
    error = _refusal(double, "kimi", body)["error"]
    assert error["message"] == KIMI_REASONING.format(i=2)
    assert error["message"] == (
        "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2"
    )
    assert error["type"] == "invalid_request_error"
    assert any(p.startswith("messages[2]: thinking is on (Moonshot)") for p in rule_problems("kimi", body))


@pytest.mark.parametrize(
    "body",
    [
        _kimi(reasoning="The user wants todo 12 closed."),
        _kimi("kimi-k2.5", thinking={"type": "disabled"}),
        _kimi("kimi-k2-0905-preview"),
    ],
    ids=["with-reasoning", "thinking-off", "not-a-thinking-model"],
)
def test_kimi_bodies_that_keep_the_rule(double: ProviderDouble, body: dict[str, Any]) -> None:
    assert _post(double, "kimi", body).status_code == 200
    assert rule_problems("kimi", body) == []


def test_only_moonshot_enforces_kimis_rule(double: ProviderDouble) -> None:
    body = _kimi()
    # new call dicts: KIMI_CALL itself is in the bodies the tests above were parametrized with
    body["messages"][2]["tool_calls"] = [{**c, "id": "call_1"} for c in body["messages"][2]["tool_calls"]]
    body["messages"][3] = {"role": "tool", "tool_call_id": "call_1", "content": "closed"}
    assert _post(double, "openai-compatible", body).status_code == 200
    assert not [p for p in rule_problems("openai-compatible", body) if "reasoning" in p]


# ----------------------------------------------------------- Responses: an item id needs its reasoning

FC = {"type": "function_call", "call_id": "call_1", "name": "coop", "arguments": "{}"}
FCO = {"type": "function_call_output", "call_id": "call_1", "output": "closed"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
RESPONSES_TOOLS = [{"type": "function", "name": "coop", "parameters": {"type": "object"}, "strict": False}]


def _responses(*items: Any, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-5", "store": False, "tools": RESPONSES_TOOLS,
            "input": [{"role": "user", "content": "Close todo 12."}, *items], **extra}  # fmt: skip


def test_responses_call_item_id_without_its_reasoning_item(double: ProviderDouble) -> None:
    body = _responses({**FC, "id": "fc_1"}, FCO)
    error = _refusal(double, "openai-responses", body)["error"]
    assert (
        error["message"]
        == "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item."
    )
    assert error["type"] == "invalid_request_error"
    assert any(
        p.startswith("input[1].id: a function_call item id") for p in rule_problems("openai-responses", body)
    )
    # the reasoning item of another answer, earlier in the history, does not stand for this one's
    earlier = _responses(REASONING, {**FC, "call_id": "call_0"}, {**FCO, "call_id": "call_0"},
                         {**FC, "id": "fc_1"}, FCO)  # fmt: skip
    assert (
        "'fc_1' of type 'function_call'" in _refusal(double, "openai-responses", earlier)["error"]["message"]
    )


@pytest.mark.parametrize(
    "body",
    [
        _responses(REASONING, {**FC, "id": "fc_1"}, FCO),
        _responses(FC, FCO),
        _responses({**FC, "id": "fc_1"}, FCO, previous_response_id="resp_1", store=True),
    ],
    ids=["reasoning-first", "no-item-id", "stateful"],
)
def test_responses_bodies_that_keep_the_rule(double: ProviderDouble, body: dict[str, Any]) -> None:
    assert _post(double, "openai-responses", body).status_code == 200
    assert [p for p in rule_problems("openai-responses", body) if "reasoning" in p] == []


#: A real request OpenAI answered 200: the OpenAI Agents SDK sends gpt-4.1's call item back with its ``fc_``
#: id and no reasoning item (gpt-4.1 never reasons). Recorded by traceloop/openllmetry (tests/corpus/).
AGENTS_SDK = "openai-responses/openllmetry/test_agent_with_function_tool_spans.2.json"


def test_responses_call_item_id_of_a_model_that_never_reasons_travels_alone(double: ProviderDouble) -> None:
    body = json.loads((Path(__file__).parent / "corpus" / AGENTS_SDK).read_text(encoding="utf-8"))["request"]
    assert any(str(it.get("id", "")).startswith("fc_") for it in body["input"])
    assert _post(double, "openai-responses", body).status_code == 200
    assert [p for p in rule_problems("openai-responses", body) if "reasoning" in p] == []
    # the same items from a reasoning model are still refused
    reasoner = {**body, "model": "gpt-5"}
    assert (
        "without its required 'reasoning' item"
        in _refusal(double, "openai-responses", reasoner)["error"]["message"]
    )


def test_responses_output_items_sent_back_whole_pass_and_without_reasoning_fail(
    double: ProviderDouble,
) -> None:
    double.script(Calls([Call("coop", {"action": "close", "id": 12})], reasoning="Close it."))
    # store: false: the reasoning goes back whole, so the first request asks for its encrypted content
    first = _responses(include=["reasoning.encrypted_content"])
    output = HTTP.post(_url(double, "openai-responses"), json=first, timeout=5).json()["output"]
    reasoning, call = output
    assert reasoning["encrypted_content"]
    answer = {"type": "function_call_output", "call_id": call["call_id"], "output": "closed"}
    kept = [reasoning, {k: call[k] for k in ("type", "id", "call_id", "name", "arguments")}, answer]
    assert _post(double, "openai-responses", _responses(*kept)).status_code == 200
    message = _refusal(double, "openai-responses", _responses(*kept[1:]))["error"]["message"]
    assert (
        message == f"Item '{call['id']}' of type 'function_call' was provided without its required "
        f"'reasoning' item: '{reasoning['id']}'."
    )


@pytest.mark.parametrize(
    "items",
    [(FC, FCO, REASONING), (REASONING, {"role": "user", "content": "and 13?"}), (REASONING, FCO)],
    ids=["at-the-end", "before-a-user-message", "before-an-answer"],
)
def test_responses_reasoning_item_without_what_followed_it(
    double: ProviderDouble, items: tuple[Any, ...]
) -> None:
    body = _responses(*items)
    error = _refusal(double, "openai-responses", body)["error"]
    assert (
        error["message"]
        == "Item 'rs_1' of type 'reasoning' was provided without its required following item."
    )
    where = f"input[{1 + items.index(REASONING)}]: a reasoning item with nothing the model produced after it"
    assert where in rule_problems("openai-responses", body)


def test_responses_reasoning_before_words_passes(double: ProviderDouble) -> None:
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Closed."}]}
    body = _responses(REASONING, said, {"role": "user", "content": "thanks"})
    assert _post(double, "openai-responses", body).status_code == 200
    assert [p for p in rule_problems("openai-responses", body) if "reasoning" in p] == []


# ------------------------------------------------------------------ Gemini: counts and whose signature

FCALL = {"functionCall": {"name": "coop", "args": {"action": "close", "id": 12}}}
FRESP = {"functionResponse": {"name": "coop", "response": {"output": "closed"}}}
GEMINI_TOOLS = [{"functionDeclarations": [{"name": "coop", "parametersJsonSchema": {"type": "object"}}]}]


def _gemini(*contents: Any) -> dict[str, Any]:
    return {
        "tools": GEMINI_TOOLS,
        "contents": [{"role": "user", "parts": [{"text": "Close 12 and 13."}]}, *contents],
    }


def _gemini_error(double: ProviderDouble, body: Any, model: str) -> str:
    error = _refusal(double, "gemini", body, model)["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    return str(error["message"])


def test_gemini_as_many_responses_as_calls(double: ProviderDouble) -> None:
    signed = {**FCALL, "thoughtSignature": double_signature(1, 0, "gemini-2.5-flash")}
    short = _gemini({"role": "model", "parts": [signed, FCALL]}, {"role": "user", "parts": [FRESP]})
    assert _gemini_error(double, short, "gemini-2.5-flash") == GEMINI_COUNT
    assert any(p.startswith("contents[2]:") for p in rule_problems("gemini", short))
    whole = _gemini({"role": "model", "parts": [signed, FCALL]}, {"role": "user", "parts": [FRESP, FRESP]})
    assert _post(double, "gemini", whole, "gemini-2.5-flash").status_code == 200
    assert rule_problems("gemini", whole) == []


def test_gemini_signature_only_to_the_model_that_issued_it(double: ProviderDouble) -> None:
    double.script(Calls([Call("coop", {"action": "close", "id": 12})]))
    first = _gemini()
    answer = HTTP.post(_url(double, "gemini", "gemini-3-pro"), json=first, timeout=5).json()
    (part,) = answer["candidates"][0]["content"]["parts"]
    body = _gemini({"role": "model", "parts": [part]}, {"role": "user", "parts": [FRESP]})
    assert _post(double, "gemini", body, "gemini-3-pro").status_code == 200
    assert _gemini_error(double, body, "gemini-3-flash") == CORRUPTED_SIGNATURE
    flash = BUILTIN["gemini"].model  # the validator judges for the vessel's model
    (line,) = [p for p in rule_problems("gemini", body) if "signature" in p]
    assert (
        line == f"contents[1].parts[0].thoughtSignature: a thought signature issued by 'gemini-3-pro', "
        f"sent to {flash!r}"
    )


@pytest.mark.parametrize(
    "signature", ["skip_thought_signature_validator", "context_engineering_is_the_way_to_go"]
)
def test_gemini_documented_placeholders_are_anyones(double: ProviderDouble, signature: str) -> None:
    body = _gemini(
        {"role": "model", "parts": [{**FCALL, "thoughtSignature": signature}]},
        {"role": "user", "parts": [FRESP]},
    )
    assert _post(double, "gemini", body, "gemini-3-pro").status_code == 200
    assert rule_problems("gemini", body) == []

"""Rendered back as sent (design 38): every recorded request body of the development corpus, imported and
rendered ``--as-sent``, is JSON-equal to the body that was recorded (key order aside).

A wire renders as sent through ``Wire.render_as_sent`` (the Wire contract's as-sent hook). The bodies it
cannot reproduce yet are listed per wire, with the reason, in tests/as_sent_gaps.py and marked
``xfail(strict=True)``, so a change that makes one pass flips it to a failure until its id is removed
there.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from as_sent_gaps import AS_SENT_GAPS
from corpus_loader import Exchange, exchanges
from toolreplay import read_history, render

#: exchange id -> why its wire cannot render it back as sent yet.
GAPS = {i: reason for reason, ids in AS_SENT_GAPS.values() for i in ids}


def _cases() -> list[Any]:
    out = []
    for ex in exchanges(with_request=True):
        reason = GAPS.get(ex.id)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(ex, id=ex.id, marks=marks))
    return out


def _as_sent(body: Any, wire: str) -> dict[str, Any]:
    (history,) = read_history(body, wire).conversations
    out: dict[str, Any] = render(history, as_sent=True)
    return out


@pytest.mark.parametrize("ex", _cases())
def test_a_recorded_body_renders_back_as_it_was_sent(ex: Exchange) -> None:
    assert _as_sent(ex.request, ex.wire) == ex.request


def test_the_gap_lists_name_corpus_bodies_of_their_own_wire() -> None:
    ids = {ex.id: ex.wire for ex in exchanges(with_request=True)}
    for wire, (_, listed) in AS_SENT_GAPS.items():
        assert all(ids.get(i) == wire for i in listed), wire


CEREBRAS = {
    "model": "gpt-oss-120b",
    "stream": False,
    "messages": [
        {"role": "user", "content": "What is 6 * 7?"},
        {"role": "assistant", "content": "42", "reasoning": "Six sevens are forty-two."},
        {"role": "user", "content": "And 6 * 8?"},
    ],
}


def test_a_chat_body_with_reasoning_and_stream_false_is_chat_and_keeps_its_reasoning(tmp_path: Any) -> None:
    # issue 22: Cerebras and gpt-oss servers send an assistant's ``reasoning``; with "stream": false the
    # body was read as Ollama's and its reasoning lost without a warning
    from toolreplay._audit.body import detect_wire

    assert detect_wire(CEREBRAS) == "openai-chat"
    batch = read_history(CEREBRAS)
    assert batch.format == "openai-chat"
    reply = batch.conversations[0].messages[1]
    assert [p.text for s in reply.steps for p in s.reasoning] == ["Six sevens are forty-two."]
    assert _as_sent(CEREBRAS, "openai-chat") == CEREBRAS


OPENCODE = {
    "model": "qwen3-coder",
    "max_tokens": 32000,
    "stream": True,
    "stream_options": {"include_usage": True},
    "tool_choice": "auto",
    "messages": [
        {"role": "system", "content": "You are opencode."},
        {"role": "user", "content": [{"type": "text", "text": "List the files."}]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
        {"role": "developer", "content": "Be brief."},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "bash",
                "description": "Run.",
                "parameters": {"type": "object"},
                "strict": False,
            },
        }
    ],
}


def test_opencode_s_chat_body_renders_back_as_sent_and_carries_its_settings() -> None:
    assert _as_sent(OPENCODE, "openai-chat") == OPENCODE  # "" kept, max_tokens, tool_choice, stream...
    (h,) = read_history(OPENCODE).conversations
    said: list[str] = []
    body = render(h, "openai", warnings=said)
    # a normal render: derived ids, the vessel's model and stream; Chat's own settings carried
    assert body["tool_choice"] == "auto" and body["max_tokens"] == 32000
    assert body["model"] != "qwen3-coder" and "stream" not in body
    assert body["messages"][-1] == {"role": "system", "content": "Be brief."}  # where it stood
    assert body["messages"][2]["tool_calls"][0]["id"].startswith("replay_")
    # on another wire the settings it cannot carry are named
    said.clear()
    render(h, "anthropic", warnings=said)
    assert any("not carried on anthropic: max_tokens, tool_choice" in w for w in said)


def test_a_normal_render_declares_what_each_wire_can_and_names_the_rest() -> None:
    from toolreplay.model import History, Message, ToolCall, ToolSpec

    patch = ToolSpec("apply_patch", "Edit files.", kind="custom")
    search = ToolSpec("web_search", kind="hosted", sent={"openai-responses": {"type": "web_search"}})
    declared = {"type": "function", "function": {"name": "read", "description": "Read.", "strict": True}}
    strict = ToolSpec("read", "Read.", {"type": "object"}, sent={"openai-chat": {"tool": declared}})
    call = ToolCall("apply_patch", "*** Begin Patch\n*** End Patch", "Done.", "c1", kind="custom")
    messages = (Message("u", "user", "Fix it."), Message("a", "assistant", "Fixed.", tool_uses=(call,)))
    h = History("h", messages, (patch, search, strict))
    said: list[str] = []
    body = render(h, "openai", warnings=said)
    tools = {t["function"]["name"]: t for t in body["tools"]}
    assert set(tools) == {"apply_patch", "read"}  # the hosted tool has no place on Chat
    assert tools["read"]["function"]["strict"] is True  # a Chat declaration imported whole goes whole
    assert tools["apply_patch"]["function"]["parameters"]["properties"]["input"]["type"] == "string"
    args = body["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(args) == {"input": "*** Begin Patch\n*** End Patch"}  # its text, not an excerpt
    assert any(
        "'web_search' runs at the provider (openai-responses): not declared on openai-chat" in w for w in said
    )
    assert any("free-form tool 'apply_patch': declared on openai-chat as a function" in w for w in said)

"""parse_request on every wire: written bodies in, stored histories out (dict in, values out)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers_fuzz import histories, mutated_json
from toolreplay._api import render
from toolreplay._errors import WireError
from toolreplay._history import History
from toolreplay._steps import Issuer, Part, Reasoning, ServerTool, Step, Text
from toolreplay._vessels import Vessel
from toolreplay.model import RequestSettings
from toolreplay.wires import get_wire, parse_request


def _calls(h: History) -> list[tuple[str, Any, str | None]]:
    return [(c.name, c.input, c.answer) for m in h.messages for c in m.tool_uses]


# --------------------------------------------------------------------------------------------------
# OpenAI Chat


def _chat_tau_like() -> list[dict[str, Any]]:
    """The shapes of a tau-bench v1 transcript: text beside a call, parallel calls, a reused id."""
    return [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "Book me a flight."},
        {
            "role": "assistant",
            "content": "Let me look you up.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_user", "arguments": '{"id": 7}'},
                }
            ],
            "function_call": None,
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "get_user", "content": '{"name": "Mia"}'},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_2", "type": "function", "function": {"name": "search", "arguments": '{"a": 1}'}},
                {"id": "call_3", "type": "function", "function": {"name": "search", "arguments": '{"a": 2}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_3", "name": "search", "content": "second"},
        {"role": "tool", "tool_call_id": "call_2", "name": "search", "content": ""},
        {"content": "Two flights found.", "role": "assistant"},
        {"role": "user", "content": "The first."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "book", "arguments": '{"f": 1}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "book", "content": "booked"},
        {"role": "assistant", "content": "Booked."},
    ]


def test_chat_one_agent_turn_is_one_reply() -> None:
    h = parse_request("openai-chat", {"model": "gpt-4o", "messages": _chat_tau_like()})
    roles = [m.role for m in h.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    reply = h.messages[2]
    assert reply.text == "Two flights found."  # the final words; the earlier ones ride with their step
    assert [(c.name, c.input, c.answer) for c in reply.tool_uses] == [
        ("get_user", {"id": 7}, '{"name": "Mia"}'),
        ("search", {"a": 1}, ""),  # an empty answer is an answer; ids pair out of order
        ("search", {"a": 2}, "second"),
    ]
    assert [c.call_id for c in reply.tool_uses] == ["call_1", "call_2", "call_3"]
    # two steps (design 16): the words before the first call ride with it; then two parallel calls
    issuer = Issuer("openai-chat", get_wire("openai-chat").public_host, "gpt-4o")
    assert reply.steps == (Step((Text("Let me look you up."),), 1, issuer), Step((), 2, issuer))
    assert reply.meta is None
    # the id reused in a later turn pairs with that turn's call
    assert [(c.name, c.answer, c.call_id) for c in h.messages[4].tool_uses] == [("book", "booked", "call_1")]
    assert h.messages[4].meta is None
    assert not h.warnings


def test_chat_ids_are_deterministic_and_positional() -> None:
    body = {"messages": _chat_tau_like()}
    a, b = parse_request("openai-chat", body), parse_request("openai-chat", body)
    assert a == b
    assert [m.id for m in a.messages] == ["m1", "m2", "m3", "m4", "m5"]
    # just the message list gives the same conversation (a body also records its request's settings)
    bare = parse_request("openai-chat", body["messages"])
    assert bare.requests == () and a.requests == (RequestSettings("openai-chat", {}, "m5"),)
    assert (bare.messages, bare.tools) == (a.messages, a.tools)


def test_chat_reasoning_content_rides_with_its_step() -> None:
    msgs = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "I should call coop.",
            "tool_calls": [
                {
                    "id": "functions.coop:0",
                    "type": "function",
                    "function": {"name": "coop", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "functions.coop:0", "name": "coop", "content": "ok"},
        {"role": "assistant", "content": "Done.", "reasoning_content": "All good."},
    ]
    h = parse_request("openai-chat", msgs)
    reply = h.messages[1]
    call = reply.tool_uses[0]
    assert call.call_id == "functions.coop:0"  # the provider's id kept as given
    assert call.provider_data is None
    # each message's reasoning kept verbatim in its step; the closing one leads the final words
    first, closing = reply.steps
    assert first.said == (
        Reasoning("I should call coop.", {"openai-chat": {"reasoning_content": "I should call coop."}}),
    )
    assert closing.said == (Reasoning("All good.", {"openai-chat": {"reasoning_content": "All good."}}),)
    assert (first.calls, closing.calls, reply.text) == (1, 0, "Done.")
    # rendered for its issuer (a profile that takes reasoning_content back), both come back in place
    kimi = Vessel(
        "k", "openai-chat", "https://api.openai.com/v1", None, "k2", flags=frozenset({"reasoning_content"})
    )
    body = render(h, kimi)
    assistant = [m for m in body["messages"] if m["role"] == "assistant"]
    assert [m.get("reasoning_content") for m in assistant] == ["I should call coop.", "All good."]


def test_chat_broken_arguments_are_kept_as_text_and_reported() -> None:
    msgs = [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": '}},
                {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "[1, 2]"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a"},
        {"role": "tool", "tool_call_id": "c2", "content": "b"},
        {"role": "tool", "tool_call_id": "c9", "content": "orphan"},
        {"role": "assistant", "content": "ok"},
    ]
    h = parse_request("openai-chat", msgs)
    assert _calls(h) == [("f", '{"a": ', "a"), ("f", "[1, 2]", "b")]
    text = "\n".join(h.warnings)
    assert "messages[1].tool_calls[0]: arguments are not JSON" in text
    assert "messages[1].tool_calls[1]: arguments are JSON list, not an object" in text
    assert "messages[4]: an answer for unknown call id 'c9'; not replayed" in text


def test_chat_legacy_function_call_pairs_by_position_and_tools_are_read() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": '{"q": 1}'}},
            {"role": "function", "name": "f", "content": "42"},
            {"role": "assistant", "content": [{"type": "text", "text": "It is 42."}]},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "description": "F.", "parameters": {}}}],
    }
    h = parse_request("openai-chat", body)
    assert _calls(h) == [("f", {"q": 1}, "42")]
    assert h.messages[1].text == "It is 42."
    assert h.tools is not None and [(t.name, t.description) for t in h.tools] == [("f", "F.")]


def test_chat_shape_errors_name_the_field() -> None:
    with pytest.raises(WireError, match=r"messages\[1\]\.role is 'robot'"):
        parse_request("openai-chat", [{"role": "user", "content": "x"}, {"role": "robot"}])
    with pytest.raises(WireError, match="no 'messages' list"):
        parse_request("openai-chat", {"model": "x"})
    with pytest.raises(WireError, match=r"messages\[0\]\.tool_calls\[0\]\.function is missing"):
        parse_request("openai-chat", [{"role": "assistant", "tool_calls": [{"id": "a"}]}])


def test_status_of_calls_without_text() -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        {"role": "user", "content": "stop, do something else"},
        {"role": "assistant", "content": "Sure."},
        {"role": "assistant", "tool_calls": [{"id": "c2", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
    ]
    h = parse_request("openai-chat", msgs)
    assert [(m.role, m.status, m.text) for m in h.messages] == [
        ("user", "complete", "a"),
        ("assistant", "interrupted", ""),  # cut short by the user: its calls still replay
        ("user", "complete", "stop, do something else"),
        ("assistant", "complete", "Sure."),
        ("assistant", "in_progress", ""),  # the body is a continuation request inside a turn
    ]


def test_a_message_without_calls_ends_the_reply() -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "I'll check."},
        {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        {"role": "user", "content": "and?"},
    ]
    h = parse_request("openai-chat", msgs)
    assert [(m.text, m.status, len(m.tool_uses)) for m in h.messages[1:3]] == [
        ("I'll check.", "complete", 0),
        ("", "interrupted", 1),
    ]


def test_replay_excerpt_reads_back_as_the_cut_text() -> None:
    msgs = [
        {"role": "user", "content": "a"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c",
                    "function": {"name": "f", "arguments": '{"input_excerpt":"{\\"text\\": \\"long"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "r"},
        {"role": "assistant", "content": "ok"},
    ]
    h = parse_request("openai-chat", msgs)
    assert h.messages[1].tool_uses[0].input == '{"text": "long'
    assert any("replay excerpt" in w for w in h.warnings)


# --------------------------------------------------------------------------------------------------
# OpenAI Responses


def test_responses_items_reasoning_and_grouping() -> None:
    body = {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Close #12."}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB..."},
            {
                "type": "message",
                "role": "assistant",
                "id": "msg_1",
                "content": [{"type": "output_text", "text": "Closing it."}],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_a",
                "name": "coop",
                "arguments": '{"id":12}',
            },
            {"type": "function_call_output", "call_id": "call_a", "output": "status: closed"},
            {"role": "assistant", "content": "Closed #12."},
            {"type": "web_search_call", "id": "ws_1"},
        ],
        "tools": [{"type": "function", "name": "coop", "description": "", "parameters": {}, "strict": False}],
    }
    h = parse_request("openai-responses", body)
    assert [(m.role, m.text) for m in h.messages] == [
        ("system", "Be brief."),
        ("user", "Close #12."),
        ("assistant", "Closed #12."),
    ]
    call = h.messages[2].tool_uses[0]
    assert (call.name, call.input, call.answer, call.call_id) == (
        "coop",
        {"id": 12},
        "status: closed",
        "call_a",
    )
    # the fc_ item id is provider data, not an id; the reasoning item (encrypted content included) and
    # the words before the call lead its step, in order
    assert call.provider_data == {"openai-responses": {"item_id": "fc_1"}}
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB..."}
    step = h.messages[2].steps[0]
    assert step.said == (Reasoning("", {"openai-responses": item}), Text("Closing it."))
    assert step.issuer == Issuer("openai-responses", get_wire("openai-responses").public_host, "gpt-5")
    # a hosted-tool item after the reply is the agent's closing step: kept whole, for its issuer
    assert h.messages[-1].steps[-1].said == (
        ServerTool("web_search_call", {"openai-responses": {"type": "web_search_call", "id": "ws_1"}}),
    )
    assert not any("web_search_call" in w for w in h.warnings)


def test_responses_string_input_and_bare_list() -> None:
    assert [m.text for m in parse_request("openai-responses", {"input": "hi"}).messages] == ["hi"]
    h = parse_request("openai-responses", [{"role": "user", "content": "hi"}])
    assert [(m.role, m.text) for m in h.messages] == [("user", "hi")]


# --------------------------------------------------------------------------------------------------
# Anthropic


def test_anthropic_thinking_results_and_errors() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "Policy.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "Check both."},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "two lookups", "signature": "sig=="},
                    {"type": "text", "text": "\n\nLooking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "mcp__coop__coop", "input": {"a": 1}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get", "input": {"b": 2}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": [{"type": "text", "text": "B"}],
                    },
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "boom", "is_error": True},
                    {"type": "image", "source": {}},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "One failed."}]},
        ],
    }
    h = parse_request("anthropic", body)
    assert [m.role for m in h.messages] == ["system", "user", "assistant"]
    reply = h.messages[2]
    assert reply.text == "One failed."
    first, second = reply.tool_uses
    assert (first.name, first.answer, first.is_error) == (
        "mcp__coop__coop",
        "boom",
        True,
    )  # MCP name as stored
    assert (second.answer, second.is_error) == ("B", False)
    # the thinking block, signature included, and the words lead the step of both calls
    block = {"type": "thinking", "thinking": "two lookups", "signature": "sig=="}
    assert reply.steps[0].said == (Reasoning("two lookups", {"anthropic": block}), Text("\n\nLooking."))
    assert first.provider_data is None
    assert h.messages[0].text == "Policy."
    assert any("the image block's None source is not kept" in w for w in h.warnings)


def test_anthropic_opening_separator_is_not_a_user_message() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "(continued)"},
            {"role": "assistant", "content": [{"type": "text", "text": "Hi! How can I help?"}]},
            {"role": "user", "content": "Hello."},
        ]
    }
    h = parse_request("anthropic", body)
    assert [(m.role, m.text) for m in h.messages] == [
        ("assistant", "Hi! How can I help?"),
        ("user", "Hello."),
    ]


# --------------------------------------------------------------------------------------------------
# Gemini


def test_gemini_signatures_positions_and_snake_case() -> None:
    body = {
        "system_instruction": {"parts": [{"text": "Sys."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "thinking...", "thought": True},
                    {"function_call": {"name": "w", "args": {"c": "Paris"}}, "thought_signature": "REAL1"},
                    {"functionCall": {"name": "w", "args": {"c": "Rome"}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"function_response": {"name": "w", "response": {"output": "18"}}},
                    {"functionResponse": {"name": "w", "response": {"error": "no data"}}},
                ],
            },
            {"role": "model", "parts": [{"text": "Paris 18."}]},
            {"role": "user", "parts": [{"text": "again"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {"name": "w", "args": {}},
                        "thoughtSignature": "skip_thought_signature_validator",
                    }
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "w", "response": {"t": 1}}}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "w", "parametersJsonSchema": {"type": "object"}}]}],
    }
    h = parse_request("gemini", body)
    assert [m.role for m in h.messages] == ["system", "user", "assistant", "user", "assistant"]
    a, b = h.messages[2].tool_uses
    assert (a.input, a.answer, a.is_error) == ({"c": "Paris"}, "18", False)
    # the signature per call; the content's thought part leads its step, kept whole
    assert a.provider_data == {"gemini": {"thoughtSignature": "REAL1"}}
    thought = {"text": "thinking...", "thought": True}
    assert h.messages[2].steps[0].said == (Reasoning("thinking...", {"gemini": thought}),)
    assert (b.answer, b.is_error, b.provider_data) == ("no data", True, None)
    assert h.messages[2].provider_data is None
    last = h.messages[4]
    # the documented dummy on a first call is the replay's stand-in, not Gemini's signature
    assert last.tool_uses[0].provider_data is None
    assert last.tool_uses[0].answer == '{"t":1}'
    assert last.status == "in_progress"
    assert h.tools is not None and h.tools[0].parameters == {"type": "object"}


# --------------------------------------------------------------------------------------------------
# Ollama


def test_ollama_position_pairing_and_thinking() -> None:
    body = {
        "model": "qwen3",
        "messages": [
            {"role": "user", "content": "x", "images": ["aGk="]},
            {
                "role": "assistant",
                "content": "",
                "thinking": "hmm",
                "tool_calls": [
                    {"function": {"name": "f", "arguments": {"a": 1}}},
                    {"function": {"name": "g", "arguments": {"b": 2}}},
                ],
            },
            {"role": "tool", "tool_name": "f", "content": "F"},
            {"role": "tool", "tool_name": "g", "content": "G"},
            {"role": "assistant", "content": "done"},
        ],
        "stream": False,
    }
    h = parse_request("ollama", body)
    assert _calls(h) == [("f", {"a": 1}, "F"), ("g", {"b": 2}, "G")]
    assert h.messages[1].steps[0].said == (Reasoning("hmm", {"ollama": {"thinking": "hmm"}}),)
    assert h.messages[0].parts == (
        Part("image", data="aGk="),
        Part("text", text="x"),
    )  # kept (issue 12 item 5)


#: A value that is no body of the wire: a string, but a number on Responses (whose input may be a string).
NOT_A_BODY: dict[str, Any] = {"openai-responses": 42}


def test_every_wire_rejects_a_body_that_is_not_its_shape() -> None:
    for wire in ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama"):
        with pytest.raises(WireError, match=wire):
            parse_request(wire, NOT_A_BODY.get(wire, "just a string"))


# --------------------------------------------------------------------------------------------------
# anything in: a history or a WireError, never a crash

_KEYS = st.sampled_from(
    ["role", "content", "tool_calls", "function", "name", "arguments", "id", "tool_call_id", "type", "text",
     "input", "tool_use_id", "parts", "functionCall", "function_response", "args", "response", "call_id",
     "output", "thoughtSignature", "messages", "contents", "system", "instructions", "tools", "is_error"]
)  # fmt: skip
_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from(
        ["user", "assistant", "tool", "model", "system", "function_call", "tool_use", "text", "{}"]
    ),
    st.text(max_size=8),
)
_JSON = st.recursive(
    _LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=25,
)


WIRE_VESSEL = {
    "openai-chat": "kimi",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
}


def _read(wire: str, body: Any) -> History | None:
    """``body`` read on ``wire``: a history of known roles and text answers, or None for a wire error
    that names the wire; anything else fails the test."""
    try:
        h = parse_request(wire, body)
    except WireError as exc:
        assert str(exc).startswith(f"{wire} request: ")
        return None
    assert isinstance(h, History)
    for m in h.messages:
        assert m.role in ("system", "user", "assistant")
        assert all(c.answer is None or isinstance(c.answer, str) for c in m.tool_uses)
    return h


@given(data=st.data())
def test_any_body_gives_a_history_or_a_wire_error(data: st.DataObject) -> None:
    """Each example reads two bodies: one rendered from a generated history, which always reaches the
    checks (and on a non-empty history whenever the user said something), and the same with one edit or
    any JSON value at all (which alone almost never parses to a history). Asserted per example, so no
    share of checked examples can fall short on an unlucky draw."""
    wire = data.draw(st.sampled_from(sorted(WIRE_VESSEL)), label="wire")
    history = data.draw(histories(), label="history")
    body = json.loads(json.dumps(render(history, WIRE_VESSEL[wire])))
    read = _read(wire, body)
    assert read is not None, "a body toolreplay rendered is read back"
    if any(m.role == "user" and m.text.strip() for m in history.messages):
        assert read.messages, "the user's words are read back"
    _read(wire, data.draw(mutated_json(body, max_edits=1) | _JSON, label="body"))

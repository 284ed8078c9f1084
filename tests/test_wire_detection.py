"""Which wire a request body speaks: ``import --from auto`` and ``audit`` ask the same sniffers (design 27).

The bodies here are the shapes real traffic has (tests/corpus/ holds the recordings): Anthropic bodies whose
only marks are their ``input_schema`` tools or their ``thinking`` parameter, ``role: "system"`` entries
inside Anthropic ``messages``, Chat bodies of content parts with no tool messages, Chat bodies that say
``"stream": false``, Ollama bodies with tools and no calls yet, Mistral's thinking parts. A grid of mark
combinations checks that the importer and the audit never disagree.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from toolreplay import render
from toolreplay._audit.body import detect_wire, load_request
from toolreplay._audit.report import audit_request
from toolreplay._errors import ImportFormatError, WireError
from toolreplay._importers import read_file
from toolreplay.wires import parse_request

WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
FUNCTION_TOOL = {"type": "function", "function": {"name": "weather", "parameters": WEATHER_SCHEMA}}
ANTHROPIC_TOOL = {"name": "weather", "description": "Weather now", "input_schema": WEATHER_SCHEMA}


def _imported(tmp_path: Path, body: Any) -> Any:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return read_file(path)


def _both(tmp_path: Path, body: dict[str, Any]) -> tuple[str, str]:
    return _imported(tmp_path, body).format, detect_wire(body)


def test_an_anthropic_body_marked_only_by_its_input_schema_tools_keeps_its_schemas(tmp_path: Path) -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "tools": [ANTHROPIC_TOOL],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    batch = _imported(tmp_path, body)
    assert (batch.format, detect_wire(body)) == ("anthropic", "anthropic")
    (tool,) = batch.conversations[0].tools
    assert (tool.name, tool.description, dict(tool.parameters)) == ("weather", "Weather now", WEATHER_SCHEMA)
    assert batch.warnings == ()


@pytest.mark.parametrize(
    "thinking", [{"type": "enabled", "budget_tokens": 2048}, {"type": "adaptive"}], ids=["budget", "adaptive"]
)
def test_an_anthropic_body_with_a_thinking_parameter(tmp_path: Path, thinking: dict[str, Any]) -> None:
    body = {
        "model": "claude-opus-4-6",
        "max_tokens": 4096,
        "thinking": thinking,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Think, then answer."}]}],
    }
    assert _both(tmp_path, body) == ("anthropic", "anthropic")


def test_a_thinking_parameter_beside_chat_marks_stays_chat(tmp_path: Path) -> None:
    # Kimi and GLM take {"thinking": {"type": "enabled"}} on Chat bodies too
    body = {
        "model": "kimi-k2.5",
        "thinking": {"type": "enabled"},
        "tools": [FUNCTION_TOOL],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    assert _both(tmp_path, body) == ("openai-chat", "openai-chat")


ANTHROPIC_WITH_SYSTEM_ENTRY: dict[str, Any] = {
    "model": "claude-opus-4-8",
    "max_tokens": 1024,
    "tools": [ANTHROPIC_TOOL],
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "18 C"}]},
        {"role": "system", "content": [{"type": "text", "text": "Answer in one line."}]},
    ],
}


def test_role_system_inside_anthropic_messages_is_read_by_import_and_audit(tmp_path: Path) -> None:
    batch = _imported(tmp_path, ANTHROPIC_WITH_SYSTEM_ENTRY)
    assert batch.format == "anthropic"
    messages = batch.conversations[0].messages
    # kept where it stood (issue 22: it was stored as a user message), not merged into the system prompt
    assert [(m.role, m.text) for m in messages][-1] == ("system", "Answer in one line.")
    assert messages[-1].meta is None
    assert [(c.name, c.answer) for m in messages for c in m.tool_uses] == [("weather", "18 C")]
    assert not any("system message" in w for w in batch.warnings)  # nothing was changed on the way in
    # rendered on Anthropic (no mid-conversation system messages there) it travels as a user message,
    # and the render says so
    said: list[str] = []
    body = render(batch.conversations[0], "anthropic", warnings=said)
    last = body["messages"][-1]
    assert last["role"] == "user" and "Answer in one line." in json.dumps(last)
    assert any("system message in the middle" in w for w in said)
    report = audit_request(load_request(ANTHROPIC_WITH_SYSTEM_ENTRY))
    assert report.wire == "anthropic"
    assert [(f.name, f.answer) for f in report.found] == [("weather", "18 C")]


def test_a_leading_system_entry_in_anthropic_messages_is_the_system_prompt(tmp_path: Path) -> None:
    opening = [{"role": "system", "content": "Be brief."}, *ANTHROPIC_WITH_SYSTEM_ENTRY["messages"][:3]]
    body = {**ANTHROPIC_WITH_SYSTEM_ENTRY, "messages": opening}
    first = _imported(tmp_path, body).conversations[0].messages[0]
    assert (first.role, first.text) == ("system", "Be brief.")


def test_a_chat_body_of_content_parts_without_tool_messages(tmp_path: Path) -> None:
    body = {
        "model": "gpt-4o-mini",
        "tool_choice": "auto",
        "tools": [FUNCTION_TOOL],
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        ],
    }
    assert _both(tmp_path, body) == ("openai-chat", "openai-chat")
    # the same parts with no model, no tools: nothing but an Anthropic-looking text block
    bare = {"max_tokens": 100, "messages": body["messages"][1:]}
    assert _both(tmp_path, bare) == ("anthropic", "anthropic")


def test_an_ollama_body_with_tools_and_no_calls_yet(tmp_path: Path) -> None:
    body = {
        "model": "llama3.2",
        "stream": False,
        "tools": [FUNCTION_TOOL],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    assert _both(tmp_path, body) == ("ollama", "ollama")


@pytest.mark.parametrize(
    "extra",
    [
        {"model": "gpt-4o-mini"},
        {"model": "o3-mini"},
        {"model": "m", "temperature": 0},
        {"model": "m", "seed": 1},
    ],
    ids=["gpt", "o-series", "temperature", "seed"],
)
def test_a_chat_body_that_says_stream_false(tmp_path: Path, extra: dict[str, Any]) -> None:
    body = {**extra, "stream": False, "tools": [FUNCTION_TOOL],
            "messages": [{"role": "user", "content": "Weather in Paris?"}]}  # fmt: skip
    assert _both(tmp_path, body) == ("openai-chat", "openai-chat")


def test_string_arguments_are_chat_even_with_stream_false(tmp_path: Path) -> None:
    body = {
        "model": "m",
        "stream": False,
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        ],
    }
    assert _both(tmp_path, body) == ("openai-chat", "openai-chat")


def test_gpt_oss_on_ollama_is_not_taken_for_openai(tmp_path: Path) -> None:
    body = {"model": "gpt-oss:20b", "stream": False, "messages": [{"role": "user", "content": "hi"}]}
    assert _both(tmp_path, body) == ("ollama", "ollama")


MISTRAL_THINKING = {
    "type": "thinking",
    "thinking": [{"type": "text", "text": "17 x 19 = 340 - 17 = 323."}],
    "closed": True,
}


def test_a_mistral_thinking_part_is_chat_and_kept_as_reasoning(tmp_path: Path) -> None:
    body = {
        "model": "magistral-medium-latest",
        "messages": [
            {"role": "user", "content": "17 x 19?"},
            {"role": "assistant", "content": [MISTRAL_THINKING, {"type": "text", "text": "323"}]},
            {"role": "user", "content": "Plus one?"},
        ],
    }
    batch = _imported(tmp_path, body)
    assert (batch.format, detect_wire(body)) == ("openai-chat", "openai-chat")
    reply = batch.conversations[0].messages[1]
    assert reply.text == "323"
    # the thinking part leads the reply's closing step, kept whole for its issuer (design 16-17)
    (closing,) = reply.steps
    assert [p.data for p in closing.said] == [{"openai-chat": {"content_part": MISTRAL_THINKING}}]
    assert batch.warnings == ()


def test_reasoning_details_are_kept_with_the_step_they_came_with(tmp_path: Path) -> None:
    details = [{"type": "reasoning.encrypted", "data": "ZW5j", "id": "rs_1", "format": "openai-responses-v1"}]
    body = {
        "model": "openai/gpt-5",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_details": details,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        ],
    }
    batch = _imported(tmp_path, body)
    assert (batch.format, detect_wire(body)) == ("openai-chat", "openai-chat")
    reply = batch.conversations[0].messages[1]
    (step,) = reply.steps
    assert step.calls == 1 and [p.data for p in step.said] == [
        {"openai-chat": {"reasoning_details": details}}
    ]


# ------------------------------------------------------------------------- import and audit always agree

_TOP: dict[str, dict[str, Any]] = {
    "none": {},
    "system": {"system": "Be brief."},
    "thinking": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    "thinking-type": {"thinking": {"type": "enabled"}},
    "stream-false": {"stream": False},
    "temperature": {"temperature": 0.2, "stream": False},
    "options": {"options": {"temperature": 0}},
    "chat-field": {"max_completion_tokens": 100},
    "gpt": {"model": "gpt-4.1"},
    "llama": {"model": "llama3.2", "stream": False},
}
_TOOLS: dict[str, dict[str, Any]] = {
    "none": {},
    "input_schema": {"tools": [ANTHROPIC_TOOL]},
    "function": {"tools": [FUNCTION_TOOL]},
}
_ASK = {"role": "user", "content": "Weather in Paris?"}
_MESSAGES: dict[str, list[Any]] = {
    "strings": [_ASK],
    "text-blocks": [{"role": "user", "content": [{"type": "text", "text": "Weather?"}]}],
    "image-url": [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}
    ],
    "tool-use": [
        _ASK,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "18"}]},
    ],
    "string-arguments": [
        _ASK,
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "18"},
    ],
    "object-arguments": [
        _ASK,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "weather", "arguments": {}}}],
        },
        {"role": "tool", "tool_name": "weather", "content": "18"},
    ],
    "mistral-thinking": [_ASK, {"role": "assistant", "content": [MISTRAL_THINKING]}, _ASK],
    "system-entry": [{"role": "system", "content": "Be brief."}, _ASK],
}


_GRID = list(itertools.product(_TOP, _TOOLS, _MESSAGES))


@pytest.mark.parametrize(("top", "tools", "messages"), _GRID, ids=["-".join(g) for g in _GRID])
def test_import_and_audit_read_the_same_wire(tmp_path: Path, top: str, tools: str, messages: str) -> None:
    body = {"model": "m", **_TOP[top], **_TOOLS[tools], "messages": _MESSAGES[messages]}
    audited = detect_wire(body)
    try:
        imported = _imported(tmp_path, body).format
    except ImportFormatError:
        # a body mixing two wires' marks: the importer refuses it only when the wire the audit reads
        # it as cannot read it either
        with pytest.raises(WireError):
            parse_request(audited, body)
        return
    assert imported == audited

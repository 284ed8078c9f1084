"""Each wire renders replayed calls in its own call shape: dict in, dict out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from toolreplay._api import render, render_options
from toolreplay._errors import ConfigError
from toolreplay._history import ToolSpec, history_from_dict
from toolreplay._replay import prepare_turn_messages
from toolreplay._vessels import get_vessel
from toolreplay.wires import render_wire
from toolreplay.wires.claude_prompt.render import REPLAY_HEAD, transcript_lines
from toolreplay.wires.common import SEPARATOR, RenderOptions, wire_tool_name
from wire_helpers import VESSELS, message_list

WEATHER = ToolSpec(
    "get_weather", "Get weather", {"type": "object", "properties": {"city": {"type": "string"}}}
)


def paris(**call_extra: Any) -> dict[str, Any]:
    call = {"tool_name": "get_weather", "tool_input": {"city": "Paris"}, **call_extra}
    return {
        "id": "w",
        "messages": [
            {"id": "m1", "role": "user", "text": "Weather in Paris?"},
            {
                "id": "m2",
                "role": "assistant",
                "text": "It is 18 C in Paris.",
                "tool_uses": [call, {"tool_name": "result", "tool_input": '{"temp_c":18}'}],
            },
        ],
    }


#: The issuer of the gemini vessel's own replies (design 17): its signatures go back to it only.
GEMINI_ISSUER = {"wire": "gemini", "host": "generativelanguage.googleapis.com", "model": "gemini-2.5-flash"}


def issued_by_gemini(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with each reply recorded as one step the gemini vessel made."""
    for m in data["messages"]:
        if m.get("tool_uses"):
            n = sum(1 for u in m["tool_uses"] if u["tool_name"] != "result")
            m["steps"] = [{"calls": n, "issuer": GEMINI_ISSUER}]
    return data


def body_for(vessel: str, data: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return render(history_from_dict(data or paris()), vessel, tools=kw.pop("tools", [WEATHER]), **kw)


# The providers' documented examples, rendered exactly.


def test_chat_matches_wires_md() -> None:
    assert body_for("openai")["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "replay_m2_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "replay_m2_0", "content": '{"temp_c":18}'},
        {"role": "assistant", "content": "It is 18 C in Paris."},
    ]


def test_responses_matches_wires_md() -> None:
    body = body_for("openai-responses", model="gpt-5")
    assert body["store"] is False
    assert body["input"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "type": "function_call",
            "call_id": "replay_m2_0",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
        },
        {"type": "function_call_output", "call_id": "replay_m2_0", "output": '{"temp_c":18}'},
        {"role": "assistant", "content": "It is 18 C in Paris."},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Get weather",
            "parameters": dict(WEATHER.parameters),
            "strict": False,
        }
    ]
    assert "store" not in body_for("grok")


def test_anthropic_matches_wires_md() -> None:
    # the shape WIRES.md shows, without the prompt-cache markers (design 36:
    # tests/wires/anthropic/test_anthropic_cache.py)
    body = body_for("anthropic", max_tokens=1024, cache_breakpoints=0)
    assert body["max_tokens"] == 1024
    assert body["tools"] == [
        {"name": "get_weather", "description": "Get weather", "input_schema": dict(WEATHER.parameters)}
    ]
    assert body["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "replay_m2_0", "name": "get_weather", "input": {"city": "Paris"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "replay_m2_0", "content": '{"temp_c":18}'}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "It is 18 C in Paris."}]},
    ]
    assert body_for("anthropic")["max_tokens"] == 4096


def test_gemini_matches_wires_md() -> None:
    body = body_for("gemini")
    assert "model" not in body
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                    "thoughtSignature": "skip_thought_signature_validator",
                }
            ],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": '{"temp_c":18}'}}}],
        },
        {"role": "model", "parts": [{"text": "It is 18 C in Paris."}]},
    ]
    decl = body["tools"][0]["functionDeclarations"][0]
    assert decl == {
        "name": "get_weather",
        "description": "Get weather",
        "parametersJsonSchema": dict(WEATHER.parameters),
    }


def test_ollama_matches_wires_md() -> None:
    body = body_for("ollama")
    assert body["stream"] is False
    assert body["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "replay_m2_0",
                    "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Paris"}},
                }
            ],
        },
        {
            "role": "tool",
            "tool_name": "get_weather",
            "tool_call_id": "replay_m2_0",
            "content": '{"temp_c":18}',
        },
        {"role": "assistant", "content": "It is 18 C in Paris."},
    ]


def test_claude_prompt_carries_calls_as_json_lines() -> None:
    data = paris()
    data["messages"].append({"id": "m3", "role": "user", "text": "And Rome?"})
    body = body_for("claude", data)
    assert set(body) == {"model", "prompt"}
    assert body["prompt"].startswith(REPLAY_HEAD + "\n\n<transcript>\n")
    assert body["prompt"].endswith("\n</transcript>\n\nAnd Rome?")
    lines = [json.loads(x) for x in transcript_lines(body)]
    assert lines == [
        {"role": "user", "text": "Weather in Paris?"},
        {
            "role": "assistant",
            "calls": [{"tool": "get_weather", "input": {"city": "Paris"}, "answer": '{"temp_c":18}'}],
            "text": "It is 18 C in Paris.",
        },
    ]
    # no earlier turns: the prompt is just the message
    first = body_for("claude", {"id": "x", "messages": [{"id": "m1", "role": "user", "text": "Hi"}]})
    assert first["prompt"] == "Hi"


# Per-wire details


def test_gemini_keeps_a_real_signature_and_reads_snake_case() -> None:
    for key in ("thoughtSignature", "thought_signature"):
        body = body_for("gemini", issued_by_gemini(paris(provider_data={"gemini": {key: "c2lnbmVk"}})))
        assert body["contents"][1]["parts"][0]["thoughtSignature"] == "c2lnbmVk"
        # from any other issuer (or none recorded) the dummy goes instead, and the warning says why
        warnings: list[str] = []
        body = render(history_from_dict(paris(provider_data={"gemini": {key: "c2lnbmVk"}})), "gemini",
                      warnings=warnings)  # fmt: skip
        assert body["contents"][1]["parts"][0]["thoughtSignature"] == "skip_thought_signature_validator"
        assert warnings == [
            "message m2: step 1: its calls' provider data (signatures) not replayed: "
            "its issuer is not recorded"
        ]


def test_gemini_signs_the_first_call_only_and_marks_errors() -> None:
    uses = [
        {"tool_name": "a", "tool_input": {}},
        {"tool_name": "result", "tool_input": "boom", "is_error": True},
        {"tool_name": "b", "tool_input": {"k": 1}, "provider_data": {"gemini": {"thoughtSignature": "c2ln"}}},
        {"tool_name": "result", "tool_input": "ok"},
        {"tool_name": "c", "tool_input": {}},
        {"tool_name": "result", "tool_input": "ok"},
    ]
    data = {
        "id": "g",
        "messages": [
            {"id": "u", "role": "user", "text": "go"},
            {"id": "r", "role": "assistant", "text": "done", "tool_uses": uses},
        ],
    }
    contents = body_for("gemini", issued_by_gemini(data), tools=[])["contents"]
    calls, answers = contents[1]["parts"], contents[2]["parts"]
    assert calls[0]["thoughtSignature"] == "skip_thought_signature_validator"
    assert calls[1]["thoughtSignature"] == "c2ln"  # Gemini's own, kept
    assert "thoughtSignature" not in calls[2]
    assert [p["functionResponse"]["response"] for p in answers] == [
        {"error": "boom"},
        {"output": "ok"},
        {"output": "ok"},
    ]


def test_gemini_separator_before_calls_that_follow_a_model_turn() -> None:
    data = paris()
    data["messages"].insert(1, {"id": "m1b", "role": "assistant", "text": "Let me look."})
    contents = body_for("gemini", data)["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user", "model"]
    assert contents[2] == {"role": "user", "parts": [{"text": SEPARATOR}]}


def test_anthropic_opens_with_a_user_message_and_marks_errors() -> None:
    data = {
        "id": "a",
        "messages": [
            {"id": "g", "role": "assistant", "text": "Hi! How can I help?"},
            {"id": "u", "role": "user", "text": "Check."},
            {
                "id": "r",
                "role": "assistant",
                "text": "Failed.",
                "tool_uses": [
                    {"tool_name": "check", "tool_input": {}},
                    {"tool_name": "result", "tool_input": "x", "is_error": True},
                ],
            },
        ],
    }
    body = body_for("anthropic", data, tools=[], cache_breakpoints=0)
    assert body["messages"][0] == {"role": "user", "content": SEPARATOR}
    assert body["messages"][4]["content"][0]["is_error"] is True
    assert body["tools"][0]["name"] == "check"  # inferred: tool_use needs tools defined


def test_anthropic_leaves_blank_text_out() -> None:
    data = paris()
    data["messages"].append({"id": "m3", "role": "user", "text": "  "})
    assert len(body_for("anthropic", data)["messages"]) == 4


def test_kimi_ids_run_over_the_request_and_name_tool_messages() -> None:
    data = paris()
    data["messages"] += [
        {"id": "m3", "role": "user", "text": "And Rome?"},
        {
            "id": "m4",
            "role": "assistant",
            "text": "20 C.",
            "tool_uses": [
                {"tool_name": "get_weather", "tool_input": {"city": "Rome"}},
                {"tool_name": "result", "tool_input": "20"},
            ],
        },
    ]
    msgs = body_for("kimi", data)["messages"]
    calls = [m for m in msgs if m.get("tool_calls")]
    assert [m["tool_calls"][0]["id"] for m in calls] == ["functions.get_weather:0", "functions.get_weather:1"]
    tools = [m for m in msgs if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["name"]) for m in tools] == [
        ("functions.get_weather:0", "get_weather"),
        ("functions.get_weather:1", "get_weather"),
    ]
    assert all("name" not in m for m in body_for("openai", data)["messages"] if m["role"] == "tool")


def long_ids() -> dict[str, Any]:
    data = paris()
    data["messages"][1]["id"] = "a-very-long-message-identifier-" + "x" * 80
    return data


def test_ids_fit_each_wire_and_stay_paired() -> None:
    chat = body_for("openai", long_ids())["messages"]
    assert len(chat[1]["tool_calls"][0]["id"]) <= 40
    assert chat[1]["tool_calls"][0]["id"] == chat[2]["tool_call_id"]
    resp = body_for("openai-responses", long_ids())["input"]
    assert len(resp[1]["call_id"]) <= 64 and resp[1]["call_id"] == resp[2]["call_id"]


def test_ids_fit_anthropic_pattern_even_from_kimi_policy() -> None:
    opts = RenderOptions(model="m", id_policy="kimi")
    turns = prepare_turn_messages(history_from_dict(paris()))
    body = render_wire("anthropic", turns, opts)
    tid = body["messages"][1]["content"][0]["id"]
    assert tid.replace("_", "").replace("-", "").isalnum()
    assert body["messages"][2]["content"][0]["tool_use_id"] == tid


def test_unexpressible_tool_names_are_mapped_everywhere_with_a_warning() -> None:
    data = paris()
    data["messages"][1]["tool_uses"][0]["tool_name"] = "weather.get"
    warnings: list[str] = []
    mapped = wire_tool_name("weather.get")
    assert mapped.startswith("weather_get_") and len(mapped) <= 64
    for vessel in ("openai", "anthropic", "gemini", "ollama", "codex"):
        text = json.dumps(body_for(vessel, data, tools=[], warnings=warnings))
        assert "weather.get" not in text and text.count(mapped) >= 2
    assert any("weather.get" in w for w in warnings)
    assert wire_tool_name("9lives")[0].isalpha() and wire_tool_name("x" * 70) != "x" * 64
    assert wire_tool_name("ok_name") == "ok_name"


def test_system_prompt_per_wire() -> None:
    sys = "Be brief."
    assert body_for("openai", system=sys)["messages"][0] == {"role": "system", "content": sys}
    assert body_for("codex", system=sys)["instructions"] == sys
    assert body_for("anthropic", system=sys, cache_breakpoints=0)["system"] == sys
    marked = [{"type": "text", "text": sys, "cache_control": {"type": "ephemeral"}}]
    assert body_for("anthropic", system=sys)["system"] == marked  # the stable head's marker (design 36)
    assert body_for("gemini", system=sys)["systemInstruction"] == {"parts": [{"text": sys}]}
    assert body_for("ollama", system=sys)["messages"][0] == {"role": "system", "content": sys}
    assert body_for("claude", system=sys)["system"] == sys


@pytest.mark.parametrize("vessel", VESSELS)
@pytest.mark.parametrize("mode", ["plain", "prose"])
def test_plain_and_prose_carry_no_calls_but_declare_the_same_tools(
    vessel: str, mode: str, demo_path: Path
) -> None:
    native = render(demo_path, vessel)
    body = render(demo_path, vessel, mode=mode)
    text = json.dumps(message_list(get_vessel(vessel).wire, body))
    for marker in ("tool_calls", "function_call", "tool_use", "functionCall", '"calls"'):
        assert marker not in text
    for key in ("tools",):
        assert body.get(key) == native.get(key)
    if mode == "prose":
        assert "[Tool calls made in the previous reply]" in json.dumps(body)


def test_options_reach_the_body() -> None:
    assert body_for("openai", temperature=0.5, max_tokens=10, stream=True) | {} == {
        **body_for("openai"),
        "temperature": 0.5,
        "max_completion_tokens": 10,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert body_for("codex")["stream"] is True  # Codex answers only streams
    assert body_for("gemini", temperature=0.1, max_tokens=5)["generationConfig"] == {
        "temperature": 0.1,
        "maxOutputTokens": 5,
    }
    assert body_for("ollama", max_tokens=5)["options"] == {"num_predict": 5}
    opts = render_options(get_vessel("anthropic"), model="claude-x")
    assert opts.model == "claude-x" and opts.max_tokens is None


def test_unknown_vessel_lists_the_known_ones(demo_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"known vessels: .*gemini"):
        toolreplay.render(demo_path, "nope")


def test_upto_cuts_the_history(demo_path: Path) -> None:
    body = toolreplay.render(demo_path, "openai", upto="m04")
    assert body["messages"][-1] == {"role": "user", "content": "Close todo #12, the build is green."}

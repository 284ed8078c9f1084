"""The validators: rendered bodies pass; deliberately broken bodies are rejected by each check."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from toolreplay._audit.validate import check_body, rule_problems, spec_report, validate_body
from toolreplay._history import ToolSpec, history_from_dict
from wire_helpers import VESSELS

WEATHER = ToolSpec(
    "get_weather", "Get weather", {"type": "object", "properties": {"city": {"type": "string"}}}
)
PARIS = {
    "id": "w",
    "messages": [
        {"id": "m1", "role": "user", "text": "Weather in Paris?"},
        {
            "id": "m2",
            "role": "assistant",
            "text": "It is 18 C in Paris.",
            "tool_uses": [
                {"tool_name": "get_weather", "tool_input": {"city": "Paris"}},
                {"tool_name": "result", "tool_input": '{"temp_c":18}'},
            ],
        },
        {"id": "m3", "role": "user", "text": "And tomorrow?"},
    ],
}


def body(vessel: str) -> dict[str, Any]:
    return copy.deepcopy(toolreplay.render(history_from_dict(PARIS), vessel, tools=[WEATHER]))


@pytest.fixture
def specs(shared_dir: Path) -> Path:
    return shared_dir / "specs"


@pytest.mark.parametrize("vessel", VESSELS)
def test_demo_bodies_pass_rules_and_specs(vessel: str, demo_path: Path, specs: Path) -> None:
    report = check_body(vessel, toolreplay.render(demo_path, vessel), specs_dir=specs)
    assert report.problems == ()
    assert report.unchecked == ()


@pytest.mark.parametrize("vessel", VESSELS)
@pytest.mark.parametrize("mode", ["plain", "prose"])
def test_plain_and_prose_bodies_pass(vessel: str, mode: str, demo_path: Path, specs: Path) -> None:
    assert validate_body(vessel, toolreplay.render(demo_path, vessel, mode=mode), specs_dir=specs) == []


def test_the_rules_need_no_specs(demo_path: Path) -> None:
    for vessel in VESSELS:
        assert rule_problems(vessel, toolreplay.render(demo_path, vessel)) == []


def test_without_the_full_specs_the_shipped_schema_checks(tmp_path: Path) -> None:
    report = spec_report("openai", body("openai"), specs_dir=tmp_path)
    assert report.unchecked == () and report.problems == ()
    broken = {**body("openai"), "messages": [{"role": "robot"}]}
    assert any("(shipped schema)" in p for p in spec_report("openai", broken, specs_dir=tmp_path).problems)
    assert report.problems == ()


# Rule checks: one deliberately broken body per rule. Each edit breaks a valid body.

Edit = Callable[[dict[str, Any]], Any]


def _drop_answer(b: dict[str, Any]) -> None:
    del b["messages"][2]


def _set(path: tuple[Any, ...], value: Any) -> Edit:
    def edit(b: dict[str, Any]) -> None:
        obj: Any = b
        for p in path[:-1]:
            obj = obj[p]
        obj[path[-1]] = value

    return edit


def _delete(path: tuple[Any, ...]) -> Edit:
    def edit(b: dict[str, Any]) -> None:
        obj: Any = b
        for p in path[:-1]:
            obj = obj[p]
        del obj[path[-1]]

    return edit


def _both_ids(path_call: tuple[Any, ...], path_answer: tuple[Any, ...], value: str) -> Edit:
    def edit(b: dict[str, Any]) -> None:
        _set(path_call, value)(b)
        _set(path_answer, value)(b)

    return edit


def _swap(key: str, i: int, j: int) -> Edit:
    def edit(b: dict[str, Any]) -> None:
        b[key][i], b[key][j] = b[key][j], b[key][i]

    return edit


RULE_CASES: list[tuple[str, Edit, str]] = [
    # OpenAI Chat
    ("openai", _drop_answer, "not answered right after"),
    (
        "openai",
        _both_ids(("messages", 1, "tool_calls", 0, "id"), ("messages", 2, "tool_call_id"), "c" * 41),
        "at most 40",
    ),
    ("openai", _set(("messages", 1, "content"), ""), "send null"),
    ("openai", _set(("messages", 2, "name"), "get_weather"), "name not allowed"),
    (
        "openai",
        _set(("messages", 1, "tool_calls", 0, "function", "arguments"), "[1]"),
        "JSON text of an object",
    ),
    ("openai", _swap("messages", 1, 2), "no assistant tool_calls right before"),
    ("openai", _set(("messages", 1, "tool_calls", 0, "function", "name"), "other"), "not declared"),
    (
        "kimi",
        _both_ids(
            ("messages", 1, "tool_calls", 0, "id"), ("messages", 2, "tool_call_id"), "functions.get_weather:3"
        ),
        "running form",
    ),
    ("kimi", _set(("messages", 2, "reasoning_content"), "x"), "not allowed"),
    # OpenAI Responses
    ("codex", _both_ids(("input", 1, "call_id"), ("input", 2, "call_id"), "c" * 65), "at most 64"),
    ("codex", _set(("input", 1, "id"), "fc_1"), "without its reasoning item"),
    ("codex", _swap("input", 1, 2), "output with no call"),
    ("codex", _delete(("store",)), "store: must be false"),
    ("codex", _delete(("tools", 0, "strict")), "strict"),
    ("codex", _set(("input", 1, "arguments"), "{bad"), "JSON text of an object"),
    # Anthropic
    (
        "anthropic",
        _both_ids(
            ("messages", 1, "content", 0, "id"),
            ("messages", 2, "content", 0, "tool_use_id"),
            "functions.get_weather:0",
        ),
        "breaks Anthropic's id pattern",
    ),
    (
        "anthropic",
        _set(
            ("messages", 2, "content"),
            [
                {"type": "text", "text": "hi"},
                {"type": "tool_result", "tool_use_id": "replay_m2_0", "content": "x"},
            ],
        ),
        "opening the next message",
    ),
    ("anthropic", _delete(("tools",)), "no tools defined"),
    ("anthropic", _delete(("messages", 0)), "first message"),
    ("anthropic", _set(("messages", 3, "content", 0, "text"), " "), "blank"),
    ("anthropic", _set(("messages", 1, "content", 0, "input"), ["Paris"]), "input is not an object"),
    ("anthropic", _delete(("max_tokens",)), "max_tokens"),
    ("glm", _set(("messages", 2, "content", 0, "tool_use_id"), "other"), "opening the next message"),
    # Gemini
    ("gemini", _delete(("contents", 1, "parts", 0, "thoughtSignature")), "thoughtSignature"),
    ("gemini", _set(("contents", 2, "parts"), []), "functionResponse parts"),
    ("gemini", _set(("contents", 2, "parts", 0, "functionResponse", "response"), "18"), "not an object"),
    ("gemini", _set(("model",), "gemini-2.5-flash"), "in the URL"),
    ("gemini", _delete(("contents", 0)), "must follow a user"),
    ("gemini", _set(("contents", 1, "parts", 0, "functionCall", "name"), "get.weather!"), "does not match"),
    # Ollama
    (
        "ollama",
        _set(("messages", 1, "tool_calls", 0, "function", "arguments"), '{"city":"Paris"}'),
        "must be an object",
    ),
    ("ollama", _set(("messages", 2, "tool_name"), "other"), "but the call is to"),
    ("ollama", _delete(("stream",)), "stream"),
    ("ollama", _set(("messages", 2, "name"), "get_weather"), "not allowed"),
    ("ollama", _drop_answer, "not answered right after"),
    # claude-prompt
    (
        "claude",
        lambda b: b.__setitem__("prompt", b["prompt"].replace('"calls":[{"tool"', '"calls":[{"tol"')),
        "calls[0]",
    ),
    ("claude", _set(("tools",), []), "not allowed"),
]


@pytest.mark.parametrize(("vessel", "edit", "expected"), RULE_CASES)
def test_rules_reject_broken_bodies(vessel: str, edit: Edit, expected: str) -> None:
    b = body(vessel)
    assert rule_problems(vessel, b) == []
    edit(b)
    problems = rule_problems(vessel, b)
    assert any(expected in p for p in problems), problems


# Spec checks: each validator (OpenAPI, SDK TypedDicts, google.genai, the Go shape) rejects on its own.

SPEC_CASES: list[tuple[str, Edit, str]] = [
    # OpenAPI: arguments must be a string; the SDK also says so
    ("openai", _set(("messages", 1, "tool_calls", 0, "function", "arguments"), {"city": "Paris"}), "OpenAPI"),
    # SDK only (the OpenAPI schema allows extra keys here): an unknown key inside a lazily validated list
    (
        "openai",
        _set(("messages", 1, "tool_calls", 0, "function", "strict"), True),
        "ChatCompletionMessageParam",
    ),
    ("openai", _set(("messages", 2, "name"), "get_weather"), "ChatCompletionMessageParam"),
    ("openai", _set(("tools", 0, "function", "parameters"), "x"), "OpenAPI"),
    ("codex", _set(("input", 2, "call_id"), "c" * 65), "OpenAPI"),
    ("codex", _set(("input", 2, "extra"), 1), "ResponseInputItemParam"),
    ("codex", _set(("tools", 0, "strict"), "no"), "FunctionToolParam"),
    ("anthropic", _set(("messages", 1, "content", 0, "extra"), 1), "ContentBlockParam"),
    ("anthropic", _set(("messages", 2, "content", 0, "content"), [{"type": "text"}]), "ContentBlockParam"),
    ("anthropic", _set(("messages", 1, "content", 0, "input"), ["Paris"]), "ContentBlockParam"),
    ("anthropic", _set(("tools", 0, "input_schema"), "x"), "ToolParam"),
    ("anthropic", _set(("thinking_budget",), 1), "MessageCreateParams"),
    ("gemini", _set(("contents", 2, "parts", 0, "functionResponse", "response"), "18"), "Content"),
    ("gemini", _set(("contents", 1, "parts", 0, "bogus"), 1), "Content"),
    ("gemini", _set(("contents", 1, "parts", 0, "thoughtSignature"), "a"), "Content"),
    ("gemini", _set(("tools", 0, "functionDeclarations", 0, "extra"), 1), "GenerateContentConfig"),
    ("gemini", _set(("model",), "x"), "GenerateContentRequest"),
    ("ollama", _set(("messages", 2, "name"), "x"), "Go api type"),
    ("ollama", _set(("messages", 1, "tool_calls", 0, "function", "arguments"), "{}"), "is a map"),
    ("ollama", _delete(("model",)), "required"),
]


@pytest.mark.parametrize(("vessel", "edit", "expected"), SPEC_CASES)
def test_spec_checks_reject_broken_bodies(vessel: str, edit: Edit, expected: str, specs: Path) -> None:
    b = body(vessel)
    assert spec_report(vessel, b, specs_dir=specs).problems == ()
    edit(b)
    problems = spec_report(vessel, b, specs_dir=specs).problems
    assert any(expected in p for p in problems), problems


def test_kimi_name_is_allowed_on_kimi_only(specs: Path) -> None:
    kimi = body("kimi")
    assert kimi["messages"][2]["name"] == "get_weather"
    assert validate_body("kimi", kimi, specs_dir=specs) == []
    chat = body("openai")
    chat["messages"][2]["name"] = "get_weather"
    assert validate_body("openai", chat, specs_dir=specs) != []

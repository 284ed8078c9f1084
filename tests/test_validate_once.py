"""The validator names one fault once (design 30).

A rule the provider's server enforces is said by its refusal line (with the provider's text, which the
double answers); what the replay promises on top is said only where no refusal already said it. Each case
breaks a real recorded body (tests/corpus) in one place: exactly one new line comes out, and it is the
provider's refusal or the promise, never both.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolreplay._audit.validate import rule_problems
from toolreplay.wires.contract import first_refusal

CORPUS = Path(__file__).resolve().parent / "corpus"
ANTHROPIC = "anthropic/llm-anthropic/test_tools.1"
GEMINI = "gemini/llm-gemini/test_tools.1"
RESPONSES = "openai-responses/llm/test_responses_interleaved_reasoning_between_tool_calls.2"


def _request(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))["request"]
    return data


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(body: dict[str, Any]) -> None:
        target: Any = body
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _delete(path: tuple[Any, ...]) -> Callable[[dict[str, Any]], None]:
    def edit(body: dict[str, Any]) -> None:
        target: Any = body
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return edit


def _both_ids(value: str) -> Callable[[dict[str, Any]], None]:
    def edit(body: dict[str, Any]) -> None:
        body["messages"][1]["content"][1]["id"] = value
        body["messages"][2]["content"][0]["tool_use_id"] = value

    return edit


CASES: list[tuple[str, str, Callable[[dict[str, Any]], None], str, bool]] = [
    # (vessel, body, edit, what the one new line says, whether it is the provider's refusal)
    ("anthropic", ANTHROPIC, _delete(("messages", 2)), "are not answered", True),
    ("anthropic", ANTHROPIC, _set(("messages", 1, "content", 1, "input"), ["x"]), "input is not", True),
    ("anthropic", ANTHROPIC, _both_ids("toolu.1"), "breaks Anthropic's id pattern", True),
    ("anthropic", ANTHROPIC, _delete(("tools",)), "no tools defined", True),
    ("anthropic", ANTHROPIC, _set(("messages", 0, "content"), ""), "empty content", True),
    ("anthropic", ANTHROPIC, _set(("messages", 0, "content"), "  "), "only blank words", True),
    ("anthropic", ANTHROPIC, _set(("messages", 0, "content"), [{"type": "text", "text": ""}]), "empty", True),
    ("anthropic", ANTHROPIC, _delete(("max_tokens",)), "max_tokens", True),
    ("gemini", GEMINI, _set(("contents", 2, "parts", 0, "function_response", "response"), "x"), "not", True),
    ("gemini", GEMINI, _set(("contents", 2, "parts"), [{"text": "later"}]), "0 functionResponse", True),
    ("gemini", GEMINI, _set(("contents", 1, "parts", 0, "function_call", "args"), "x"), "args is not", True),
    ("gemini", GEMINI, _set(("contents", 0, "role"), "model"), "must follow a user", True),
    ("openai-responses", RESPONSES, _delete(("input", 3)), "has no function_call_output", True),
    ("openai-responses", RESPONSES, _delete(("input", 6)), "has no function_call_output", True),
]  # fmt: skip


@pytest.mark.parametrize(("vessel", "name", "edit", "says", "refused"), CASES)
def test_one_fault_gives_one_line(
    vessel: str, name: str, edit: Callable[[dict[str, Any]], None], says: str, refused: bool
) -> None:
    body = _request(name)
    before = rule_problems(vessel, body)
    broken = copy.deepcopy(body)
    edit(broken)
    after = rule_problems(vessel, broken)
    new = [p for p in after if p not in before]
    assert len(new) == 1, new
    assert says in new[0], new
    assert (first_refusal(new) is not None) is refused

"""One set of provider rules for the validator and the doubles (issue 11, design 30): a body that breaks
a structure rule Anthropic or Gemini documents is refused by the loopback double with the provider's own
text, and the validator (the wire's ``rules``, which ``validate`` and ``check --offline`` run) names the
same break as a ``Refused`` line carrying that text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from helpers_common import HTTP
from toolreplay._vessels import Vessel
from toolreplay.testing import ProviderDouble
from toolreplay.wires import get_wire
from toolreplay.wires.anthropic.rules import EMPTY_MESSAGE, MUST_DEFINE_TOOLS, NO_RESULT_AFTER
from toolreplay.wires.contract import Refused
from toolreplay.wires.gemini.rules import GEMINI_ORDER
from wire_helpers import error_message, wire_path

HI = {"role": "user", "content": "hi"}
USE = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
TOOLS = [{"name": "f", "input_schema": {"type": "object"}}]
G_USER = {"role": "user", "parts": [{"text": "go"}]}
G_CALL = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}

#: (wire, model, body, the provider's text).
CASES: dict[str, tuple[str, str, dict[str, Any], str]] = {
    "anthropic no tools": (
        "anthropic",
        "claude",
        {"model": "claude", "max_tokens": 8, "messages": [HI, {"role": "assistant", "content": [USE]}]},
        MUST_DEFINE_TOOLS,
    ),
    "anthropic empty message": (
        "anthropic",
        "claude",
        {"model": "claude", "max_tokens": 8, "messages": [HI, {"role": "assistant", "content": []}, HI]},
        EMPTY_MESSAGE.format(i=1),
    ),
    # two user messages merge into one, so the unanswered call is at merged index 1, not 2
    "anthropic merged index": (
        "anthropic",
        "claude",
        {
            "model": "claude",
            "max_tokens": 8,
            "tools": TOOLS,
            "messages": [HI, HI, {"role": "assistant", "content": [USE]}, HI],
        },
        NO_RESULT_AFTER.format(i=1, ids="toolu_1"),
    ),
    "gemini call first": (
        "gemini",
        "gemini-2.5-flash",
        {"contents": [G_CALL, G_USER]},
        GEMINI_ORDER,
    ),
    "gemini empty parts": (
        "gemini",
        "gemini-2.5-flash",
        {"contents": [G_USER, {"role": "model", "parts": []}]},
        "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.",
    ),
}


@pytest.fixture(scope="module")
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.mark.parametrize("case", sorted(CASES))
def test_double_and_validator_read_one_rule(double: ProviderDouble, case: str) -> None:
    wire, model, body, text = CASES[case]
    answer = HTTP.post(double.url + wire_path(wire, model), json=body, timeout=10)
    assert answer.status_code == 400
    assert error_message(wire, answer.json(), double=True) == text
    problems: list[str] = []
    get_wire(wire).rules(Vessel("v", wire, "", None, ""), body, problems)
    refused = [p for p in problems if isinstance(p, Refused)]
    assert refused and refused[0].provider == text, problems

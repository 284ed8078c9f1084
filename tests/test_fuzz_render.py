"""Fuzzed but valid histories render into bodies every vessel accepts (the validator's rule checks).

The histories go through the file format (``history_from_dict``), so they are histories a user could
store: any message ids, any tool names (wires map the ones they refuse), inputs that are any JSON value
or raw text, answers missing or empty or long, errors, provider data that is junk or a real signature,
replies in a row, in-progress and interrupted replies, blank texts, a system prompt or none. Each one
asks something (it has a user message with words), so a next turn exists. Every vessel, every replay mode.

Example count: the conftest profile (100, or 200 with CI set) per mode.
"""

from __future__ import annotations

import base64
import string
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers_fuzz import json_values
from toolreplay._api import render
from toolreplay._audit.validate import rule_problems
from toolreplay._history import History, history_from_dict
from toolreplay._vessels import BUILTIN

pytestmark = pytest.mark.slow  # fuzzing: see docs/design.md, design 26

VESSELS = sorted(BUILTIN)

_text = st.text(max_size=30) | st.sampled_from(["", " ", "\n", "Closed #12.", "ok\u2028ok"])
_name = st.one_of(
    st.sampled_from(["coop", "mcp__coop__coop", "result_of", "a.b", "weather-now", "Ünïcode", "x" * 80]),
    st.text(string.printable, min_size=1, max_size=20),
    st.text(min_size=1, max_size=12),
).filter(lambda n: n.strip() and n != "result")
_signature = st.one_of(
    st.none(),
    st.binary(min_size=1, max_size=16).map(
        lambda b: {"gemini": {"thoughtSignature": base64.b64encode(b).decode()}}
    ),
    st.dictionaries(st.text(max_size=8), json_values, max_size=2),
)


@st.composite
def _call(draw: st.DrawFn) -> dict[str, Any]:
    call: dict[str, Any] = {"name": draw(_name), "input": draw(json_values | st.text(max_size=40))}
    if draw(st.booleans()):
        call["id"] = draw(st.text(min_size=1, max_size=50))
    pdata = draw(_signature)
    if isinstance(pdata, dict):
        call["provider_data"] = pdata
    answer = draw(st.none() | _text | st.text(min_size=400, max_size=700))
    if answer is not None or draw(st.booleans()):
        call["answer"] = answer
    if draw(st.booleans()) and draw(st.booleans()):
        call["is_error"] = True
    return call


@st.composite
def valid_histories(draw: st.DrawFn) -> History:
    ids = draw(st.lists(st.text(min_size=1, max_size=40), min_size=2, max_size=10, unique=True))
    msgs: list[dict[str, Any]] = []
    if draw(st.booleans()):
        msgs.append({"id": ids.pop(), "role": "system", "text": draw(_text)})
    question = draw(st.integers(0, len(ids) - 1))
    for i, mid in enumerate(ids):
        role = "user" if i == question else draw(st.sampled_from(["user", "assistant", "assistant"]))
        m: dict[str, Any] = {"id": mid, "role": role, "text": draw(_text)}
        if i == question:
            m["text"] = draw(st.text(min_size=1, max_size=20).filter(str.strip))
        if role == "assistant":
            m["tool_uses"] = draw(st.lists(_call(), max_size=3))
            m["status"] = draw(st.sampled_from(["complete", "complete", "interrupted", "in_progress"]))
        msgs.append(m)
    return history_from_dict({"id": "fuzz", "messages": msgs})


@pytest.mark.parametrize("mode", ["native", "plain", "prose"])
@given(h=valid_histories())
def test_every_body_of_a_valid_history_passes_the_wire_rules(mode: str, h: History) -> None:
    for vessel in VESSELS:
        body = render(h, vessel, mode)  # type: ignore[arg-type]
        assert rule_problems(vessel, body) == [], (vessel, mode)


# --------------------------------------------------------------------------------------------------
# what the fuzzing found


@pytest.mark.parametrize("mode", ["native", "plain", "prose"])
def test_found_a_tool_name_ending_in_a_line_break(mode: str) -> None:
    """``$`` in the name checks also matched before a trailing newline: "coop\\n" went out unmapped (in
    the name and in Kimi's ids) and the validator let it pass. Now mapped, and refused by the rules."""
    h = history_from_dict(
        {
            "id": "c",
            "messages": [
                {"id": "u", "role": "user", "text": "go"},
                {"id": "a", "role": "assistant", "status": "interrupted", "tool_uses": [{"name": "coop\n"}]},
            ],
        }
    )
    for vessel in VESSELS:
        body = render(h, vessel, mode)  # type: ignore[arg-type]
        assert rule_problems(vessel, body) == [], vessel
        assert "coop\n" not in str(body) or vessel == "claude", vessel
    bad = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "coop\n", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
    }  # fmt: skip
    assert any("'coop\\n' does not match" in p for p in rule_problems("openai", bad))

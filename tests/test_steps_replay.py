"""Steps and reasoning end to end (design 16-19): a live multi-step turn, stored, replayed on every wire.

The turn loop runs against a scripted transport (call, answer, call, answer, text); every continuation
request must end with the tool results; the stored reply replays as two steps; its reasoning comes back
byte-identical, in the place the provider wants, only to the vessel that issued it, and every other vessel
carries none of it (the warnings name what was left out).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from helpers_shapes import call_runs, ends_with_results, first_call_at
from scripted import Scripted
from toolreplay import _jsonenc as jsonenc
from toolreplay._api import render
from toolreplay._history import History, Message, Reasoning, Step, Text, ToolCall
from toolreplay._loop import run_turn
from toolreplay._steps import Part
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import ToolRegistry
from toolreplay._tools.coop import coop_tool
from toolreplay._vessels import get_vessel
from toolreplay.wires import get_wire
from toolreplay.wires.reply import ParsedCall, Reply

#: Each wire's own reasoning, as its answer carries it (kept verbatim, replayed where the wire wants it).
REASONING: dict[str, Mapping[str, Any]] = {
    "anthropic": {"type": "thinking", "thinking": "List first.", "signature": "c2lnLWE="},
    "openai-responses": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ZW5j"},
    "openai-chat": {"reasoning_content": "List first."},
    "gemini": {"text": "List first.", "thought": True, "thoughtSignature": "c2lnLWc="},
    "ollama": {"thinking": "List first."},
}
HTTP_VESSELS = ("openai", "kimi", "openai-responses", "grok", "anthropic", "glm", "gemini", "ollama")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "steps.db")
    board_of(s).add("fix the flaky build")
    yield s
    s.close()


def script(vessel: str) -> Scripted:
    v = get_vessel(vessel)
    thought = Reasoning("List first.", {v.wire: REASONING[v.wire]})
    first = Reply(
        text="Let me list them first.",
        calls=(ParsedCall("coop", {"action": "list"}, "c1"),),
        said=(thought, Text("Let me list them first.")),
        model=v.model,
    )
    second = Reply(calls=(ParsedCall("coop", {"action": "close", "id": 1}, "c2"),), model=v.model)
    return Scripted(first, second, Reply(text="Closed #1.", model=v.model))


@pytest.mark.parametrize("vessel", HTTP_VESSELS)
def test_a_multi_step_turn_continues_after_its_results_and_replays_as_two_steps(
    store: SQLiteStore, vessel: str
) -> None:
    wire = get_vessel(vessel).wire
    t = script(vessel)
    reg = ToolRegistry([coop_tool(board_of(store))])
    res = run_turn("c1", "Close the first todo.", vessel, reg, store=store, transport=t)
    assert res.reply.text == "Closed #1." and len(res.reply.steps) == 2
    key = get_wire(wire).list_key
    for body in t.bodies[1:]:  # every continuation ends with the tool results
        assert ends_with_results(wire, body[key])
    assert call_runs(wire, t.bodies[2][key]) == [1, 1]
    if get_vessel(vessel).has("encrypted_reasoning"):  # stateless Responses: reasoning asked back
        assert all(b["include"] == ["reasoning.encrypted_content"] for b in t.bodies)
    stored = store.load("c1")
    body = render(stored, vessel)
    assert call_runs(wire, body[key]) == [1, 1]
    # the words before the first call ride with it, not after the results
    assert "Let me list them first." in jsonenc.dumps(body[key][: first_call_at(wire, body[key]) + 1])


def _issued(vessel: str) -> History:
    """A stored reply with reasoning from ``vessel``'s own model, in two steps."""
    v = get_vessel(vessel)
    issuer = v.audience().issuer()
    said = (Reasoning("List first.", {v.wire: REASONING[v.wire]}), Text("Let me list them first."))
    calls = (ToolCall("coop", {"action": "list"}, "#1 fix the flaky build"),
             ToolCall("coop", {"action": "close", "id": 1}, "status: closed"))  # fmt: skip
    steps = (Step(said, 1, issuer), Step((), 1, issuer))
    reply = Message("a2", "assistant", "Closed #1.", calls, steps=steps)
    return History("c", (Message("u1", "user", "Close the first todo."), reply))


SAME_PLACE = {
    "anthropic": lambda items: items[1]["content"][0],
    "openai-responses": lambda items: items[1],
    "openai-chat": lambda items: {"reasoning_content": items[1]["reasoning_content"]},
    "gemini": lambda items: items[1]["parts"][0],
    "ollama": lambda items: {"thinking": items[1]["thinking"]},
}


@pytest.mark.parametrize("vessel", ["anthropic", "openai-responses", "kimi", "gemini", "ollama"])
def test_reasoning_goes_back_byte_identical_to_its_issuer_and_nowhere_else(vessel: str) -> None:
    h = _issued(vessel)
    wire = get_vessel(vessel).wire
    warnings: list[str] = []
    body = render(h, vessel, warnings=warnings)
    placed = SAME_PLACE[wire](body[get_wire(wire).list_key])
    assert jsonenc.dumps(placed) == jsonenc.dumps(REASONING[wire])
    assert warnings == []
    for other in HTTP_VESSELS:
        if other == vessel:
            continue
        warnings = []
        text = jsonenc.dumps(render(h, other, warnings=warnings))
        assert "List first." not in text and "c2lnL" not in text and "ZW5j" not in text
        assert any("1 piece of reasoning not replayed" in w for w in warnings), (other, warnings)


def test_openai_chat_without_the_profile_flag_gets_no_reasoning_content() -> None:
    h = _issued("kimi")
    warnings: list[str] = []
    own = History(h.id, h.messages)  # the same issuer triple, a profile without reasoning_content
    v = get_vessel("kimi")
    from dataclasses import replace

    plain_kimi = replace(v, flags=v.flags - {"reasoning_content"})
    text = jsonenc.dumps(render(own, plain_kimi, warnings=warnings))
    assert "reasoning_content" not in text
    assert any("takes none back" in w for w in warnings)


def test_answer_parts_travel_where_the_wire_carries_them() -> None:
    png = Part("image", media_type="image/png", data="iVBORw0KGgo=")
    call = ToolCall("shot", {}, None, parts=(Part("text", text="the page"), png))
    h = History("c", (Message("u", "user", "look"), Message("a", "assistant", "Seen.", (call,))))
    anthropic = render(h, "anthropic")["messages"][2]["content"][0]["content"]
    assert anthropic[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                         "data": "iVBORw0KGgo="}}  # fmt: skip
    gemini = render(h, "gemini")["contents"][2]["parts"][0]["functionResponse"]
    assert gemini["parts"] == [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]
    responses = render(h, "openai-responses")["input"][2]["output"]
    assert responses[1] == {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    assert render(h, "ollama")["messages"][2]["images"] == ["iVBORw0KGgo="]
    warnings: list[str] = []
    chat = render(h, "openai", warnings=warnings)["messages"][2]["content"]
    assert chat == "the page\n[image (image/png, 12 characters of base64)]"
    assert any("image (image/png" in w and "cannot travel on openai-chat" in w for w in warnings)

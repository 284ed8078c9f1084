"""The planning size is an upper bound of what a render sends (design 33), steps and reasoning included.

The context budget chooses its window from the stored planning sizes alone; when they under-estimate, the
body of the chosen window does not fit and another render is needed (or, worse, the plan says a window
fits that does not). So, on every wire and in every mode, for histories heavy with steps, words,
reasoning (the vessel's own and another issuer's), server-tool pieces, signatures and answer parts: the
encoded body is at most the planned bytes of its messages (per vessel: reasoning counts only where it
goes back to its issuer) plus the body's own reserve (tools, system prompt, frame).
"""

from __future__ import annotations

import string
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from toolreplay._api import render
from toolreplay._budget import ContextBudget, reserved_bytes
from toolreplay._history import History, Message, Reasoning, Step, Text, ToolCall, ToolSpec
from toolreplay._jsonenc import encode
from toolreplay._replay import MODES
from toolreplay._steps import Issuer, Part, ServerTool
from toolreplay._tokens import bytes_to_tokens, planning_size, size_for
from toolreplay._vessels import BUILTIN, Vessel

EVERY_WIRE = list(BUILTIN.values())
TOOLS = (ToolSpec("coop", "the todo board"), ToolSpec("search", "find things"))
OTHER = Issuer("anthropic", "elsewhere.example", "someone-else")

_text = st.text(string.ascii_letters + ' .,\n"\\é中', max_size=400)
_b64 = st.text(string.ascii_letters + string.digits + "+/", min_size=4, max_size=600).map(
    lambda s: s[: len(s) // 4 * 4] or "AAAA"
)


def text_data(wire: str, sig: str) -> dict[str, Any] | None:
    """What ``wire``'s answers carry on a text part besides its words (Gemini 3 signs the last one)."""
    return {"gemini": {"gemini": {"thoughtSignature": sig}}}.get(wire)


def reasoning_data(wire: str, text: str, sig: str) -> dict[str, Any]:
    """A piece of reasoning as ``wire``'s answers carry it (what the render sends back verbatim)."""
    return {
        "anthropic": {"type": "thinking", "thinking": text, "signature": sig},
        "openai-responses": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": sig},
        "openai-chat": {"reasoning_content": text},
        "gemini": {"text": text, "thought": True, "thoughtSignature": sig},
        "ollama": {"thinking": text},
    }.get(wire, {"text": text})


def call(name: str, q: str, answer: str, image: str | None) -> ToolCall:
    """A call whose answer is text, or text and an image (answer parts)."""
    parts = (Part("text", answer), Part("image", media_type="image/png", data=image)) if image else ()
    return ToolCall(name, {"q": q}, answer, parts=parts)


@st.composite
def reply(draw: Any, v: Vessel, i: int) -> Message:
    calls = draw(st.lists(st.builds(call, st.sampled_from(["coop", "search"]), _text, _text,
                                    st.one_of(st.none(), _b64)), max_size=14))  # fmt: skip
    steps: list[Step] = []
    left = len(calls)
    while left or not steps:
        n = draw(st.integers(1, left)) if left else 0  # only the last step may have no calls
        own = draw(st.booleans())
        issuer = v.audience().issuer() if own else draw(st.sampled_from([OTHER, None]))
        sig = draw(_b64)
        said: list[Any] = []
        if draw(st.booleans()):
            said.append(Reasoning(draw(_text), {v.wire: reasoning_data(v.wire, draw(_text), sig)}))
        if draw(st.booleans()):
            said.append(ServerTool("web_search", {v.wire: {"type": "web_search_call", "id": "ws_1"}}))
        words = draw(_text)
        if words.strip():
            said.append(Text(words, text_data(v.wire, sig)))
        steps.append(Step(tuple(said), n, issuer))
        left -= n
        if not left and draw(st.booleans()):
            break
    return Message(f"a{i}", "assistant", draw(_text) or "ok", tuple(calls), steps=tuple(steps))


@st.composite
def history(draw: Any, v: Vessel) -> History:
    messages: list[Message] = [Message("s0", "system", "Be brief.")]
    for i in range(draw(st.integers(1, 5))):
        messages.append(Message(f"u{i}", "user", draw(_text) or "go"))
        messages.append(draw(reply(v, i)))
    messages.append(Message("u-last", "user", "and now?"))
    return History("c", tuple(messages), TOOLS)


@st.composite
def case(draw: Any) -> tuple[Vessel, str, History]:
    v = draw(st.sampled_from(EVERY_WIRE))
    return v, draw(st.sampled_from(MODES)), draw(history(v))


@settings(max_examples=examples(150), deadline=None)
@given(case())
def test_the_plan_is_an_upper_bound_of_the_body(c: tuple[Vessel, str, History]) -> None:
    v, mode, h = c
    body = render(h, v.name, mode)  # type: ignore[arg-type]
    accepts = v.audience().accepts if mode == "native" else None
    planned = sum(size_for(m, accepts) for m in h.messages) + reserved_bytes(TOOLS, None)
    assert len(encode(body)) <= planned


@settings(max_examples=examples(60), deadline=None)
@given(case(), st.integers(300, 4000))
def test_the_body_fits_the_budget_with_steps_and_reasoning(
    c: tuple[Vessel, str, History], budget: int
) -> None:
    v, mode, h = c
    warnings: list[str] = []
    body = render(h, v.name, mode, context=ContextBudget(max_tokens=budget), warnings=warnings)  # type: ignore[arg-type]
    if not any("current turn alone" in w for w in warnings):
        assert bytes_to_tokens(len(encode(body))) <= budget


def test_reasoning_counts_only_for_its_issuer() -> None:
    v = BUILTIN["anthropic"]
    thought = Reasoning("x" * 900, {"anthropic": reasoning_data("anthropic", "x" * 900, "c2ln")})
    m = Message(
        "a1", "assistant", "done", steps=(Step((thought, Text("Looking.")), 0, v.audience().issuer()),)
    )
    common, issued = planning_size(m)
    assert [who for who, _n in issued] == [v.audience().issuer()] and issued[0][1] > 1800
    assert size_for(m, v.audience().accepts) == common + issued[0][1]
    assert size_for(m, BUILTIN["gemini"].audience().accepts) == common == size_for(m, None)


@settings(max_examples=examples(25), deadline=None)
@given(case(), st.integers(200, 5000), st.sampled_from([0.25, 0.5, 1.0]))
def test_a_stored_conversation_is_planned_as_the_whole_one_would_be(
    c: tuple[Vessel, str, History], budget: int, step: float
) -> None:
    """The turn's plan, made from the store's running sums and the outline of the window alone, is the
    plan of the whole conversation in memory, and the turn reads exactly the messages it may send."""
    from toolreplay._budget import plan_of
    from toolreplay._loop.events import TurnOptions
    from toolreplay._loop.window import read_window, turn_accepts
    from toolreplay._store.sqlite import SQLiteStore

    v, _mode, h = c
    options = TurnOptions(context=ContextBudget(max_tokens=budget, jump=step))
    with tempfile.TemporaryDirectory() as tmp, SQLiteStore(Path(tmp) / "plan.db") as store:
        store.import_history(h)
        window = read_window(store, h.id, len(h.messages), v, options, lambda _h: TOOLS)
    accepts = turn_accepts(v, options)
    whole = plan_of(h.messages, budget, step, reserved_bytes(TOOLS, None), accepts)
    assert window.plan == whole
    assert window.history.messages == (h.messages[0], *h.messages[whole.starts[0] :])

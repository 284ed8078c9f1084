"""The render cost of a reasoning-heavy history (design 16-17): every reply thinks, then makes two steps.

A synthetic history of ``cfg.big`` turns whose replies each carry two steps, each step led by a signed
piece of reasoning from the vessel's own model, is rendered on that vessel (the reasoning goes back in
place) and on another vessel of the same wire (it is left out). Both are compared with the same history
stored without steps or reasoning: the cost of steps and reasoning must stay small beside the render
itself, so the earlier ratios against LiteLLM hold.
"""

from __future__ import annotations

from dataclasses import replace

import toolreplay
from bench import histories
from bench.cases import Config, Row, ms
from bench.timing import Contender, alternate
from toolreplay._history import History, Message, Reasoning, Step, Text
from toolreplay._vessels import get_vessel

#: vessel -> the same wire's other vessel (another host: the reasoning is not sent there)
PAIRS = {"anthropic": "glm", "openai-responses": "grok", "kimi": "openai", "gemini": "gemini"}
#: How much slower the reasoning-heavy render may be than the plain one (steps and reasoning add elements).
TARGET = 2.0

_DATA = {
    "anthropic": lambda t: {"type": "thinking", "thinking": t, "signature": "c2lnbmF0dXJl" * 8},
    "openai-responses": lambda t: {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "encrypted_content": "ZW5j" * 40,
    },
    "openai-chat": lambda t: {"reasoning_content": t},
    "gemini": lambda t: {"text": t, "thought": True, "thoughtSignature": "c2lnbmF0dXJl" * 8},
}


def reasoning_history(turns: int, vessel: str) -> History:
    """``synthetic_history(turns, calls=2)`` with each reply split into two steps that think first."""
    v = get_vessel(vessel)
    issuer = v.audience().issuer()
    make = _DATA[v.wire]
    out: list[Message] = []
    for m in histories.synthetic_history(turns, calls=2).messages:
        if m.role == "assistant" and len(m.tool_uses) == 2:
            said = (
                Reasoning("Check the state first.", {v.wire: make("Check the state first.")}),
                Text("Looking."),
            )
            steps = (
                Step(said, 1, issuer),
                Step((Reasoning("Now act.", {v.wire: make("Now act.")}),), 1, issuer),
            )
            m = replace(m, steps=steps)
        out.append(m)
    return History(f"reasoning-{turns}", tuple(out), histories.tool_specs())


def _contenders(plain: History, heavy: History, vessel: str, other: str) -> list[Contender]:
    return [
        Contender("plain", lambda _: toolreplay.render(plain, vessel)),
        Contender("issuer", lambda _: toolreplay.render(heavy, vessel)),
        Contender("other", lambda _: toolreplay.render(heavy, other, model="another-model")),
    ]


def reasoning_rows(cfg: Config) -> list[Row]:
    rows: list[Row] = []
    plain = histories.synthetic_history(cfg.big, calls=2)
    for vessel, other in PAIRS.items():
        heavy = reasoning_history(cfg.big, vessel)
        contenders = _contenders(plain, heavy, vessel, other)
        s = alternate(contenders, repeats=cfg.repeats, min_seconds=cfg.min_seconds)
        for name, what in (
            ("issuer", "to its issuer (reasoning in place)"),
            ("other", f"on {other} (left out)"),
        ):
            ratio = s.median(name) / s.median("plain")
            rows.append(
                Row(
                    "reasoning",
                    f"{vessel}: {cfg.big} turns, thinking + two steps per reply, {what}, vs no reasoning",
                    f"≤ {TARGET:.1f}x",
                    f"{ratio:.2f}x ({ms(s.median(name))} vs {ms(s.median('plain'))})",
                    ratio <= TARGET,
                )
            )
    return rows

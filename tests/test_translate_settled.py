"""A request's settings as the vessel takes them are made once for each exact settings (their JSON, in their
order), vessel and tools (``translate_settings.settled``): the same as made afresh, and never another
request's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from toolreplay._proxy import translate_settings as ts
from toolreplay._vessels import get_vessel
from toolreplay.model import Issuer, ToolSpec

VESSEL = get_vessel("openai")
ISSUER = Issuer("openai-chat", "api.openai.com", "gpt-4.1")
TOOLS = (ToolSpec("Read", "read a file", {"type": "object"}),)


def fields() -> dict[str, Any]:
    """Claude Code's settings, a new object each time (as each request's body is)."""
    return {
        "max_tokens": 32000, "thinking": {"type": "enabled", "budget_tokens": 8000},
        "metadata": {"user_id": "user_abc_account__session_1"}, "stream": True, "temperature": 1,
    }  # fmt: skip


def fresh(f: dict[str, Any], vessel: Any = VESSEL, tools: Any = TOOLS) -> ts.Settled:
    ts._SETTLED.clear()
    return ts.settled("anthropic", f, vessel, ISSUER, tools)


def test_the_same_settings_again_are_the_same_settled_and_as_made_afresh() -> None:
    made = fresh(fields())
    again = ts.settled("anthropic", fields(), VESSEL, ISSUER, TOOLS)
    assert again is made
    assert again == fresh(fields())
    assert "metadata" in " ".join(made.fields.notes)  # what Chat cannot carry is named, the same each time


def test_other_settings_an_other_order_other_tools_or_vessel_are_made_for_themselves() -> None:
    made = fresh(fields())
    other = {**fields(), "max_tokens": 100}
    assert ts.settled("anthropic", other, VESSEL, ISSUER, TOOLS).fields.max_tokens == 100
    reordered = dict(reversed(list(fields().items())))
    got = ts.settled("anthropic", reordered, VESSEL, ISSUER, TOOLS)
    assert got is not made and list(got.asked.rest) == list(fresh(reordered).asked.rest)
    equal_tools = tuple(replace(t) for t in TOOLS)  # equal, not the same objects: the options hold them
    fresh(fields())
    assert ts.settled("anthropic", fields(), VESSEL, ISSUER, equal_tools).opts.tools is equal_tools
    fresh(fields())
    vessel = replace(VESSEL, model="gpt-4.1-mini")
    assert ts.settled("anthropic", fields(), vessel, ISSUER, TOOLS).vessel is vessel


def test_settings_orjson_cannot_encode_are_made_each_time() -> None:
    huge = {**fields(), "seed": 1 << 70}
    first = fresh(huge)
    second = ts.settled("anthropic", huge, VESSEL, ISSUER, TOOLS)
    assert second == first and second is not first

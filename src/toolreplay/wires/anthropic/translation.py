"""Anthropic Messages in the proxy's request translation (design 48-49): its settings read and written
within Anthropic's own limits, the call ids its agents take."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay.wires.anthropic.request import parse_request
from toolreplay.wires.anthropic.rules import thinking_first
from toolreplay.wires.common import ID_SAFE
from toolreplay.wires.translation import (
    Asked,
    Fields,
    IdRule,
    Memoized,
    Translation,
    asked,
    integer,
    num,
    obj,
    stops,
)
from toolreplay.wires.vessel import VesselProfile

#: Anthropic's own output limit when the agent named none (its API requires one).
MAX_TOKENS = 4096
_MIN_BUDGET = 1024  # "thinking.budget_tokens: Input should be greater than or equal to 1024"
_CHOICE = {"auto": "auto", "none": "none", "any": "required", "tool": "tool"}
_READ = frozenset({"max_tokens", "temperature", "top_p", "stop_sequences", "tool_choice", "thinking"})


def read(f: Mapping[str, Any]) -> tuple[Asked, frozenset[str]]:
    tc, th = obj(f.get("tool_choice")), obj(f.get("thinking"))
    kind = tc.get("type")
    on = th.get("type") in ("enabled", "adaptive") if th else None
    got = asked(
        max_tokens=integer(f.get("max_tokens")), temperature=num(f.get("temperature")),
        top_p=num(f.get("top_p")), stop=stops(f.get("stop_sequences")), choice=_CHOICE.get(str(kind)),
        tool=tc.get("name") if kind == "tool" else None,
        parallel=False if tc.get("disable_parallel_tool_use") is True else None,
        thinking=on, budget=integer(th.get("budget_tokens")), show=bool(on) and not _omitted(th),
    )  # fmt: skip
    return got, _READ


def _omitted(thinking: Mapping[str, Any]) -> bool:
    """``display: "omitted"`` (Claude Code): the agent asks for thinking but not to see its words; the
    upstream's reasoning then stays in the store (design 50) and is put back from there."""
    return thinking.get("display") == "omitted"


def _thinking(a: Asked, out: Fields) -> None:
    limit = a.max_tokens if a.max_tokens is not None else MAX_TOKENS
    budget = max(_MIN_BUDGET, a.wants_budget)
    if budget >= limit:  # "max_tokens must be greater than thinking.budget_tokens"
        if limit <= _MIN_BUDGET:
            out.notes.append(f"thinking not carried: the output limit ({limit}) leaves no thinking budget")
            return
        budget = limit - 1
    out.max_tokens = limit
    out.body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    out.thinking_off = ("thinking", None)
    if out.temperature is not None and out.temperature != 1:  # "temperature may only be set to 1"
        out.notes.append(f"temperature {out.temperature:g} not carried: Anthropic takes only 1 with thinking")
        out.temperature = None
    top_p = out.body.get("top_p")
    if isinstance(top_p, float) and top_p < 0.95:  # "top_p must be >= 0.95 when thinking is enabled"
        out.notes.append(f"top_p {top_p:g} not carried: Anthropic takes 0.95 to 1 with thinking")
        del out.body["top_p"]


def _choice(a: Asked, out: Fields) -> None:
    choice: dict[str, Any] = {}
    if a.choice is not None:
        forced = a.choice in ("required", "tool")
        if (
            forced and "thinking" in out.body
        ):  # "Thinking may not be enabled when tool_choice forces tool use"
            out.notes.append(f"tool_choice {a.choice} not carried: Anthropic forces no tool with thinking on")
            choice = {"type": "auto"}
        else:
            choice = {"type": {"required": "any"}.get(a.choice, a.choice)}
            if a.choice == "tool":
                choice["name"] = a.tool
    if a.parallel is False:
        choice = {"type": "auto", **choice, "disable_parallel_tool_use": True}
    if choice:
        out.body["tool_choice"] = choice


def write(a: Asked, v: VesselProfile, out: Fields) -> None:
    if a.top_p is not None and a.temperature is not None:
        # Claude 4.5 and later: "`temperature` and `top_p` cannot both be specified for this model"
        out.notes.append(f"top_p {a.top_p:g} not carried: Anthropic takes temperature or top_p, not both")
    elif a.top_p is not None:
        out.body["top_p"] = a.top_p
    if a.stop:
        out.body["stop_sequences"] = list(a.stop)
    if a.thinking:
        _thinking(a, out)
    _choice(a, out)


def thinking_refusal(v: VesselProfile, body: Mapping[str, Any]) -> str | None:
    """Anthropic's refusal of a thinking request whose tool loop does not open with the model's own
    thinking block (the one rule a thinking setting decides)."""
    found = thinking_first(body)
    return found.provider if found is not None else None


#: tool_use ids match ``^[a-zA-Z0-9_-]+$`` (the API refuses others; the SDK's own answers use ``toolu_``).
TRANSLATION = Translation(
    read=read,
    write=write,
    ids=IdRule(ID_SAFE, 64, "toolu_", "msg_"),
    # a Claude Code request repeats its last one: each message, the system prompt and the tools read once
    memoized=Memoized(parse_request, ("system", "tools")),
    thinking_refusal=thinking_refusal,
)

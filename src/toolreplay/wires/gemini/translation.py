"""Gemini in the proxy's request translation (design 48-49): its settings read (camelCase and snake_case,
design 9) and written (``generationConfig``, ``toolConfig``; Gemini 3 thinks by level, 2.5 by budget),
the call ids its agents take."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay.wires.gemini.request import parse_request
from toolreplay.wires.translation import (
    Asked,
    Choice,
    Fields,
    IdRule,
    Memoized,
    Translation,
    asked,
    effort,
    integer,
    num,
    obj,
    stops,
)
from toolreplay.wires.vessel import VesselProfile

_MODES: Mapping[str, Choice] = {"AUTO": "auto", "NONE": "none", "ANY": "required"}
_READ = frozenset({"generationConfig", "generation_config", "toolConfig", "tool_config"})
_FLASH_BUDGET = 24576  # 2.5 Flash: 0 to 24,576


def _choice(f: Mapping[str, Any]) -> tuple[Choice | None, str | None]:
    fc = obj(obj(f.get("toolConfig") or f.get("tool_config")).get("functionCallingConfig"))
    choice = _MODES.get(str(fc.get("mode", "")).upper())
    names = fc.get("allowedFunctionNames")
    if choice == "required" and isinstance(names, list) and len(names) == 1 and isinstance(names[0], str):
        return "tool", names[0]
    return choice, None


def read(f: Mapping[str, Any]) -> tuple[Asked, frozenset[str]]:
    g = obj(f.get("generationConfig") or f.get("generation_config"))
    th = obj(g.get("thinkingConfig") or g.get("thinking_config"))
    choice, tool = _choice(f)
    budget = integer(th.get("thinkingBudget", th.get("thinking_budget")))
    level = th.get("thinkingLevel", th.get("thinking_level"))
    got = asked(
        max_tokens=integer(g.get("maxOutputTokens")), temperature=num(g.get("temperature")),
        top_p=num(g.get("topP")), stop=stops(g.get("stopSequences")), choice=choice, tool=tool,
        thinking=None if budget is None and level is None else budget != 0,
        budget=budget if budget and budget > 0 else None,
        effort=effort(str(level).lower()) if level else None,
        show=th.get("includeThoughts", th.get("include_thoughts")) is True,
    )  # fmt: skip
    return got, _READ


def _thinking(a: Asked, v: VesselProfile) -> dict[str, Any]:
    if not a.thinking:
        return {"thinkingBudget": 0} if a.thinking is False and "flash" in v.model else {}
    if v.model.startswith("gemini-3"):  # Gemini 3 thinks by level, "low" or "high"
        config: dict[str, Any] = {"thinkingLevel": "low" if a.wants_effort in ("minimal", "low") else "high"}
    else:
        config = {"thinkingBudget": min(a.wants_budget, _FLASH_BUDGET)}
    if a.show:
        config["includeThoughts"] = True
    return config


def write(a: Asked, v: VesselProfile, out: Fields) -> None:
    config: dict[str, Any] = {}
    if a.top_p is not None:
        config["topP"] = a.top_p
    if a.stop:
        config["stopSequences"] = list(a.stop[:5])  # Gemini: "up to 5 stop sequences"
    thinking = _thinking(a, v)
    if thinking:
        config["thinkingConfig"] = thinking
    if config:
        out.body["generationConfig"] = config
    if a.choice is not None:
        fc: dict[str, Any] = {"mode": {"auto": "AUTO", "none": "NONE"}.get(a.choice, "ANY")}
        if a.choice == "tool" and a.tool:
            fc["allowedFunctionNames"] = [a.tool]
        out.body["toolConfig"] = {"functionCallingConfig": fc}
    if a.parallel is not None:
        out.lost("gemini", "parallel_tool_calls")


#: Any string: Gemini's calls carry an id only from Gemini 3 on, and its clients take any.
TRANSLATION = Translation(
    read=read,
    write=write,
    ids=IdRule(None, None, "call_", ""),
    # a Gemini CLI request repeats its last one: each content, the system instruction and the tools once
    memoized=Memoized(parse_request, ("systemInstruction", "system_instruction", "tools")),
)

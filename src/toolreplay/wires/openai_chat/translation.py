"""OpenAI Chat in the proxy's request translation (design 48-49): its settings read and written (OpenAI's
``reasoning_effort`` for its reasoning models, the ``thinking`` switch of Moonshot and GLM), the call
ids its agents take. The OpenAI parts Responses shares live here too."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit

from toolreplay.wires.openai_chat.request import parse_request
from toolreplay.wires.openai_chat.rules import kimi_reasoning, moonshot
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

#: OpenAI's reasoning models: the only ones that take ``reasoning_effort`` / ``reasoning`` ("Unrecognized
#: request argument" or "not supported with this model" elsewhere: gpt-4.1, Grok 4), and that take no
#: sampling settings ("Unsupported value: 'temperature' does not support 0.2 with this model").
OPENAI_REASONING = re.compile(r"^(o[1-9]|gpt-5(?!(\.[0-9]+)?-chat)|gpt-oss|codex)")
_OPENAI_HOSTS = ("openai.com", "chatgpt.com")


def read_choice(v: Any) -> tuple[Choice | None, str | None]:
    """An OpenAI ``tool_choice`` (Chat's and Responses' named forms alike)."""
    if v in ("auto", "none", "required"):
        return cast(Choice, v), None
    tc = obj(v)
    name = tc.get("name") or obj(tc.get("function")).get("name")
    return ("tool", str(name)) if tc.get("type") == "function" and name else (None, None)


def parallel_of(f: Mapping[str, Any]) -> bool | None:
    return f["parallel_tool_calls"] if isinstance(f.get("parallel_tool_calls"), bool) else None


_READ = frozenset({"max_completion_tokens", "max_tokens", "temperature", "top_p", "stop", "tool_choice",
                   "parallel_tool_calls", "thinking", "reasoning_effort"})  # fmt: skip


def read(f: Mapping[str, Any]) -> tuple[Asked, frozenset[str]]:
    choice, tool = read_choice(f.get("tool_choice"))
    th = obj(f.get("thinking"))
    said = effort(f.get("reasoning_effort"))
    on: bool | None = None
    if th.get("type") in ("enabled", "disabled"):
        on = th.get("type") == "enabled"
    elif f.get("reasoning_effort") == "none":
        on = False
    elif said is not None:
        on = True
    limit = integer(f.get("max_completion_tokens"))
    got = asked(
        max_tokens=limit if limit is not None else integer(f.get("max_tokens")),
        temperature=num(f.get("temperature")), top_p=num(f.get("top_p")), stop=stops(f.get("stop")),
        choice=choice, tool=tool, parallel=parallel_of(f), thinking=on, effort=said, show=on is not False,
    )  # fmt: skip
    # shown unless turned off: Chat has no field that asks to see reasoning, and ``reasoning_content`` is
    # an extension the clients that know it show (opencode, Kimi CLI) and the others ignore
    return got, _READ


def sampling(a: Asked, v: VesselProfile, out: Fields) -> bool:
    """top_p, and whether the model reasons the OpenAI way; a reasoning model of OpenAI's own keeps
    neither temperature nor top_p."""
    reasons = OPENAI_REASONING.match(v.model) is not None
    host = urlsplit(v.base_url).hostname or ""
    if reasons and host.endswith(_OPENAI_HOSTS):
        for name, value in (("temperature", out.temperature), ("top_p", a.top_p)):
            if value is not None:
                out.notes.append(f"{name} {value:g} not carried: {v.model} takes only the default")
        out.temperature = None
    elif a.top_p is not None:
        out.body["top_p"] = a.top_p
    return reasons


def write_tools(a: Asked, chat: bool, out: Fields) -> None:
    """``tool_choice`` (Chat names a function inside ``function``, Responses beside ``type``) and
    ``parallel_tool_calls``."""
    if a.choice == "tool":
        named = {"function": {"name": a.tool}} if chat else {"name": a.tool}
        out.body["tool_choice"] = {"type": "function", **named}
    elif a.choice is not None:
        out.body["tool_choice"] = a.choice
    if a.parallel is not None:
        out.body["parallel_tool_calls"] = a.parallel


def write(a: Asked, v: VesselProfile, out: Fields) -> None:
    reasons = sampling(a, v, out)
    if a.stop:
        out.body["stop"] = list(a.stop[:4])  # OpenAI: "stop: up to 4 sequences"
        if len(a.stop) > 4:
            out.notes.append(f"stop sequences after the 4th not carried ({len(a.stop) - 4}): Chat takes 4")
    write_tools(a, True, out)
    own = v.has("reasoning_content") or v.id_policy == "kimi"
    if own and a.thinking is not False:  # a thinking model thinks unless told not to
        out.thinking_off = ("thinking", {"type": "disabled"})
    if a.thinking is None:
        return
    if own:
        # Moonshot, GLM: thinking is ``{"type": "enabled" | "disabled"}`` (no budget, no effort)
        out.body["thinking"] = {"type": "enabled" if a.thinking else "disabled"}
    elif a.thinking and reasons:
        out.body["reasoning_effort"] = a.wants_effort
    elif a.thinking:
        out.notes.append(f"thinking not carried: {v.model} takes no reasoning_effort")


def thinking_refusal(v: VesselProfile, body: Mapping[str, Any]) -> str | None:
    """Moonshot's refusal of a thinking request whose tool-call messages lack the model's reasoning (the
    one Chat rule a thinking setting decides)."""
    found = kimi_reasoning(body) if moonshot(v) else None
    return found.provider if found is not None else None


#: 40 characters: OpenAI's server limit, which clients built against it assume.
TRANSLATION = Translation(
    read=read,
    write=write,
    ids=IdRule(None, 40, "call_", "chatcmpl-"),
    # an opencode request repeats its last one: each message and the tool list read once
    memoized=Memoized(parse_request, ("tools", "functions")),
    thinking_refusal=thinking_refusal,
)

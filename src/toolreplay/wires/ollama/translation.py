"""Ollama in the proxy's request translation (design 48-49): its settings read and written (``options``,
``think`` only for a model that thinks), the call ids its agents take, and that it streams unless told
not to."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolreplay.wires.translation import (
    Asked,
    Fields,
    IdRule,
    Translation,
    asked,
    effort,
    integer,
    num,
    obj,
    stops,
)
from toolreplay.wires.vessel import VesselProfile

#: The models Ollama thinks with (``think`` is refused for any other: "... does not support thinking").
_THINKING = re.compile(
    r"^(qwen3|qwq|deepseek-r1|deepseek-v3\.[1-9]|gpt-oss|magistral|phi4-(mini-)?reasoning|cogito)"
)


def read(f: Mapping[str, Any]) -> tuple[Asked, frozenset[str]]:
    o = obj(f.get("options"))
    think = f.get("think")
    on = None if think is None else think is not False
    got = asked(
        max_tokens=integer(o.get("num_predict")), temperature=num(o.get("temperature")),
        top_p=num(o.get("top_p")), stop=stops(o.get("stop")), thinking=on,
        effort=effort(think) if isinstance(think, str) else None, show=bool(on),
    )  # fmt: skip
    return got, frozenset({"options", "think"})


def write(a: Asked, v: VesselProfile, out: Fields) -> None:
    options: dict[str, Any] = {}
    if a.top_p is not None:
        options["top_p"] = a.top_p
    if a.stop:
        options["stop"] = list(a.stop)
    if options:
        out.body["options"] = options
    if a.thinking and _THINKING.match(v.model) is None:
        out.notes.append(f"thinking not carried: {v.model} is not a model Ollama thinks with")
    elif a.thinking and v.model.startswith("gpt-oss"):
        out.body["think"] = {"minimal": "low"}.get(a.wants_effort, a.wants_effort)  # levels, not a flag
    elif a.thinking is not None:
        out.body["think"] = a.thinking
    if a.choice not in (None, "auto"):
        out.lost("ollama", f"tool_choice {a.choice}")
    if a.parallel is not None:
        out.lost("ollama", "parallel_tool_calls")


TRANSLATION = Translation(read=read, write=write, ids=IdRule(None, None, "call_", ""), stream_default=True)

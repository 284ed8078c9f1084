"""OpenAI Responses in the proxy's request translation (design 48-49): its settings read and written
(``reasoning`` for OpenAI's reasoning models, the encrypted reasoning a stateless vessel needs), the call
ids its agents take."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay.wires.openai_chat.translation import parallel_of, read_choice, sampling, write_tools
from toolreplay.wires.openai_responses.earlier import EARLIER
from toolreplay.wires.openai_responses.request import parse_request
from toolreplay.wires.translation import (
    Asked,
    Fields,
    IdRule,
    Memoized,
    Translation,
    asked,
    effort,
    integer,
    num,
    obj,
)
from toolreplay.wires.vessel import VesselProfile

_READ = frozenset(
    {"max_output_tokens", "temperature", "top_p", "tool_choice", "parallel_tool_calls", "reasoning"}
)


def read(f: Mapping[str, Any]) -> tuple[Asked, frozenset[str]]:
    choice, tool = read_choice(f.get("tool_choice"))
    r = obj(f.get("reasoning"))
    on = (r.get("effort") != "none") if r else None
    got = asked(
        max_tokens=integer(f.get("max_output_tokens")), temperature=num(f.get("temperature")),
        top_p=num(f.get("top_p")), choice=choice, tool=tool, parallel=parallel_of(f),
        thinking=on, effort=effort(r.get("effort")), show=bool(on),
    )  # fmt: skip
    return got, _READ


def write(a: Asked, v: VesselProfile, out: Fields) -> None:
    reasons = sampling(a, v, out)
    if a.stop:
        out.lost("openai-responses", "stop sequences")
    write_tools(a, False, out)
    if reasons and v.has("store_false") and v.has("encrypted_reasoning") and a.thinking is not False:
        # stateless: the reasoning survives between tool steps only encrypted, in the answer
        out.include = ("reasoning.encrypted_content",)
    if a.thinking and reasons:
        reasoning: dict[str, Any] = {"effort": a.wants_effort}
        if a.show:
            reasoning["summary"] = "auto"
        out.body["reasoning"] = reasoning
    elif a.thinking:
        out.notes.append(f"thinking not carried: {v.model} takes no reasoning effort")
    elif a.thinking is False and reasons:
        out.body["reasoning"] = {"effort": "minimal"}


#: 64 characters: the ``call_id`` limit.
TRANSLATION = Translation(
    read=read,
    write=write,
    ids=IdRule(None, 64, "call_", "resp_"),
    earlier=EARLIER,
    # a Codex request repeats its last one: each item, the instructions and the tools read once
    memoized=Memoized(parse_request, ("instructions", "tools")),
)

"""A request's settings across two wires (design 48): read from the agent's body into neutral words by
its wire (``Wire.translation.read``), written in the upstream wire's own fields by that wire
(``Wire.translation.write``, :mod:`toolreplay.wires.translation`).

Every setting the agent's wire does not read is named: carried as it is when the upstream speaks the
agent's own wire, else a note (``metadata``, ``prompt_cache_key``, ``store``...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson

from toolreplay._render_options import render_options
from toolreplay._replay import ReplaySettings
from toolreplay._vessels import Vessel
from toolreplay.model import Issuer, ToolSpec
from toolreplay.wires import get_wire
from toolreplay.wires.bounded import Bounded
from toolreplay.wires.common import RenderOptions
from toolreplay.wires.contract import Wire
from toolreplay.wires.translation import Asked, Fields

#: The settings every translation decides itself: never carried, never named as lost.
DECIDED = frozenset({"model", "stream", "stream_options"})


def read_settings(wire: str, fields: Mapping[str, Any], *, path_stream: bool = False) -> Asked:
    """The settings of an agent's request on ``wire`` (its top-level fields but the conversation)."""
    hook = get_wire(wire).translation
    got, used = hook.read(fields) if hook is not None else (Asked(), frozenset[str]())
    stream = fields.get("stream")
    default = hook is not None and hook.stream_default
    streamed = path_stream or stream is True or (stream is None and default)
    rest = {k: v for k, v in fields.items() if k not in used and k not in DECIDED}
    return replace(got, stream=streamed, rest=rest)


def write_settings(a: Asked, agent_wire: str, vessel: Vessel) -> Fields:
    """``a`` in the fields of ``vessel``'s wire; the agent's other settings carried when both are one
    wire, else named."""
    out = Fields(max_tokens=a.max_tokens, temperature=a.temperature)
    wire = vessel.wire
    hook = get_wire(wire).translation
    if hook is not None:
        hook.write(a, vessel, out)
    else:
        out.notes.append(f"settings not carried: {wire} is not a wire the proxy translates settings for")
    rest = {k: v for k, v in a.rest.items() if v not in (None, [], {}, "")}
    if rest and agent_wire == wire:
        for k, val in rest.items():
            out.body.setdefault(k, val)
    elif rest:
        out.notes.append(f"request settings of the agent's {agent_wire} request not carried on {wire}: "
                         f"{', '.join(sorted(rest))}")  # fmt: skip
    return out


@dataclass(frozen=True, slots=True)
class Settled:
    """A request's settings as the vessel takes them (:func:`settled`): what the agent asked, the vessel's
    fields, the replay's settings and the render's options; and what they were made for (the vessel and
    the tools, compared by identity)."""

    asked: Asked
    fields: Fields
    replay: ReplaySettings
    opts: RenderOptions
    upstream_stream: bool
    vessel: Vessel
    tools: tuple[ToolSpec, ...]


#: The settings of the last requests, by the agent's wire, the request's settings as their JSON, the
#: vessel, its issuer and the tools: an agent sends the same settings on every request of a conversation.
_SETTLED: Bounded[Settled] = Bounded(64)


def settled(
    inbound: str, fields: Mapping[str, Any], vessel: Vessel, issuer: Issuer, tools: tuple[ToolSpec, ...],
    *, path_stream: bool = False,
) -> Settled:  # fmt: skip
    """:func:`read_settings` and :func:`write_settings` of a request's ``fields``, the replay's settings
    for ``vessel`` and the render's options: once for each exact settings (their JSON, in their order),
    vessel and tools; the same objects then (nothing downstream changes them)."""
    try:
        key: tuple[Any, ...] | None = (
            inbound,
            path_stream,
            id(vessel),
            id(tools),
            issuer,
            orjson.dumps(fields),
        )
    except (TypeError, orjson.JSONEncodeError):  # a value orjson does not encode: made each time
        key = None
    hit = _SETTLED.get(key) if key is not None else None
    if hit is not None and hit.vessel is vessel and hit.tools is tools:
        return hit
    asked = read_settings(inbound, fields, path_stream=path_stream)
    out = write_settings(asked, inbound, vessel)
    audience = replace(vessel.audience(issuer.model), host=issuer.host)
    upstream_stream = asked.stream or vessel.has("stream_only")
    opts = render_options(
        vessel, tools=tools, model=vessel.model or issuer.model, temperature=out.temperature,
        max_tokens=out.max_tokens, stream=upstream_stream,
    )  # fmt: skip
    made = Settled(
        asked, out, ReplaySettings(whole_calls=True, skip_textless=False, audience=audience),
        replace(opts, include=out.include), upstream_stream, vessel, tools,
    )  # fmt: skip
    if key is not None:
        _SETTLED.put(key, made, 1)
    return made


def agent_headers(
    inbound: Wire, upstream: str, asked: Mapping[str, str], headers: Mapping[str, str]
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The vessel's request ``headers`` with the agent's own that its wire carries on (``asked``: the
    agent's request headers; ``Http.carried_headers``, design 56) when the upstream speaks the agent's
    wire, a value joined to the vessel's own after it; on another wire they are named, not sent."""
    hook = inbound.http.carried_headers if inbound.http is not None else None
    carried, notes = hook(asked) if hook is not None else ({}, ())
    if not carried:
        return dict(headers), notes
    if upstream != inbound.name:
        said = "; ".join(f"{k}: {v}" for k, v in carried.items())
        return dict(headers), (f"the agent's headers not carried on {upstream}: {said}",)
    out = dict(headers)
    for name, value in carried.items():
        have = next((k for k in out if k.lower() == name), None)
        own = [v.strip() for v in out.pop(have).split(",")] if have is not None else []
        out[name] = ",".join(dict.fromkeys([*own, *value.split(",")]))
    return out, notes


def merged_into(body: dict[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with ``fields`` set; a field that is an object in both is merged one level deep (the
    render's ``generationConfig`` keeps its limit and temperature beside the translated ones); a field
    set to None is taken out."""
    out = dict(body)
    for k, v in fields.items():
        old = out.get(k)
        if isinstance(old, Mapping) and isinstance(v, Mapping):
            out[k] = {**old, **v}
        elif v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


__all__ = ["DECIDED", "Settled", "agent_headers", "merged_into", "read_settings", "settled", "write_settings"]

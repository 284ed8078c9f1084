"""What a vessel makes of a render: its render options with the caller's overrides, its prompt-cache
breakpoints, and the replay settings aimed at it (design 17).

Below both render paths (:mod:`toolreplay._render`, :class:`~toolreplay._render_cache.RenderCache`) and
the turn loop, which all start from these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from toolreplay._errors import ConfigError
from toolreplay._history import ToolSpec
from toolreplay._replay import ReplaySettings
from toolreplay._vessels import MAX_BREAKPOINTS, Vessel
from toolreplay.wires.common import RenderOptions


def render_options(
    vessel: Vessel,
    *,
    system: str | None = None,
    tools: Sequence[ToolSpec] | None = None,
    model: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    stream: bool | None = None,
) -> RenderOptions:
    """The render options of ``vessel`` with the caller's overrides."""
    return RenderOptions(
        model=model or vessel.model,
        system=system,
        tools=tuple(tools or ()),
        temperature=temperature,
        max_tokens=max_tokens,
        stream=vessel.has("stream_only") if stream is None else stream,
        id_policy=vessel.id_policy,
        max_id_len=vessel.max_id_len,
        flags=vessel.flags,
        cache_breakpoints=vessel.cache_breakpoints,
    )


def with_breakpoints(vessel: Vessel, n: int) -> Vessel:
    """``vessel`` placing ``n`` prompt-cache breakpoints (design 36)."""
    if not 0 <= n <= MAX_BREAKPOINTS:
        raise ConfigError(f"cache_breakpoints must be from 0 to {MAX_BREAKPOINTS}, not {n}")
    return replace(vessel, cache_breakpoints=n)


def for_vessel(settings: ReplaySettings, vessel: Vessel, model: str | None = None) -> ReplaySettings:
    """``settings`` aimed at ``vessel`` (and ``model``): reasoning goes back only to its issuer (design 17).
    Settings that already name an audience keep it."""
    if settings.audience is not None:
        return settings
    return replace(settings, audience=vessel.audience(model))

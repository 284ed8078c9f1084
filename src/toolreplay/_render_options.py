"""What a render is asked for (:class:`RenderArgs`) and what a vessel makes of it: its render options
with the caller's overrides, and the replay settings aimed at it (design 17).

Below both render paths (:mod:`toolreplay._render`, :class:`~toolreplay._render_cache.RenderCache`) and
the turn loop, which all start from these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from toolreplay._history import ToolSpec
from toolreplay._replay import DEFAULT_SETTINGS, ReplaySettings
from toolreplay._vessels import Vessel
from toolreplay.wires.common import RenderOptions


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderArgs:
    """What a render is asked for besides the history, the vessel and the mode: the options of
    :func:`toolreplay.render` (see there), one typed value passed down whole, built by name.
    :meth:`RenderCache.render <toolreplay.RenderCache.render>` takes it as it is."""

    system: str | None = None
    tools: Sequence[ToolSpec] | None = None
    model: str | None = None
    upto: str | None = None
    settings: ReplaySettings = DEFAULT_SETTINGS
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool | None = None

    def options(self, vessel: Vessel, tools: Sequence[ToolSpec]) -> RenderOptions:
        """The render options of ``vessel`` with these overrides, declaring ``tools``."""
        return render_options(
            vessel,
            system=self.system,
            tools=tools,
            model=self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stream=self.stream,
        )


#: A render asked for nothing beyond the vessel's own options.
NO_ARGS = RenderArgs()


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


def for_vessel(settings: ReplaySettings, vessel: Vessel, model: str | None = None) -> ReplaySettings:
    """``settings`` aimed at ``vessel`` (and ``model``): reasoning goes back only to its issuer (design 17).
    Settings that already name an audience keep it."""
    if settings.audience is not None:
        return settings
    return replace(settings, audience=vessel.audience(model))

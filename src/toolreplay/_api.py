"""The public Python API: ``load_history``, ``render``, ``encode``, ``vessels``.

These names stay; everything else may move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolreplay._history import History, ToolSpec, load_history
from toolreplay._jsonenc import encode
from toolreplay._replay import DEFAULT_SETTINGS, Mode, ReplaySettings
from toolreplay._vessels import Vessel, vessels
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
    )


def for_vessel(settings: ReplaySettings, vessel: Vessel, model: str | None = None) -> ReplaySettings:
    """``settings`` aimed at ``vessel`` (and ``model``): reasoning goes back only to its issuer (design 17).
    Settings that already name an audience keep it."""
    if settings.audience is not None:
        return settings
    return replace(settings, audience=vessel.audience(model))


def render(
    history: History | str | Path | Mapping[str, Any],
    vessel: str | Vessel = "gemini",
    mode: Mode = "native",
    system: str | None = None,
    tools: Sequence[ToolSpec] | None = None,
    model: str | None = None,
    upto: str | None = None,
    *,
    settings: ReplaySettings = DEFAULT_SETTINGS,
    temperature: float | None = None,
    max_tokens: int | None = None,
    stream: bool | None = None,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """The request body of the next turn of ``history`` on ``vessel``, earlier calls replayed per ``mode``.

    ``tools`` defaults to the history's own tool definitions; every tool the replayed calls use is
    declared either way (a minimal schema is inferred for tools without a definition), in every mode:
    plain and prose bodies declare the same tools as the native one (design 8).

    Warnings: pass a list as ``warnings`` and it receives one line per thing the render changed that
    the caller may want to know: a tool name no wire accepts (sent under the deterministic name of
    :func:`toolreplay.wires.common.wire_tool_name`, for calls, answers and definitions alike), a
    stored Gemini thought signature that is not base64 (not replayed), reasoning and signatures left
    out because another vessel issued them (design 17), and the history's own load warnings. Nothing is
    logged; the body is valid either way.
    """
    # design 29: one render path; a render is the incremental renderer with nothing cached
    from toolreplay._render_cache import RenderCache

    return RenderCache().render(
        history, vessel, mode, system, tools, model, upto, settings=settings, temperature=temperature,
        max_tokens=max_tokens, stream=stream, warnings=warnings,
    )  # fmt: skip


__all__ = ["encode", "load_history", "render", "render_options", "vessels"]

"""The public Python API: ``load_history``, ``render``, ``encode``, ``vessels``.

These names stay; everything else may move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolreplay._history import History, ToolSpec, load_history
from toolreplay._jsonenc import encode
from toolreplay._replay import DEFAULT_SETTINGS, Mode, ReplaySettings, prepare_turn_messages
from toolreplay._vessels import Vessel, get_vessel, vessels
from toolreplay.wires import render_wire
from toolreplay.wires.common import RenderOptions, declared_tools, render_warnings


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
    stored Gemini thought signature that is not base64 (not replayed), and the history's own load
    warnings. Nothing is logged; the body is valid either way.
    """
    h = history if isinstance(history, History) else load_history(history)
    v = get_vessel(vessel)
    turns = prepare_turn_messages(h, mode, upto=upto, settings=settings)
    given = tuple(tools) if tools is not None else (h.tools or ())
    if mode != "native":
        # design 8: every mode declares the same tools (those the native replay would), so lab
        # requests differ only in how the history is replayed.
        given = declared_tools(prepare_turn_messages(h, "native", upto=upto, settings=settings), given)
    opts = render_options(
        v,
        system=system,
        tools=given,
        model=model,
        temperature=temperature,
        max_tokens=max_tokens,
        stream=stream,
    )
    body = render_wire(v.wire, turns, opts)
    if warnings is not None:
        warnings.extend(h.warnings)
        warnings.extend(render_warnings(turns, opts.tools, v.wire))
    return body


__all__ = ["encode", "load_history", "render", "render_options", "vessels"]

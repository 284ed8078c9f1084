"""The render path behind :func:`toolreplay.render`: one body for the next turn, within a context budget
when one is given (:mod:`toolreplay._budget`); the body itself comes from the incremental renderer with
nothing cached (design 29). :mod:`toolreplay._api` is the public face of it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolreplay._budget import (
    Accepts,
    BodyCounter,
    ContextBudget,
    Plan,
    Trial,
    body_counter,
    plan_of,
    reserved_bytes,
    trials,
)
from toolreplay._history import History, ToolSpec, load_history
from toolreplay._render_options import RenderArgs, for_vessel
from toolreplay._replay import DEFAULT_SETTINGS, Mode, ReplaySettings
from toolreplay._vessels import Vessel, resolve_vessel


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
    context: ContextBudget | None = None,
    cache_breakpoints: int | None = None,
    as_sent: bool = False,
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

    ``context``: a :class:`~toolreplay._budget.ContextBudget` keeps the newest whole turns that fit (the
    vessel's context window unless it names its own ``max_tokens``) and says in ``warnings`` what it
    left out; None (the default) renders the whole history.

    ``cache_breakpoints``: how many prompt-cache markers an Anthropic-wire body carries (0 to 4; 0:
    none), instead of the vessel profile's (design 36).

    ``as_sent``: the history's last recorded request (an imported body) rendered on its own wire as its
    agent sent it (design 38): its settings, ids, layout and markers, without bounds or derived ids; the
    vessel, mode and the other options do not apply. Without it, a history with recorded requests renders
    by today's rules and carries the settings the target wire has, naming the others in ``warnings``.
    """
    if as_sent:
        from toolreplay._as_sent import render_as_sent

        h = history if isinstance(history, History) else load_history(history)
        if upto is not None:
            h = replace(h, messages=h.messages[: h.index_of(upto) + 1])
        return render_as_sent(h, warnings)
    v = resolve_vessel(vessel, cache_breakpoints=cache_breakpoints)  # once: passed down as it is
    args = RenderArgs(system=system, tools=tools, model=model, upto=upto, settings=settings,
                      temperature=temperature, max_tokens=max_tokens, stream=stream)  # fmt: skip
    if context is not None:
        budget = context.tokens(v.context_tokens, max_tokens)
        if budget is not None:
            h = history if isinstance(history, History) else load_history(history)
            if upto is not None:
                h = replace(h, messages=h.messages[: h.index_of(upto) + 1])
            return _budgeted(h, v, mode, replace(args, upto=None), context, budget, warnings)
    return _render(history, v, mode, args, warnings)


def _budgeted(
    h: History,
    v: Vessel,
    mode: Mode,
    args: RenderArgs,
    context: ContextBudget,
    budget: int,
    warnings: list[str] | None,
) -> dict[str, Any]:
    """:func:`render` within ``budget``: the warnings of the body returned, then the budget's own. Each
    start the plan offers is rendered here, on the way down (no renderer handed to the budget to call)."""
    settings = for_vessel(args.settings, v, args.model)
    accepts = settings.audience.accepts if mode == "native" and settings.audience is not None else None
    starts, count = fit_plan(h, v, context, budget, args.model, accepts=accepts, tools=args.tools,
                             system=args.system)  # fmt: skip
    for trial in starts:
        said: list[str] = []
        body = _render(replace(h, messages=trial.sent), v, mode, args, said)
        got = trial.fitted(body, count(body, trial.sent), budget)
        if got.tokens <= budget:
            break
    if warnings is not None:
        warnings.extend(said)  # those of the body returned: the last one rendered
        warnings.extend(got.warnings)
    return got.body


def fit_plan(
    h: History,
    v: Vessel,
    context: ContextBudget,
    budget: int,
    model: str | None = None,
    the_plan: Plan | None = None,
    *,
    accepts: Accepts = None,
    tools: Sequence[ToolSpec] | None = None,
    system: str | None = None,
    extra: int = 0,
    offset: int = 0,
) -> tuple[Iterator[Trial], BodyCounter]:
    """The starts to try for the newest whole turns of ``h`` whose body fits ``budget``, and the estimate
    of a body (see :mod:`toolreplay._budget`): the caller renders each start's messages, counts the body
    and stops at the first that fits (:meth:`Trial.fitted`). ``the_plan`` (default: planned from ``h``,
    for a vessel that takes back what ``accepts`` says), ``extra`` and ``offset`` when ``h`` holds only
    the conversation's last part (see :func:`~toolreplay._budget.trials`)."""
    from toolreplay._tokens import counter_for

    count = body_counter(counter_for(v.wire, model or v.model))
    if the_plan is None:
        reserved = reserved_bytes(tools if tools is not None else (h.tools or ()), system)
        the_plan = plan_of(h.messages, budget, context.jump, reserved, accepts)
    return trials(h.messages, the_plan, extra=extra, summary=context.summary, offset=offset), count


def _render(
    history: History | str | Path | Mapping[str, Any],
    v: Vessel,
    mode: Mode,
    args: RenderArgs,
    warnings: list[str] | None,
) -> dict[str, Any]:
    # design 29: one render path; a render is the incremental renderer with nothing cached
    from toolreplay._render_cache import RenderCache

    return RenderCache().render(history, v, mode, args, warnings=warnings)

"""A render goes down the layers and looks its vessel up once (issue 23, design 20).

One ``toolreplay render`` and one library :func:`toolreplay.render` are traced call by call
(``sys.setprofile``). A call *climbs* when the module called sits above the module calling it: at the
level of design 20's diagram (its line is higher), or at the level of modules (the callee imports the
caller, directly or not: a callback handed down and called back from below). The vessel is *looked up*
when the table is read (``load_vessels``) or ``get_vessel`` is given a name; everything below takes the
resolved :class:`~toolreplay.Vessel` as it is.
"""

from __future__ import annotations

import collections
import functools
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from click.testing import CliRunner

import toolreplay
from helpers_common import DEMO
from test_import_graph import diagram_lines, source_graph, top_level
from toolreplay._budget import ContextBudget
from toolreplay._cli import cli

#: The one call up a command makes, each named with why: a click command's decorator calls the command it
#: wraps (``friendly`` turns an error into one line), so the wrapper, below the command, calls it.
EXPLAINED = {("toolreplay._cli._common.wrapper", "toolreplay._cli.render_cmd.render_cmd")}


@functools.cache
def _line_of() -> dict[str, int]:
    """Each top-level module or package of toolreplay: its line in design 20's diagram (0 the top)."""
    return {name: n for n, names in enumerate(diagram_lines()) for name in names}


@functools.cache
def _below(module: str) -> frozenset[str]:
    """Every module ``module`` imports, directly or not."""
    out: set[str] = set()
    for target in source_graph().get(module, {}):
        out |= {target, *_below(target)}
    return frozenset(out)


def _floor(module: str) -> int:
    return _line_of()[top_level(module).removeprefix("toolreplay.") or "toolreplay"]


@dataclass
class Trace:
    climbs: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    floors: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    table_reads: int = 0
    by_name: list[str] = field(default_factory=list)


def _ours(frame: types.FrameType | None) -> types.FrameType | None:
    """The nearest frame of toolreplay's own from ``frame`` up (through click's and the standard
    library's frames: a callback called by ``sorted`` or ``functools`` is still called by our code)."""
    while frame is not None and not frame.f_globals.get("__name__", "").startswith("toolreplay"):
        frame = frame.f_back
    return frame


@contextmanager
def traced() -> Iterator[Trace]:
    trace = Trace()
    for module in source_graph():  # the graph parsed and closed before the trace starts
        _below(module)

    def hook(frame: types.FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        if not callee.startswith("toolreplay"):
            return
        name = frame.f_code.co_name
        if callee == "toolreplay._vessels":
            trace.table_reads += name == "load_vessels"
            given = frame.f_locals.get("name")
            if name == "get_vessel" and isinstance(given, str):
                trace.by_name.append(given)
        back = _ours(frame.f_back)
        if back is None:
            return
        caller = back.f_globals["__name__"]
        edge = (f"{caller}.{back.f_code.co_name}", f"{callee}.{name}")
        if caller != callee and caller in _below(callee):
            trace.climbs[edge] += 1
        if _floor(callee) < _floor(caller):
            trace.floors[edge] += 1

    sys.setprofile(hook)
    try:
        yield trace
    finally:
        sys.setprofile(None)


def _render_cmd(*args: str) -> Callable[[], None]:
    def run() -> None:
        result = CliRunner().invoke(cli, ["render", str(DEMO), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output

    return run


RENDERS: dict[str, Callable[[], object]] = {
    "render_cmd": _render_cmd("--vessel", "anthropic"),
    "render_cmd within a budget": _render_cmd("-v", "openai", "--mode", "prose", "-T", "coop",
                                              "--max-context-tokens", "3000", "--cache-breakpoints", "2"),
    "library render": lambda: toolreplay.render(DEMO, "gemini"),
    "library render within a budget": lambda: toolreplay.render(
        DEMO, "anthropic", mode="plain", context=ContextBudget(3000), cache_breakpoints=1
    ),
}  # fmt: skip


@pytest.mark.parametrize("what", RENDERS)
def test_a_render_goes_down_and_looks_its_vessel_up_once(what: str) -> None:
    run = RENDERS[what]
    run()  # the lazy imports and the first-use caches out of the way: the second render is the one read
    with traced() as trace:
        run()
    assert trace.table_reads == 1 and len(trace.by_name) == 1, (trace.table_reads, trace.by_name)
    assert not trace.floors, f"calls up design 20's floors: {dict(trace.floors)}"
    assert set(trace.climbs) <= EXPLAINED, f"calls back up the imports: {dict(trace.climbs)}"
    assert all(n == 1 for n in trace.climbs.values()), dict(trace.climbs)


def test_the_trace_sees_a_callback_called_from_below() -> None:
    """The tracing itself: a counter whose code runs in ``_render`` (its globals), handed to the token
    estimate of ``_tokens`` far below and called from there, is a climb on both counts."""
    from toolreplay import _render
    from toolreplay._tokens import estimate

    counter = types.FunctionType((lambda text: len(text)).__code__, vars(_render), "counter")
    with traced() as trace:
        estimate(b"{}", (), counter)
    edge = ("toolreplay._tokens.estimate", "toolreplay._render.<lambda>")
    assert trace.climbs == {edge: 1} and trace.floors == {edge: 1}

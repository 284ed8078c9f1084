"""What a turn reads of its conversation: only the window the context budget may send (design 33).

Once per turn, before the first request: the conversation's place on the planning line (index lookups),
the leading system messages (and the tools), the outline of the messages from the window's earliest
possible start on, and those messages. The plan made here serves every request of the turn: each
request adds only the planning size of the reply in progress.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolreplay._budget import Accepts, Plan, PlanRow, first_mark, plan, reserved_bytes
from toolreplay._history import History, ToolSpec
from toolreplay._loop.events import TurnOptions
from toolreplay._store.window import OutlineRow, issued_of
from toolreplay._vessels import Vessel

if TYPE_CHECKING:
    from toolreplay._store import Store


@dataclass(frozen=True, slots=True)
class Window:
    """The part of the conversation a turn renders from, and the budget's plan for it."""

    history: History
    """The leading system messages (with the conversation's tools), then the messages from ``offset``."""
    offset: int
    plan: Plan | None
    """None: no budget is known, everything is sent."""
    accepts: Accepts


def plan_rows(rows: Sequence[OutlineRow], base: int, accepts: Accepts) -> list[PlanRow]:
    """The outline rows as the planner sees them, sized for the vessel that ``accepts`` says."""
    out = []
    for position, _id, role, size, issued, run in rows:
        mine = sum(n for who, n in issued_of(issued) if accepts(who)) if accepts is not None else 0
        out.append(PlanRow(position, role, run - size - base, size + mine))
    return out


def turn_accepts(vessel: Vessel, options: TurnOptions) -> Accepts:
    """What a turn's requests take back, as its plan counts it: whatever the vessel's wire and host
    issued. The turn renders natively, to an audience that also takes every model the provider reported
    for this vessel earlier (design 17), which the plan cannot know before it reads the window: counting
    every model of that wire and host keeps the plan an upper bound."""
    a = vessel.audience()  # the turn's resolved vessel: --model and --base-url are in it
    return lambda who: who is not None and who.wire == a.wire and who.host == a.host


def read_window(
    store: Store,
    cid: str,
    end: int,
    vessel: Vessel,
    options: TurnOptions,
    tool_specs: Callable[[History], Sequence[ToolSpec]],
) -> Window:
    """The conversation before position ``end`` (the turn's user message included) as far as the budget
    may send it: everything when no budget is known or a summary hook needs the left-out part."""
    accepts = turn_accepts(vessel, options)
    context = options.context
    budget = context.tokens(vessel.context_tokens, options.max_tokens)
    if budget is None:
        return Window(store.load_window(cid, 0, 0, end), 0, None, accepts)
    line = store.line(cid, end)
    system = store.load_range(cid, 0, line.head)  # the system messages, and the tools
    reserved = reserved_bytes(tool_specs(system), options.system)
    mark = first_mark(line.total, budget, context.jump, reserved)
    rows = store.outline(cid, line.last_user, end, reach=line.base + mark)
    sized = plan_rows(rows, line.base, accepts)
    the_plan = plan(sized, line.head, line.last_user, mark, budget, context.jump, reserved)
    offset = line.head if context.summary is not None else the_plan.starts[0]
    # the system messages again, with the rest: one snapshot of everything the render reads
    return Window(store.load_window(cid, line.head, offset, end), offset, the_plan, accepts)


__all__ = ["Window", "plan_rows", "read_window", "turn_accepts"]

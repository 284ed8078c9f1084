"""A ``toolreplay demo`` section: the bundled conversation's next request on every vessel.

:func:`demo_vessels_section` prints, for each vessel, a one-line summary of the next-turn request (wire,
size in bytes, elements in its message list, calls replayed and the id the first one travels under), then
for one vessel (:data:`SIDE_BY_SIDE_VESSEL`) the plain, prose and native message lists side by side, one
short line per message (``asst coop(close 12 …)``, ``tool status: closed``, ``user Close todo…``),
with the messages that carry earlier calls or their answers highlighted. Both read at 80 columns.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from toolreplay._jsonenc import encode
from toolreplay._render import render
from toolreplay._replay import Mode, prose_record
from toolreplay._vessels import get_vessel, vessels
from toolreplay.wires import get_wire, parse_request

#: How a prose record starts (the calls written as text at the head of the next user message).
PROSE_HEAD = prose_record([])

if TYPE_CHECKING:
    from rich.text import Text

    from toolreplay._cli.demo_context import DemoContext

SIDE_BY_SIDE_VESSEL = "openai"
SIDE_BY_SIDE_MODES: tuple[Mode, ...] = ("plain", "prose", "native")


def _elements(body: dict[str, Any], wire: str) -> list[Any]:
    """The elements of the body's history (its message list; claude-prompt: its transcript lines)."""
    return get_wire(wire).body_elements(body)


def _calls_and_first_id(wire: str, body: dict[str, Any]) -> tuple[int, str]:
    """How many calls the body replays, and the id the first travels under ("-" where the wire has none),
    read back by the wire's own request parser."""
    calls = [c for m in parse_request(wire, body).messages for c in m.tool_uses]
    return len(calls), next((c.call_id for c in calls if c.call_id), "-")


def _summary_table(ctx: DemoContext) -> Any:
    from rich import box
    from rich.table import Table

    # SIMPLE_HEAD: no column rules, so the six columns (the longest id is 16 characters) fit 80 columns
    table = Table(
        title="The next request on every vessel (native replay)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for col in ("vessel", "wire", "bytes", "msgs", "calls", "first call id"):
        table.add_column(col, no_wrap=True, justify="right" if col in ("bytes", "msgs", "calls") else "left")
    for v in vessels():
        body = render(ctx.history, v)
        elements = _elements(body, v.wire)
        calls, first_id = _calls_and_first_id(v.wire, body)
        table.add_row(v.name, v.wire, str(len(encode(body))), str(len(elements)), str(calls), first_id)
    return table


def _short(value: Any) -> str:
    """A call argument in a few characters: strings and numbers as they are, anything else elided."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text = str(value)
        return text if len(text) <= 12 else text[:11] + "…"
    return "…"


def call_summary(name: str, arguments: Any) -> str:
    """``coop(close 12 …)``: a call's name and its first two argument values."""
    args = arguments
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError:
            args = arguments
    values = list(args.values()) if isinstance(args, dict) else [args]
    shown = " ".join(_short(v) for v in values[:2]) + (" …" if len(values) > 2 else "")
    return f"{name}({shown})"


_PROSE_CALL = re.compile(r"^- ([^(\s]+)\((.*)\) -> ", re.MULTILINE)


#: Role tags of the side-by-side lines (four characters: the call or words get the rest of the column).
_TAGS = {"system": "sys ", "developer": "sys ", "user": "user", "assistant": "asst", "tool": "tool"}


def message_summary(e: Any) -> tuple[str, str]:
    """One Chat message as ``tag summary`` and its style (what it carries: a call, an answer, prose)."""
    if not isinstance(e, dict):
        return str(e), ""
    role = _TAGS.get(str(e.get("role")), str(e.get("role", e.get("type", "?"))))
    content = e.get("content")
    if isinstance(content, list):  # content parts: their text
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    text = " ".join(str(content or "").split())
    calls = [c.get("function", {}) for c in e.get("tool_calls") or [] if isinstance(c, dict)]
    if calls:
        return f"{role} " + ", ".join(call_summary(str(f.get("name")), f.get("arguments")) for f in calls), (
            "bold cyan"
        )
    if e.get("role") == "tool":
        return f"tool {text}", "green"
    raw = str(content or "")
    if raw.startswith(PROSE_HEAD):
        recorded = [call_summary(n, a) for n, a in _PROSE_CALL.findall(raw)]
        return f"{role} [{', '.join(recorded)}]", "magenta"  # the record's calls, in its brackets
    return f"{role} {text}", "dim" if e.get("role") == "user" else ""


def _line(e: Any) -> Text:
    """One message on one line (the table cuts it to the column), styled by what it carries."""
    from rich.text import Text

    summary, style = message_summary(e)
    return Text(summary, style=style)


def demo_vessels_section(ctx: DemoContext) -> None:
    """Every vessel's next-turn request for the bundled conversation, then one vessel's three modes."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from toolreplay._cli.demo_context import program_name

    ctx.console.rule("The next request, on every vessel", align="left")
    ctx.console.print(_summary_table(ctx))
    ctx.console.print(
        "Each body replays the earlier calls in that wire's own call shape, ahead of the reply's text; "
        f"try: {program_name()} render <file or id> --vessel gemini --pretty",
        highlight=False,
        markup=False,
    )
    side = Table(
        title=Text(  # Text, not markup: the brackets are shown
            f"{SIDE_BY_SIDE_VESSEL}: the same next request in each mode, one message a line: sys, user, "
            "asst (assistant), tool; calls cyan, answers green, [prose records] magenta"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        expand=True,
    )
    cells: list[Text] = []
    for mode in SIDE_BY_SIDE_MODES:
        vessel = get_vessel(SIDE_BY_SIDE_VESSEL)
        elements = _elements(render(ctx.history, vessel, mode=mode), vessel.wire)
        side.add_column(f"{mode} ({len(elements)} messages)", ratio=1, no_wrap=True, overflow="ellipsis")
        cell = Text()
        for i, e in enumerate(elements):
            if i:
                cell.append("\n")
            cell.append_text(_line(e))
        cells.append(cell)
    side.add_row(*cells)
    ctx.console.print(side)

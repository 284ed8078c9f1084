"""A ``toolreplay demo`` section: the bundled conversation's next request on every vessel.

:func:`demo_vessels_section` prints, for each vessel, a one-line summary of the next-turn request (wire,
size in bytes, elements in its message list, calls replayed and the id the first one travels under), then
for one vessel (:data:`SIDE_BY_SIDE_VESSEL`) the plain, prose and native message lists side by side, one
line per element, with the elements that carry earlier calls or their answers highlighted.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolreplay.api import render
from toolreplay.jsonenc import encode
from toolreplay.profiles import vessels
from toolreplay.replay import Mode, prose_record

#: How a prose record starts (the calls written as text at the head of the next user message).
PROSE_HEAD = prose_record([])

if TYPE_CHECKING:
    from rich.text import Text

    from toolreplay.cli.demo import DemoContext

SIDE_BY_SIDE_VESSEL = "openai"
SIDE_BY_SIDE_MODES: tuple[Mode, ...] = ("plain", "prose", "native")
#: Keys (or key/value pairs) that mark an element as an earlier call or its answer, on every wire.
_CALL_MARKS = ('"tool_calls"', '"function_call"', '"tool_use"', '"functionCall"', '"calls"')
_ANSWER_MARKS = ('"role":"tool"', '"function_call_output"', '"tool_result"', '"functionResponse"')
_LIST_KEYS = ("messages", "input", "contents")


def _elements(body: dict[str, Any]) -> list[Any]:
    for key in _LIST_KEYS:
        if isinstance(body.get(key), list):
            return list(body[key])
    from toolreplay.wires.claude_prompt.render import transcript_lines

    return [json.loads(line) for line in transcript_lines(body)]


def _calls_and_first_id(wire: str, elements: list[Any]) -> tuple[int, str]:
    """How many calls the body replays, and the id the first travels under ("-" where the wire has none)."""
    first_id = "-"
    count = 0
    for e in elements:
        ids = _ids_in(e)
        count += len(ids) if wire != "gemini" else _count_gemini(e)
        if ids and first_id == "-":
            first_id = ids[0]
    if wire == "claude-prompt":
        count = sum(len(e.get("calls") or []) for e in elements if isinstance(e, dict))
    return count, first_id


def _ids_in(e: Any) -> list[str]:
    if not isinstance(e, dict):
        return []
    if e.get("type") == "function_call":
        return [str(e["call_id"])]
    out = [str(c.get("id")) for c in e.get("tool_calls") or [] if isinstance(c, dict) and c.get("id")]
    content = e.get("content")
    if isinstance(content, list):
        out += [str(b["id"]) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
    return out


def _count_gemini(e: Any) -> int:
    parts = e.get("parts") if isinstance(e, dict) else None
    return sum(1 for p in parts or [] if isinstance(p, dict) and "functionCall" in p)


def _summary_table(ctx: DemoContext) -> Any:
    from rich.table import Table

    table = Table(title="The next request on every vessel (native replay)", title_justify="left")
    for col in ("vessel", "wire", "bytes", "elements", "calls", "first call id"):
        table.add_column(
            col,
            no_wrap=col != "first call id",
            justify="right" if col in ("bytes", "elements", "calls") else "left",
        )
    for v in vessels():
        body = render(ctx.history, v)
        elements = _elements(body)
        calls, first_id = _calls_and_first_id(v.wire, elements)
        table.add_row(v.name, v.wire, str(len(encode(body))), str(len(elements)), str(calls), first_id)
    return table


def _line(e: Any) -> Text:
    """One element on one line (the table cuts it to the column), styled by what it carries."""
    from rich.text import Text

    raw = json.dumps(e, ensure_ascii=False, separators=(",", ":"))
    if any(m in raw for m in _CALL_MARKS):
        return Text(raw, style="bold cyan")
    if any(m in raw for m in _ANSWER_MARKS):
        return Text(raw, style="green")
    if PROSE_HEAD in raw:
        return Text(raw, style="magenta")
    return Text(raw, style="dim" if '"user"' in raw[:20] else "")


def demo_vessels_section(ctx: DemoContext) -> None:
    """Every vessel's next-turn request for the bundled conversation, then one vessel's three modes."""
    from rich.table import Table
    from rich.text import Text

    ctx.console.rule("The next request, on every vessel", align="left")
    ctx.console.print(_summary_table(ctx))
    ctx.console.print(
        "Each body replays the earlier calls in that wire's own call shape, ahead of the reply's text; "
        "try: toolreplay render <file or id> --vessel gemini --pretty",
        highlight=False,
        markup=False,
    )
    side = Table(
        title=(
            f"{SIDE_BY_SIDE_VESSEL}: the same next request in each mode, one message a line "
            "(calls cyan, answers green, prose records magenta)"
        ),
        title_justify="left",
        show_lines=True,
        expand=True,
    )
    cells: list[Text] = []
    for mode in SIDE_BY_SIDE_MODES:
        elements = _elements(render(ctx.history, SIDE_BY_SIDE_VESSEL, mode=mode))
        side.add_column(f"{mode} ({len(elements)} messages)", ratio=1, no_wrap=True, overflow="ellipsis")
        cell = Text()
        for i, e in enumerate(elements):
            if i:
                cell.append("\n")
            cell.append_text(_line(e))
        cells.append(cell)
    side.add_row(*cells)
    ctx.console.print(side)

"""``toolreplay demo``: the bundled conversation, stored, then replayed plain and native side by side.

No network and no key: it reads ``toolreplay/data/demo.json``, stores it in the embedded store (running it
again changes nothing) and prints what each reply looks like to the model in each mode.

The demo is a list of sections (:data:`SECTIONS`), each a function of one :class:`DemoContext`. Another
part of toolreplay adds its own section by appending to the list (e.g. every vessel's request, the audit)
or by passing ``sections=`` to :func:`run_demo`.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING

import click

from toolreplay._cli._common import db_option, friendly
from toolreplay._cli.demo_context import DemoContext, Section, program_name
from toolreplay._errors import StoreError
from toolreplay._history import History, Message, load_history
from toolreplay._replay import ReplayCall, ReplaySettings, TurnMessage, prepare_turn_messages
from toolreplay._store import ImportResult, open_store

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

DEMO_RESOURCE = "demo.json"


def load_demo_history() -> History:
    """The bundled example conversation (a chief closing todos with the ``coop`` tool)."""
    path = resources.files("toolreplay") / "data" / DEMO_RESOURCE
    with resources.as_file(path) as real:
        return load_history(real)


# --------------------------------------------------------------------------------------------------
# the sections


def section_stored(ctx: DemoContext) -> None:
    h, r = ctx.history, ctx.imported
    calls = sum(len(m.tool_uses) for m in h.messages)
    done = f"{r.added} added" if r.added else "already there, unchanged"
    if ctx.conflict is not None:
        done = "not stored: the store holds a different demo-chief"
    ctx.console.rule(f"toolreplay demo: conversation {h.id}", align="left")
    ctx.console.print(
        f"{len(h.messages)} messages and {calls} tool calls ({done}): a chief works through the coop "
        "todo board on several vessels. Below, what the model is sent for each earlier message: "
        "[bold]plain[/] (words only, what agents sent before) and [bold]native[/] (the calls replayed "
        "as calls, ahead of the reply's text).",
        highlight=False,
    )


def call_text(c: ReplayCall) -> Text:
    from rich.text import Text

    out = Text()
    out.append("call ", style="bold cyan")
    out.append(c.name, style="bold cyan")
    out.append(f" {c.arguments}", style="cyan")
    answer = c.answer.replace("\n", "\n     ")
    out.append(f"\n  -> {answer}", style="green")
    out.append(f"\n  id {c.call_id}", style="dim")
    if c.stored_name != c.name:
        out.append(f"\n  stored as {c.stored_name}, replayed as {c.name}", style="magenta")
    if "input_excerpt" in c.patches:
        out.append("\n  input was not a JSON object: sent as input_excerpt", style="magenta")
    if "answer_cut" in c.patches:
        out.append("\n  answer cut to the bound", style="magenta")
    return out


def turn_text(t: TurnMessage, *, with_calls: bool) -> Text:
    from rich.text import Text

    out = Text()
    if with_calls:
        for c in t.calls:
            out.append_text(call_text(c))
            out.append("\n")
    out.append(t.text or "(no text)", style="" if t.role == "assistant" else "dim")
    return out


def section_side_by_side(ctx: DemoContext) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(show_lines=True, expand=True)
    table.add_column("message", no_wrap=True, ratio=1)
    table.add_column("plain: words only", ratio=3)
    table.add_column("native: calls replayed as calls", ratio=4)
    native = {t.message_id: t for t in ctx.native}
    for p in ctx.plain:
        if p.role == "system":
            continue
        n = native[p.message_id]
        m = ctx.message(p.message_id)
        label = Text(f"{p.message_id}\n{p.role}", style="bold" if p.role == "assistant" else "dim")
        if m.vessel:
            label.append(f"\n{m.vessel}", style="dim")
        if p.role == "assistant" and not m.tool_uses:
            label.append("\nno call", style="bold red")
        table.add_row(label, turn_text(p, with_calls=False), turn_text(n, with_calls=True))
    ctx.console.print(table)


def section_patches(ctx: DemoContext) -> None:
    from rich.text import Text

    ctx.console.rule("What the replay changed, and why", align="left")
    lines = Text()
    for t in ctx.native:
        made = ctx.message(t.message_id).tool_uses
        # the replay keeps a reply's last calls, so the i-th replayed call is stored at this position
        first = len(made) - len(t.calls)
        for i, c in enumerate(t.calls):
            stored = made[first + i]
            if "renamed" in c.patches:
                lines.append(f"- {t.message_id}: ", style="bold")
                lines.append(
                    f"{c.stored_name} (the name Claude Code gives the MCP tool) replays as {c.name}: one "
                    "vocabulary for every vessel.\n"
                )
            if "input_excerpt" in c.patches:
                excerpt = str(c.input["input_excerpt"])
                lines.append(f"- {t.message_id}: ", style="bold")
                lines.append(
                    f"the stored input is {len(stored.input_text)} characters of cut-short JSON; it travels "
                    f'as {{"input_excerpt": ...}} with the first {len(excerpt)} of them, never as broken '
                    f"JSON: {excerpt[:60]!r}...\n"
                )
                if stored.provider_data:
                    lines.append(f"- {t.message_id}: ", style="bold")
                    lines.append(
                        f"its provider data ({', '.join(stored.provider_data)}) is kept beside the call, "
                        "never packed into the id.\n"
                    )
    ctx.console.print(lines)


def _closest_act(ctx: DemoContext, said: Message) -> Message | None:
    """The reply before ``said`` that did act, preferring one that closed something (the demo's point)."""
    before = ctx.history.messages[: ctx.history.index_of(said.id)]
    acted = [m for m in before if m.role == "assistant" and m.tool_uses and m.text]
    closing = [
        m
        for m in acted
        if any(isinstance(c.input, dict) and c.input.get("action") == "close" for c in m.tool_uses)
    ]
    pool = closing or acted
    return pool[0] if pool else None


def section_said_without_doing(ctx: DemoContext) -> None:
    from rich.text import Text

    said = [
        m
        for m in ctx.history.messages
        if m.role == "assistant" and m.text and not m.tool_uses and m.status == "complete"
    ]
    if not said:
        return
    ctx.console.rule("Said without doing", align="left")
    out = Text()
    for m in said:
        out.append(f"{m.id} ", style="bold red")
        out.append(f"says {m.text!r} but made no call. ")
        acted = _closest_act(ctx, m)
        if acted is not None:
            out.append(
                f"In plain mode it looks just like {acted.id} ({acted.text!r}), which made its call; "
                "in native mode only the replies that acted carry calls, so the next turn can tell them "
                "apart instead of learning that saying is enough.\n"
            )
    ctx.console.print(out)


SECTIONS: list[Section] = [section_stored, section_side_by_side, section_patches, section_said_without_doing]
"""The demo's sections in order. Append a ``Callable[[DemoContext], None]`` to add one."""


def full_demo() -> list[Section]:
    """The whole demo: these sections, every vessel's next request, and the audit of plain vs native.

    The vessel and audit sections live in their own modules (they import this one for DemoContext), so
    they are gathered here, at run time.
    """
    from toolreplay._cli.demo_audit import demo_audit_section
    from toolreplay._cli.demo_vessels import demo_vessels_section

    return [*SECTIONS[:-1], demo_vessels_section, SECTIONS[-1], demo_audit_section]


# --------------------------------------------------------------------------------------------------
# running it


def run_demo(db: str | None, console: Console, sections: Sequence[Section] | None = None) -> DemoContext:
    """Store the bundled conversation (idempotent), replay it both ways, run each section, say where."""
    h = load_demo_history()
    store = open_store(db)
    conflict: str | None = None
    try:
        url = store.url
        try:
            imported = store.import_history(h)
            stored = store.load(h.id)
        except StoreError as exc:
            # The store holds the demo an earlier toolreplay bundled (or one the user changed): the demo
            # still runs, on the bundled copy, and says why it stored nothing.
            if not store.exists(h.id):
                raise
            conflict, imported, stored = str(exc), ImportResult(h.id, 0, 0), h
    finally:
        store.close()
    settings = ReplaySettings()
    ctx = DemoContext(
        console=console,
        history=stored,
        db=url,
        imported=imported,
        settings=settings,
        plain=prepare_turn_messages(stored, "plain", settings=settings),
        native=prepare_turn_messages(stored, "native", settings=settings),
        conflict=conflict,
    )
    for section in full_demo() if sections is None else sections:
        section(ctx)
    prog = program_name()
    where = f"Stored in {url} (conversation {h.id})."
    if conflict is not None:
        where = (
            f"Not stored: {url} already holds a different {h.id}, from an earlier toolreplay? ({conflict}); "
            "name another --db to store this one."
        )
    console.print(
        f"{where} Try next: {prog} history show {h.id}  |  {prog} replay {h.id} --mode native",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    return ctx


@click.command("demo")
@db_option
@friendly
def demo(db: str | None) -> None:
    """Store the bundled conversation and show it replayed plain vs native (no network, no key)."""
    from rich.console import Console

    run_demo(db, Console())

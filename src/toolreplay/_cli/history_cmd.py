"""``toolreplay history list``, ``history show ID [--json]`` and ``history rm ID [MESSAGE]``: what the store
holds, and removing it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from toolreplay._cli._common import db_option, friendly
from toolreplay._history import History, Message, ToolCall, history_to_dict

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from toolreplay._store import ConversationInfo, Store
    from toolreplay._store.window import UsageRecord

#: The ``meta`` key the lab and the audit set on a reply that said it acted without a call.
SAID_WITHOUT_DOING = "said_without_doing"


@click.group()
def history() -> None:
    """List, show or remove stored conversations."""


def _matching(store: Store, rows: list[ConversationInfo], query: str) -> list[ConversationInfo]:
    """The conversations whose id, or a message's text, or a call's name or input, holds ``query``
    (case-insensitive)."""
    needle = query.casefold()

    def hit(h: History) -> bool:
        return needle in h.id.casefold() or any(
            needle in m.text.casefold()
            or any(
                needle in f"{c.name} {json.dumps(c.input, ensure_ascii=False)}".casefold()
                for c in m.tool_uses
            )
            for m in h.messages
        )

    return [r for r in rows if hit(store.load(r.id))]


@history.command("list")
@click.option("-n", "count", type=click.IntRange(min=0), default=None, help="Show only the N most recent.")
@click.option("-q", "--query", default=None, metavar="TEXT", help="Only conversations whose text holds TEXT.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON (a list, newest first).")
@db_option
@friendly
def list_cmd(count: int | None, query: str | None, as_json: bool, db: str | None) -> None:
    """List stored conversations, newest first.

    Each row: id, messages, calls, last update.

    \b
    Examples:
      toolreplay history list -n 5
      toolreplay history list -q "close #12" --json
    """
    from toolreplay._store import open_store

    store = open_store(db)
    try:
        # newest first by their latest message; among equals (or undated imports) the listing's own order
        rows = store.list_conversations()
        rows = [
            r
            for _, r in sorted(enumerate(rows), key=lambda ir: (ir[1].updated_at or "", ir[0]), reverse=True)
        ]
        if query:
            rows = _matching(store, rows, query)
        url = store.url
    finally:
        store.close()
    rows = rows[:count] if count is not None else rows
    if as_json:
        out = [
            {"id": r.id, "messages": r.messages, "calls": r.calls, "updated_at": r.updated_at}
            | ({"agent": r.agent, "upstream": r.upstream} if r.agent or r.upstream else {})
            for r in rows
        ]
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    _print_rows(rows, url, query)


def _print_rows(rows: list[ConversationInfo], url: str, query: str | None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not rows:
        empty = (
            f"No conversation holds {query!r} in {url}."
            if query
            else f"No conversations stored in {url} yet."
        )
        console.print(empty + ("" if query else " Try: toolreplay demo"), markup=False, soft_wrap=True)
        return
    table = Table(title=f"Conversations in {url}", title_justify="left")
    table.add_column("id", overflow="fold")
    table.add_column("messages", justify="right")
    table.add_column("calls", justify="right")
    table.add_column("updated")
    # the proxy's conversations say which agent made them and where its requests went
    proxied = any(r.agent or r.upstream for r in rows)
    if proxied:
        table.add_column("agent", overflow="fold")
        table.add_column("upstream", overflow="fold")
    for r in rows:
        cells = [r.id, str(r.messages), str(r.calls), r.updated_at or "-"]
        table.add_row(*cells, *([r.agent or "-", r.upstream or "-"] if proxied else []))
    console.print(table)


#: How many messages ``history show`` prints without ``-n``.
PAGE = 20


@history.command("show")
@click.argument("conversation_id", metavar="ID")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help=f"Show the N newest messages (0: all). Default: {PAGE}; with --json, all.",
)
@click.option(
    "--offset", type=click.IntRange(min=0), default=0, metavar="K", help="Skip the K newest messages first."
)
@click.option("--json", "as_json", is_flag=True, help="Print the stored record in the history file format.")
@db_option
@friendly
def show_cmd(conversation_id: str, limit: int | None, offset: int, as_json: bool, db: str | None) -> None:
    """Show a conversation, newest first: messages, calls, answers.

    Each message with its calls and their answers and, for a reply, each response's token usage with
    the provider's cache figures; marks replies that said they acted without a call, and replies a
    failed turn left interrupted. Pages through long conversations with -n and --offset, reading only
    the page. --json prints the history file format in stored order (toolreplay import reads it
    back).
    """
    from toolreplay._store import open_store

    store = open_store(db)
    try:
        total, calls = store.counts(conversation_id)
        n = limit if limit is not None else (0 if as_json else PAGE)
        stop = max(0, total - offset)
        start = 0 if n == 0 else max(0, stop - n)
        page = store.load_range(conversation_id, start, stop)  # raises for an unknown conversation
        usage = store.load_usage(conversation_id, start, stop) if not as_json else []
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(history_to_dict(page), ensure_ascii=False, indent=2))
        return
    from rich.console import Console

    console = Console()
    by_reply: dict[str, list[UsageRecord]] = {}
    for r in usage:
        by_reply.setdefault(r.message_id, []).append(r)
    for renderable in page_view(page, start, total, calls, by_reply):
        console.print(renderable)


@history.command("rm")
@click.argument("conversation_id", metavar="CONVERSATION")
@click.argument("message_id", metavar="[MESSAGE]", required=False)
@click.option("-y", "--yes", is_flag=True, help="Remove without asking.")
@db_option
@friendly
def rm_cmd(conversation_id: str, message_id: str | None, yes: bool, db: str | None) -> None:
    """Remove a stored conversation, or one message of it, with their calls.

    Asks first, naming how many messages and calls go; --yes skips the question. The messages after
    a removed one move up one place. Refused while a turn on the conversation is running.

    \b
    Examples:
      toolreplay history rm demo-chief
      toolreplay history rm demo-chief a4 --yes
    """
    from toolreplay._errors import ToolreplayError
    from toolreplay._store import open_store

    store = open_store(db)
    try:
        h = store.load(conversation_id)
        if message_id is None:
            going, what = h.messages, f"conversation {conversation_id!r}"
        else:
            going = tuple(m for m in h.messages if m.id == message_id)
            if not going:
                raise ToolreplayError(f"conversation {conversation_id!r}: no message {message_id!r}")
            what = f"message {message_id!r} of conversation {conversation_id!r}"
        calls = sum(len(m.tool_uses) for m in going)
        counts = f"{plural(len(going), 'message')}, {plural(calls, 'call')}"
        if not yes and not click.confirm(f"Remove {what} ({counts})?", default=False):
            click.echo("Nothing removed.")
            return
        # A turn holds the lock from its question to its reply's last write: never remove under it
        if (lock := store.try_lock_turn(conversation_id)) is None:
            raise ToolreplayError(
                f"conversation {conversation_id!r}: a turn on it is running; nothing removed "
                "(try again when it has ended)"
            )
        try:
            if message_id is None:
                store.delete_conversation(conversation_id)
            else:
                store.delete_message(conversation_id, message_id)
        finally:
            lock.release()
    finally:
        store.close()
    click.echo(f"Removed {what} ({counts}).")


def plural(n: int, noun: str) -> str:
    """``1 call``, ``2 calls``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def message_flags(m: Message) -> list[str]:
    """The marks a person should see on a message: said without doing, unfinished replies."""
    flags: list[str] = []
    if m.meta and m.meta.get(SAID_WITHOUT_DOING):
        flags.append("said without doing")
    if m.status == "interrupted":
        flags.append("interrupted")
    elif m.status == "in_progress":
        flags.append("in progress")
    return flags


def call_lines(call: ToolCall, index: int) -> list[tuple[str, str]]:
    """(style, text) lines for one stored call and its answer."""
    raw = "  (stored as raw text, not a JSON object)" if isinstance(call.input, str) else ""
    lines = [("bold cyan", f"  call {index}: {call.name} {call.input_text}{raw}")]
    if call.answer is None:
        lines.append(("yellow", "    -> (no answer recorded)"))
    else:
        style = "red" if call.is_error else "green"
        # An error answer is shown as the model got it; "error:" is added only when it does not say so.
        said = call.answer.lstrip().lower().startswith("error")
        label = "-> error:" if call.is_error and not said else "->"
        first, *rest = call.answer.splitlines() or [""]
        lines.append((style, f"    {label} {first}"))
        lines.extend((style, f"       {line}") for line in rest)
    return lines


def message_view(position: int, m: Message) -> RenderableType:
    from rich.text import Text

    out = Text()
    head = f"[{position}] {m.id}  {m.role}"
    out.append(head, style="bold")
    extras = [x for x in (m.vessel, m.created_at) if x]
    if extras:
        out.append("  " + "  ".join(extras), style="dim")
    for flag in message_flags(m):
        out.append(f"  [{flag}]", style="bold red" if flag == "said without doing" else "bold yellow")
    out.append("\n")
    out.append(m.text if m.text or m.parts else "(no text)", style="" if m.text else "dim italic")
    for k, p in enumerate(x for x in m.parts if x.kind != "text"):
        # an image or a document as one short line (its data stays in the store), design 34
        out.append("\n" if m.text or k else "")
        out.append(f"  [{p.label()}]", style="magenta")
    for i, call in enumerate(m.tool_uses):
        for style, line in call_lines(call, i):
            out.append("\n")
            out.append(line, style=style)
    return out


def usage_line(records: list[UsageRecord]) -> str:
    """One reply's usage, per response: ``1,200 in (1,024 cached, 85%), 8 out``."""
    parts = []
    for r in records:
        u = r.usage
        text = f"{u.input_tokens:,} in" if u.input_tokens is not None else "? in"
        if u.cached_tokens is not None:
            rate = f", {100 * u.cached_tokens / u.input_tokens:.0f}%" if u.input_tokens else ""
            text += f" ({u.cached_tokens:,} cached{rate})"
        if u.cache_write_tokens:
            text += f" ({u.cache_write_tokens:,} written to the cache)"
        if u.output_tokens is not None:
            text += f", {u.output_tokens:,} out"
        parts.append(text)
    return "  usage: " + "; ".join(parts)


def page_view(
    page: History, start: int, total: int, calls: int, usage: dict[str, list[UsageRecord]]
) -> list[RenderableType]:
    """``history show``: a header, then the page's messages newest first, each reply with its usage."""
    from rich.rule import Rule
    from rich.text import Text

    shown = len(page.messages)
    head = f"{page.id}: {plural(total, 'message')}, {plural(calls, 'call')}"
    if shown < total:
        head += f"; {start + 1}-{start + shown} shown, newest first"
    items: list[RenderableType] = [Rule(head, align="left")]
    for pos in range(shown - 1, -1, -1):
        m = page.messages[pos]
        view = message_view(start + pos, m)
        if m.id in usage and isinstance(view, Text):
            view.append("\n" + usage_line(usage[m.id]), style="dim")
        items.append(view)
        items.append("")
    if start > 0:
        items.append(Text(f"{plural(start, 'older message')}: --offset {total - start}", style="dim"))
    return items


def history_view(h: History) -> list[RenderableType]:
    """The human view of ``history show``: a header, then each message with its calls and answers."""
    from rich.rule import Rule

    calls = sum(len(m.tool_uses) for m in h.messages)
    head = f"{h.id}: {plural(len(h.messages), 'message')}, {plural(calls, 'call')}"
    items: list[RenderableType] = [Rule(head, align="left")]
    for pos, m in enumerate(h.messages):
        items.append(message_view(pos, m))
        items.append("")
    return items


def print_history(h: History, console: Console) -> None:
    for item in history_view(h):
        console.print(item)

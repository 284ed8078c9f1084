"""``toolreplay coop ...`` (the todo board by hand) and ``toolreplay mcp`` (the tools over MCP, stdio).

The board commands answer with the same words the model gets from the ``coop`` tool.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import click

from toolreplay._cli._common import db_option, friendly


def _run(db: str | None, args: Mapping[str, Any]) -> None:
    from toolreplay._store import open_store
    from toolreplay._store.board import board_of
    from toolreplay._tools import ToolError
    from toolreplay._tools.coop import run_coop

    store = open_store(db)
    try:
        answer = run_coop(board_of(store), args)
    except ToolError as exc:
        raise click.ClickException(str(exc).removeprefix("error: ")) from None
    finally:
        store.close()
    click.echo(answer)


@click.group()
def coop() -> None:
    """The coop todo board (the same board the coop tool and `toolreplay mcp` serve)."""


def _board_command(fn: Callable[..., None]) -> click.Command:
    return coop.command()(db_option(friendly(fn)))


def _text_given(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # The tool's own words ("add needs the text in the field text") are written for a model.
    if not value.strip():
        raise click.BadParameter("must not be empty", ctx=ctx, param=param)
    return value


@_board_command
@click.argument("text", callback=_text_given)
def add(text: str, db: str | None) -> None:
    """Add a todo."""
    _run(db, {"action": "add", "text": text})


@coop.command("list")
@click.option(
    "--status",
    type=click.Choice(["open", "closed", "all"]),
    default="open",
    show_default=True,
    help="Which todos to show.",
)
@db_option
@friendly
def list_cmd(status: str, db: str | None) -> None:
    """List the todos."""
    _run(db, {"action": "list", "status": status})


@_board_command
@click.argument("todo_id", type=int, metavar="N")
def show(todo_id: int, db: str | None) -> None:
    """Show todo N with its notes."""
    _run(db, {"action": "show", "id": todo_id})


@_board_command
@click.argument("todo_id", type=int, metavar="N")
@click.option("--note", default=None, help="A note to keep with the todo.")
def close(todo_id: int, note: str | None, db: str | None) -> None:
    """Close todo N."""
    _run(db, {"action": "close", "id": todo_id, "text": note})


@_board_command
@click.argument("todo_id", type=int, metavar="N")
def reopen(todo_id: int, db: str | None) -> None:
    """Reopen todo N."""
    _run(db, {"action": "reopen", "id": todo_id})


@_board_command
@click.argument("todo_id", type=int, metavar="N")
@click.argument("text", callback=_text_given)
def note(todo_id: int, text: str, db: str | None) -> None:
    """Add a note to todo N."""
    _run(db, {"action": "note", "id": todo_id, "text": text})


@_board_command
@click.argument("todo_id", type=int, metavar="N")
@click.argument("text", callback=_text_given)
def edit(todo_id: int, text: str, db: str | None) -> None:
    """Change the text of todo N."""
    _run(db, {"action": "edit", "id": todo_id, "text": text})


@click.command("mcp")
@click.option(
    "--tools",
    "tools",
    multiple=True,
    default=("coop",),
    show_default=True,
    metavar="coop|MODULE:ATTR",
    help="Tools to serve: coop, or your own (repeat or comma-separate).",
)
@click.option("--dry-tools", is_flag=True, help="Answer every call with a dry-run text; execute nothing.")
@db_option
@friendly
def mcp_cmd(tools: tuple[str, ...], dry_tools: bool, db: str | None) -> None:
    """Serve the tools over MCP on stdin/stdout (for Claude Code and other MCP clients)."""
    import asyncio

    from toolreplay._store import open_store
    from toolreplay._tools import build_registry
    from toolreplay._tools.mcp_server import serve_stdio

    store = open_store(db)
    try:
        registry = build_registry(tools, store)
        asyncio.run(serve_stdio(registry, dry=dry_tools))
    finally:
        store.close()

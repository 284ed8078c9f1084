"""``toolreplay replay SOURCE --mode native|plain|prose [--upto MESSAGE_ID]``: the prepared turn messages."""

from __future__ import annotations

import json
from typing import cast

import click

from toolreplay._cli._common import db_option, friendly, load_source
from toolreplay._replay import DEFAULT_SETTINGS, MODES, Mode, ReplaySettings, prepare_turn_messages


@click.command("replay")
@click.argument("source", metavar="SOURCE")
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="native",
    show_default=True,
    help="native: calls as calls; plain: words only; prose: calls as text in the next user message.",
)
@click.option("--upto", metavar="MESSAGE_ID", default=None, help="Cut the history after this message.")
@click.option(
    "--max-calls",
    type=int,  # checked by ReplaySettings, the bound's one check
    default=DEFAULT_SETTINGS.max_calls,
    show_default=True,
    help="Replay only each reply's last N calls.",
)
@click.option(
    "--max-chars",
    type=int,  # checked by ReplaySettings, the bound's one check
    default=DEFAULT_SETTINGS.max_chars,
    show_default=True,
    help="Bound on each replayed input and answer.",
)
@db_option
@friendly
def replay(source: str, mode: str, upto: str | None, max_calls: int, max_chars: int, db: str | None) -> None:
    """Print the turn messages every wire renders from, as JSON.

    SOURCE is a history file (JSON or JSON Lines) or the id of a stored conversation. Each item is
    {"role", "message_id", "text", "calls": [{"id", "name", "input", "arguments", "answer"}]}. A reply
    with calls but no text is left out, as it is in every request.
    """
    h = load_source(source, db)
    for warning in h.warnings:
        click.echo(f"warning: {warning}", err=True)
    settings = ReplaySettings(max_calls=max_calls, max_chars=max_chars)
    turns = prepare_turn_messages(h, cast(Mode, mode), upto=upto, settings=settings)
    click.echo(json.dumps([t.as_json() for t in turns], ensure_ascii=False, indent=2))

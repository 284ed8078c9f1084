"""Helpers shared by the command modules: the --db option, reading a SOURCE, turning errors into lines."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from toolreplay._errors import ToolreplayError
from toolreplay._history import History

F = TypeVar("F", bound=Callable[..., Any])

db_option = click.option(
    "--db",
    metavar="PATH|URL",
    default=None,
    help="Database: a SQLite path or postgresql:// URL (default: $TOOLREPLAY_DB, else the data directory).",
)

SEND_KEY_HELP = (
    "Send the vessel's key to --base-url although it is not the vessel's own host (never over plain http "
    "to a host that is not loopback)."
)


def prompt_template_options(dest: str, what: str) -> Callable[[F], F]:
    """``--prompt-template FILE`` (stored as ``dest``) and ``--server``: the chat template a command renders
    a Chat body with and whose normalisation runs first; ``what`` ends the template option's help."""
    template = click.option(
        "--prompt-template",
        dest,
        type=click.Path(dir_okay=False),
        default=None,
        metavar="FILE",
        help=f"A chat template (.jinja, or tokenizer_config.json / chat_template.json): {what}",
    )
    server = click.option(
        "--server",
        type=click.Choice(["vllm", "llama.cpp", "transformers"]),
        default="vllm",
        show_default=True,
        help="Whose normalisation runs before --prompt-template.",
    )
    return lambda fn: template(server(fn))


def friendly(fn: F) -> F:
    """Turn a ToolreplayError into ``Error: <one line>`` (click's style) and exit status 1, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolreplayError as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper  # type: ignore[return-value]


def load_source(source: str, db: str | None) -> History:
    """SOURCE is a history file (when such a file exists) or a stored conversation id.

    A file is read the way ``toolreplay import`` reads it: any known format, detected the same way, its
    warnings printed to stderr. A file holding several conversations, or an empty conversation, is refused
    with a line that says so (there would be nothing to send, or no telling which one was meant).
    """
    if not source.strip():
        raise ToolreplayError("SOURCE is empty: name a history file or a stored conversation id")
    history = _from_file(source) if Path(source).exists() else _from_store(source, db)
    if not history.messages:
        raise ToolreplayError(f"{source}: the conversation {history.id!r} is empty: it has no messages")
    return history


def _from_file(source: str) -> History:
    from toolreplay._importers import read_file

    if Path(source).is_dir():
        raise ToolreplayError(f"{source}: is a directory, not a history file")
    batch = read_file(source)
    for warning in batch.warnings:
        click.echo(f"warning: {warning}", err=True)
    if len(batch.conversations) > 1:
        ids = ", ".join(h.id for h in batch.conversations[:5])
        more = ", ..." if len(batch.conversations) > 5 else ""
        raise ToolreplayError(
            f"{source}: holds {len(batch.conversations)} conversations ({ids}{more}); import it and name "
            "one by its id"
        )
    return batch.conversations[0]


def _from_store(source: str, db: str | None) -> History:
    from toolreplay._store import open_store

    store = open_store(db)
    try:
        if not store.exists(source):
            raise ToolreplayError(
                f"{source}: neither a history file nor a stored conversation in {store.url}"
            )
        return store.load(source)
    finally:
        store.close()

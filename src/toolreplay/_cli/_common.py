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
    """SOURCE is a history file (when such a file exists) or a stored conversation id."""
    from toolreplay._history import load_history

    if not source.strip():
        raise ToolreplayError("SOURCE is empty: name a history file or a stored conversation id")
    if Path(source).exists():
        return load_history(source)
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

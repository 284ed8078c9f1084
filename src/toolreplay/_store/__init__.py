"""The store: a small Protocol, implemented on SQLite (default) and PostgreSQL.

Which database: ``--db`` beats ``$TOOLREPLAY_DB`` beats the default SQLite file in the user's data
directory (``$XDG_DATA_HOME/toolreplay/toolreplay.db``, else ``~/.local/share/toolreplay/toolreplay.db``).
A value starting with ``postgresql://`` (or ``postgres://``) selects PostgreSQL.

Guarantees every backend keeps (tested against both):

* a reply and all its tool uses are written in one transaction; a reader never sees a reply without
  its calls;
* importing the same messages again changes nothing; a message id that exists with different content is
  refused (:class:`~toolreplay._errors.StoreError`) and nothing of that import is written;
* messages of one conversation have a total order (``position``: no duplicates, no gaps) even with many
  writers;
* during a turn, each executed call is committed as it completes (``record_call``), so nothing executed
  is lost if the process dies; the reply is finished (text, status) in one transaction;
* one turn at a time per conversation (``try_lock_turn``); a reply in progress whose writer is gone (the
  process died) reads as interrupted (design 40);
* removing a message removes its calls and moves the later messages up, in one transaction.

The modules: ``schema`` (named migrations and the shared SQL), ``rows`` (the row codec and the import
plan), ``core`` (every Store method, written once), ``sqlite`` and ``postgres`` (only the connection and
the transactions), ``board`` (the coop todo board, its own small interface in the same database).
"""

from __future__ import annotations

from toolreplay._store.base import ConversationInfo, ImportResult, Store, default_db_path, resolve_db


def open_store(db: str | None = None) -> Store:
    """Open (and migrate) the store at ``db`` (see :func:`resolve_db`)."""
    url = resolve_db(db)
    if url.startswith(("postgresql://", "postgres://")):
        from toolreplay._store.postgres import PostgresStore

        return PostgresStore(url)
    from toolreplay._store.sqlite import SQLiteStore

    return SQLiteStore(url)


__all__ = ["ConversationInfo", "ImportResult", "Store", "default_db_path", "open_store", "resolve_db"]

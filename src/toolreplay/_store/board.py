"""The coop todo board: its own small interface, kept in the same database as the conversations.

The board is not part of the message store's :class:`~toolreplay._store.Store` protocol: a store holds
conversations, a board holds todos, and a program may use one without the other. :func:`board_of` gives
the board living in a store's database (the ``todos`` table of migration ``0002_todos``), so the coop tool,
``toolreplay coop`` and ``toolreplay mcp`` all see the same board as the turns that store their calls.

    board = board_of(store)
    t = board.add("fix the flaky build")
    board.update(t.id, status="closed", note="build green")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolreplay._errors import ConfigError, StoreError
from toolreplay._store.core import SQLStore, Tx, now

TODO_STATUSES = ("open", "closed")


@dataclass(frozen=True, slots=True)
class Todo:
    """One item of the coop todo board."""

    id: int
    text: str
    status: str  # "open" | "closed"
    note: str
    created_at: str
    updated_at: str


class TodoBoard(Protocol):
    """What the coop tool needs of a todo board. Every method is its own transaction."""

    def add(self, text: str) -> Todo: ...

    def get(self, todo_id: int) -> Todo | None: ...

    def todos(self, status: str | None = None) -> Sequence[Todo]:
        """Every todo (``status``: only the open or only the closed ones), in the order they were added."""
        ...

    def update(
        self, todo_id: int, *, status: str | None = None, text: str | None = None, note: str | None = None
    ) -> Todo | None:
        """Change the given fields of a todo; None when there is no such todo."""
        ...


_COLUMNS = "id, text, status, note, created_at, updated_at"
INSERT = (
    "INSERT INTO todos (text, status, note, created_at, updated_at) VALUES (?, 'open', '', ?, ?) RETURNING id"
)
GET = f"SELECT {_COLUMNS} FROM todos WHERE id = ?"
LIST = f"SELECT {_COLUMNS} FROM todos ORDER BY id"
LIST_STATUS = f"SELECT {_COLUMNS} FROM todos WHERE status = ? ORDER BY id"
UPDATE = "UPDATE todos SET text = ?, status = ?, note = ?, updated_at = ? WHERE id = ?"


def _todo(row: Sequence[Any] | None) -> Todo | None:
    return None if row is None else Todo(int(row[0]), row[1], row[2], row[3], row[4], row[5])


class SQLTodoBoard:
    """The board in a store's SQL database (SQLite or PostgreSQL), through the store's transactions."""

    def __init__(self, store: SQLStore) -> None:
        self.store = store
        d = store.dialect
        self._insert, self._get, self._update = d.sql(INSERT), d.sql(GET), d.sql(UPDATE)
        self._list, self._list_status = d.sql(LIST), d.sql(LIST_STATUS)
        self._lock = d.for_update(GET)  # an update reads the todo it changes under its row lock

    def __repr__(self) -> str:
        return f"SQLTodoBoard({self.store!r})"

    def add(self, text: str) -> Todo:
        stamp = now()

        def run(c: Tx) -> int:
            row = c.execute(self._insert, (text, stamp, stamp)).fetchone()
            assert row is not None  # INSERT ... RETURNING always returns the row
            return int(row[0])

        return Todo(self.store.transact(run, "the todo was not added"), text, "open", "", stamp, stamp)

    def get(self, todo_id: int) -> Todo | None:
        return self.store.transact(
            lambda c: _todo(c.execute(self._get, (todo_id,)).fetchone()), "the read failed", read=True
        )

    def todos(self, status: str | None = None) -> Sequence[Todo]:
        def run(c: Tx) -> list[Any]:
            if status is None:
                return c.execute(self._list).fetchall()
            return c.execute(self._list_status, (status,)).fetchall()

        rows = self.store.transact(run, "the read failed", read=True)
        return [Todo(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows]

    def update(
        self, todo_id: int, *, status: str | None = None, text: str | None = None, note: str | None = None
    ) -> Todo | None:
        if status is not None and status not in TODO_STATUSES:
            raise StoreError(f"todo status {status!r} is not open or closed")

        def run(c: Tx) -> Todo | None:
            old = _todo(c.execute(self._lock, (todo_id,)).fetchone())
            if old is None:
                return None
            stamp = now()
            new = Todo(
                old.id,
                old.text if text is None else text,
                old.status if status is None else status,
                old.note if note is None else note,
                old.created_at,
                stamp,
            )
            c.execute(self._update, (new.text, new.status, new.note, stamp, todo_id))
            return new

        return self.store.transact(run, f"todo {todo_id}: the update was not written")


def board_of(store: object) -> TodoBoard:
    """The todo board kept in ``store``'s database."""
    if isinstance(store, SQLStore):
        return SQLTodoBoard(store)
    raise ConfigError(f"{store!r} keeps no todo board: the coop tool needs an SQLite or PostgreSQL store")


__all__ = ["SQLTodoBoard", "Todo", "TodoBoard", "board_of"]

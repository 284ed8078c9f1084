"""The SQL layer every part of the SQL store shares: a transaction (:class:`Tx`), a backend's
:class:`Dialect` and :class:`Queries`, and :class:`StoreHost`, what the mixins of
:class:`~toolreplay._store.core.SQLStore` (window, live replies, origins) use of the store
they are mixed into, so they need not import the class that mixes them in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from toolreplay._errors import StoreError
from toolreplay._store import schema as S

if TYPE_CHECKING:
    from toolreplay._history import History, Message

T = TypeVar("T")


def now() -> str:
    """The current time as stored for live records (UTC, seconds, ``Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Rows(Protocol):
    """What a query returns (a DB-API cursor)."""

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Tx(Protocol):
    """One open transaction: an ``sqlite3.Connection``, or psycopg's connection behind a small adapter."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows: ...

    def executemany(self, sql: str, params: Iterable[Sequence[Any]], /) -> object: ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """What the shared SQL needs to know of a database."""

    name: S.Dialect
    placeholder: str
    """``?`` (SQLite) or ``%s`` (psycopg); the shared queries are written with ``?``."""
    row_locks: bool
    """PostgreSQL: writers queue on ``SELECT ... FOR UPDATE``; SQLite locks the whole database instead."""
    collate: str = ""
    """Appended where text is sorted, so every backend sorts by bytes."""
    lock_migrations: str | None = None
    """A statement that serializes migrations between processes (SQLite's write lock already does)."""

    def sql(self, query: str) -> str:
        return query if self.placeholder == "?" else query.replace("?", self.placeholder)

    def for_update(self, query: str) -> str:
        """``query`` locking the rows it reads, where the database locks rows."""
        return self.sql(query) + (" FOR UPDATE" if self.row_locks else "")


@dataclass(frozen=True, slots=True)
class Queries:
    """The shared queries, spelled for one dialect (built once per backend)."""

    applied_migrations: str
    record_migration: str
    conversation_exists: str
    ensure_conversation: str
    lock_conversation: str
    set_tools: str
    set_requests: str
    list_conversations: str
    load_messages: str
    load_tool_uses: str
    load_message: str
    load_message_tool_uses: str
    next_position: str
    insert_message: str
    insert_tool_use: str
    next_tool_position: str
    find_open_call: str
    find_last_idless_call: str
    set_call_answer: str
    message_state: str
    finish_reply: str
    delete_message_tool_uses: str
    delete_message: str
    message_position: str
    park_later_messages: str
    unpark_later_messages: str
    delete_conversation_tool_uses: str
    delete_conversation_messages: str
    delete_conversation: str

    @classmethod
    def of(cls, d: Dialect) -> Queries:
        shared = {
            name: d.sql(getattr(S, name.upper()))
            for name in cls.__dataclass_fields__
            if name not in ("lock_conversation", "list_conversations", "message_state")
        }
        return cls(
            **shared,
            lock_conversation=d.for_update(S.LOCK_CONVERSATION),
            list_conversations=d.sql(S.list_conversations(d.collate)),
            message_state=d.for_update(S.MESSAGE_STATE),
        )


def surrogate_error(where: str, exc: UnicodeEncodeError) -> StoreError:
    """JSON allows "\\ud800"; such text is not valid Unicode and cannot be stored (or sent)."""
    bad = exc.object[exc.start : exc.end].encode("unicode_escape").decode()
    return StoreError(
        f"{where}: text holding {bad} (a lone surrogate, not valid Unicode) cannot be stored; nothing of "
        "this write was kept"
    )


class StoreHost(Protocol):
    """What a mixin of :class:`~toolreplay._store.core.SQLStore` calls on the store it is mixed into."""

    dialect: Dialect
    queries: Queries

    def transact(self, fn: Callable[[Tx], T], what: str, *, read: bool = False) -> T: ...

    def _load(self, c: Tx, conversation_id: str) -> History | None: ...

    def _lock_conversation(self, c: Tx, cid: str) -> None: ...

    def _stored_message(self, c: Tx, cid: str, message_id: str) -> Message | None: ...


__all__ = ["Dialect", "Queries", "Rows", "StoreHost", "Tx", "now", "surrogate_error"]

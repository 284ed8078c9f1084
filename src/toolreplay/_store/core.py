"""The store's logic, written once: :class:`SQLStore` holds every method of the Store protocol.

A backend (:mod:`~toolreplay._store.sqlite`, :mod:`~toolreplay._store.postgres`) adds only what differs
between databases: how it connects, how it runs one transaction (:meth:`SQLStore.transact`), and its
:class:`Dialect` (placeholders, row locks, byte-wise text order). Everything a write decides (positions,
conflicts, which call an answer fills in, which migrations to run) is decided here, so the two backends
cannot drift apart.

How the guarantees of :mod:`toolreplay._store` are kept by this shared code:

* every write to a conversation first makes sure the conversation row exists and, where the database
  locks rows, locks it (:attr:`Dialect.row_locks`); SQLite's ``BEGIN IMMEDIATE`` takes the database's
  write lock before the transaction reads anything. Either way positions are handed out one at a time,
  ``MAX(position) + 1``, so there are no duplicates and no gaps;
* a reply and its calls are written in one transaction, and a load reads in one snapshot;
* a call recorded before it runs gets its answer filled in on the same row (:meth:`SQLStore.record_call`);
* removing a message (:meth:`SQLStore.delete_message`) moves every later message up one place in the same
  transaction, under the same lock, so positions stay ``0 .. n-1`` and the next append still lands at
  ``MAX(position) + 1``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TypeVar

from toolreplay._errors import StoreError
from toolreplay._history import History, Message, RequestSettings
from toolreplay._store import rows as R
from toolreplay._store import schema as S
from toolreplay._store import window as W
from toolreplay._store.base import ConversationInfo, ImportResult
from toolreplay._store.origins import (
    DELETE_CONVERSATION_ANSWERS,
    DELETE_MESSAGE_ANSWERS,
    Origins,
    origin_columns,
)
from toolreplay._store.replies import LiveReplies
from toolreplay._store.sql import Dialect, Queries, Rows, Tx, now, surrogate_error
from toolreplay._store.turns import TurnLock, settled

T = TypeVar("T")


class SQLStore(LiveReplies, Origins, W.WindowView, ABC):
    """The :class:`~toolreplay._store.Store` on an SQL database; a backend supplies the connection."""

    url: str
    local: bool
    dialect: Dialect
    queries: Queries

    @property
    @abstractmethod
    def where(self) -> str:
        """How errors name this database (a path, or the URL without its password)."""

    @abstractmethod
    def transact(self, fn: Callable[[Tx], T], what: str, *, read: bool = False) -> T:
        """Run ``fn`` in one transaction and commit (a read: one read-only snapshot). Any error rolls it
        back; a database error becomes a StoreError saying ``what`` did not happen."""

    @abstractmethod
    def close(self) -> None: ...

    def changes(self) -> tuple[int, int] | None:
        return None  # no cheap mark (SQLite overrides it)

    def batch(self) -> AbstractContextManager[None]:
        """The writes inside as one transaction where this database does so (SQLite and PostgreSQL override
        it); here each is its own."""
        return nullcontext()

    def _read(self, fn: Callable[[Tx], T]) -> T:
        return self.transact(fn, "the read failed", read=True)

    # ------------------------------------------------------------------------------------------
    # migrations

    def migrate(self) -> list[str]:
        """Apply every migration not yet applied, in order, in one transaction; return their names."""
        q = self.queries

        def run(c: Tx) -> list[str]:
            if self.dialect.lock_migrations is not None:
                c.execute(self.dialect.lock_migrations)
            c.execute(S.MIGRATIONS_TABLE[self.dialect.name])
            done = {r[0] for r in c.execute(q.applied_migrations).fetchall()}
            unknown = sorted(done - set(S.MIGRATION_NAMES))
            if unknown:
                raise StoreError(
                    f"{self.where}: made by a newer toolreplay (unknown migration {unknown[0]}); "
                    "upgrade toolreplay to open it"
                )
            applied: list[str] = []
            for m in S.MIGRATIONS:
                if m.name in done:
                    continue
                for statement in m.statements(self.dialect.name):
                    c.execute(statement)
                c.execute(q.record_migration, (m.name, now()))
                applied.append(m.name)
            return applied

        return self.transact(run, "the schema could not be migrated")

    def applied_migrations(self) -> list[str]:
        q = self.queries.applied_migrations
        return self._read(lambda c: sorted(r[0] for r in c.execute(q).fetchall()))

    # ------------------------------------------------------------------------------------------
    # conversations

    def list_conversations(self) -> list[ConversationInfo]:
        q = self.queries.list_conversations
        rows = self._read(lambda c: c.execute(q).fetchall())
        return [ConversationInfo(r[0], int(r[1]), int(r[2]), r[3], *origin_columns(r[4])) for r in rows]

    def exists(self, conversation_id: str) -> bool:
        q = self.queries.conversation_exists
        return self._read(lambda c: c.execute(q, (conversation_id,)).fetchone() is not None)

    def existing(self, conversation_ids: Sequence[str]) -> set[str]:
        wanted = list(dict.fromkeys(conversation_ids))
        if not wanted:
            return set()
        q = self.dialect.sql(f"SELECT id FROM conversations WHERE id IN ({', '.join('?' * len(wanted))})")
        return self._read(lambda c: {r[0] for r in c.execute(q, wanted).fetchall()})

    def _load(self, c: Tx, conversation_id: str) -> History | None:
        q = self.queries
        row = c.execute(q.conversation_exists, (conversation_id,)).fetchone()
        if row is None:
            return None
        messages = c.execute(q.load_messages, (conversation_id,)).fetchall()
        tool_uses = c.execute(q.load_tool_uses, (conversation_id,)).fetchall()
        return R.history_from_rows(conversation_id, row[0], messages, tool_uses, row[1])

    def load(self, conversation_id: str) -> History:
        h = self._read(lambda c: self._load(c, conversation_id))
        if h is None:
            raise StoreError(f"no conversation {conversation_id!r} in {self.where}")
        return self._settled(h)

    # ------------------------------------------------------------------------------------------
    # turns (design 40)

    @abstractmethod
    def try_lock_turn(self, conversation_id: str) -> TurnLock | None:
        """Take the conversation's turn lock without waiting; None when another turn holds it."""

    @abstractmethod
    def _turn_holder(self, conversation_id: str) -> str | None:
        """The token of the conversation's turn lock holder, now; None when nobody holds it."""

    def _settled(self, h: History) -> History:
        """``h`` with each reply in progress whose writer is gone read as interrupted."""
        return settled(h, lambda: self._turn_holder(h.id), lambda ids: self._still_open(h.id, ids))

    def _still_open(self, cid: str, ids: list[str]) -> set[str]:
        q = self.dialect.sql(S.MESSAGE_STATUS)

        def run(c: Tx) -> set[str]:
            return {m for m in ids if (r := c.execute(q, (cid, m)).fetchone()) and r[0] == "in_progress"}

        return self._read(run)

    def _lock_conversation(self, c: Tx, cid: str) -> None:
        """Create the conversation if needed and, where rows lock, hold its lock until the transaction
        ends: every writer of this conversation queues here, so positions are handed out one at a time."""
        c.execute(self.queries.ensure_conversation, (cid, None))
        if self.dialect.row_locks:
            c.execute(self.queries.lock_conversation, (cid,))

    def _insert_messages(self, c: Tx, cid: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        self._insert_planned(c, cid, messages)
        calls = [r for m in messages for r in R.tool_use_rows(cid, m.id, m.tool_uses)]
        if calls:
            c.executemany(self.queries.insert_tool_use, calls)

    def import_history(self, history: History) -> ImportResult:
        def run(c: Tx) -> R.ImportPlan:
            self._lock_conversation(c, history.id)
            # The conversation row exists now (made above when new, with no tools): plan_import treats an
            # empty stored history like none.
            plan = R.plan_import(self._load(c, history.id), history)
            if plan.set_tools:
                c.execute(self.queries.set_tools, (R.tools_text(history.tools), history.id))
            if plan.requests is not None:
                c.execute(self.queries.set_requests, (R.requests_text(plan.requests), history.id))
            self._insert_messages(c, history.id, plan.new_messages)
            return plan

        plan = self.transact(run, f"conversation {history.id!r}: the import was not written")
        return ImportResult(history.id, len(plan.new_messages), plan.unchanged)

    def record_request(self, conversation_id: str, settings: RequestSettings) -> None:
        R.check_conversation_id(conversation_id)

        def run(c: Tx) -> None:
            self._lock_conversation(c, conversation_id)
            row = c.execute(self.queries.conversation_exists, (conversation_id,)).fetchone()
            held = R.requests_value(row[1])
            if not held or held[-1] != settings:
                c.execute(self.queries.set_requests, (R.requests_text((*held, settings)), conversation_id))

        self.transact(run, f"conversation {conversation_id!r}: the request was not recorded")

    def _stored_message(self, c: Tx, cid: str, message_id: str) -> Message | None:
        q = self.queries
        row = c.execute(q.load_message, (cid, message_id)).fetchone()
        if row is None:
            return None
        calls = [R.tool_call_from_row(r) for r in c.execute(q.load_message_tool_uses, (cid, message_id))]
        return R.message_from_row(row, calls)

    def append_message(self, conversation_id: str, message: Message) -> None:
        """Append one message with all its calls in one transaction (a retried append changes nothing;
        the same id with different content is refused)."""
        R.check_message(conversation_id, message)

        def run(c: Tx) -> None:
            self._lock_conversation(c, conversation_id)
            old = self._stored_message(c, conversation_id, message.id)
            if old is not None:
                diff = R.message_differences(old, message)
                if diff:
                    raise R.conflict(conversation_id, message.id, diff)
                return
            self._insert_messages(c, conversation_id, [message])

        self.transact(run, f"conversation {conversation_id!r}: message {message.id!r} was not stored")

    # ------------------------------------------------------------------------------------------
    # removal (``history rm``; a turn that sent nothing)

    def delete_conversation(self, conversation_id: str) -> None:
        """Remove a conversation, its messages and their calls, in one transaction."""
        q = self.queries
        cid = (conversation_id,)

        def run(c: Tx) -> None:
            if self.dialect.row_locks:
                c.execute(q.lock_conversation, cid)
            if c.execute(q.conversation_exists, cid).fetchone() is None:
                raise StoreError(f"no conversation {conversation_id!r} in {self.where}")
            usage = self.dialect.sql(W.DELETE_CONVERSATION_USAGE)
            answers = self.dialect.sql(DELETE_CONVERSATION_ANSWERS)
            for sql in (usage, answers, q.delete_conversation_tool_uses, q.delete_conversation_messages):
                c.execute(sql, cid)
            c.execute(q.delete_conversation, cid)

        self.transact(run, f"conversation {conversation_id!r} was not removed")

    def _delete_message(self, c: Tx, conversation_id: str, message_id: str) -> None:
        """Remove one message and its calls and move the later messages up one place; the caller holds
        the conversation's lock and has checked that the conversation exists."""
        q = self.queries
        row = c.execute(q.message_position, (conversation_id, message_id)).fetchone()
        if row is None:
            raise StoreError(f"conversation {conversation_id!r}: no message {message_id!r}")
        self._unrun(c, conversation_id, message_id)
        c.execute(self.dialect.sql(W.DELETE_MESSAGE_USAGE), (conversation_id, message_id))
        c.execute(self.dialect.sql(DELETE_MESSAGE_ANSWERS), (conversation_id, message_id))
        c.execute(q.delete_message_tool_uses, (conversation_id, message_id))
        c.execute(q.delete_message, (conversation_id, message_id))
        c.execute(q.park_later_messages, (conversation_id, int(row[0])))
        c.execute(q.unpark_later_messages, (conversation_id,))

    def delete_message(self, conversation_id: str, message_id: str) -> None:
        """Remove one message and its calls; the later messages move up one place (positions stay
        gapless), all in one transaction."""
        self.delete_messages(conversation_id, [message_id])

    def delete_messages(
        self, conversation_id: str, message_ids: Sequence[str], *, drop_if_empty: bool = False
    ) -> None:
        """Remove the messages and their calls (positions stay gapless) and, with ``drop_if_empty``, the
        conversation when no message is left, all in one transaction: a turn that sent nothing takes
        back its user message and reply this way (design 28), and nothing is left half removed."""
        q = self.queries
        cid = (conversation_id,)
        ids = ", ".join(repr(m) for m in message_ids)

        def run(c: Tx) -> None:
            if self.dialect.row_locks:
                c.execute(q.lock_conversation, cid)
            if c.execute(q.conversation_exists, cid).fetchone() is None:
                raise StoreError(f"no conversation {conversation_id!r} in {self.where}")
            for mid in message_ids:
                self._delete_message(c, conversation_id, mid)
            if drop_if_empty and c.execute(q.next_position, cid).fetchone()[0] == 0:
                c.execute(q.delete_conversation, cid)

        what = "message {} was" if len(message_ids) == 1 else "messages {} were"
        self.transact(run, f"conversation {conversation_id!r}: {what.format(ids)} not removed")


__all__ = ["Dialect", "Queries", "Rows", "SQLStore", "Tx", "now", "surrogate_error"]

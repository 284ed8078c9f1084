"""The shared store: PostgreSQL (psycopg 3, the ``postgres`` extra), for agents on several machines.

Selected by a ``postgresql://`` (or ``postgres://``) URL in ``--db`` or ``$TOOLREPLAY_DB``::

    pip install 'toolreplay[postgres]'
    export TOOLREPLAY_DB=postgresql://agent@db.internal:5432/toolreplay   # password: PGPASSWORD/~/.pgpass

Same schema, same named migrations (:mod:`toolreplay._store.schema`), same behaviour as SQLite. How the
guarantees of :mod:`toolreplay._store` are kept here:

* **total order under many writers**: every write to a conversation first takes its row lock
  (``SELECT ... FOR UPDATE`` on ``conversations``), then reads ``MAX(position) + 1``. In READ COMMITTED
  each statement after the lock sees what the previous holder committed, so two processes cannot pick
  the same position, and no position is skipped (the UNIQUE constraint backs this up);
* **a reply with all its calls**: one transaction per write; a read (``load``) runs its three queries in
  one REPEATABLE READ snapshot, so a reader never sees a reply without its calls;
* **record_call**: locks the reply's row, so a call is never added to a reply another process is
  finishing;
* **migrations** run in one transaction under an advisory lock (DDL is transactional in PostgreSQL), so
  many processes opening a blank database at once apply each migration exactly once;
* **connections**: a small pool per store, one connection per call in flight (safe to share a store
  between threads); a forked child never reuses its parent's connections. A broken connection is dropped
  and the next call connects again;
* **text is compared as bytes** (``COLLATE "C"``), as SQLite does, so ``history list`` sorts the same.

``url`` is the URL without its password (it is shown by ``history list`` and named in errors); the
password is kept only for connecting. PostgreSQL ``TEXT`` cannot hold a NUL character: a message or call
containing one is refused with a :class:`~toolreplay._errors.StoreError` (SQLite stores it).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from toolreplay._errors import ConfigError, StoreError
from toolreplay._history import History, Message, ToolCall
from toolreplay._store import ConversationInfo, ImportResult, Todo
from toolreplay._store import schema as S
from toolreplay._store.sqlite import now

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[Any, ...]]

T = TypeVar("T")

CONNECT_TIMEOUT_S = 10
MAX_IDLE = 4
ATTEMPTS = 3
# pg_advisory_xact_lock key for migrations: the bytes of "toolrepl" (any constant that fits a bigint).
MIGRATION_LOCK = 0x746F6F6C7265706C


def public_url(url: str) -> str:
    """``url`` without its password, for messages and listings (``postgresql://u:pw@h/db`` -> ``u@h/db``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit((parts.scheme, f"{user}@{host}", parts.path, parts.query, parts.fragment))


def _bytewise(sql: str, old: str, new: str) -> str:
    if old not in sql:  # the shared query changed shape: fail loudly rather than sort by locale
        raise AssertionError(f"schema query no longer contains {old!r}")
    return sql.replace(old, new)


# The shared queries in psycopg's style; a few get PostgreSQL's lock or byte-order spelling.
LIST_CONVERSATIONS = S.pg(
    _bytewise(
        _bytewise(S.LIST_CONVERSATIONS, "ORDER BY c.id", 'ORDER BY c.id COLLATE "C"'),
        "MAX(m.created_at)",
        'MAX(m.created_at COLLATE "C")',
    )
)
LOCK_CONVERSATION = "SELECT 1 FROM conversations WHERE id = %s FOR UPDATE"
LOCK_MESSAGE_STATE = S.pg(S.MESSAGE_STATE) + " FOR UPDATE"
LOCK_TODO = S.pg(S.TODO_GET) + " FOR UPDATE"
Q = {
    name: S.pg(getattr(S, name))
    for name in (
        "APPLIED_MIGRATIONS",
        "RECORD_MIGRATION",
        "CONVERSATION_EXISTS",
        "ENSURE_CONVERSATION",
        "SET_TOOLS",
        "LOAD_MESSAGES",
        "LOAD_TOOL_USES",
        "LOAD_MESSAGE",
        "LOAD_MESSAGE_TOOL_USES",
        "NEXT_POSITION",
        "INSERT_MESSAGE",
        "INSERT_TOOL_USE",
        "NEXT_TOOL_POSITION",
        "FIND_OPEN_CALL",
        "FIND_LAST_IDLESS_CALL",
        "SET_CALL_ANSWER",
        "FINISH_REPLY",
        "TODO_INSERT",
        "TODO_GET",
        "TODO_LIST",
        "TODO_LIST_STATUS",
        "TODO_UPDATE",
    )
}


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigError(
            "a postgresql:// database needs psycopg: pip install 'toolreplay[postgres]'"
        ) from None
    return psycopg


def _abandon(conn: Conn) -> None:
    """Drop a connection inherited through fork without ending the parent's session: its socket is
    pointed at /dev/null first, so libpq's goodbye message goes nowhere."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
        try:
            os.dup2(null, conn.fileno())
        finally:
            os.close(null)
    except OSError:
        return  # no socket left to protect
    conn.close()


class PostgresStore:
    """The :class:`~toolreplay._store.Store` on a PostgreSQL database (migrated on open).

    Safe to share between threads (each call takes its own pooled connection) and across processes (the
    database does the locking). Use it as a context manager or call :meth:`close`.
    """

    def __init__(
        self, url: str, *, connect_timeout: int = CONNECT_TIMEOUT_S, max_idle: int = MAX_IDLE
    ) -> None:
        self._conninfo = url
        self.url = public_url(url)
        self._password = urlsplit(url).password
        self._pg = _psycopg()
        self._connect_timeout = connect_timeout
        self._max_idle = max_idle
        self._lock = threading.Lock()
        self._idle: list[Conn] = []
        self._pid = os.getpid()
        self._closed = False
        try:
            self.migrate()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------------------------------
    # errors and connections

    def _error(self, what: str, exc: BaseException) -> StoreError:
        """A one-line StoreError naming the database (never its password) and the server's reason."""
        text = str(exc).strip()
        first = text.splitlines()[0].strip() if text else type(exc).__name__
        if self._password:
            first = first.replace(self._password, "***")
        return StoreError(f"{self.url}: {what} ({first})")

    def _connect(self) -> Conn:
        try:
            conn: Conn = self._pg.connect(
                self._conninfo, autocommit=True, connect_timeout=self._connect_timeout
            )
        except self._pg.Error as exc:
            raise self._error("cannot connect to PostgreSQL", exc) from None
        return conn

    def _checkout(self) -> Conn:
        with self._lock:
            if self._closed:
                raise StoreError(f"{self.url}: the store is closed")
            if self._pid != os.getpid():
                # A forked child: the parent's sessions are not ours to use or to end.
                for conn in self._idle:
                    _abandon(conn)
                self._idle = []
                self._pid = os.getpid()
            if self._idle:
                return self._idle.pop()
        return self._connect()

    def _checkin(self, conn: Conn) -> None:
        reusable = (
            not conn.closed
            and not conn.broken
            and conn.info.transaction_status == self._pg.pq.TransactionStatus.IDLE
        )
        with self._lock:
            if reusable and not self._closed and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    @contextmanager
    def _connection(self) -> Iterator[Conn]:
        conn = self._checkout()
        try:
            yield conn
        finally:
            self._checkin(conn)

    def _write(self, fn: Callable[[Conn], T], what: str = "the write was not committed") -> T:
        """Run ``fn`` in one READ COMMITTED transaction: commit, or roll back on any error."""
        return self._transaction(fn, what, read=False)

    def _read(self, fn: Callable[[Conn], T]) -> T:
        """Run ``fn`` in one read-only snapshot (a reply comes with all its calls)."""
        return self._transaction(fn, "the read failed", read=True)

    def _transaction(self, fn: Callable[[Conn], T], what: str, *, read: bool) -> T:
        """One transaction on a pooled connection, tried again (on another connection) only when that is
        sure to be safe:

        * a deadlock or serialization failure: the server rolled it back (possible only between writers
          taking locks in different orders, which this module avoids);
        * a connection that broke before the COMMIT was sent (the server restarted, an idle pooled
          connection was cut): nothing of it was committed. A break during the COMMIT itself is raised,
          since the outcome is unknown.
        """
        rollback = (self._pg.errors.DeadlockDetected, self._pg.errors.SerializationFailure)
        for attempt in range(1, ATTEMPTS + 1):
            committing = False
            with self._connection() as conn:
                try:
                    with conn.transaction():
                        if read:
                            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                        result = fn(conn)
                        committing = True
                    return result
                except rollback as exc:
                    if attempt == ATTEMPTS:
                        raise self._error(what, exc) from None
                except self._pg.OperationalError as exc:
                    if committing or not conn.broken or attempt == ATTEMPTS:
                        raise self._error(what, exc) from None
                except self._pg.Error as exc:
                    raise self._error(what, exc) from None
                except UnicodeEncodeError as exc:
                    # JSON allows "\ud800"; such text is not valid Unicode and cannot be stored (or sent).
                    bad = exc.object[exc.start : exc.end].encode("unicode_escape").decode()
                    raise StoreError(
                        f"{self.url}: text holding {bad} (a lone surrogate, not valid Unicode) cannot be "
                        "stored; nothing of this write was kept"
                    ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            forked = self._pid != os.getpid()
        for conn in idle:
            if forked:
                _abandon(conn)
            else:
                conn.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"

    # ------------------------------------------------------------------------------------------
    # migrations

    def migrate(self) -> list[str]:
        """Apply every migration not yet applied, in order, in one transaction; return their names."""

        def run(c: Conn) -> list[str]:
            c.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            c.execute(S.MIGRATIONS_TABLE["postgres"])
            done = {r[0] for r in c.execute(Q["APPLIED_MIGRATIONS"]).fetchall()}
            unknown = sorted(done - set(S.MIGRATION_NAMES))
            if unknown:
                raise StoreError(
                    f"{self.url}: made by a newer toolreplay (unknown migration {unknown[0]}); "
                    "upgrade toolreplay to open it"
                )
            applied: list[str] = []
            for m in S.MIGRATIONS:
                if m.name in done:
                    continue
                for statement in m.statements("postgres"):
                    c.execute(statement)
                c.execute(Q["RECORD_MIGRATION"], (m.name, now()))
                applied.append(m.name)
            return applied

        return self._write(run, "the schema could not be migrated")

    def applied_migrations(self) -> list[str]:
        return self._read(lambda c: sorted(r[0] for r in c.execute(Q["APPLIED_MIGRATIONS"]).fetchall()))

    # ------------------------------------------------------------------------------------------
    # conversations

    def list_conversations(self) -> list[ConversationInfo]:
        rows = self._read(lambda c: c.execute(LIST_CONVERSATIONS).fetchall())
        return [ConversationInfo(r[0], int(r[1]), int(r[2]), r[3]) for r in rows]

    def exists(self, conversation_id: str) -> bool:
        return self._read(
            lambda c: c.execute(Q["CONVERSATION_EXISTS"], (conversation_id,)).fetchone() is not None
        )

    @staticmethod
    def _load(c: Conn, conversation_id: str) -> History | None:
        row = c.execute(Q["CONVERSATION_EXISTS"], (conversation_id,)).fetchone()
        if row is None:
            return None
        messages = c.execute(Q["LOAD_MESSAGES"], (conversation_id,)).fetchall()
        tool_uses = c.execute(Q["LOAD_TOOL_USES"], (conversation_id,)).fetchall()
        return S.history_from_rows(conversation_id, row[0], messages, tool_uses)

    def load(self, conversation_id: str) -> History:
        h = self._read(lambda c: self._load(c, conversation_id))
        if h is None:
            raise StoreError(f"no conversation {conversation_id!r} in {self.url}")
        return h

    @staticmethod
    def _lock_conversation(c: Conn, cid: str) -> None:
        """Create the conversation if needed and hold its row lock until the transaction ends: every
        writer of this conversation queues here, so positions are handed out one at a time."""
        c.execute(Q["ENSURE_CONVERSATION"], (cid, None))
        c.execute(LOCK_CONVERSATION, (cid,))

    @staticmethod
    def _insert_messages(c: Conn, cid: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        row = c.execute(Q["NEXT_POSITION"], (cid,)).fetchone()
        start = int(row[0]) if row else 0
        with c.cursor() as cur:
            cur.executemany(
                Q["INSERT_MESSAGE"], [S.message_row(cid, start + k, m) for k, m in enumerate(messages)]
            )
            calls = [r for m in messages for r in S.tool_use_rows(cid, m.id, m.tool_uses)]
            if calls:
                cur.executemany(Q["INSERT_TOOL_USE"], calls)

    def import_history(self, history: History) -> ImportResult:
        def run(c: Conn) -> S.ImportPlan:
            self._lock_conversation(c, history.id)
            # The conversation row exists now (made above when new, with no tools): plan_import treats an
            # empty stored history like none, so the plan is the same as SQLite's.
            plan = S.plan_import(self._load(c, history.id), history)
            if plan.set_tools:
                c.execute(Q["SET_TOOLS"], (S.tools_text(history.tools), history.id))
            self._insert_messages(c, history.id, plan.new_messages)
            return plan

        plan = self._write(run, f"conversation {history.id!r}: the import was not written")
        return ImportResult(history.id, len(plan.new_messages), plan.unchanged)

    @staticmethod
    def _stored_message(c: Conn, cid: str, message_id: str) -> Message | None:
        row = c.execute(Q["LOAD_MESSAGE"], (cid, message_id)).fetchone()
        if row is None:
            return None
        calls = [S.tool_call_from_row(r) for r in c.execute(Q["LOAD_MESSAGE_TOOL_USES"], (cid, message_id))]
        return S.message_from_row(row, calls)

    def append_message(self, conversation_id: str, message: Message) -> None:
        """Append one message with all its calls in one transaction (a retried append changes nothing;
        the same id with different content is refused)."""
        S.check_message(conversation_id, message)

        def run(c: Conn) -> None:
            self._lock_conversation(c, conversation_id)
            old = self._stored_message(c, conversation_id, message.id)
            if old is not None:
                diff = S.message_differences(old, message)
                if diff:
                    raise S.conflict(conversation_id, message.id, diff)
                return
            self._insert_messages(c, conversation_id, [message])

        self._write(run, f"conversation {conversation_id!r}: message {message.id!r} was not stored")

    # ------------------------------------------------------------------------------------------
    # the reply of a live turn

    def begin_reply(
        self, conversation_id: str, message_id: str, *, vessel: str | None, created_at: str | None
    ) -> None:
        reply = Message(
            id=message_id, role="assistant", created_at=created_at, vessel=vessel, status="in_progress"
        )
        S.check_message(conversation_id, reply)

        def run(c: Conn) -> None:
            self._lock_conversation(c, conversation_id)
            if c.execute(LOCK_MESSAGE_STATE, (conversation_id, message_id)).fetchone() is not None:
                raise StoreError(
                    f"conversation {conversation_id!r}: message {message_id!r} is already stored; "
                    "a reply needs a new id"
                )
            self._insert_messages(c, conversation_id, [reply])

        self._write(run, f"conversation {conversation_id!r}: reply {message_id!r} was not stored")

    @staticmethod
    def _open_reply(c: Conn, cid: str, message_id: str) -> None:
        """Lock the reply's row (a concurrent finish waits) and refuse what is not an open reply."""
        row = c.execute(LOCK_MESSAGE_STATE, (cid, message_id)).fetchone()
        if row is None:
            raise StoreError(f"conversation {cid!r}: no message {message_id!r} to record a call on")
        if row[0] != "assistant":
            raise StoreError(
                f"conversation {cid!r}: message {message_id!r} is a {row[0]} message, not a reply"
            )
        if row[1] == "complete":
            raise StoreError(
                f"conversation {cid!r}: reply {message_id!r} is already complete; its calls cannot change"
            )

    def record_call(self, conversation_id: str, message_id: str, call: ToolCall) -> None:
        """Append one executed call to a reply that is not complete; committed at once (see the Protocol
        for how a call recorded before it ran gets its answer filled in)."""

        def run(c: Conn) -> None:
            self._open_reply(c, conversation_id, message_id)
            if call.call_id is not None:
                row = c.execute(Q["FIND_OPEN_CALL"], (conversation_id, message_id, call.call_id)).fetchone()
            else:
                row = c.execute(Q["FIND_LAST_IDLESS_CALL"], (conversation_id, message_id)).fetchone()
            if row is not None and row[3] is None and row[1] == call.name and row[2] == S.input_text(call):
                if call.answer is not None:
                    c.execute(
                        Q["SET_CALL_ANSWER"],
                        (
                            call.answer,
                            int(call.is_error),
                            S.json_text(call.provider_data),
                            conversation_id,
                            message_id,
                            row[0],
                        ),
                    )
                return
            pos = c.execute(Q["NEXT_TOOL_POSITION"], (conversation_id, message_id)).fetchone()
            start = int(pos[0]) if pos else 0
            for params in S.tool_use_rows(conversation_id, message_id, [call], start):
                c.execute(Q["INSERT_TOOL_USE"], params)

        self._write(run, f"conversation {conversation_id!r}: a call of reply {message_id!r} was not stored")

    def finish_reply(
        self,
        conversation_id: str,
        message_id: str,
        *,
        text: str,
        status: str = "complete",
        provider_data: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        S.status_of(status)

        def run(c: Conn) -> None:
            self._open_reply(c, conversation_id, message_id)
            c.execute(
                Q["FINISH_REPLY"],
                (text, status, S.json_text(provider_data), S.json_text(meta), conversation_id, message_id),
            )

        self._write(run, f"conversation {conversation_id!r}: reply {message_id!r} was not finished")

    # ------------------------------------------------------------------------------------------
    # the coop todo board

    @staticmethod
    def _todo(row: Sequence[Any] | None) -> Todo | None:
        return None if row is None else Todo(int(row[0]), row[1], row[2], row[3], row[4], row[5])

    def todo_add(self, text: str) -> Todo:
        stamp = now()

        def run(c: Conn) -> int:
            row = c.execute(Q["TODO_INSERT"], (text, stamp, stamp)).fetchone()
            assert row is not None  # INSERT ... RETURNING always returns the row
            return int(row[0])

        return Todo(self._write(run, "the todo was not added"), text, "open", "", stamp, stamp)

    def todo_get(self, todo_id: int) -> Todo | None:
        return self._read(lambda c: self._todo(c.execute(Q["TODO_GET"], (todo_id,)).fetchone()))

    def todo_list(self, status: str | None = None) -> Sequence[Todo]:
        def run(c: Conn) -> list[tuple[Any, ...]]:
            if status is None:
                return c.execute(Q["TODO_LIST"]).fetchall()
            return c.execute(Q["TODO_LIST_STATUS"], (status,)).fetchall()

        return [Todo(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in self._read(run)]

    def todo_update(
        self, todo_id: int, *, status: str | None = None, text: str | None = None, note: str | None = None
    ) -> Todo | None:
        if status is not None and status not in ("open", "closed"):
            raise StoreError(f"todo status {status!r} is not open or closed")

        def run(c: Conn) -> Todo | None:
            old = self._todo(c.execute(LOCK_TODO, (todo_id,)).fetchone())
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
            c.execute(Q["TODO_UPDATE"], (new.text, new.status, new.note, stamp, todo_id))
            return new

        return self._write(run, f"todo {todo_id}: the update was not written")


__all__ = ["PostgresStore", "public_url"]

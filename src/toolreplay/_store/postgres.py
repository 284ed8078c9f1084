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
* **text is compared as bytes** (``COLLATE "C"``), as SQLite does, so ``history list`` sorts the same;
* **one turn at a time per conversation** (design 40): a session-level advisory lock, held on a
  connection kept for the turn, seen by every machine in ``pg_locks``.

``url`` is the URL without its password (it is shown by ``history list`` and named in errors); the
password is kept only for connecting. PostgreSQL ``TEXT`` cannot hold a NUL character: a message or call
containing one is refused with a :class:`~toolreplay._errors.StoreError` (SQLite stores it).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from toolreplay._errors import ConfigError, StoreError
from toolreplay._store.core import Dialect, Queries, Rows, SQLStore, Tx, surrogate_error
from toolreplay._store.turns import TurnLock, lock_key

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[Any, ...]]

T = TypeVar("T")

CONNECT_TIMEOUT_S = 10
MAX_IDLE = 4
ATTEMPTS = 3
# pg_advisory_xact_lock key for migrations: the bytes of "toolrepl" (any constant that fits a bigint).
MIGRATION_LOCK = 0x746F6F6C7265706C
# The turn locks (design 40) use the two-key form: this class (the bytes of "turn", less the top bit),
# and the conversation's 31-bit number (turns.lock_key); pg_locks shows them as classid, objid,
# objsubid 2.
TURN_LOCK_CLASS = 0x7475726E & 0x7FFFFFFF
TRY_TURN_LOCK = "SELECT pg_try_advisory_lock(CAST(%s AS integer), CAST(%s AS integer))"
TURN_UNLOCK = "SELECT pg_advisory_unlock(CAST(%s AS integer), CAST(%s AS integer))"
TURN_HOLDER = """SELECT pid FROM pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 2
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND classid = CAST(CAST(%s AS bigint) AS oid) AND objid = CAST(CAST(%s AS bigint) AS oid)"""


def public_url(url: str) -> str:
    """``url`` without its password, for messages and listings (``postgresql://u:pw@h/db`` -> ``u@h/db``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit((parts.scheme, f"{user}@{host}", parts.path, parts.query, parts.fragment))


DIALECT = Dialect(
    "postgres",
    placeholder="%s",
    row_locks=True,
    collate=' COLLATE "C"',
    lock_migrations=f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})",
)
QUERIES = Queries.of(DIALECT)


class _Tx:
    """A psycopg connection as the shared code's :class:`~toolreplay._store.core.Tx` (psycopg runs
    ``executemany`` on a cursor)."""

    __slots__ = ("conn",)

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, params: Iterable[Sequence[Any]], /) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(sql, list(params))


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


class _TurnLock:
    """A turn lock held on a connection kept out of the pool for the turn: the session holds it, so the
    server lets go of it when the process dies, whichever machine it ran on."""

    def __init__(self, store: PostgresStore, conn: Conn, key: tuple[int, int]) -> None:
        self.store, self.conn, self.key = store, conn, key
        self.token = f"pg:{conn.info.backend_pid}"

    def release(self) -> None:
        conn, self.conn = self.conn, None  # type: ignore[assignment]
        if conn is None:
            return
        try:
            conn.execute(TURN_UNLOCK, self.key)
        except self.store._pg.Error:
            conn.close()  # the session ends, and its locks with it
            return
        self.store._checkin(conn)


class PostgresStore(SQLStore):
    """The :class:`~toolreplay._store.Store` on a PostgreSQL database (migrated on open).

    Safe to share between threads (each call takes its own pooled connection) and across processes (the
    database does the locking). Use it as a context manager or call :meth:`close`.
    """

    dialect = DIALECT
    queries = QUERIES
    local = False

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
        self._batch = threading.local()  # the connection of this thread's open batch
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

    @property
    def where(self) -> str:
        return self.url

    def try_lock_turn(self, conversation_id: str) -> TurnLock | None:
        key = (TURN_LOCK_CLASS, lock_key(conversation_id))
        conn = self._checkout()
        try:
            row = conn.execute(TRY_TURN_LOCK, key).fetchone()
        except self._pg.Error as exc:
            conn.close()
            raise self._error(f"conversation {conversation_id!r}: the turn lock was not taken", exc) from None
        if not (row and row[0]):
            self._checkin(conn)
            return None
        return _TurnLock(self, conn, key)

    def _turn_holder(self, conversation_id: str) -> str | None:
        key = (TURN_LOCK_CLASS, lock_key(conversation_id))
        row = self._read(lambda c: c.execute(TURN_HOLDER, key).fetchone())
        return f"pg:{row[0]}" if row else None

    def transact(self, fn: Callable[[Tx], T], what: str, *, read: bool = False) -> T:
        """One transaction on a pooled connection (a write: READ COMMITTED; a read: one REPEATABLE READ,
        read-only snapshot), tried again (on another connection) only when that is sure to be safe:

        * a deadlock or serialization failure: the server rolled it back (possible only between writers
          taking locks in different orders, which this module avoids);
        * a connection that broke before the COMMIT was sent (the server restarted, an idle pooled
          connection was cut): nothing of it was committed. A break during the COMMIT itself is raised,
          since the outcome is unknown.
        """
        batched: Conn | None = getattr(self._batch, "conn", None)
        if batched is not None:
            return self._in_batch(batched, fn, what)
        rollback = (self._pg.errors.DeadlockDetected, self._pg.errors.SerializationFailure)
        for attempt in range(1, ATTEMPTS + 1):
            committing = False
            with self._connection() as conn:
                try:
                    with conn.transaction():
                        if read:
                            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                        result = fn(_Tx(conn))
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
                    raise surrogate_error(self.url, exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every read and write inside, from this thread, is one transaction on one connection, committed
        at the end, rolled back whole on any error (the proxy's recorder writes one exchange so: one commit,
        nothing half-written, as on SQLite). Nothing inside is tried again on its own: an error ends it."""
        if getattr(self._batch, "conn", None) is not None:
            yield  # nested: part of the outer one
            return
        with self._connection() as conn:
            try:
                with conn.transaction():
                    self._batch.conn = conn
                    try:
                        yield
                    finally:
                        self._batch.conn = None
            except self._pg.Error as exc:
                raise self._error("the writes were not committed", exc) from None

    def _in_batch(self, conn: Conn, fn: Callable[[Tx], T], what: str) -> T:
        """``fn`` inside the open batch (a read sees the batch's own writes): an error ends the batch."""
        try:
            return fn(_Tx(conn))
        except self._pg.Error as exc:
            raise self._error(what, exc) from None
        except UnicodeEncodeError as exc:
            raise surrogate_error(self.url, exc) from None

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


__all__ = ["PostgresStore", "public_url"]

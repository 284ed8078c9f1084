"""The embedded store: SQLite, safe for many processes appending to the same file.

* WAL mode, so readers never wait for a writer and never see a half-written transaction;
* ``busy_timeout``: a writer waits for the lock instead of failing at once;
* every write starts with ``BEGIN IMMEDIATE``: the write lock is taken before the transaction reads the
  next position, so two processes appending to one conversation cannot pick the same position (a
  deferred transaction would read first and fail with SQLITE_BUSY when upgrading to a write lock);
* ``synchronous=FULL``: a committed call survives a power cut, not only a killed process;
* a turn's lock on its conversation (design 40): ``flock`` on a file per conversation in ``<db>-turns/``.

Only the connection and the transactions are SQLite's own: every method of the Store lives in
:class:`~toolreplay._store.core.SQLStore`, shared with the PostgreSQL backend.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from toolreplay._errors import StoreError
from toolreplay._store import schema as S
from toolreplay._store.base import resolve_db
from toolreplay._store.core import Dialect, Queries, SQLStore, Tx, now, surrogate_error
from toolreplay._store.turns import FileTurnLocks, TurnLock

T = TypeVar("T")
BUSY_TIMEOUT_MS = 30_000
#: Less room than this left beside a database whose write failed is a full disk (SQLite needs a few pages
#: of WAL and 32 KB of shared memory even to read).
FULL_BELOW = 1 << 20
DIALECT = Dialect("sqlite", placeholder="?", row_locks=False)
QUERIES = Queries.of(DIALECT)


def sqlite_path(url: str) -> str:
    """The file behind ``url``: a plain path, or a URL as SQLAlchemy spells it (``sqlite:///relative.db``,
    ``sqlite:////absolute.db``); ``:memory:`` is kept as it is."""
    for prefix in ("sqlite:///", "sqlite://"):
        if url.startswith(prefix):
            return url[len(prefix) :] or ":memory:"
    return url


def _write_access_problem(path: Path) -> str | None:
    """Why toolreplay cannot write ``path``, if it cannot: SQLite in WAL mode writes even to read (the
    ``-wal`` and ``-shm`` files beside the database, and the migrations check on open)."""
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is read-only"
    if not os.access(path.parent, os.W_OK):
        return f"its directory {path.parent} is not writable"
    return None


def _free_bytes(path: str) -> int | None:
    """The room left to an unprivileged writer on the filesystem of ``path``'s folder (None: unknown)."""
    if path == ":memory:":
        return None
    try:
        st = os.statvfs(Path(path).parent)
    except (OSError, AttributeError):  # no statvfs on Windows
        return None
    return st.f_bavail * st.f_frsize


def _out_of_room(path: str, exc: sqlite3.Error) -> str | None:
    """What to say when ``exc`` is a write that found no room, None when it is something else.

    SQLite says "database or disk is full" (SQLITE_FULL) when a write finds no room, and "disk I/O error"
    when it cannot even grow its shared-memory file on a full disk: read as "not a usable SQLite database",
    that looked like a corrupt store. Either way the transaction is rolled back (by SQLite, or by
    :meth:`SQLiteStore.transact`) and the committed ones are whole.
    """
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
    if code not in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR):
        return None
    free = _free_bytes(path)
    if free is not None and free < FULL_BELOW:
        why = f"the disk is full (no room left in {Path(path).parent})"
    elif code == sqlite3.SQLITE_FULL:
        why = f"no room to write ({exc}: a disk quota, or the database's size limit)"
    else:
        return None
    return f"{why}; nothing already stored was lost: free some space and run the command again"


def _open_problem(path: str, exc: sqlite3.Error) -> StoreError:
    """One line for a database that cannot be opened: no room, read-only, unwritable directory, not SQLite."""
    text = str(exc)
    full = _out_of_room(path, exc)
    if full is not None:
        made = Path(path).exists() and Path(path).stat().st_size > 0
        return StoreError(f"{path}: cannot {'open' if made else 'create'} the database: {full}")
    if "readonly" in text or "unable to open" in text:
        why = _write_access_problem(Path(path)) or text
        if not Path(path).exists():
            return StoreError(f"{path}: cannot create the database ({why}); name another with --db")
        return StoreError(
            f"{path}: cannot open the database for writing ({why}); toolreplay writes to its database "
            "even to read it (WAL mode): use a writable copy, or name another with --db"
        )
    return StoreError(f"{path}: not a usable SQLite database ({text})")


class SQLiteStore(SQLStore):
    """The :class:`~toolreplay._store.Store` on one SQLite file (created and migrated on open).

    One connection per instance, guarded by a lock so threads may share it (``asyncio.to_thread``).
    Use it as a context manager or call :meth:`close`.
    """

    dialect = DIALECT
    queries = QUERIES

    def __init__(self, db: str | Path | None = None) -> None:
        self.url = resolve_db(str(db) if db is not None else None)
        self.path = sqlite_path(self.url)
        self.local = self.path != ":memory:"  # another connection to ":memory:" is another database
        if self.path != ":memory:":
            if Path(self.path).expanduser().is_dir():
                example = Path(self.path) / "toolreplay.db"
                raise StoreError(f"{self.path}: is a directory, not a database file (e.g. {example})")
            try:
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"{self.path}: cannot create its directory ({exc.strerror}); name another with --db"
                ) from None
            self.path = str(Path(self.path).expanduser())
        self._lock = threading.RLock()
        self._batched = False
        self._commits = 0  # of writes on this connection: its data_version does not move for them
        # the turn locks (design 40): beside the file, where every process that opens it looks
        self._turns = FileTurnLocks(None if self.path == ":memory:" else Path(self.path + "-turns"))
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise _open_problem(self.path, exc) from None
        try:
            self._setup()
        except BaseException:
            self._conn.close()
            raise

    # ------------------------------------------------------------------------------------------
    # connection and migrations

    def _setup(self) -> None:
        # Two connections opening a new file at once (the proxy's recorder and its routed path, two
        # processes): switching to WAL while the other connection creates the schema answers "database
        # is locked" at once, without the busy handler, so the switch is tried again until the timeout.
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                self._pragmas()
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise _open_problem(self.path, exc) from None
                time.sleep(0.01)
            except sqlite3.DatabaseError as exc:
                raise _open_problem(self.path, exc) from None
        self.migrate()

    def _pragmas(self) -> None:
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self._refuse_foreign()  # before WAL mode: that setting would persist in another's file
        mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if self.path != ":memory:" and str(mode).lower() != "wal":
            raise StoreError(f"{self.path}: cannot switch the database to WAL mode (got {mode})")
        c.execute("PRAGMA synchronous = FULL")
        c.execute("PRAGMA foreign_keys = ON")

    def _refuse_foreign(self) -> None:
        """Refuse another program's SQLite file (llm's logs.db has a ``conversations`` table too):
        adding our tables would change a file that is not ours."""
        rows = self._conn.execute(S.SQLITE_TABLES).fetchall()
        tables = sorted(r[0] for r in rows if not r[0].startswith("sqlite_"))
        if tables and "schema_migrations" not in tables:
            more = ", ..." if len(tables) > 5 else ""
            raise StoreError(
                f"{self.path}: not a toolreplay database (it holds other tables: {', '.join(tables[:5])}"
                f"{more}); name another --db, or bring its conversations in with: toolreplay import "
                f"{self.path}"
            )

    @property
    def where(self) -> str:
        return self.path

    def try_lock_turn(self, conversation_id: str) -> TurnLock | None:
        try:
            return self._turns.try_lock(conversation_id)
        except OSError as exc:
            raise StoreError(
                f"{self.path}: the turn lock of conversation {conversation_id!r} cannot be taken in "
                f"{self._turns.folder} ({exc.strerror})"
            ) from None

    def _turn_holder(self, conversation_id: str) -> str | None:
        return self._turns.holder(conversation_id)

    def _begin(self, read: bool) -> None:
        try:
            self._conn.execute("BEGIN" if read else "BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            full = _out_of_room(self.path, exc)
            raise StoreError(
                f"{self.path}: cannot start a {'read' if read else 'write'}"
                + (f": {full}" if full else f" ({exc})")
            ) from None

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every read and write inside is one transaction, committed at the end, rolled back whole on any
        error (the proxy's recorder writes one exchange so: one commit, nothing half-written)."""
        with self._lock:
            if self._batched:
                yield
                return
            self._begin(read=False)
            self._batched = True
            try:
                yield
                self._conn.execute("COMMIT")
                self._commits += 1
            except sqlite3.Error as exc:
                self._rollback()
                raise StoreError(f"{self.path}: the writes were not committed ({exc})") from None
            except BaseException:
                self._rollback()
                raise
            finally:
                self._batched = False

    def _in_batch(self, fn: Callable[[Tx], T], what: str) -> T:
        """``fn`` inside the open batch: an error ends the batch (it rolls back)."""
        try:
            return fn(self._conn)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {what} ({exc})") from None
        except UnicodeEncodeError as exc:
            raise surrogate_error(self.path, exc) from None

    def transact(self, fn: Callable[[Tx], T], what: str, *, read: bool = False) -> T:
        """One transaction: a write starts with BEGIN IMMEDIATE (the lock first); any error rolls back.
        Inside :meth:`batch`, part of the batch's."""
        with self._lock:
            if self._batched:
                return self._in_batch(fn, what)
            c = self._conn
            self._begin(read)
            try:
                result = fn(c)
                c.execute("COMMIT")
                self._commits += not read
            except sqlite3.Error as exc:
                self._rollback()
                full = _out_of_room(self.path, exc)
                raise StoreError(f"{self.path}: {what}" + (f": {full}" if full else f" ({exc})")) from None
            except UnicodeEncodeError as exc:
                self._rollback()
                raise surrogate_error(self.path, exc) from None
            except BaseException:
                self._rollback()
                raise
            return result

    def changes(self) -> tuple[int, int] | None:
        with self._lock:
            if self._batched:
                return None  # inside a transaction: the mark would not say what others committed
            try:
                row = self._conn.execute("PRAGMA data_version").fetchone()
            except sqlite3.Error:
                return None
            return int(row[0]), self._commits

    def _rollback(self) -> None:
        # SQLite may already have rolled back by itself (e.g. on SQLITE_FULL); a second ROLLBACK would fail.
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"


__all__ = ["BUSY_TIMEOUT_MS", "SQLiteStore", "now", "sqlite_path"]

"""The embedded store: SQLite, safe for many processes appending to the same file.

* WAL mode, so readers never wait for a writer and never see a half-written transaction;
* ``busy_timeout``: a writer waits for the lock instead of failing at once;
* every write starts with ``BEGIN IMMEDIATE``: the write lock is taken before the transaction reads the
  next position, so two processes appending to one conversation cannot pick the same position (a
  deferred transaction would read first and fail with SQLITE_BUSY when upgrading to a write lock);
* ``synchronous=FULL``: a committed call survives a power cut, not only a killed process.

All SQL lives in :mod:`toolreplay._store.schema`; the rules an import follows live there too
(:func:`~toolreplay._store.schema.plan_import`), so the PostgreSQL backend shares them.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from toolreplay._errors import StoreError
from toolreplay._history import History, Message, ToolCall
from toolreplay._store import ConversationInfo, ImportResult, Todo, resolve_db
from toolreplay._store import schema as S

BUSY_TIMEOUT_MS = 30_000


def now() -> str:
    """The current time as stored for live records (UTC, seconds, ``Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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


def _open_problem(path: str, exc: sqlite3.Error) -> StoreError:
    """One line for a database that cannot be opened: read-only, unwritable directory, or not SQLite."""
    text = str(exc)
    if "readonly" in text or "unable to open" in text:
        why = _write_access_problem(Path(path)) or text
        if not Path(path).exists():
            return StoreError(f"{path}: cannot create the database ({why}); name another with --db")
        return StoreError(
            f"{path}: cannot open the database for writing ({why}); toolreplay writes to its database "
            "even to read it (WAL mode): use a writable copy, or name another with --db"
        )
    return StoreError(f"{path}: not a usable SQLite database ({text})")


class SQLiteStore:
    """The :class:`~toolreplay._store.Store` on one SQLite file (created and migrated on open).

    One connection per instance, guarded by a lock so threads may share it (``asyncio.to_thread``).
    Use it as a context manager or call :meth:`close`.
    """

    def __init__(self, db: str | Path | None = None) -> None:
        self.url = resolve_db(str(db) if db is not None else None)
        self.path = sqlite_path(self.url)
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
        c = self._conn
        try:
            c.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._refuse_foreign()  # before WAL mode: that setting would persist in another's file
            mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if self.path != ":memory:" and str(mode).lower() != "wal":
                raise StoreError(f"{self.path}: cannot switch the database to WAL mode (got {mode})")
            c.execute("PRAGMA synchronous = FULL")
            c.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            raise _open_problem(self.path, exc) from None
        self.migrate()

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

    def migrate(self) -> list[str]:
        """Apply every migration not yet applied, in order, in one transaction; return their names."""
        applied: list[str] = []
        with self._write() as c:
            c.execute(S.MIGRATIONS_TABLE["sqlite"])
            done = {r[0] for r in c.execute(S.APPLIED_MIGRATIONS)}
            unknown = sorted(done - set(S.MIGRATION_NAMES))
            if unknown:
                raise StoreError(
                    f"{self.path}: made by a newer toolreplay (unknown migration {unknown[0]}); "
                    "upgrade toolreplay to open it"
                )
            for m in S.MIGRATIONS:
                if m.name in done:
                    continue
                for statement in m.statements("sqlite"):
                    c.execute(statement)
                c.execute(S.RECORD_MIGRATION, (m.name, now()))
                applied.append(m.name)
        return applied

    def applied_migrations(self) -> list[str]:
        with self._read() as c:
            return sorted(r[0] for r in c.execute(S.APPLIED_MIGRATIONS))

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: BEGIN IMMEDIATE (the lock first), COMMIT, or ROLLBACK on any error."""
        with self._lock:
            c = self._conn
            try:
                c.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"{self.path}: cannot start a write ({exc})") from None
            try:
                yield c
                c.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise StoreError(f"{self.path}: the write was not committed ({exc})") from None
            except UnicodeEncodeError as exc:
                # JSON allows "\ud800"; such text is not valid Unicode and cannot be stored (or sent).
                self._rollback()
                bad = exc.object[exc.start : exc.end].encode("unicode_escape").decode()
                raise StoreError(
                    f"{self.path}: text holding {bad} (a lone surrogate, not valid Unicode) cannot be "
                    "stored; nothing of this write was kept"
                ) from None
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        # SQLite may already have rolled back by itself (e.g. on SQLITE_FULL); a second ROLLBACK would fail.
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query in it sees one snapshot (a reply comes with all its calls)."""
        with self._lock:
            c = self._conn
            c.execute("BEGIN")
            try:
                yield c
            finally:
                c.execute("COMMIT")

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

    # ------------------------------------------------------------------------------------------
    # conversations

    def list_conversations(self) -> list[ConversationInfo]:
        with self._read() as c:
            rows = c.execute(S.LIST_CONVERSATIONS).fetchall()
        return [ConversationInfo(r[0], r[1], r[2], r[3]) for r in rows]

    def exists(self, conversation_id: str) -> bool:
        with self._lock:
            return self._conn.execute(S.CONVERSATION_EXISTS, (conversation_id,)).fetchone() is not None

    def _load(self, c: sqlite3.Connection, conversation_id: str) -> History | None:
        row = c.execute(S.CONVERSATION_EXISTS, (conversation_id,)).fetchone()
        if row is None:
            return None
        messages = c.execute(S.LOAD_MESSAGES, (conversation_id,)).fetchall()
        tool_uses = c.execute(S.LOAD_TOOL_USES, (conversation_id,)).fetchall()
        return S.history_from_rows(conversation_id, row[0], messages, tool_uses)

    def load(self, conversation_id: str) -> History:
        with self._read() as c:
            h = self._load(c, conversation_id)
        if h is None:
            raise StoreError(f"no conversation {conversation_id!r} in {self.path}")
        return h

    def import_history(self, history: History) -> ImportResult:
        with self._write() as c:
            stored = self._load(c, history.id)
            plan = S.plan_import(stored, history)
            if stored is None:
                c.execute(S.ENSURE_CONVERSATION, (history.id, S.tools_text(history.tools)))
            elif plan.set_tools:
                c.execute(S.SET_TOOLS, (S.tools_text(history.tools), history.id))
            self._insert_messages(c, history.id, plan.new_messages)
        return ImportResult(history.id, len(plan.new_messages), plan.unchanged)

    def _insert_messages(self, c: sqlite3.Connection, cid: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        start = c.execute(S.NEXT_POSITION, (cid,)).fetchone()[0]
        c.executemany(S.INSERT_MESSAGE, (S.message_row(cid, start + k, m) for k, m in enumerate(messages)))
        c.executemany(
            S.INSERT_TOOL_USE, (row for m in messages for row in S.tool_use_rows(cid, m.id, m.tool_uses))
        )

    def _stored_message(self, c: sqlite3.Connection, cid: str, message_id: str) -> Message | None:
        row = c.execute(S.LOAD_MESSAGE, (cid, message_id)).fetchone()
        if row is None:
            return None
        calls = [S.tool_call_from_row(r) for r in c.execute(S.LOAD_MESSAGE_TOOL_USES, (cid, message_id))]
        return S.message_from_row(row, calls)

    def append_message(self, conversation_id: str, message: Message) -> None:
        """Append one message with all its calls in one transaction.

        Appending a message that is already stored with the same content changes nothing (a retried
        append is safe); with different content it is refused.
        """
        S.check_message(conversation_id, message)
        with self._write() as c:
            c.execute(S.ENSURE_CONVERSATION, (conversation_id, None))
            old = self._stored_message(c, conversation_id, message.id)
            if old is not None:
                diff = S.message_differences(old, message)
                if diff:
                    raise S.conflict(conversation_id, message.id, diff)
                return
            self._insert_messages(c, conversation_id, [message])

    # ------------------------------------------------------------------------------------------
    # the reply of a live turn

    def begin_reply(
        self, conversation_id: str, message_id: str, *, vessel: str | None, created_at: str | None
    ) -> None:
        reply = Message(
            id=message_id, role="assistant", created_at=created_at, vessel=vessel, status="in_progress"
        )
        S.check_message(conversation_id, reply)
        with self._write() as c:
            c.execute(S.ENSURE_CONVERSATION, (conversation_id, None))
            if c.execute(S.MESSAGE_STATE, (conversation_id, message_id)).fetchone() is not None:
                raise StoreError(
                    f"conversation {conversation_id!r}: message {message_id!r} is already stored; "
                    "a reply needs a new id"
                )
            self._insert_messages(c, conversation_id, [reply])

    def _open_reply(self, c: sqlite3.Connection, cid: str, message_id: str) -> None:
        row = c.execute(S.MESSAGE_STATE, (cid, message_id)).fetchone()
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
        """Append one executed call to a reply that is not complete; committed at once.

        Record a call before it runs (``answer=None``) and again with its answer: when the reply's latest
        call with the same provider ``call_id`` (for a call without one: the reply's latest call, when it
        has no id either) has no answer and the same name and input, the answer is filled in there
        instead of appending a second call. Anything else appends (providers reuse ids such as
        ``call_0`` across the rounds of one turn, so an id alone does not identify a call).
        """
        with self._write() as c:
            self._open_reply(c, conversation_id, message_id)
            if call.call_id is not None:
                row = c.execute(S.FIND_OPEN_CALL, (conversation_id, message_id, call.call_id)).fetchone()
            else:
                row = c.execute(S.FIND_LAST_IDLESS_CALL, (conversation_id, message_id)).fetchone()
            if row is not None and row[3] is None and row[1] == call.name and row[2] == S.input_text(call):
                if call.answer is not None:
                    c.execute(
                        S.SET_CALL_ANSWER,
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
            start = c.execute(S.NEXT_TOOL_POSITION, (conversation_id, message_id)).fetchone()[0]
            c.executemany(S.INSERT_TOOL_USE, S.tool_use_rows(conversation_id, message_id, [call], start))

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
        with self._write() as c:
            self._open_reply(c, conversation_id, message_id)
            c.execute(
                S.FINISH_REPLY,
                (text, status, S.json_text(provider_data), S.json_text(meta), conversation_id, message_id),
            )

    # ------------------------------------------------------------------------------------------
    # the coop todo board

    @staticmethod
    def _todo(row: Sequence[Any] | None) -> Todo | None:
        return None if row is None else Todo(int(row[0]), row[1], row[2], row[3], row[4], row[5])

    def todo_add(self, text: str) -> Todo:
        stamp = now()
        with self._write() as c:
            todo_id = c.execute(S.TODO_INSERT, (text, stamp, stamp)).fetchone()[0]
        return Todo(int(todo_id), text, "open", "", stamp, stamp)

    def todo_get(self, todo_id: int) -> Todo | None:
        with self._lock:
            return self._todo(self._conn.execute(S.TODO_GET, (todo_id,)).fetchone())

    def todo_list(self, status: str | None = None) -> Sequence[Todo]:
        with self._lock:
            if status is None:
                rows = self._conn.execute(S.TODO_LIST).fetchall()
            else:
                rows = self._conn.execute(S.TODO_LIST_STATUS, (status,)).fetchall()
        return [Todo(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows]

    def todo_update(
        self, todo_id: int, *, status: str | None = None, text: str | None = None, note: str | None = None
    ) -> Todo | None:
        if status is not None and status not in ("open", "closed"):
            raise StoreError(f"todo status {status!r} is not open or closed")
        with self._write() as c:
            old = self._todo(c.execute(S.TODO_GET, (todo_id,)).fetchone())
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
            c.execute(S.TODO_UPDATE, (new.text, new.status, new.note, stamp, todo_id))
        return new

"""The store's view for long conversations: the planning line the context budget chooses its window from,
the outline of that window, a window of messages by position, the counts, and each response's usage
(shared by the backends; ``?`` placeholders).

Each message row keeps its planning size (``size``: what every vessel gets; ``issued``: what only a
step's issuer gets, per issuer) and the running sums through it (``run_size`` of the sizes, ``run_calls``
of the calls), kept up to date by every write in the same transaction: an append adds to the last row's
sums, a call recorded or a reply finished or removed shifts the sums of the rows from it on (design 33).
A conversation stored before the sums existed has them all NULL until they are first needed: then they
are computed for the whole conversation at once (:meth:`WindowView._plan_all`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from toolreplay._errors import StoreError
from toolreplay._history import History, Message
from toolreplay._steps import Issuer
from toolreplay._store.rows import history_from_rows, message_row
from toolreplay._store.schema import INSERT_MESSAGE, MESSAGE_COLUMNS, TOOL_USE_COLUMNS
from toolreplay._tokens import planning_size
from toolreplay.wires.reply import Usage

if TYPE_CHECKING:
    from toolreplay._store.sql import Dialect, Queries, Tx

T = TypeVar("T")

#: :data:`~toolreplay._store.schema.INSERT_MESSAGE` with the planning size and the running sums.
INSERT_SIZED = INSERT_MESSAGE.replace(
    ")\n    VALUES (", ", size, issued, run_size, run_calls)\n    VALUES (?, ?, ?, ?, ", 1
)
assert INSERT_SIZED != INSERT_MESSAGE, "INSERT_MESSAGE changed shape: INSERT_SIZED needs its size columns"

LAST_RUNS = """SELECT position, run_size, run_calls FROM messages WHERE conversation_id = ?
    ORDER BY position DESC LIMIT 1"""
SET_SIZE = "UPDATE messages SET size = ?, issued = ? WHERE conversation_id = ? AND id = ?"
SET_PLANNED = """UPDATE messages SET size = ?, issued = ?, run_size = ?, run_calls = ?
    WHERE conversation_id = ? AND id = ?"""
SHIFT_RUNS = """UPDATE messages SET run_size = run_size + ?, run_calls = run_calls + ?
    WHERE conversation_id = ? AND position >= ?"""
SIZE_AT = "SELECT position, size FROM messages WHERE conversation_id = ? AND id = ?"
COUNT_MESSAGE_CALLS = "SELECT COUNT(*) FROM tool_uses WHERE conversation_id = ? AND message_id = ?"
COUNT_CALLS = "SELECT COUNT(*) FROM tool_uses WHERE conversation_id = ?"
HEAD = """SELECT position FROM messages WHERE conversation_id = ? AND role <> 'system'
    ORDER BY position LIMIT 1"""
RUN_AT = "SELECT run_size FROM messages WHERE conversation_id = ? AND position = ?"
LAST_USER = """SELECT position FROM messages WHERE conversation_id = ? AND role = 'user' AND position < ?
    ORDER BY position DESC LIMIT 1"""
# run_size grows with position (every size is at least a message's frame), so its own index finds where
# the line reaches a number of bytes
REACH = """SELECT position FROM messages WHERE conversation_id = ? AND run_size >= ?
    ORDER BY run_size LIMIT 1"""
LOAD_OUTLINE = """SELECT position, id, role, size, issued, run_size FROM messages
    WHERE conversation_id = ? AND position >= ? AND position < ? ORDER BY position"""
_RANGE = "conversation_id = ? AND position >= ? AND position < ?"
LOAD_MESSAGE_RANGE = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {_RANGE} ORDER BY position"
#: No position is this large: a range without an end.
END = 2**62
LOAD_TOOL_USE_RANGE = f"""SELECT {TOOL_USE_COLUMNS} FROM tool_uses WHERE conversation_id = ? AND message_id IN
    (SELECT id FROM messages WHERE {_RANGE}) ORDER BY message_id, position"""
USAGE_COLUMNS = "input_tokens, output_tokens, cached_tokens, cache_write_tokens, model"
INSERT_USAGE = f"""INSERT INTO usage (conversation_id, message_id, step, {USAGE_COLUMNS})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
# A removed message or conversation takes its usage rows with it (they reference the message).
DELETE_MESSAGE_USAGE = "DELETE FROM usage WHERE conversation_id = ? AND message_id = ?"
DELETE_CONVERSATION_USAGE = "DELETE FROM usage WHERE conversation_id = ?"
LOAD_USAGE = f"""SELECT u.message_id, u.step, {", ".join("u." + c for c in USAGE_COLUMNS.split(", "))}
    FROM usage u JOIN messages m ON m.conversation_id = u.conversation_id AND m.id = u.message_id
    WHERE u.conversation_id = ? AND m.position >= ? AND m.position < ? ORDER BY m.position, u.step"""


# --------------------------------------------------------------------------------------------------
# usage and the outline (the context budget's view of a conversation)


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One response's usage as stored: the reply it belongs to, and ``step``, the number of the request
    within its turn (1, 2, ...; the column keeps its first name: it is not a reply's step)."""

    message_id: str
    step: int
    usage: Usage
    model: str | None = None


OutlineRow = tuple[int, str, str, int, str | None, int]
"""One message as the context budget sees it: (position, id, role, planning size, what only a step's
issuer gets as stored (see :func:`issued_of`), running size through it)."""


def usage_row(cid: str, message_id: str, step: int, u: Usage, model: str | None) -> tuple[Any, ...]:
    """The parameters of :data:`INSERT_USAGE`."""
    return (
        cid,
        message_id,
        step,
        u.input_tokens,
        u.output_tokens,
        u.cached_tokens,
        u.cache_write_tokens,
        model,
    )


def usage_from_rows(rows: Iterable[Sequence[Any]]) -> list[UsageRecord]:
    return [
        UsageRecord(mid, int(step), Usage(*(None if x is None else int(x) for x in (i, o, c, w))), model)
        for mid, step, i, o, c, w, model in rows
    ]


# --------------------------------------------------------------------------------------------------
# planning sizes and running sums


def issued_text(issued: Sequence[tuple[Issuer, int]]) -> str | None:
    """The ``issued`` column: ``[[wire, host, model, bytes], ...]``, NULL when nothing is issuer-only."""
    if not issued:
        return None
    return json.dumps([[i.wire, i.host, i.model, n] for i, n in issued], separators=(",", ":"))


def issued_of(text: str | None) -> tuple[tuple[Issuer, int], ...]:
    """The ``issued`` column read back (not memoised: a turn reads its window's rows only, 1.00x with a
    memo: bench/RESULTS.md)."""
    if not text:
        return ()
    return tuple((Issuer(w, h, m), int(n)) for w, h, m, n in json.loads(text))


def planned_rows(
    cid: str, start: int, messages: Sequence[Message], runs: tuple[int | None, int | None]
) -> list[tuple[Any, ...]]:
    """The parameters of :data:`INSERT_SIZED` for ``messages`` stored from position ``start`` on, after a
    row whose running sums are ``runs`` ((0, 0) at the start; NULL sums stay NULL until computed)."""
    size_run, calls_run = runs
    out = []
    for k, m in enumerate(messages):
        size, issued = planning_size(m)
        if size_run is not None and calls_run is not None:
            size_run, calls_run = size_run + size, calls_run + len(m.tool_uses)
        out.append((*message_row(cid, start + k, m), size, issued_text(issued), size_run, calls_run))
    return out


class Line(NamedTuple):
    """Where a conversation up to a position stands on the planning line (design 33)."""

    head: int
    """How many system messages come first."""
    base: int
    """The running size of those system messages."""
    total: int
    """The running size through the last message, less ``base``: the line's length."""
    last_user: int
    """The position of the last user message (``head`` when there is none)."""


class WindowView:
    """The Store methods for long conversations, mixed into :class:`~toolreplay._store.core.SQLStore`."""

    dialect: Dialect
    queries: Queries

    if TYPE_CHECKING:

        @property
        def where(self) -> str: ...

        def transact(self, fn: Callable[[Tx], T], what: str, *, read: bool = False) -> T: ...

        def _load(self, c: Tx, conversation_id: str) -> History | None: ...

        def _lock_conversation(self, c: Tx, cid: str) -> None: ...

        def _settled(self, h: History) -> History: ...

    def _read(self, fn: Callable[[Tx], T]) -> T:
        return self.transact(fn, "the read failed", read=True)

    def _plan_all(self, conversation_id: str) -> None:
        """Compute and keep the planning sizes and running sums of a conversation stored before they
        existed (once: later writes keep them)."""

        def fill(c: Tx) -> None:
            self._lock_conversation(c, conversation_id)
            h = self._load(c, conversation_id)
            rows = planned_rows(conversation_id, 0, h.messages if h else (), (0, 0))
            c.executemany(self.dialect.sql(SET_PLANNED), [(*r[-4:], conversation_id, r[2]) for r in rows])

        self.transact(fill, f"conversation {conversation_id!r}: message sizes were not stored")

    def counts(self, conversation_id: str) -> tuple[int, int]:
        """How many messages and calls: the last row's position and running count (an index lookup)."""
        d, cid = self.dialect, (conversation_id,)

        def run(c: Tx) -> tuple[int, int]:
            row = c.execute(d.sql(LAST_RUNS), cid).fetchone()
            if row is None:
                return 0, 0
            calls = row[2] if row[2] is not None else c.execute(d.sql(COUNT_CALLS), cid).fetchone()[0]
            return int(row[0]) + 1, int(calls)

        return self._read(run)

    def positions(self, conversation_id: str, ids: Sequence[str]) -> dict[str, int]:
        """The position of each of ``ids`` that the conversation holds (primary-key lookups)."""
        if not ids:
            return {}
        # one primary-key lookup per id: SQLite plans ``id IN (...)`` as a scan of the outline index
        wanted = " UNION ALL ".join("SELECT ? AS id" for _ in ids)
        q = self.dialect.sql(
            f"SELECT m.id, m.position FROM ({wanted}) AS w "
            "JOIN messages m ON m.id = w.id AND m.conversation_id = ?"
        )
        rows = self._read(lambda c: c.execute(q, (*ids, conversation_id)).fetchall())
        return {r[0]: int(r[1]) for r in rows}

    def line(self, conversation_id: str, stop: int) -> Line:
        """Where the messages before position ``stop`` stand on the planning line (a few index lookups;
        the sums are computed first for a conversation stored before they existed)."""
        d, cid = self.dialect, conversation_id

        def run(c: Tx) -> Line | None:
            end = c.execute(d.sql(RUN_AT), (cid, stop - 1)).fetchone() if stop > 0 else (0,)
            if end is None or end[0] is None:
                return None
            row = c.execute(d.sql(HEAD), (cid,)).fetchone()
            head = min(int(row[0]) if row else stop, stop)
            base = c.execute(d.sql(RUN_AT), (cid, head - 1)).fetchone()[0] if head > 0 else 0
            user = c.execute(d.sql(LAST_USER), (cid, stop)).fetchone()
            last_user = int(user[0]) if user and user[0] >= head else head
            return Line(head, int(base), int(end[0]) - int(base), last_user)

        got = self._read(run)
        if got is None:
            self._plan_all(conversation_id)
            got = self._read(run)
        if got is None:
            raise StoreError(f"conversation {conversation_id!r}: no message at position {stop - 1}")
        return got

    def outline(
        self, conversation_id: str, start: int = 0, stop: int | None = None, *, reach: int | None = None
    ) -> list[OutlineRow]:
        """Each message's outline row at positions ``start <= position < stop``; with ``reach``, from the
        first message whose running size reaches ``reach`` when that comes before ``start``."""
        d = self.dialect
        span = [conversation_id, start, END if stop is None else stop]

        def run(c: Tx) -> list[Any]:
            if reach is not None:
                row = c.execute(d.sql(REACH), (conversation_id, reach)).fetchone()
                span[1] = min(start, int(row[0])) if row else start
            return c.execute(d.sql(LOAD_OUTLINE), span).fetchall()

        rows = self._read(run)
        if any(r[3] is None or r[5] is None for r in rows):
            self._plan_all(conversation_id)
            rows = self._read(run)
        return [tuple(r) for r in rows]

    def load_range(self, conversation_id: str, start: int, stop: int | None = None) -> History:
        """The messages at positions ``start <= position < stop`` (to the end without ``stop``)."""
        span = (conversation_id, start, END if stop is None else stop)
        d = self.dialect

        def run(c: Tx) -> History | None:
            row = c.execute(self.queries.conversation_exists, (conversation_id,)).fetchone()
            if row is None:
                return None
            messages = c.execute(d.sql(LOAD_MESSAGE_RANGE), span).fetchall()
            tool_uses = c.execute(d.sql(LOAD_TOOL_USE_RANGE), (conversation_id, *span)).fetchall()
            return history_from_rows(conversation_id, row[0], messages, tool_uses, row[1])

        h = self._read(run)
        if h is None:
            raise StoreError(f"no conversation {conversation_id!r} in {self.where}")
        return self._settled(h)

    def load_window(self, conversation_id: str, head: int, offset: int, stop: int) -> History:
        """The messages at positions ``0 <= position < head`` then ``offset <= position < stop``, read in
        one transaction."""
        d = self.dialect

        def run(c: Tx) -> History | None:
            row = c.execute(self.queries.conversation_exists, (conversation_id,)).fetchone()
            if row is None:
                return None
            messages, tool_uses = [], []
            for span in ((conversation_id, 0, head), (conversation_id, offset, stop)):
                if span[1] < span[2]:
                    messages += c.execute(d.sql(LOAD_MESSAGE_RANGE), span).fetchall()
                    tool_uses += c.execute(d.sql(LOAD_TOOL_USE_RANGE), (conversation_id, *span)).fetchall()
            return history_from_rows(conversation_id, row[0], messages, tool_uses, row[1])

        h = self._read(run)
        if h is None:
            raise StoreError(f"no conversation {conversation_id!r} in {self.where}")
        return self._settled(h)

    def record_usage(
        self, conversation_id: str, message_id: str, step: int, usage: Usage, model: str | None = None
    ) -> None:
        """One response's usage, as step ``step`` of the turn making reply ``message_id``."""
        row = usage_row(conversation_id, message_id, step, usage, model)
        q = self.dialect.sql(INSERT_USAGE)
        self.transact(lambda c: c.execute(q, row), f"reply {message_id!r}: usage was not stored")

    def load_usage(self, conversation_id: str, start: int = 0, stop: int | None = None) -> list[UsageRecord]:
        q, span = self.dialect.sql(LOAD_USAGE), (conversation_id, start, END if stop is None else stop)
        return usage_from_rows(self._read(lambda c: c.execute(q, span).fetchall()))

    # -- keeping the sums: called by the writes, inside their transaction ---------------------------

    def _insert_planned(self, c: Tx, cid: str, messages: Sequence[Message]) -> None:
        """Insert ``messages`` after the conversation's last one, with sizes and running sums."""
        last = c.execute(self.dialect.sql(LAST_RUNS), (cid,)).fetchone()
        start, runs = (int(last[0]) + 1, (last[1], last[2])) if last else (0, (0, 0))
        c.executemany(self.dialect.sql(INSERT_SIZED), planned_rows(cid, start, messages, runs))

    def _shift_runs(self, c: Tx, cid: str, position: int, size: int, calls: int) -> None:
        """Add ``size`` and ``calls`` to the running sums from ``position`` on (NULL sums stay NULL)."""
        if size or calls:
            c.execute(self.dialect.sql(SHIFT_RUNS), (size, calls, cid, position))

    def _resize(self, c: Tx, cid: str, message: Message) -> None:
        """A finished reply's planning size, and the running sums from it on."""
        d = self.dialect
        row = c.execute(d.sql(SIZE_AT), (cid, message.id)).fetchone()
        size, issued = planning_size(message)
        c.execute(d.sql(SET_SIZE), (size, issued_text(issued), cid, message.id))
        if row is not None and row[1] is not None:
            self._shift_runs(c, cid, int(row[0]), size - int(row[1]), 0)

    def _unrun(self, c: Tx, cid: str, message_id: str) -> None:
        """Take a message about to be removed out of the running sums of the messages after it."""
        d = self.dialect
        row = c.execute(d.sql(SIZE_AT), (cid, message_id)).fetchone()
        if row is not None and row[1] is not None:
            calls = c.execute(d.sql(COUNT_MESSAGE_CALLS), (cid, message_id)).fetchone()[0]
            self._shift_runs(c, cid, int(row[0]) + 1, -int(row[1]), -int(calls))

"""The conversations ``toolreplay proxy`` records: where each came from, and how the next request finds it.

A conversation the proxy made carries its ``origin`` (JSON: the agent's user-agent, the wire, the upstream
host, the conversation it was rewritten from), the agent's ``session`` (its session header, when it sends
one), ``head`` (a digest of its messages on the neutral model: the proxy computes the same digest for every
prefix of a request's history and asks which conversations end there, one index lookup however many
conversations are stored) and ``seen`` (when it was last written, for "newest first"). A reply may carry
the id the proxy gave its answer (``messages.answer_id``: Responses' ``previous_response_id`` names it).

A mixin of :class:`~toolreplay._store.core.SQLStore` (one definition for both backends).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from toolreplay import _jsonenc as jsonenc

if TYPE_CHECKING:
    from collections.abc import Callable

    from toolreplay._store.sql import Dialect, Queries, Tx

_SET_ORIGIN = "UPDATE conversations SET origin = ?, session = ?, head = ?, seen = ? WHERE id = ?"
_SET_HEAD = "UPDATE conversations SET head = ?, seen = ?, session = COALESCE(session, ?) WHERE id = ?"
_WRITTEN = "SELECT head, seen FROM conversations WHERE id = ?"
_SESSION = "SELECT id FROM conversations WHERE session = ? ORDER BY seen DESC, id"
_SET_ANSWER = "UPDATE messages SET answer_id = ? WHERE conversation_id = ? AND id = ?"
_ADD_ANSWER = (
    "INSERT INTO answer_ids (answer_id, conversation_id, message_id, steps) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (answer_id, conversation_id, message_id) DO UPDATE SET steps = excluded.steps"
)
#: The reply an id names, newest first; its steps then, NULL when it is the reply's latest answer.
_FIND_ANSWER = (
    "SELECT a.conversation_id, a.message_id, "
    "CASE WHEN m.answer_id = a.answer_id THEN NULL ELSE a.steps END FROM answer_ids a "
    "JOIN messages m ON m.conversation_id = a.conversation_id AND m.id = a.message_id "
    "WHERE a.answer_id = ? ORDER BY m.created_at DESC, a.conversation_id DESC"
)
#: The answer ids of one message, and of one conversation (removed with them).
DELETE_MESSAGE_ANSWERS = "DELETE FROM answer_ids WHERE conversation_id = ? AND message_id = ?"
DELETE_CONVERSATION_ANSWERS = "DELETE FROM answer_ids WHERE conversation_id = ?"
#: How many heads one lookup asks for at most (the placeholders of one statement).
_CHUNK = 500


def _stamp() -> str:
    """When a proxy conversation was last written: UTC with microseconds, so it sorts."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def origin_columns(raw: Any) -> tuple[str | None, str | None]:
    """``(agent, upstream)`` of ``history list`` from a stored origin (None, None for other conversations)."""
    if not isinstance(raw, str) or not raw:
        return None, None
    try:
        origin = json.loads(raw)
    except ValueError:
        return None, None
    if not isinstance(origin, Mapping):
        return None, None
    agent, upstream = origin.get("agent"), origin.get("upstream")
    return (agent if isinstance(agent, str) else None, upstream if isinstance(upstream, str) else None)


class Origins:
    """The Store methods of the proxy's conversations, mixed into the SQL store."""

    if TYPE_CHECKING:
        dialect: Dialect
        queries: Queries

        def transact(self, fn: Callable[[Tx], Any], what: str, *, read: bool = False) -> Any: ...

        def _lock_conversation(self, c: Tx, cid: str) -> None: ...

    def set_origin(
        self, conversation_id: str, origin: Mapping[str, Any], *, session: str | None, head: str
    ) -> None:
        values = (jsonenc.dumps(dict(origin)), session, head, _stamp(), conversation_id)
        sql = self.dialect.sql(_SET_ORIGIN)

        def run(c: Tx) -> None:
            self._lock_conversation(c, conversation_id)
            c.execute(sql, values)

        self.transact(run, f"conversation {conversation_id!r}: its origin was not stored")

    def set_head(self, conversation_id: str, head: str, session: str | None = None) -> None:
        sql = self.dialect.sql(_SET_HEAD)
        self.transact(
            lambda c: c.execute(sql, (head, _stamp(), session, conversation_id)),
            f"conversation {conversation_id!r}: its head was not stored",
        )

    def find_heads(self, heads: Sequence[str], session: str | None = None) -> list[tuple[str, str]]:
        wanted = list(dict.fromkeys(heads))

        def run(c: Tx) -> list[tuple[str, str, str]]:
            out: list[tuple[str, str, str]] = []
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                marks = ", ".join("?" * len(chunk))
                # the session is sifted here, not in SQL: with it there, SQLite reads the conversations by
                # the session index (every one without a session) in place of the heads'
                sql = f"SELECT id, head, seen, session FROM conversations WHERE head IN ({marks})"
                out += [
                    (r[0], r[1], r[2] or "")
                    for r in c.execute(self.dialect.sql(sql), list(chunk))
                    if session is None or r[3] is None or r[3] == session  # its session, or none yet
                ]
            return sorted(out, key=lambda r: (r[2], r[0]), reverse=True)

        rows = self.transact(run, "the read failed", read=True)
        return [(r[0], r[1]) for r in rows]

    def written(self, conversation_id: str) -> tuple[str, str] | None:
        sql = self.dialect.sql(_WRITTEN)
        row = self.transact(
            lambda c: c.execute(sql, (conversation_id,)).fetchone(), "the read failed", read=True
        )
        return (row[0], row[1]) if row is not None and row[0] is not None else None

    def set_answer_id(
        self, conversation_id: str, message_id: str, answer_id: str, steps: int | None = None
    ) -> None:
        latest, every = self.dialect.sql(_SET_ANSWER), self.dialect.sql(_ADD_ANSWER)

        def run(c: Tx) -> None:
            c.execute(latest, (answer_id, conversation_id, message_id))
            c.execute(every, (answer_id, conversation_id, message_id, steps))

        self.transact(
            run, f"conversation {conversation_id!r}: the answer id of {message_id!r} was not stored"
        )

    def find_answer(self, answer_id: str) -> tuple[str, str, int | None] | None:
        sql = self.dialect.sql(_FIND_ANSWER)
        row = self.transact(lambda c: c.execute(sql, (answer_id,)).fetchone(), "the read failed", read=True)
        return (row[0], row[1], None if row[2] is None else int(row[2])) if row is not None else None

    def session_conversations(self, session: str) -> list[str]:
        sql = self.dialect.sql(_SESSION)
        rows = self.transact(lambda c: c.execute(sql, (session,)).fetchall(), "the read failed", read=True)
        return [r[0] for r in rows]


__all__ = ["DELETE_CONVERSATION_ANSWERS", "DELETE_MESSAGE_ANSWERS", "Origins", "origin_columns"]

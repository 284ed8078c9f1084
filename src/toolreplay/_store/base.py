"""What every store backend shares with the callers: the :class:`Store` protocol, the values it returns,
and which database a ``--db`` value names (:func:`resolve_db`). :mod:`toolreplay._store` re-exports these
and opens the backend; the backends import them from here, never the package that opens them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolreplay._history import History, Message, RequestSettings, Step, ToolCall

if TYPE_CHECKING:
    from toolreplay._store.turns import TurnLock
    from toolreplay._store.window import Line, OutlineRow, UsageRecord
    from toolreplay.wires.reply import Usage


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """One row of ``history list``."""

    id: str
    messages: int
    calls: int
    updated_at: str | None
    agent: str | None = None
    """The agent that made it through ``toolreplay proxy`` (its user-agent); None for any other one."""
    upstream: str | None = None
    """The provider ``toolreplay proxy`` sent its requests to (wire and host)."""


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import did: how many messages were added and how many were already there, unchanged."""

    conversation_id: str
    added: int
    unchanged: int


class Store(Protocol):
    """What toolreplay needs of a database. Every method is its own transaction (inside :meth:`batch`,
    part of the batch's)."""

    url: str
    #: Its reads answer from a file on this machine without a network round trip (SQLite in WAL mode,
    #: whose readers never wait for a writer), and another connection to its URL reads the same file, so
    #: an event loop may read it itself on one of its own; False: a server's (PostgreSQL), or SQLite's
    #: ``:memory:``.
    local: bool

    def list_conversations(self) -> list[ConversationInfo]: ...

    def exists(self, conversation_id: str) -> bool: ...

    def existing(self, conversation_ids: Sequence[str]) -> set[str]:
        """Which of ``conversation_ids`` are stored conversations (one query for them all)."""
        ...

    def load(self, conversation_id: str) -> History:
        """The whole conversation in stored order; raises StoreError when there is none."""
        ...

    def counts(self, conversation_id: str) -> tuple[int, int]:
        """How many messages and calls the conversation holds (0, 0 when there is none; index lookups)."""
        ...

    def outline(
        self, conversation_id: str, start: int = 0, stop: int | None = None, *, reach: int | None = None
    ) -> list[OutlineRow]:
        """Each message's ``(position, id, role, planning size, issuer-only sizes, running size)`` at
        positions ``start <= position < stop``, in stored order, without its content; with ``reach``,
        from the first message whose running size reaches ``reach`` when that comes earlier (the
        context budget's window: design 33)."""
        ...

    def line(self, conversation_id: str, stop: int) -> Line:
        """Where the messages before position ``stop`` stand on the context budget's planning line:
        the leading system messages, the line's length, the last user message (index lookups)."""
        ...

    def positions(self, conversation_id: str, ids: Sequence[str]) -> dict[str, int]:
        """The position of each of ``ids`` the conversation holds."""
        ...

    def load_range(self, conversation_id: str, start: int, stop: int | None = None) -> History:
        """The messages at positions ``start <= position < stop`` (to the end without ``stop``), with the
        conversation's tools; raises StoreError when there is no such conversation."""
        ...

    def load_window(self, conversation_id: str, head: int, offset: int, stop: int) -> History:
        """The messages at positions ``0 <= position < head`` then ``offset <= position < stop`` (with
        the conversation's tools), read in one transaction; raises StoreError when there is no such
        conversation."""
        ...

    def record_usage(
        self, conversation_id: str, message_id: str, step: int, usage: Usage, model: str | None = None
    ) -> None:
        """Store one response's usage: step ``step`` (1, 2, ...) of the turn making reply ``message_id``."""
        ...

    def load_usage(self, conversation_id: str, start: int = 0, stop: int | None = None) -> list[UsageRecord]:
        """The stored response usage of the replies at positions ``start <= position < stop``, in message
        order, then step order."""
        ...

    def import_history(self, history: History) -> ImportResult:
        """Store every message not yet stored (idempotent; conflicts refused, nothing written)."""
        ...

    def record_request(self, conversation_id: str, settings: RequestSettings) -> None:
        """Record one request's settings as sent (design 37), after the conversation's others (creates
        the conversation); the same settings as the latest recorded again change nothing."""
        ...

    def append_message(self, conversation_id: str, message: Message) -> None:
        """Append one finished message with all its tool uses, atomically (creates the conversation).

        The same message again (same id, same content) changes nothing, so a retried append is safe; the
        same id with different content raises StoreError.
        """
        ...

    def begin_reply(
        self,
        conversation_id: str,
        message_id: str,
        *,
        vessel: str | None,
        created_at: str | None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Store an empty assistant reply, status ``in_progress`` (its id allocated before any request);
        ``meta`` holds its writer (design 40)."""
        ...

    def try_lock_turn(self, conversation_id: str) -> TurnLock | None:
        """Take the conversation's turn lock without waiting (design 40): one turn at a time per
        conversation, across processes and machines; None when another turn holds it. The lock goes
        with the process, however it ends; ``release()`` lets go of it sooner."""
        ...

    def record_call(self, conversation_id: str, message_id: str, call: ToolCall) -> None:
        """Append one executed call (with its answer, or None when it has none yet) to a reply; committed.

        A call may be recorded before it runs (``answer=None``) and again with its answer: when the reply's
        latest call with the same provider ``call_id`` (for a call without one: the reply's latest call,
        when it has no id either) has no answer and the same name and input, the answer is filled in
        there. Anything else appends (providers reuse ids like ``call_0`` across the
        rounds of one turn). Refused (StoreError) for an unknown message, a non-assistant message, or a
        reply that is already ``complete``.
        """
        ...

    def finish_reply(
        self,
        conversation_id: str,
        message_id: str,
        *,
        text: str,
        status: str = "complete",
        provider_data: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        steps: Sequence[Step] = (),
    ) -> None:
        """Set a reply's text, status, data and step record in one transaction."""
        ...

    def delete_conversation(self, conversation_id: str) -> None:
        """Remove a conversation with its messages and calls, in one transaction (StoreError when there
        is none)."""
        ...

    def delete_message(self, conversation_id: str, message_id: str) -> None:
        """Remove one message and its calls in one transaction; the later messages move up one place, so
        positions stay gapless (StoreError for an unknown conversation or message)."""
        ...

    def delete_messages(
        self, conversation_id: str, message_ids: Sequence[str], *, drop_if_empty: bool = False
    ) -> None:
        """Remove several messages and their calls in one transaction (positions stay gapless) and, with
        ``drop_if_empty``, the conversation too when no message is left (StoreError as for
        :meth:`delete_message`; then nothing is removed)."""
        ...

    def set_origin(
        self, conversation_id: str, origin: Mapping[str, Any], *, session: str | None, head: str
    ) -> None:
        """Mark a conversation as recorded by the proxy: where it came from (JSON), the agent's session,
        and the digest of its messages (:mod:`toolreplay._store.origins`); creates the conversation."""
        ...

    def set_head(self, conversation_id: str, head: str, session: str | None = None) -> None:
        """The digest of a proxy conversation's messages, after a write (and the agent's session, when
        the conversation had none)."""
        ...

    def written(self, conversation_id: str) -> tuple[str, str] | None:
        """``(head, seen)`` of a proxy conversation: its head and when the proxy last wrote it (to the
        microsecond); None for a conversation the proxy did not make."""
        ...

    def find_heads(self, heads: Sequence[str], session: str | None = None) -> list[tuple[str, str]]:
        """``(conversation id, head)`` of every conversation whose head is one of ``heads`` (and whose
        session is ``session`` or none, when given), newest first."""
        ...

    def changes(self) -> tuple[int, int] | None:
        """A mark that moves with every write committed to the database since, by this connection or
        any other, in this process or another (SQLite's ``data_version`` and this connection's commits);
        None where the database gives none as cheaply (PostgreSQL): what was read may have changed."""
        ...

    def set_answer_id(
        self, conversation_id: str, message_id: str, answer_id: str, steps: int | None = None
    ) -> None:
        """The id the proxy gave the latest answer reply ``message_id`` took (Responses' response id),
        kept with the ids of its earlier answers; ``steps``: how many steps the reply has with it."""
        ...

    def find_answer(self, answer_id: str) -> tuple[str, str, int | None] | None:
        """``(conversation id, message id, steps)`` of the reply one of whose answers the proxy gave
        ``answer_id``; ``steps``: how many of its steps it had at that answer, None when that answer is
        the reply's latest (the reply as it is)."""
        ...

    def session_conversations(self, session: str) -> list[str]:
        """The conversations of an agent's session, newest first."""
        ...

    def close(self) -> None: ...

    def batch(self) -> AbstractContextManager[None]:
        """The writes inside as one transaction, where the database does so (the proxy's recorder)."""
        ...


def default_db_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "toolreplay" / "toolreplay.db"


def resolve_db(db: str | None = None) -> str:
    """The database in force: ``db`` (from ``--db``), else ``$TOOLREPLAY_DB``, else the default."""
    return db or os.environ.get("TOOLREPLAY_DB") or str(default_db_path())

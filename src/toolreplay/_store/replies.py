"""The reply of a live turn in the store: begun empty, its calls recorded as they run (before and again
with their answers), then finished; each step committed at once, under the conversation's lock.

A mixin of :class:`~toolreplay._store.core.SQLStore` (one definition for both backends), kept apart from
the rest of the store's writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolreplay._errors import StoreError
from toolreplay._history import Message, Step, ToolCall
from toolreplay._store import rows as R
from toolreplay._store.window import WindowView

if TYPE_CHECKING:
    from toolreplay._store.sql import Tx


class LiveReplies(WindowView):
    """The Store methods of a live turn's reply, mixed into :class:`~toolreplay._store.core.SQLStore`."""

    if TYPE_CHECKING:

        def _insert_messages(self, c: Tx, cid: str, messages: Sequence[Message]) -> None: ...

        def _stored_message(self, c: Tx, cid: str, message_id: str) -> Message | None: ...

    def begin_reply(
        self,
        conversation_id: str,
        message_id: str,
        *,
        vessel: str | None,
        created_at: str | None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        reply = Message(
            id=message_id,
            role="assistant",
            created_at=created_at,
            vessel=vessel,
            status="in_progress",
            meta=meta,
        )
        R.check_message(conversation_id, reply)

        def run(c: Tx) -> None:
            self._lock_conversation(c, conversation_id)
            if c.execute(self.queries.message_state, (conversation_id, message_id)).fetchone() is not None:
                raise StoreError(
                    f"conversation {conversation_id!r}: message {message_id!r} is already stored; "
                    "a reply needs a new id"
                )
            self._insert_messages(c, conversation_id, [reply])

        self.transact(run, f"conversation {conversation_id!r}: reply {message_id!r} was not stored")

    def _open_reply(self, c: Tx, cid: str, message_id: str) -> tuple[str, str, int]:
        """Lock the conversation (the running sums of the later messages may change) and the reply's row
        where rows lock (a concurrent finish waits), and refuse what is not an open reply."""
        if self.dialect.row_locks:
            c.execute(self.queries.lock_conversation, (cid,))
        row = c.execute(self.queries.message_state, (cid, message_id)).fetchone()
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
        return row[0], row[1], int(row[2])

    def record_call(self, conversation_id: str, message_id: str, call: ToolCall) -> None:
        """Append one executed call to a reply that is not complete; committed at once.

        Record a call before it runs (``answer=None``) and again with its answer: when the reply's latest
        call with the same provider ``call_id`` (for a call without one: the reply's latest call, when it
        has no id either) has no answer and the same name and input, the answer is filled in there
        instead of appending a second call. Anything else appends (providers reuse ids such as
        ``call_0`` across the rounds of one turn, so an id alone does not identify a call).
        """
        q = self.queries

        def run(c: Tx) -> None:
            state = self._open_reply(c, conversation_id, message_id)
            if call.call_id is not None:
                row = c.execute(q.find_open_call, (conversation_id, message_id, call.call_id)).fetchone()
            else:
                row = c.execute(q.find_last_idless_call, (conversation_id, message_id)).fetchone()
            if row is not None and row[3] is None and row[1] == call.name and row[2] == R.input_text(call):
                if call.answer is not None:
                    pdata = R.json_text(call.provider_data)
                    where = (conversation_id, message_id, row[0])
                    parts = R.parts_text(call.parts)
                    c.execute(q.set_call_answer, (call.answer, int(call.is_error), pdata, parts, *where))
                return
            pos = c.execute(q.next_tool_position, (conversation_id, message_id)).fetchone()
            start = int(pos[0]) if pos else 0
            c.executemany(q.insert_tool_use, R.tool_use_rows(conversation_id, message_id, [call], start))
            self._shift_runs(c, conversation_id, state[2], 0, 1)

        self.transact(run, f"conversation {conversation_id!r}: a call of reply {message_id!r} was not stored")

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
        R.status_of(status)
        pdata, mdata, sdata = R.json_text(provider_data), R.json_text(meta), R.steps_text(steps)
        values = (text, status, pdata, mdata, sdata, conversation_id, message_id)

        def run(c: Tx) -> None:
            self._open_reply(c, conversation_id, message_id)
            c.execute(self.queries.finish_reply, values)
            done = self._stored_message(c, conversation_id, message_id)
            if done is not None:  # its planning size, now that its text and calls are final
                self._resize(c, conversation_id, done)

        self.transact(run, f"conversation {conversation_id!r}: reply {message_id!r} was not finished")


__all__ = ["LiveReplies"]

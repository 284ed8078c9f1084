"""The stored render fragments (design 35): tables ``render_fragments`` and ``render_fragment_sets``.

Per conversation at most :data:`~toolreplay._fragments.MAX_SETS` sets (keys) are kept, the most recently
written; a set holds one row per message of the list it rendered (a chain from that list's first
message), so what the store keeps is bounded by the conversation's length times the number of sets.
Removing a message removes its rows, removing a conversation removes its sets.

A row is written only for a message that is stored ``complete`` with exactly the content that was
rendered, checked under the conversation's lock in the write's own transaction: a message that changed,
was removed, or is still in progress ends the rows written there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from toolreplay._fragments import MAX_SETS, FragmentRow, Fragments, bind, from_rows
from toolreplay._history import History, Message
from toolreplay._render_same import same

if TYPE_CHECKING:
    from toolreplay._store.sql import StoreHost, Tx

LOAD = """SELECT seq, message_id, stem, calls, declares, items FROM render_fragments
    WHERE conversation_id = ? AND key = ? ORDER BY seq"""
DROP_FROM = "DELETE FROM render_fragments WHERE conversation_id = ? AND key = ? AND seq >= ?"
INSERT = """INSERT INTO render_fragments (conversation_id, key, seq, message_id, stem, calls, declares, items)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
NEXT_USE = "SELECT COALESCE(MAX(used), 0) + 1 FROM render_fragment_sets WHERE conversation_id = ?"
TOUCH = """INSERT INTO render_fragment_sets (conversation_id, key, used) VALUES (?, ?, ?)
    ON CONFLICT (conversation_id, key) DO UPDATE SET used = excluded.used"""
SETS = "SELECT key FROM render_fragment_sets WHERE conversation_id = ? ORDER BY used DESC"
DROP_SET = "DELETE FROM render_fragments WHERE conversation_id = ? AND key = ?"
DROP_SET_ROW = "DELETE FROM render_fragment_sets WHERE conversation_id = ? AND key = ?"
#: A removed message takes its rows with it (a later message with its id gets none of them).
DROP_MESSAGE = "DELETE FROM render_fragments WHERE conversation_id = ? AND message_id = ?"
DROP_CONVERSATION = (
    "DELETE FROM render_fragments WHERE conversation_id = ?",
    "DELETE FROM render_fragment_sets WHERE conversation_id = ?",
)


def read(store: StoreHost, c: Tx, conversation_id: str, key: str) -> Fragments | None:
    """The set ``key`` of the conversation as stored (not bound to any messages), or None."""
    rows = c.execute(store.dialect.sql(LOAD), (conversation_id, key)).fetchall()
    return from_rows(key, rows) if rows else None


LOAD_ALL = """SELECT key, seq, message_id, stem, calls, declares, items FROM render_fragments
    WHERE conversation_id = ? ORDER BY key, seq"""


def read_sets(store: StoreHost, c: Tx, conversation_id: str) -> dict[str, Fragments]:
    """Every set of the conversation as stored, by key (at most :data:`MAX_SETS`)."""
    by_key: dict[str, list[Any]] = {}
    for r in c.execute(store.dialect.sql(LOAD_ALL), (conversation_id,)).fetchall():
        by_key.setdefault(r[0], []).append(r[1:])
    return {k: from_rows(k, rows) for k, rows in by_key.items()}


def attach(store: StoreHost, c: Tx, h: History | None, key: str | bool | None) -> History | None:
    """``h`` with its stored set ``key`` (with True: every set, by key) bound to its messages, read in the
    same transaction."""
    if h is None or key is None or key is False:
        return h
    if key is True:
        sets = {k: bind(f, h.messages) for k, f in read_sets(store, c, h.id).items()}
        return replace(h, fragments=sets or None)
    f = read(store, c, h.id, key)
    return h if f is None else replace(h, fragments=bind(f, h.messages))


def _stored(store: StoreHost, c: Tx, cid: str, ids: Sequence[str]) -> dict[str, Message]:
    """The stored messages with these ids (the whole conversation read once when there are many)."""
    if len(ids) > 16:
        h = store._load(c, cid)
        return {m.id: m for m in h.messages} if h is not None else {}
    out: dict[str, Message] = {}
    for mid in ids:
        m = store._stored_message(c, cid, mid)
        if m is not None:
            out[mid] = m
    return out


def verified(
    store: StoreHost, c: Tx, cid: str, rows: Sequence[FragmentRow], messages: Sequence[Message]
) -> list[FragmentRow]:
    """The leading ``rows`` whose message is stored complete, exactly as rendered (``messages[row.seq]``)."""
    stored = _stored(store, c, cid, [r.message_id for r in rows])
    out: list[FragmentRow] = []
    for r in rows:
        m, s = messages[r.seq], stored.get(r.message_id)
        if s is None or s.status != "complete" or m.id != r.message_id or not same(s, m):
            break
        out.append(r)
    return out


def write(
    store: StoreHost,
    c: Tx,
    cid: str,
    key: str,
    start: int,
    rows: Sequence[FragmentRow],
    messages: Sequence[Message],
) -> int:
    """Replace set ``key``'s rows from ``start`` on with the verified ``rows``; keep the newest sets."""
    sql = store.dialect.sql
    good = verified(store, c, cid, rows, messages)
    c.execute(sql(DROP_FROM), (cid, key, start))
    params: list[tuple[Any, ...]] = [
        (cid, key, r.seq, r.message_id, r.stem, r.calls, r.declares, r.items) for r in good
    ]
    if params:
        c.executemany(sql(INSERT), params)
    used = int(c.execute(sql(NEXT_USE), (cid,)).fetchone()[0])
    c.execute(sql(TOUCH), (cid, key, used))
    for (old,) in c.execute(sql(SETS), (cid,)).fetchall()[MAX_SETS:]:
        c.execute(sql(DROP_SET), (cid, old))
        c.execute(sql(DROP_SET_ROW), (cid, old))
    return len(good)


class FragmentStore:
    """The fragment methods of :class:`~toolreplay._store.core.SQLStore` (a mixin: one definition for
    both backends)."""

    def load_fragments(self, conversation_id: str, key: str) -> Fragments | None:
        """The stored set ``key`` of the conversation, not bound to messages yet (see
        :func:`toolreplay._fragments.bind`)."""
        store = cast("StoreHost", self)
        return store.transact(lambda c: read(store, c, conversation_id, key), "the read failed", read=True)

    def save_fragments(
        self,
        conversation_id: str,
        key: str,
        start: int,
        rows: Sequence[FragmentRow],
        messages: Sequence[Message],
    ) -> int:
        """Store what a render of ``messages`` made (:meth:`RenderCache.fragments`); returns how many rows
        were written (those whose message is stored complete, as rendered)."""

        store = cast("StoreHost", self)

        def run(c: Tx) -> int:
            if c.execute(store.queries.conversation_exists, (conversation_id,)).fetchone() is None:
                return 0
            store._lock_conversation(c, conversation_id)
            return write(store, c, conversation_id, key, start, rows, messages)

        return store.transact(run, f"conversation {conversation_id!r}: render fragments were not stored")


__all__ = ["DROP_CONVERSATION", "DROP_MESSAGE", "FragmentStore", "attach", "read", "read_sets"]

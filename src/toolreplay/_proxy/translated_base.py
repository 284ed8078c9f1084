"""What a routed request continues (designs 54 and 61): the memory of the last exchanges, checked against
the store's own match, else the store after the recorder has stored what changes the match.

Each thread that asks has its own connection (SQLite's belongs to the thread that uses it) and its own
last match (:class:`~toolreplay._proxy.matching.Asked`). The translation thread may wait on the store; the
event loop asks only a local store (:attr:`Store.local`), on a connection of its own opened by the
translation thread, and gives way to the thread wherever the answer would need a wait.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from toolreplay._history import History
from toolreplay._proxy.matching import Asked, prefix_heads
from toolreplay._proxy.recent import Base, Recent

if TYPE_CHECKING:
    from toolreplay._proxy.worker import RecorderThread
    from toolreplay._store import Store


class Continued:
    """The routed path's side of the store and the memory, for one proxy."""

    def __init__(
        self, db: str | None, record: bool, recorder: RecorderThread | None, recent: Recent | None
    ) -> None:
        self._db, self._record, self.recorder, self.recent = db, record, recorder, recent
        self._local = threading.local()
        #: the event loop's own connection to a local store and its last match (design 61), opened on
        #: the translation thread (None: not yet, or a store the loop does not read)
        self.loop_store: tuple[Store, Asked] | None = None

    def store(self) -> Store | None:
        """The calling thread's connection (None: not recording)."""
        if not self._record:
            return None
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            from toolreplay._store import open_store

            store = self._local.store = open_store(self._db)
            self._local.asked = Asked()
        return store

    def open(self) -> None:
        """On the translation thread, at start-up: its connection, and the loop's where the store is local."""
        store = self.store()
        if store is not None and store.local:
            from toolreplay._store import open_store

            self.loop_store = (open_store(self._db), Asked())

    def base(self, history: History, session: str | None, quick: bool = False) -> Base | None:
        """The stored conversation the request continues (design 54): from the memory where it answers
        as the store would, else from the store, once the exchanges not written yet that change what it
        finds are (None: a new one, or not recording). ``quick``: on the event loop, with its own
        connection (design 61): None where the thread must find it (a wait for the recorder, a
        conversation to load, no connection of the loop's)."""
        if quick:
            if self.loop_store is None:
                return None
            store, asked = self.loop_store
        else:
            found_store = self.store()
            if found_store is None:
                return Base(None, 0, ())
            store, asked = found_store, self._local.asked  # beside the store: its connection's last match
        heads = tuple(prefix_heads(history.messages))
        hit = self.recent.find(heads, session) if self.recent is not None else None
        found = asked.found(store, heads, session)
        if hit is not None and self.recent is not None and self.recent.agrees(hit, found):
            return hit.base(heads)
        recorder = self.recorder
        if recorder is not None and (self.recent is None or recorder.opaque() or self.recent.touched(heads)):
            if quick:
                return None
            recorder.settle()  # the answers already given are stored before they are read back
            found = asked.found(store, heads, session)
        if found is None:
            return Base(None, 0, heads, session)
        if quick:
            return None
        return Base(store.load(found.conversation_id), found.holds, heads, session, session is not None)

    def settled(self) -> None:
        """Every answer already handed to the recorder is stored (the one the agent names may be among
        them); not the answers still being made (design 55): nothing waits when none is queued."""
        if self.recorder is not None:
            self.recorder.settle(10.0)

    def close(self) -> None:
        """On the translation thread: its connection, and the loop's (the loop having stopped)."""
        store: Store | None = getattr(self._local, "store", None)
        if store is not None:
            store.close()
            self._local.store = None
        if self.loop_store is not None:
            self.loop_store[0].close()
            self.loop_store = None


__all__ = ["Continued"]

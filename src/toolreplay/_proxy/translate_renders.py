"""The proxy's incremental renders (design 53): an agent's next request renders the conversation its last
one rendered, plus a reply and its results, so each conversation keeps a
:class:`~toolreplay._render_cache.RenderCache`, which renders only from the first message that differs
(it compares by identity first, then by content: a stale or shared cache renders more, never otherwise).

A conversation is known by what opens it: its messages up to its first user message (roles and words).
Two sessions that open alike share one cache, which then resumes where they part.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from toolreplay._render_cache import RenderCache
from toolreplay._replay import ReplaySettings, TurnMessage
from toolreplay.model import Message
from toolreplay.wires.bounded import Bounded
from toolreplay.wires.common import RenderOptions

#: The conversations kept (each cache keeps at most four renders of its own, by vessel and options).
CONVERSATIONS = 16


def opening(messages: Sequence[Message]) -> tuple[tuple[str, str], ...]:
    """What opens the conversation: each message's role and words, up to its first user message."""
    out: list[tuple[str, str]] = []
    for m in messages:
        out.append((m.role, m.text))
        if m.role == "user":
            break
    return tuple(out)


class Renders:
    """The render caches of the last ``size`` conversations (least recently used dropped)."""

    def __init__(self, size: int = CONVERSATIONS) -> None:
        self.size = size
        self._caches: Bounded[RenderCache] = Bounded(size)  # each conversation's cache costs 1
        self._lock = threading.Lock()  # a RenderCache is not thread-safe: one render at a time

    def render(
        self, messages: Sequence[Message], wire: str, opts: RenderOptions, settings: ReplaySettings
    ) -> tuple[dict[str, Any], list[TurnMessage], Any | None]:
        """``render_wire(wire, turns, opts)`` of the native replay's turns, the turns, and the body's list
        as its JSON (:meth:`~toolreplay._render_cache.RenderCache.render_sent`)."""
        key = opening(messages)
        with self._lock:
            cache = self._caches.get(key)
            if cache is None:
                cache = RenderCache()
                self._caches.put(key, cache, 1)
            return cache.render_sent(messages, wire, opts, settings=settings)

    def cache_of(self, messages: Sequence[Message]) -> RenderCache | None:
        """The render cache of the conversation ``messages`` open (None: none kept): its ``stats`` say
        what the renders reused."""
        with self._lock:
            return self._caches.get(opening(messages))

    def clear(self) -> None:
        self._caches.clear()


#: The proxy's (one per process).
RENDERS = Renders()

__all__ = ["CONVERSATIONS", "RENDERS", "Renders", "opening"]

"""What the double keeps of the requests it received: the newest ``keep`` of them, in arrival order.

A double kept every request, body and bytes, for its whole life: four 50 MB posts to a running
``toolreplay double`` took its memory from 496 to 946 MB for good (issue 27). A ring bounds it: the
library keeps the newest 10,000 requests (more than a test reads), the command the newest 100 (it only
prints them as they are answered).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

#: Requests a library double keeps (``ProviderDouble(keep_requests=...)``; None: every one).
KEEP_REQUESTS = 10_000


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the double received. ``index``: its arrival number (0 first, counted from the start,
    across ``clear()``); ``headers``: lower-case names, key values redacted (the name stays, so a test
    can tell a key was sent); ``body``: the parsed JSON (None when it was not JSON, or was not read: a
    request refused by its headers); ``vessel``: the name in a ``/vessel/<name>`` URL prefix;
    ``status``: what the double answered (0: no HTTP answer, e.g. a reset); ``rejected``: the provider
    error text when a check refused it."""

    index: int
    method: str
    path: str
    wire: str | None
    vessel: str | None
    headers: Mapping[str, str]
    body: Any
    raw: bytes
    stream: bool
    status: int = 0
    rejected: str | None = None

    def has_key(self) -> bool:
        """True when a key-carrying header was sent."""
        return any(h in self.headers for h in ("authorization", "x-api-key", "x-goog-api-key"))


class Records:
    """The newest ``keep`` recorded requests (None: all), safe to use from the server's threads."""

    def __init__(self, keep: int | None = KEEP_REQUESTS) -> None:
        if keep is not None and keep < 1:
            raise ValueError(f"keep_requests must be at least 1 (or None for every request), not {keep}")
        self._kept: deque[RecordedRequest] = deque(maxlen=keep)
        self._count = 0
        self._lock = threading.Lock()

    def add(self, req: RecordedRequest) -> RecordedRequest:
        """Keep ``req`` under the next arrival number (the oldest kept one goes when the ring is full)."""
        with self._lock:
            req = replace(req, index=self._count)
            self._count += 1
            self._kept.append(req)
            return req

    def update(self, req: RecordedRequest, **changes: Any) -> RecordedRequest | None:
        """Change the kept copy of ``req`` and return it (None: no longer kept)."""
        with self._lock:
            at = req.index - (self._count - len(self._kept))
            if not 0 <= at < len(self._kept):
                return None
            self._kept[at] = replace(self._kept[at], **changes)
            return self._kept[at]

    def all(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._kept)

    def clear(self) -> None:
        """Forget every kept request (arrival numbers go on: an answer still being written updates
        nothing)."""
        with self._lock:
            self._kept.clear()


__all__ = ["KEEP_REQUESTS", "RecordedRequest", "Records"]

"""Byte-stable call ids derived from stored message ids.

A replayed call's id is ``replay_<stem>_<n>``: ``<stem>`` comes from the id of the message that made the
call, ``<n>`` is the call's position among that reply's calls (its absolute position, so the ids of a reply
that grows call by call inside a turn never shift when the replay window drops its oldest calls).

How uniqueness is guaranteed (design 2), not merely likely:

* A message id of at most 16 ASCII letters and digits is its own stem (``m2`` gives ``replay_m2_0``).
* Any other id gives ``<up to 8 of its letters and digits>-<12 hex digits of SHA-256 of the whole id>``.
  Such a stem contains ``-`` and a kept stem never does, so the two kinds never meet; ids that share a long
  prefix (``conversation-0001``, ``conversation-0002``) differ in the hash.
* Stems are assigned in stored order. If a stem was already used by an earlier message of the same
  history (a hash collision, however unlikely), the later message gets ``<stem>_<k>`` with the smallest
  ``k >= 2`` that is still free. Only suffixed stems contain ``_``, so a suffixed stem cannot equal a plain
  one, and the free-check makes suffixed stems distinct from each other.
* ``replay_<stem>_<n>`` parses back uniquely (``n`` is the digits after the last ``_``), so distinct
  stems give distinct call ids.

Nothing here reads a clock, a counter, ``hash()`` or randomness; earlier stems never depend on later
messages, so appending a message never changes an earlier id.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
KEEP_MAX = 16
PREFIX_CHARS = 8
HASH_CHARS = 12


def message_stem(message_id: str) -> str:
    """The stem of one message id, before any collision suffix."""
    if len(message_id) <= KEEP_MAX and message_id.isascii() and message_id.isalnum():
        return message_id
    prefix = _NOT_ALNUM.sub("", message_id.encode("ascii", "ignore").decode())[:PREFIX_CHARS]
    digest = hashlib.sha256(message_id.encode("utf-8")).hexdigest()[:HASH_CHARS]
    return f"{prefix}-{digest}"


class StemAllocator:
    """Assigns unique stems to the messages of one history, in stored order.

    Feed it message ids in order; the result for an id never depends on ids fed after it.
    """

    __slots__ = ("_by_id", "_used")

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._by_id: dict[str, str] = {}

    def stem(self, message_id: str) -> str:
        got = self._by_id.get(message_id)
        if got is not None:
            return got
        used = self._used
        # The common id (short, ASCII letters and digits, not taken) is its own stem: decided here, without
        # a call (every render stems every stored message).
        plain = len(message_id) <= KEEP_MAX and message_id.isascii() and message_id.isalnum()
        if plain and message_id not in used:
            used.add(message_id)
            self._by_id[message_id] = message_id
            return message_id
        base = message_stem(message_id)
        stem = base
        k = 2
        while stem in self._used:
            stem = f"{base}_{k}"
            k += 1
        self._used.add(stem)
        self._by_id[message_id] = stem
        return stem

    def __len__(self) -> int:
        """How many ids have their stems (a point to :meth:`rewind` to)."""
        return len(self._by_id)

    def rewind(self, size: int) -> None:
        """Back to the state after the first ``size`` ids were given stems, as if the later ones had not
        been fed: each id added its stem alone, so the latest are taken off (newest first)."""
        by_id, used = self._by_id, self._used
        while len(by_id) > size:
            used.discard(by_id.popitem()[1])


def stems_for(message_ids: Iterable[str]) -> list[str]:
    """Unique stems for message ids given in stored order."""
    alloc = StemAllocator()
    return [alloc.stem(m) for m in message_ids]


def call_id(stem: str, position: int) -> str:
    """The replayed id of the call at ``position`` among its reply's calls."""
    return f"replay_{stem}_{position}"

"""Bounded per-process caches the proxy's memos are made of: least recently used by cost (bytes), and
values kept by an immutable object's identity."""

from __future__ import annotations

import functools
import operator
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

V = TypeVar("V")
T = TypeVar("T")


class Bounded(Generic[V]):
    """A least-recently-used map whose entries' costs add up to at most ``budget`` (thread-safe)."""

    def __init__(self, budget: int) -> None:
        self.budget, self.cost = budget, 0
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def get_many(self, keys: Sequence[Hashable | None]) -> list[V | None]:
        """:meth:`get` of each key (None: none), under one hold of the lock."""
        out: list[V | None] = []
        items, seen = self._items, self._items.move_to_end
        with self._lock:
            for key in keys:
                hit = items.get(key) if key is not None else None
                if hit is None:
                    out.append(None)
                else:
                    seen(key)
                    out.append(hit[0])
        return out

    def put(self, key: Hashable, value: V, cost: int) -> None:
        if cost > self.budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.cost -= old[1]
            self._items[key] = (value, cost)
            self.cost += cost
            while self.cost > self.budget:
                _, (_, c) = self._items.popitem(last=False)
                self.cost -= c

    def peek(self, key: Hashable) -> V | None:
        """The entry of ``key`` (None: none), left where it stands in the order of use."""
        with self._lock:
            hit = self._items.get(key)
            return None if hit is None else hit[0]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def pop(self, key: Hashable) -> V | None:
        """The entry of ``key``, taken out (None: none)."""
        with self._lock:
            hit = self._items.pop(key, None)
            if hit is None:
                return None
            self.cost -= hit[1]
            return hit[0]

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.cost = 0


class ByIdentity(Generic[V]):
    """Values computed from immutable objects (the neutral messages the memo gives again), kept by the
    object's identity. At most ``size`` (the oldest dropped first).

    An object that takes a weak reference (a neutral message) is not kept alive by its entry: the entry
    goes when the object does, so a value lives no longer than its object is held elsewhere (the read
    memo, within its budget; the request in hand). Keeping the objects themselves made a cache of 4096
    messages hold 4096 messages' tool answers, however large, after everything else had let them go.
    Any other object is kept with its value, so that its id names no other while its entry stands."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: dict[int, tuple[object, V]] = {}
        self._lock = threading.Lock()

    def get(self, obj: object, make: Callable[[], V]) -> V:
        hit = self.peek(obj)
        if hit is None:
            hit = make()
            self.put(obj, hit)
        return hit

    def peek(self, obj: object) -> V | None:
        """The value kept for ``obj``, or None."""
        hit = self._items.get(id(obj))
        return hit[1] if hit is not None and _holds(hit[0], obj) else None

    def take(self, obj: object) -> V | None:
        """The value kept for ``obj``, taken out (None: none): one taker has it alone."""
        with self._lock:
            hit = self._items.get(id(obj))
            if hit is None or not _holds(hit[0], obj):
                return None
            del self._items[id(obj)]
            return hit[1]

    def put(self, obj: object, value: V) -> None:
        key = id(obj)
        try:
            held: object = weakref.ref(obj, functools.partial(_gone, self._items, key))
        except TypeError:  # no weak reference to it (a list, a tuple): kept itself
            held = obj
        with self._lock:
            self._items[key] = (held, value)
            while len(self._items) > self.size:
                del self._items[next(iter(self._items))]

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def _holds(held: object, obj: object) -> bool:
    """Whether an entry's ``held`` (the object, or a weak reference to it) is ``obj``."""
    return held is obj or (type(held) is weakref.ref and held() is obj)


def _gone(items: dict[int, tuple[object, Any]], key: int, ref: weakref.ref[Any]) -> None:
    """An object's entry taken out as the object goes (unless another object's stands there now). Not
    under the lock: the object may go while its own cache's lock is held (an entry dropped in ``put``
    letting go of the last reference to another), and the dictionary's own operations are atomic."""
    hit = items.get(key)
    if hit is not None and hit[0] is ref:
        items.pop(key, None)


def weakly(objs: Sequence[T]) -> tuple[weakref.ref[T], ...]:
    """``objs`` held weakly, for a memo's value that names a conversation's messages without keeping
    them (:class:`ByIdentity`); :func:`alive` gives them back for :func:`shared_prefix`."""
    return tuple(map(weakref.ref, objs))


def alive(refs: Sequence[weakref.ref[Any]]) -> list[object]:
    """The objects ``refs`` still name (None for one gone, which then matches nothing)."""
    return [r() for r in refs]


def shared_prefix(held: Sequence[object], new: Sequence[object]) -> int:
    """How many leading items of ``new`` are ``held``'s own objects (compared by identity, at C speed: a
    conversation's next request carries the last one's messages again as the same objects)."""
    try:
        return operator.indexOf(map(operator.is_, held, new), False)
    except ValueError:
        return min(len(held), len(new))


__all__ = ["Bounded", "ByIdentity", "alive", "shared_prefix", "weakly"]

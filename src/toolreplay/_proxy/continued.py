"""A routed request's body sliced from the one before it (design 57).

An agent's request N+1 repeats request N's bytes up to N's last message (the one a prompt-cache marker
moves off) or its list's end, and again after the message list (the system prompt, the tools, the
settings). Those parts are compared with N's bytes at C speed (no copy) and are N's values as they were;
only the bytes between them, the messages new or changed, are read. What comes out is the
:class:`~toolreplay._proxy.bodies.Sliced` a whole reading gives, byte for byte (its values and its list's
entries), or nothing: a body that continues no kept one is read whole, as before.

Why the shortcut is sound: request N was read whole or so, and found a JSON object whose list, at a known
offset, has its entries at known offsets. The kept head ends where an entry of that list begins (or where
the list closes) and the kept tail begins just after the list's closing bracket. A body that opens with
that head and ends with that tail is a JSON object exactly when the bytes between are the rest of that
list, which the decoder checks (with their UTF-8), and then its other values are N's, and its entries are
N's entries before the head's end and the decoded ones after.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Sequence

from toolreplay.wires.bounded import Bounded
from toolreplay.wires.read_memo import BUDGET

try:  # the proxy extra brings it (as bodies.py)
    import msgspec

    _LIST: msgspec.json.Decoder[list[msgspec.Raw]] | None = msgspec.json.Decoder(list[msgspec.Raw])
except ImportError:  # pragma: no cover - without it nothing is sliced
    _LIST = None

#: JSON's insignificant whitespace, and a separator between two values of a list or object.
_WS = re.compile(rb"[ \t\r\n]*")
_COMMA = re.compile(rb"[ \t\r\n]*,[ \t\r\n]*")
_COLON = re.compile(rb"[ \t\r\n]*:[ \t\r\n]*")
#: A JSON string token (what it says is the decoder's to read; here only where it ends).
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
#: How much of a body's opening its lookup key holds (conversations that open alike share a key).
PROBE = 256
#: Bodies kept per opening: the newest, and those a retry or an edit may go back to.
RECENT = 16
#: Openings named at most before those whose bodies all went are let go.
_OPENINGS = 4096
#: How many of a list's last entries a continuation may begin at (the marker moves off the last one;
#: an edit or a retry goes back a little further).
BACK = 4
#: How many of a head's last bytes are compared before the whole head.
_NEAR = 256


class Layout:
    """A body read at its top level, as the next request is compared with it: its bytes, its top-level
    values, and the list under ``key`` as its entries' bytes. Where the list and each entry stand is
    worked out the first time a next request asks (a body nothing continues never pays for it), and is
    None when the bytes are not laid out as the values say (a duplicate key, of which the decoder kept
    one): nothing continues such a body."""

    __slots__ = ("_at", "_walked", "entries", "key", "plain", "raws")

    def __init__(
        self,
        plain: bytes,
        raws: dict[str, bytes],
        key: str,
        entries: tuple[bytes, ...],
        at: tuple[tuple[int, ...], int, int] | None = None,
    ) -> None:
        self.plain, self.raws, self.key, self.entries = plain, raws, key, entries
        self._at, self._walked = at, at is not None

    def at(self) -> tuple[tuple[int, ...], int, int] | None:
        """Where each entry begins, where the list's ``[`` stands and where just after its ``]`` (worked
        out once), or None when the bytes do not agree with the values."""
        if not self._walked:
            self._at, self._walked = _laid_out(self.plain, self.raws, self.key, self.entries), True
        return self._at

    def kept_as(self, entries: tuple[bytes, ...]) -> Layout:
        """The same body with its entries as ``entries`` (equal bytes: the ones the read memo holds, so
        the next request's are compared with them by identity)."""
        return Layout(self.plain, self.raws, self.key, entries, self._at if self._walked else None)


def _skip(pattern: re.Pattern[bytes], plain: bytes, pos: int) -> int:
    m = pattern.match(plain, pos)
    return -1 if m is None else m.end()


def _offsets(plain: bytes, raws: dict[str, bytes]) -> dict[str, int] | None:
    """Where each top-level value begins in ``plain``, walked in the order read (None: not so laid out)."""
    pos = _skip(_WS, plain, 0)
    if not plain.startswith(b"{", pos):
        return None
    pos, out = _skip(_WS, plain, pos + 1), {}
    for i, (key, value) in enumerate(raws.items()):
        if i:
            pos = _skip(_COMMA, plain, pos)
        m = _STRING.match(plain, pos) if pos >= 0 else None
        pos = _skip(_COLON, plain, m.end()) if m is not None else -1
        if pos < 0 or not plain.startswith(value, pos):
            return None
        out[key], pos = pos, pos + len(value)
    pos = _skip(_WS, plain, pos)
    if not plain.startswith(b"}", pos) or _skip(_WS, plain, pos + 1) != len(plain):
        return None
    return out


def _entry_starts(plain: bytes, pos: int, entries: Sequence[bytes], first: bool) -> list[int] | None:
    """Where each of ``entries`` begins from ``pos`` on (``first``: the first comes with no separator
    before it), and where the list's ``]`` stands after them, last (None: not so laid out)."""
    out: list[int] = []
    for i, entry in enumerate(entries):
        pos = _skip(_WS if first and i == 0 else _COMMA, plain, pos)
        if pos < 0 or not plain.startswith(entry, pos):
            return None
        out.append(pos)
        pos += len(entry)
    pos = _skip(_WS, plain, pos)
    if not plain.startswith(b"]", pos):
        return None
    out.append(pos)
    return out


def _laid_out(
    plain: bytes, raws: dict[str, bytes], key: str, entries: tuple[bytes, ...]
) -> tuple[tuple[int, ...], int, int] | None:
    offsets = _offsets(plain, raws)
    at = offsets.get(key) if offsets is not None else None
    if at is None or not plain.startswith(b"[", at):
        return None
    found = _entry_starts(plain, at + 1, entries, True)
    if found is None:
        return None
    return tuple(found[:-1]), at, found[-1] + 1


def _heads(prev: Layout, starts: tuple[int, ...], start: int) -> list[tuple[int, int]]:
    """The places a continuation may begin at, the longest first, with the entries kept before each: the
    list's ``]`` (entries only added), then the last entries' beginnings."""
    n = len(starts)
    close = _skip(_WS, prev.plain, starts[-1] + len(prev.entries[-1]) if n else start + 1)
    return [(close, n), *((starts[k], k) for k in range(n - 1, max(n - 1 - BACK, -1), -1))]


def continued(plain: bytes, prev: Layout) -> tuple[dict[str, bytes], Layout] | None:
    """``plain``'s top-level values and its layout, read from ``prev``'s where ``plain`` continues it;
    None when it does not (it is then read whole)."""
    at = prev.at()
    if at is None or _LIST is None:
        return None
    starts, start, end = at
    kept = memoryview(prev.plain)
    stop = len(plain) - (len(prev.plain) - end)
    for head, k in _heads(prev, starts, start):
        # the head's last bytes first: another conversation that opens alike, or a head that ends past
        # where the bodies part, is told at once, not after comparing all that comes before
        near = max(head - _NEAR, 0)
        if not (start < head <= stop and plain.startswith(kept[near:head], near)):
            continue
        if plain.endswith(kept[end:]) and plain.startswith(kept[:head]):
            return _read_between(plain, prev, (starts[:k], start), head, stop)
    return None


def _read_between(
    plain: bytes, prev: Layout, kept: tuple[tuple[int, ...], int], head: int, stop: int
) -> tuple[dict[str, bytes], Layout] | None:
    """The body whose bytes from ``head`` to ``stop`` are new: its list's entries after the ``kept``
    ones (where they begin, and where the list's ``[`` stands)."""
    assert _LIST is not None
    starts, start = kept
    k = len(starts)
    between = plain[head:stop]
    after = k == len(prev.entries) and k > 0  # the head ends after an entry: a separator comes first
    try:
        read = _LIST.decode((b"[0" if after else b"[") + between)
        between.decode("utf-8")
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    new = [bytes(v) for v in (read[1:] if after else read)]
    if k and not after and not new:
        return None  # the head ends after a separator: an entry must follow it
    found = _entry_starts(plain, head, new, not after)
    if found is None or plain[found[-1] + 1 : stop].strip(b" \t\r\n"):
        return None
    end = found[-1] + 1
    raws = dict(prev.raws)
    raws[prev.key] = plain[start:end]
    entries = (*prev.entries[:k], *new)
    return raws, Layout(plain, raws, prev.key, entries, ((*starts, *found[:-1]), start, end))


class Layouts:
    """The bodies of the latest routed requests, found by their opening (thread-safe). Each is kept within
    the read memo's budget by its bytes (the least recently continued goes first), and an opening names
    its :data:`RECENT` newest (conversations that open alike: an agent's sessions, its sub-agents)."""

    def __init__(self, budget: int = BUDGET) -> None:
        self._kept: Bounded[Layout] = Bounded(budget)
        self._openings: dict[bytes, list[int]] = {}
        self._serial = itertools.count()
        self._lock = threading.Lock()

    def read(self, plain: bytes, key: str) -> tuple[dict[str, bytes], Layout] | None:
        """``plain`` read from a kept body it continues (its list under ``key``), or None."""
        for serial in self._openings.get(plain[:PROBE], ()):
            prev = self._kept.get(serial)
            if prev is not None and prev.key == key and (got := continued(plain, prev)) is not None:
                return got
        return None

    def keep(self, layout: Layout) -> None:
        """``layout`` kept as its opening's newest body (a body equal to a kept one takes its place)."""
        probe = layout.plain[:PROBE]
        with self._lock:
            serial = next(self._serial)
            self._kept.put(serial, layout, 2 * len(layout.plain))  # its bytes, and its values' copies
            live = [n for n in self._openings.get(probe, ()) if (x := self._kept.peek(n)) is not None
                    and x.plain != layout.plain]  # fmt: skip
            self._openings[probe] = [serial, *live[: RECENT - 1]]
            if len(self._openings) > _OPENINGS:  # openings whose bodies all went
                self._openings = {
                    p: ns for p, ns in self._openings.items() if any(n in self._kept for n in ns)
                }

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._openings.clear()


#: The proxy's kept bodies (one per process), beside the read memo.
LAYOUTS = Layouts()

__all__ = ["LAYOUTS", "Layout", "Layouts", "continued"]

"""A bounded per-process memo of request reading (design 53): an agent's request N+1 is request N plus a
reply and its tool results, so reading it again from its first message repeats the same work on the same
bytes. The proxy's routed path reads through a :class:`ReadMemo`; every other reader (importers, the
audit) reads as before.

Two levels, each a pure function of its key:

* **a body message's events** (:meth:`ReadMemo.events`), keyed by the message's place (its index, or
  ``system``) and its exact JSON bytes: the bytes the agent sent, where the caller has them (``raws``:
  the proxy's body read at its top level only), else ``orjson``'s (equal bytes are equal values, the
  ``where`` of its events and warnings is its place). A value that would not encode exactly (an integer
  past 64 bits, a lone surrogate, NaN) has no ``orjson`` key and is read every time;
* **a turn's drafts** (:func:`assemble_memo`), keyed by the identity of its events (the memo keeps them,
  so an identity names the same events while the entry lives) and whether it ends the body. A turn is
  what :func:`~toolreplay.wires.turns.assemble` folds between two user or system messages: pairing,
  steps and status never look past it, so its drafts and warnings are the same wherever it stands. Its
  stored messages are kept by their id and issuer, so an unchanged turn gives the same
  :class:`~toolreplay.model.Message` objects (which later per-message work may key on).

The assembler changes no event (what a turn adds to a call, its answer and its message's data, it keeps
beside the call), so a turn read anew is assembled from the memo's events as they are. Both levels are
bounded by the bytes of the messages they cover.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, TypeVar, cast

import orjson

from toolreplay.jsonenc import finite
from toolreplay.model import History, Issuer, Message, RequestSettings, ToolSpec
from toolreplay.wires.bounded import Bounded, ByIdentity
from toolreplay.wires.turns import (
    Draft,
    Event,
    SystemText,
    TurnDraft,
    UserText,
    assign_ids,
    drafted_message,
    history_of,
    read_alone,
    warn_unanswered,
    with_issuer,
)

V = TypeVar("V")
#: A wire's reader of one body list entry: ``(entry, where, warnings) -> events``.
EntryReader = Callable[[Mapping[str, Any], str, list[str]], list[Event]]

#: The events that open a turn of their own.
_RESETS = (SystemText, UserText)
#: Each level's budget, in bytes of the body messages its entries cover (a 200-message Claude Code
#: request is about 200 KB, one near its context limit about 1 MB: some ten such conversations).
BUDGET = 8 << 20


def json_key(value: Any) -> bytes | None:
    """``value``'s exact JSON bytes, or None when they would not tell it apart (orjson writes NaN and the
    infinities as ``null``; it refuses integers past 64 bits and lone surrogates)."""
    try:
        key = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return None
    if b"null" in key and not finite(value):
        return None
    return key


@dataclass(frozen=True, slots=True)
class Group:
    """One body message read: its events, the warnings reading it gave, its size in bytes, and the exact
    bytes it was read from (what a hit is checked against)."""

    events: tuple[Event, ...]
    warnings: tuple[str, ...]
    cost: int
    raw: bytes = b""
    #: the value ``raw`` reads as (``orjson``), which a body read from bytes takes again on a hit
    value: Any = None
    #: whether an event of it opens a turn of its own (a user's words, a system prompt): the others are
    #: taken into the turn in hand whole
    resets: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resets", any(isinstance(e, _RESETS) for e in self.events))


@dataclass(frozen=True, slots=True)
class Slices:
    """A body list's entries as their exact bytes, and the group the memo holds for each (None: none)."""

    raws: tuple[bytes, ...]
    found: tuple[Group | None, ...]
    #: each entry's value (what its bytes read as), and how many leading entries are the last list's
    values: tuple[Any, ...] = ()
    same: int = 0


#: How much of each end of a message's bytes its lookup key holds (the whole is compared on a hit).
_ENDS = 64


def _common(a: Sequence[bytes], b: Sequence[bytes]) -> int:
    """How many leading entries ``a`` and ``b`` share (a binary search of slice comparisons, each at C
    speed: request N+1's list mostly opens with all of request N's)."""
    n = min(len(a), len(b))
    if tuple(a[:n]) == tuple(b[:n]):
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo]; a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if tuple(a[lo:mid]) == tuple(b[lo:mid]):
            lo = mid
        else:
            hi = mid
    return lo


def _fingerprint(place: Hashable, raw: bytes) -> Hashable:
    """A lookup key for ``raw`` at ``place`` cheaper to hash than ``raw`` itself: its length and ends.
    Two messages alike there share it; the hit's bytes are compared whole, so the later one is read."""
    return (place, len(raw), raw[:_ENDS], raw[-_ENDS:])


@dataclass(slots=True)
class _Segment:
    """A turn's (or one user or system message's) drafts and warnings, and its stored messages by
    (position in the turn, id, issuer)."""

    events: tuple[Event, ...]
    drafts: tuple[Draft, ...]
    warnings: tuple[str, ...]
    made: dict[tuple[int, str, Issuer | None], Message] = field(default_factory=lambda: {})


#: The most (id, issuer) variants of one turn's messages kept (one in practice).
_MADE = 8
_WARNINGS = operator.attrgetter("warnings")  # a group's
#: The most agent turns kept as far as they were read (one per conversation in progress).
_READINGS = 256
#: How many of a body's last points without a turn in hand its next body may go on from.
_POINTS = 4


class ReadMemo:
    """The two levels (module docstring), each within ``budget`` bytes of body messages."""

    def __init__(self, budget: int = BUDGET) -> None:
        self.groups: Bounded[Group] = Bounded(budget)
        self.turns: Bounded[_Segment] = Bounded(budget)
        self.values: Bounded[Any] = Bounded(budget // 8)
        #: the last list read from bytes per opening entry: request N+1's entries are compared in place
        #: with request N's (equal bytes at an equal index: the same group) before any lookup
        self.lists: Bounded[Slices] = Bounded(budget)
        #: each agent's turn as far as it was read, by its first event: the turn in progress is read on
        self.readings: ByIdentity[_Reading] = ByIdentity(_READINGS)
        #: each conversation's last body cut into turns, by its first message's group
        self.cuts: ByIdentity[_Cut] = ByIdentity(_READINGS)

    def events(
        self, place: Hashable, value: Any, read: Callable[[list[str]], list[Event]], raw: bytes | None = None
    ) -> Group:
        """The events ``read`` gives for the body value ``value`` at ``place`` (and its warnings); ``raw``:
        its exact bytes, when the caller has them."""
        return self._groups([place], [value], lambda _, w: read(w), None if raw is None else [raw])[0]

    def listed(
        self,
        entries: Sequence[Mapping[str, Any]],
        read: EntryReader,
        key: str,
        skip: int = -1,
        raws: Sequence[bytes] | Slices | None = None,
    ) -> list[Group]:
        """The groups of each entry of the body's ``key`` list (``read(entry, where, warnings)``), but
        entry ``skip``; each entry already an object. ``raws``: each entry's exact bytes, when the caller
        has them (they key the memo instead of an encoding of the entry)."""
        groups = self._groups(
            range(len(entries)), entries, lambda i, w: read(entries[i], f"{key}[{i}]", w), raws
        )
        return groups if skip < 0 else groups[:skip] + groups[skip + 1 :]

    def _groups(
        self,
        places: Sequence[Any],
        values: Sequence[Any],
        read: Callable[[Any, list[str]], list[Event]],
        given: Sequence[bytes] | Slices | None = None,
    ) -> list[Group]:
        if isinstance(given, Slices):  # looked up already (loaded_items): only the misses are read
            raws: Sequence[bytes | None] = given.raws
            hits: Sequence[Group | None] = given.found
        else:
            raws = [json_key(v) for v in values] if given is None else given
            hits = self.groups.get_many(
                [_fingerprint(p, r) if r is not None else None for p, r in zip(places, raws, strict=True)]
            )
        same = given.same if isinstance(given, Slices) else 0
        out = cast(list[Group], list(hits[:same]))  # the last list's groups, as they were
        for place, value, raw, hit in zip(
            places[same:], values[same:], raws[same:], hits[same:], strict=True
        ):
            if hit is None or hit.raw != raw:
                warnings: list[str] = []
                events = read(place, warnings)
                hit = Group(tuple(events), tuple(warnings), len(raw or b""), raw or b"", value)
                if raw is not None:
                    self.groups.put(_fingerprint(place, raw), hit, hit.cost)
            out.append(hit)
        if isinstance(given, Slices) and given.raws:  # what the next request of it is compared with
            kept = Slices(given.raws, tuple(out), tuple(values))
            self.lists.put(_fingerprint(0, given.raws[0]), kept, sum(map(len, given.raws)))
        return out

    def loaded_items(self, raws: Sequence[bytes], load: Callable[[bytes], Any]) -> tuple[list[Any], Slices]:
        """The value of each entry of a body list given as its exact bytes (``load``: ``orjson.loads``):
        an entry whose bytes the memo holds at its index is the value read from them before, not read
        again (equal bytes, equal value). With the lookups' groups, for :meth:`listed` to take."""
        last = self.lists.get(_fingerprint(0, raws[0])) if raws else None
        n = len(raws)
        # request N's list mostly opens request N+1's: those entries are compared at C speed and taken
        # as they were (their groups, values and bytes), the rest looked up one by one
        same = _common(last.raws, raws) if last is not None and len(last.values) == len(last.raws) else 0
        found: list[Group | None] = [None] * (n - same)
        if last is not None:
            for i in range(same, min(n, len(last.raws))):
                if last.raws[i] == raws[i]:
                    found[i - same] = last.found[i]
        misses = [i for i, hit in enumerate(found) if hit is None]
        if misses:
            hits = self.groups.get_many([_fingerprint(same + i, raws[same + i]) for i in misses])
            for i, hit in zip(misses, hits, strict=True):
                found[i] = hit if hit is not None and hit.raw == raws[same + i] else None
        tail = raws[same:]
        values = [load(raw) if hit is None else hit.value for raw, hit in zip(tail, found, strict=True)]
        kept = tuple(raw if hit is None else hit.raw for raw, hit in zip(tail, found, strict=True))
        if last is not None and same:
            values[:0] = last.values[:same]
            return values, Slices(last.raws[:same] + kept, last.found[:same] + tuple(found), same=same)
        return values, Slices(kept, tuple(found))  # the bytes the memo holds already, not a copy

    def loaded(self, place: Hashable, raw: bytes, load: Callable[[bytes], Any]) -> Any:
        """``load(raw)`` (a body's system prompt or tool list as its bytes), once for each exact bytes at
        ``place``."""
        return self._kept(("loaded", place), raw, lambda: load(raw))

    def _kept(self, place: Hashable, raw: bytes, make: Callable[[], Any]) -> Any:
        """``make()``, once for each exact bytes ``raw`` at ``place``: looked up by the bytes' length and
        ends (a request's bytes are a new object each time: hashing them whole would cost as much as
        the comparison a hit makes)."""
        key = (place, len(raw), raw[:_ENDS], raw[-_ENDS:])
        hit = self.values.get(key)
        if hit is not None and hit[0] == raw:
            return hit[1]
        value = make()
        self.values.put(key, (raw, value), len(raw))
        return value

    def parsed(self, place: Hashable, value: Any, parse: Callable[[Any], V], raw: bytes | None = None) -> V:
        """``parse(value)``, once for each exact value at ``place`` (a body's tool list); ``raw``: its
        exact bytes, when the caller has them."""
        raw = json_key(value) if raw is None else raw
        if raw is None:
            return parse(value)
        return cast(V, self._kept(("parsed", place), raw, lambda: parse(value)))

    def clear(self) -> None:
        self.groups.clear()
        self.turns.clear()
        self.values.clear()
        self.lists.clear()
        self.readings.clear()
        self.cuts.clear()


def _segment(memo: ReadMemo, run: Sequence[Event], at_end: bool, cost: int) -> _Segment:
    """The turn ``run`` through the memo; ``cost``: the bytes of the body messages that open in it."""
    key = (tuple(map(id, run)), at_end)
    hit = memo.turns.get(key)
    if hit is None:
        alone = read_alone(run)
        drafts, warns = (alone, ()) if alone is not None else _read_on(memo, run, at_end)
        hit = _Segment(tuple(run), drafts, warns)
        memo.turns.put(key, hit, cost)
    return hit


@dataclass(slots=True)
class _Reading:
    """An agent's turn as far as it was read (its events), and the assembly that read them."""

    events: tuple[Event, ...]
    turn: TurnDraft


def _read_on(memo: ReadMemo, run: Sequence[Event], at_end: bool) -> tuple[tuple[Draft, ...], tuple[str, ...]]:
    """The agent's turn ``run`` read on from where the memo's reading of its opening stopped, when that
    reading's events open ``run`` (request N+1's last turn is request N's and a step more), else from its
    start; the same drafts and warnings either way (:meth:`TurnDraft.feed`)."""
    kept = memo.readings.take(run[0])
    turn, at = TurnDraft([]), 0
    if kept is not None:
        n = len(kept.events)
        if n <= len(run) and all(map(operator.is_, kept.events, run)):
            turn, at = kept.turn, n
        elif n - 1 <= len(run) and all(map(operator.is_, kept.events[:-1], run)) and kept.turn.take_back():
            turn, at = kept.turn, n - 1  # its last message came again changed (its cache marker moved)
    turn.feed(run[at:])
    memo.readings.put(run[0], _Reading(tuple(run), turn))
    return tuple(turn.finish(at_end=at_end)), tuple(turn.warnings)


@dataclass(frozen=True, slots=True)
class _Cut:
    """A body's groups cut into turns: the groups, the turns, and the points where no turn was in hand
    (after a user or system message): how many groups and turns stand before each."""

    groups: tuple[Group, ...]
    segments: tuple[_Segment, ...]
    points: tuple[tuple[int, int], ...]


def _segments(memo: ReadMemo, groups: Sequence[Group]) -> list[_Segment]:
    """The body's turns, in order: each user or system message alone, the agent's side between them. A
    turn's cost is the bytes of the body messages whose first event is in it. Request N+1 opens with
    request N's groups (the same objects): its turns are N's up to N's last point where no turn was in
    hand within them, and cut from there on."""
    key = groups[min(1, len(groups) - 1)] if groups else None  # its first message: one per conversation
    kept = memo.cuts.peek(key) if key is not None else None
    at, out, points = _resumed(kept, groups) if kept is not None else (0, [], [])
    run: list[Event] = []
    cost = 0
    for i in range(at, len(groups)):
        g = groups[i]
        if not g.resets:  # the common case: a message wholly of the turn in hand
            if g.events:
                run.extend(g.events)
                cost += g.cost
            continue
        for k, ev in enumerate(g.events):
            if isinstance(ev, _RESETS):
                if run:
                    out.append(_segment(memo, run, False, cost))
                    run, cost = [], 0
                out.append(_segment(memo, [ev], False, g.cost if k == 0 else 0))
            else:
                run.append(ev)
                cost += g.cost if k == 0 else 0
        if not run:
            points.append((i + 1, len(out)))
    if key is not None:
        memo.cuts.put(key, _Cut(tuple(groups), tuple(out), tuple(points)))
    if run:
        out.append(_segment(memo, run, True, cost))
    return out


def _resumed(kept: _Cut, groups: Sequence[Group]) -> tuple[int, list[_Segment], list[tuple[int, int]]]:
    """Where the cut of ``groups`` goes on from ``kept``'s: its last points (the latest first) whose groups
    before are all ``groups``' own (compared by identity, at C speed); the start when none."""
    for j in range(len(kept.points) - 1, max(len(kept.points) - 1 - _POINTS, -1), -1):
        at, made = kept.points[j]
        if at <= len(groups) and all(map(operator.is_, kept.groups[:at], groups[:at])):
            return at, list(kept.segments[:made]), list(kept.points[: j + 1])
    return 0, [], []


def assemble_memo(
    memo: ReadMemo,
    groups: Sequence[Group],
    *,
    conversation_id: str,
    tools: Sequence[ToolSpec] | None,
    warnings: Sequence[str] = (),
    issuer: Issuer | None = None,
    settings: RequestSettings | None = None,
    id_prefix: str = "m",
) -> History:
    """:func:`~toolreplay.wires.turns.assemble` of the groups' events, each turn through the memo: the
    same history, warnings in the same order."""
    warns = [*warnings, *chain.from_iterable(map(_WARNINGS, groups))]  # at C speed: one per body message
    segments = _segments(memo, groups)
    for s in segments:
        warns.extend(s.warnings)
    placed = [(s, j, d) for s in segments for j, d in enumerate(s.drafts)]
    ids = assign_ids([d for _, _, d in placed], id_prefix)
    out: list[Message] = []
    for mid, (s, j, d) in zip(ids, placed, strict=True):
        m = s.made.get((j, mid, issuer))
        if m is None:
            m = drafted_message(mid, d)
            m = with_issuer(m, issuer) if issuer is not None else m
            if len(s.made) < _MADE:
                s.made[(j, mid, issuer)] = m
        out.append(m)
    messages = tuple(out)
    warn_unanswered(messages, warns)
    return history_of(conversation_id, messages, tools, warns, settings)


#: The proxy's memo (one per process).
READ_MEMO = ReadMemo()

__all__ = [
    "BUDGET",
    "READ_MEMO",
    "Bounded",
    "ByIdentity",
    "Group",
    "ReadMemo",
    "Slices",
    "assemble_memo",
    "json_key",
]

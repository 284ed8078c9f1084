"""The routed path's memory of the conversations it answered lately (design 54): what the store will hold
of each once the recorder has written its last exchange, so that the next request continuing it is
translated at once, without waiting for the recorder nor loading the conversation back.

Each exchange the routed path hands the recorder is remembered (:meth:`Recent.remember`) under the head
the conversation will have once it is written (:mod:`.matching`), with what the store held before it
(the :class:`Base` its request was translated over) and its answer; what the store will hold after it
(:func:`~toolreplay._proxy.record.recorded_state`) is worked out only when a request continues it. The
recorder tells the memory what it wrote (:meth:`Recent.heard`): an exchange it wrote otherwise than
foreseen (another head, another conversation continued) or not at all is forgotten, and the store says.

The memory answers only where it answers as the store would (:meth:`Recent.find`, :meth:`Recent.agrees`):
the longest remembered head the request holds, of a conversation the store's lookup for the request's
session would consider; the store's own lookup, made beside it, must know no longer match (another
process, a conversation recorded before a restart) and, once the exchange is written, find that very
conversation there. Where two remembered conversations the session would consider share the head (the
same history sent twice, without a session), the store says which.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from toolreplay._history import History, Message
from toolreplay._proxy.exchange import AnswerRead, Exchange, translated_answer
from toolreplay._proxy.matching import Continued, Known, last_head, next_head, unseen
from toolreplay._proxy.record import Recorded, recorded_state

#: How many heads the memory keeps (the least recently answered go first), and how many conversations
#: one head may name before the memory leaves that head to the store.
LIMIT = 16
CROWD = 4
_REPLY = Message("", "assistant", "")


@dataclass(frozen=True, slots=True)
class Base:
    """What a routed request was translated over: the stored conversation it continues (None: a new
    one), how many of its messages that holds, the request's prefix heads, and the conversation's session
    as the store holds it (``known`` False: not known here)."""

    history: History | None
    holds: int
    heads: tuple[str, ...]
    session: str | None = None
    known: bool = True
    #: the remembered exchange it continues (None: read from the store)
    source: _Entry | None = field(default=None, compare=False, repr=False)
    #: False: what the recorder will make of the exchange is not foreseen here (earlier turns a body
    #: names by id, design 55): until it is written, every routed request waits for the recorder
    foreseen: bool = True

    @property
    def head(self) -> str | None:
        """The head the stored conversation had (None: a new conversation)."""
        return self.heads[self.holds - 1] if self.holds else None


class _Entry:
    """One remembered exchange: the head it leaves, its conversation's session, and the state after it."""

    __slots__ = (
        "_answer", "_ex", "_into", "_state", "base", "cid", "head", "known", "lost", "session", "source",
        "ticket",
    )  # fmt: skip

    def __init__(self, ticket: int, head: str, base: Base, ex: Exchange, answer: AnswerRead | None) -> None:
        self.ticket, self.head = ticket, head
        #: the remembered exchange its request continued, while this one is unwritten (not kept after:
        #: a long conversation's exchanges would each hold every one before it)
        self.base, self.source = replace(base, source=None), base.source
        self._ex, self._answer = ex, answer
        self._state: History | None = None
        #: the conversation's id once the recorder has written the exchange (None: not yet)
        self.cid: str | None = None
        #: the stored conversation its request continued, as loaded ("": a new one, or a remembered one)
        self._into = base.history.id if base.history is not None and base.source is None else ""
        #: the recorder wrote it otherwise than foreseen (or not at all)
        self.lost = False
        if base.history is None or ex.session is not None:
            self.session, self.known = ex.session, True  # new: the request's; else COALESCE(old, new)
        else:
            self.session, self.known = base.session, base.known

    def state(self) -> History:
        """What the store will hold of the conversation after this exchange (worked out once; on any
        thread: the base is read before the state is looked at, and the state set before the base's
        history is let go, so a thread that finds the history gone finds the state)."""
        b = self.base
        state = self._state
        if state is None:
            assert self._ex.history is not None
            state = recorded_state(b.history, b.holds, self._ex.history, self._ex, self._answer)
            self._state = state
            self.base = replace(b, history=None)  # not needed any more: let it go
        return state

    def into(self) -> str | None:
        """The stored conversation this exchange is written into: its own once written, else the one its
        request continued, as far as known here (None: a new one, or one that went otherwise)."""
        e: _Entry | None = self
        while e is not None and not e.lost:
            if e.cid is not None or e._into:
                return e.cid or e._into
            e = e.source  # continued a remembered exchange: the conversation that one goes into
        return None

    def takes(self, session: str | None) -> bool:
        """Whether the store's lookup for ``session`` would consider this conversation."""
        return session is None or (self.known and self.session in (None, session))


@dataclass(frozen=True, slots=True)
class Hit:
    """A remembered conversation a request continues: the entry, how many messages it holds, and whether
    its exchange was still unwritten when it was found."""

    entry: _Entry
    holds: int
    pending: bool

    def base(self, heads: tuple[str, ...]) -> Base:
        """The request (of prefix ``heads``) continues the remembered state."""
        e = self.entry
        return Base(e.state(), self.holds, heads, e.session, e.known, e)


def foreseen_head(base: Base, ex: Exchange, answer: AnswerRead | None) -> str:
    """The head the recorder will give the conversation once it has written ``ex`` (as
    :meth:`~toolreplay._proxy.record.Writer.record` works it out): the request's, and a reply after it
    when the answer is stored as a reply of its own that the agent saw."""
    head = last_head(base.heads)
    if answer is None or answer.reply is None:  # nothing stored, or a reply cut off (which is unseen)
        return head
    request = ex.history.messages if ex.history is not None else ()
    if len(request) > base.holds:
        last: Message | None = request[-1]
    else:
        seen = [m for m in base.history.messages if not unseen(m)] if base.history is not None else []
        last = seen[-1] if seen else None
    if last is not None and last.role == "assistant" and last.status != "complete":
        return head  # the answer is the next step of the reply the request ends with
    return next_head(head, _REPLY)


class Recent:
    """The memory (module docstring), shared by the routed path's threads and the recorder's."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._lock = threading.Lock()
        self._limit = limit
        #: head -> the exchanges that leave it (conversations of different sessions may share one); None:
        #: more than :data:`CROWD` did (the same history sent again and again): the store says, until the
        #: head is let go as the least recently answered
        self._heads: OrderedDict[str, list[_Entry] | None] = OrderedDict()
        #: ticket -> the exchange, for each the recorder has not written (remembered or already moved on)
        self._pending: dict[int, _Entry] = {}
        #: conversation id -> the ticket of the last exchange written into it (None: not a routed one)
        self._written: OrderedDict[str, int | None] = OrderedDict()
        self._tickets = itertools.count(1)
        #: how many requests the memory answered (the tests' and the benchmark's figure)
        self.hits = 0

    def find(self, heads: Sequence[str], session: str | None) -> Hit | None:
        """The remembered conversation with the longest head the request holds, of its session."""
        with self._lock:
            for i in range(len(heads) - 1, -1, -1):
                held = self._heads.get(heads[i], ())
                if held is None:
                    return None
                taken = [e for e in held if e.takes(session)]
                if len(taken) > 1:
                    return None  # two conversations of the session would have it: the store says which
                if taken:
                    return Hit(taken[0], i + 1, taken[0].ticket in self._pending)
        return None

    def agrees(self, hit: Hit, found: Continued | None) -> bool:
        """Whether the store's own match (made after ``hit`` was found) agrees with it: the entry is still
        remembered, the store knows no longer match, and finds at its head the very conversation the
        exchange goes into (written there, or to be: a conversation moved on at the head it holds
        already), or, where the exchange was unwritten when found, none there yet."""
        e = hit.entry
        with self._lock:
            if e not in (self._heads.get(e.head) or ()):
                return False
            if found is not None and found.holds == hit.holds:
                # written: the conversation it went into; not yet: the one it continues, at this head
                # already (a conversation it moves here from another head is there by another writer)
                agrees = found.conversation_id == e.into() and (e.cid is not None or e.base.head == e.head)
            else:
                agrees = (found is None or found.holds < hit.holds) and hit.pending
            self.hits += agrees
            return agrees

    def touched(self, heads: Sequence[str]) -> bool:
        """Whether an exchange not written yet changes what the store's lookup finds for ``heads`` (it
        leaves one of them, or moves a conversation on from one)."""
        wanted = set(heads)
        with self._lock:
            return any(
                not e.base.foreseen or e.head in wanted or (e.base.head is not None and e.base.head in wanted)
                for e in self._pending.values()
            )

    def ticket(self) -> int:
        return next(self._tickets)

    def remember(self, ticket: int, base: Base, ex: Exchange) -> None:
        """An exchange handed to the recorder (its ``ticket`` on it): remembered under the head it will
        leave. Cheap: the event loop calls it."""
        answer = translated_answer(ex)
        head = foreseen_head(base, ex, answer)
        entry = _Entry(ticket, head, base, ex if ex.body is None else replace(ex, body=None), answer)
        with self._lock:
            self._pending[ticket] = entry
            if not base.foreseen:
                return
            if base.head is not None:  # that conversation moves on
                self._forget(base.head, lambda e: e is base.source or e.takes(ex.session))
            held = self._heads.setdefault(head, [])
            if held is not None:
                held.append(entry)
                if len(held) > CROWD:
                    self._heads[head] = None
            self._heads.move_to_end(head)
            while len(self._heads) > self._limit:
                self._heads.popitem(last=False)

    def foresee(self, ticket: int) -> None:
        """Work out the state the exchange ``ticket`` leaves (:meth:`_Entry.state`) now, not when the
        request that continues it comes: the hand-over thread calls it once the answer has gone out
        (design 63), while the agent reads it and runs its tools."""
        with self._lock:
            entry = self._pending.get(ticket)
        if entry is not None and entry.base.foreseen:
            entry.state()

    def _forget(self, head: str, which: Callable[[_Entry], bool]) -> None:
        """The entries at ``head`` that ``which`` names let go (holding the lock)."""
        held = self._heads.get(head, ())
        if held is None:
            return  # the store says for this head, whoever moves on
        kept = [e for e in held if not which(e)]
        if kept:
            self._heads[head] = kept
        else:
            self._heads.pop(head, None)

    def known(self, ex: Exchange) -> Known | None:
        """What the store holds of the conversation ``ex`` continues, when its request continued a
        remembered exchange and that is the last one written into it (on the recorder's thread, before it
        writes ``ex``): the recorder need not load it back."""
        with self._lock:
            pending = self._pending.get(ex.ticket) if ex.ticket is not None else None
            src = pending.source if pending is not None else None
            if src is None or src.cid is None or self._written.get(src.cid, -1) != src.ticket:
                return None
        return Known(src.cid, src.state())

    def heard(self, ex: Exchange, recorded: Recorded | None) -> None:
        """What the recorder made of an exchange (on its thread): as foreseen, the entry now names its
        conversation; otherwise it is forgotten."""
        with self._lock:
            if recorded is not None:
                self._written[recorded.conversation_id] = ex.ticket
                self._written.move_to_end(recorded.conversation_id)
                while len(self._written) > 4 * self._limit:
                    self._written.popitem(last=False)
            if ex.ticket is None:
                return
            e = self._pending.pop(ex.ticket, None)
            if e is None:
                return
            went = recorded is not None and (recorded.base, recorded.head) == (e.base.head, e.head)
            cid = recorded.conversation_id if recorded is not None and went else None
            if cid is not None and e.base.head is not None and cid != e.into():
                cid = None  # another conversation at the head it continued (another writer's, newer)
            e.source = None  # its own conversation is known now (or lost)
            if cid is not None:
                e.cid = cid  # (an entry moved on already still names it: known())
            else:
                e.lost = True  # and so is what continued it, as far as it goes into the store
                self._forget(e.head, lambda x: x is e)


__all__ = ["Base", "Hit", "Recent", "foreseen_head"]

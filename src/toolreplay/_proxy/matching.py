"""Which stored conversation a request continues (design 45): keys of messages on the neutral model.

A message's key is its role and, for the system's and the user's messages, their words (whitespace
folded) and the kinds of their parts. A reply's key is its role alone: what a reply holds is the model's,
recorded by the proxy, and an agent that flattens, drops or re-ids calls or drops reasoning is still
continuing the same conversation (the live audit says what it changed). A reply the agent never saw (a
stream cut before its end) has no key. The digest of every prefix of a request's history
(:func:`prefix_heads`) is looked up against each stored conversation's ``head``, the longest prefixes first
(:func:`longest`); the longest match wins (:func:`continued`).
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolreplay._history import History, Message
from toolreplay.wires.bounded import Bounded, ByIdentity, alive, shared_prefix, weakly

if TYPE_CHECKING:
    from toolreplay._store import Store

_SEED = hashlib.sha256(b"toolreplay proxy conversation").hexdigest()


def unseen(m: Message) -> bool:
    """A stored reply whose stream was cut: the agent never saw it, so it is not in its history."""
    return m.role == "assistant" and isinstance(m.meta, dict) and bool(m.meta.get("cut"))


#: Long texts already folded (a system prompt, a big tool answer: every request of a conversation carries
#: them again), each to its words; keyed by the whole text, so exact, within 4 M characters.
_FOLDED: Bounded[str] = Bounded(4 << 20)
#: Texts shorter than this are folded every time (cheaper than the lookup).
_LONG = 512


def _words(text: str) -> str:
    """``text`` with its whitespace folded (runs to one space, none at the ends)."""
    if len(text) < _LONG:
        return " ".join(text.split())
    got = _FOLDED.get(text)
    if got is None:
        got = " ".join(text.split())
        _FOLDED.put(text, got, len(text))
    return got


def message_key(m: Message) -> str:
    if m.role == "assistant":
        return "assistant"
    words = _words(m.text)
    kinds = ",".join(p.kind for p in m.parts if p.kind != "text")
    return f"{m.role}\x00{words}\x00{kinds}"


#: The digest after a message, by the message, with the digest before it: every request of a conversation
#: carries its messages again (the read memo gives an unchanged one as the same object, design 53), and a
#: system prompt or a big tool answer is tens of kilobytes to hash.
_AFTER: ByIdentity[list[tuple[str, str]]] = ByIdentity(4096)


def next_head(head: str, m: Message) -> str:
    """The digest of a conversation whose digest was ``head`` once ``m`` follows."""
    if unseen(m):
        return head
    held = _AFTER.get(m, list)
    if held and held[0][0] == head:
        return held[0][1]
    after = hashlib.sha256(f"{head}\x01{message_key(m)}".encode("utf-8", "surrogatepass")).hexdigest()
    held[:] = [(head, after)]
    return after


def prefix_heads(messages: Sequence[Message]) -> list[str]:
    """The digest after each message: ``out[i]`` is the head of the first ``i + 1`` messages. Taken up
    where the conversation's last request left it: the messages it shares with that one, the same
    objects (the read memo gives them again, design 53), are found at C speed and keep their heads."""
    if not messages:
        return []
    held, heads = _PREFIXES.peek(messages[0]) or ((), ())
    k = shared_prefix(alive(held), messages)
    out = list(heads[:k])
    head = out[-1] if out else _SEED
    for m in messages[k:]:
        head = next_head(head, m)
        out.append(head)
    _PREFIXES.put(messages[0], (weakly(messages), tuple(out)))
    return out


#: Per conversation (by its first message), the messages of its last request (weakly: a request whose
#: messages nothing else holds, the recorder's reading of a passed-through body, leaves nothing behind)
#: and the head after each (design 62).
_PREFIXES: ByIdentity[tuple[tuple[weakref.ref[Message], ...], tuple[str, ...]]] = ByIdentity(64)


def head_of(messages: Sequence[Message]) -> str:
    return last_head(prefix_heads(messages))


def last_head(heads: Sequence[str]) -> str:
    """The head of the messages whose prefix digests are ``heads`` (the seed for none)."""
    return heads[-1] if heads else _SEED


@dataclass(frozen=True, slots=True)
class Continued:
    """The stored conversation a request continues and how many of the request's messages it holds."""

    conversation_id: str
    holds: int


def continued(found: Sequence[tuple[str, str]], heads: Sequence[str]) -> Continued | None:
    """The longest of ``found`` (``(id, head)`` rows, newest first) whose head ends a prefix of the
    request; among equals the newest."""
    at = {h: i for i, h in enumerate(heads)}
    best: Continued | None = None
    for cid, head in found:
        i = at.get(head)
        if i is not None and (best is None or i + 1 > best.holds):
            best = Continued(cid, i + 1)
    return best


#: How many of a request's longest prefixes are asked for first (:func:`longest`): a request continues
#: what its conversation's last exchange left, a message or two before its end.
RECENT_HEADS = 16


def longest(store: Store, heads: Sequence[str], session: str | None) -> Continued | None:
    """:func:`continued` over the store's rows for ``heads``, asked for the longest prefixes first: a
    match among them is longer than any among the rest, so the rest are asked only where none of them is
    stored (a new conversation). One index query of a few heads where it was one of every head (a
    conversation 200 messages deep: some 0.08 ms to 0.01 ms of SQLite's time)."""
    cut = max(0, len(heads) - RECENT_HEADS)
    for part in (heads[cut:], heads[:cut]):
        got = continued(store.find_heads(part, session), heads) if part else None
        if got is not None:
            return got
    return None


class Asked:
    """The store's match for the heads one connection asked last, with the database's change mark
    (:meth:`Store.changes`) read before it: the same heads and session asked again while the mark has
    not moved are answered without a query. The requests of a tool loop carry the same heads (a reply in
    progress keys by its role alone); any write to the database since, this process's or another's,
    moves the mark, and a database that gives no mark is asked every time (design 54)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: tuple[tuple[int, int], Sequence[str], str | None, Continued | None] | None = None

    def found(self, store: Store, heads: Sequence[str], session: str | None) -> Continued | None:
        mark = store.changes()  # before the query: a write between the two moves it for the next ask
        last = self._last
        if mark is not None and last is not None and last[:3] == (mark, heads, session):
            return last[3]
        got = longest(store, heads, session)
        self._last = (mark, heads, session, got) if mark is not None else None
        return got


@dataclass(frozen=True, slots=True)
class Found:
    """What the store holds of a request: the digests after each prefix of its messages, the stored
    conversation it continues (None: a new one) and that conversation's history."""

    heads: list[str]
    continued: Continued | None
    stored: History | None


@dataclass(frozen=True, slots=True)
class Known:
    """A conversation as the store holds it, known without reading it back (design 54)."""

    conversation_id: str
    history: History


def find_continued(
    store: Store,
    messages: Sequence[Message],
    session: str | None,
    heads: Sequence[str] | None = None,
    known: Known | None = None,
    recall: Callable[[str], History | None] | None = None,
) -> Found:
    """The stored conversation ``messages`` continue (design 45), loaded: an index lookup (two for a new
    one) and one load.
    ``heads``: their :func:`prefix_heads`, when the caller has them already; ``known``: a conversation
    whose messages are known, not loaded when it is the one found; ``recall``: the messages of the
    conversation found when the caller knows them as the store holds them (else None: it is loaded)."""
    heads = list(heads) if heads is not None else prefix_heads(messages)
    cont = longest(store, heads, session)
    if cont is None:
        return Found(heads, None, None)
    if known is not None and known.conversation_id == cont.conversation_id:
        return Found(heads, cont, known.history)
    held = recall(cont.conversation_id) if recall is not None else None
    return Found(heads, cont, held if held is not None else store.load(cont.conversation_id))


__all__ = [
    "Asked",
    "Continued",
    "Found",
    "Known",
    "continued",
    "find_continued",
    "head_of",
    "last_head",
    "longest",
    "message_key",
    "next_head",
    "prefix_heads",
    "unseen",
]

"""What the render cache keeps per rendering (vessel, mode, options): :class:`Entry`, and how the turn
messages of a conversation's tail are prepared for it.

Kept apart from :mod:`toolreplay._render_cache` (which renders) to keep each module small.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from toolreplay._history import Message, ToolSpec
from toolreplay._ids import StemAllocator, stems_for
from toolreplay._replay import Mode, ReplaySettings, TurnMessage, prepare_turn_messages
from toolreplay.wires.common import IdMapper, RenderOptions
from toolreplay.wires.contract import TurnPiece

#: One cache entry's key: wire, options, mode, replay settings, whether tools are declared from the
#: native replay (design 8).
Key = tuple[str, RenderOptions, Mode, ReplaySettings, bool]
#: The most pieces an entry's encoded items are kept in before they are joined into one.
_PIECES = 32


@dataclass(slots=True)
class Entry:
    """One cached rendering: its key, and per stored message what it produced and the state after it."""

    wire: str
    opts: RenderOptions
    mode: Mode
    settings: ReplaySettings
    native_tools: bool
    messages: tuple[Message, ...] = ()
    #: per stored message: its turn message (None: not replayed) and how many elements exist after it
    turns: list[TurnMessage | None] = field(default_factory=list)
    items_after: list[int] = field(default_factory=list)
    items: list[Any] = field(default_factory=list)
    #: the JSON of the first ``len(encoded_ends)`` items joined by commas (made when a body is sent), in
    #: pieces (one per body that added items: nothing copied to add more), and where each item ends in
    #: it: kept while the items are, so a longer conversation encodes only what it added
    encoded: list[bytes | memoryview] = field(default_factory=list)
    encoded_ends: list[int] = field(default_factory=list)
    #: the last skeleton rendered: its turns and declared tools (known by identity), and its body
    skeleton: tuple[tuple[Any, ...], dict[str, Any]] | None = None
    declared: list[ToolSpec] = field(default_factory=list)
    declared_names: set[str] = field(default_factory=set)
    #: (stored message, how many tools are declared after it), where a message declared new tools
    declared_at: list[tuple[int, int]] = field(default_factory=list)
    system: list[TurnMessage] = field(default_factory=list)
    #: the stored message of each system turn
    system_at: list[int] = field(default_factory=list)
    first: tuple[TurnMessage, int] | None = None
    first_at: int = -1
    #: the stems of the first ``fed`` stored messages (fed when a render resumes, not by a cold render),
    #: and how many ids had stems after each of them (where a truncation rewinds the allocator to)
    alloc: StemAllocator = field(default_factory=StemAllocator)
    fed: int = 0
    alloc_at: list[int] = field(default_factory=list)
    piece: TurnPiece | None = None
    ids: IdMapper | None = None

    def encode_items(self) -> None:
        """:attr:`encoded` brought to all of :attr:`items`: the JSON of those added since, one piece more
        (``TypeError``: an item orjson does not encode)."""
        k = len(self.encoded_ends)
        new = [orjson.dumps(x) for x in self.items[k:]]
        if not new:
            return
        end = self.encoded_ends[-1] if k else 0
        self._cut(end)
        joined = b",".join(new)
        self.encoded.append(b"," + joined if k else joined)
        if len(self.encoded) > _PIECES:  # joined now and then: the pieces stay few
            self.encoded[:] = [b"".join(self.encoded)]
        for j, b in enumerate(new):
            end += (1 if k or j else 0) + len(b)
            self.encoded_ends.append(end)

    def encoded_items(self) -> list[bytes | memoryview]:
        """The JSON of the items :meth:`encode_items` encoded (as far as they are still kept), in pieces."""
        self._cut(self.encoded_ends[-1] if self.encoded_ends else 0)
        return list(self.encoded)

    def _cut(self, end: int) -> None:
        """:attr:`encoded` cut to its first ``end`` bytes (the items dropped since are cut off; a view of
        the piece they end in, not a copy)."""
        at = 0
        for i, piece in enumerate(self.encoded):
            if at + len(piece) >= end:
                if at + len(piece) > end:
                    self.encoded[i] = memoryview(piece)[: end - at]
                del self.encoded[i + 1 if end > at else i :]
                return
            at += len(piece)

    def matches(self, key: Key) -> bool:
        wire, opts, mode, settings, native_tools = key
        return (
            self.wire == wire
            and self.mode == mode
            and self.native_tools == native_tools
            and self.opts == opts
            and self.settings == settings
            and _same_order(self.opts, opts)
        )


def _same_order(a: RenderOptions, b: RenderOptions) -> bool:
    """Whether two equal options also render the same bytes: their tools' schemas and the request's
    settings are dicts, equal in any key order, which the body keeps (the same tool objects, as a
    conversation's requests read through the memo have them, surely do)."""
    if all(map(operator.is_, a.tools, b.tools)) and a.request is b.request:
        return True
    try:
        return orjson.dumps((a.tools, a.request)) == orjson.dumps((b.tools, b.request))
    except TypeError:  # a value orjson does not write: not told apart by its bytes, so not shared
        return False


ID = operator.attrgetter("id")
ROLE = operator.attrgetter("role")
NAME = operator.attrgetter("name")
CALLS = operator.attrgetter("calls")


#: Per stored message of a tail: its turn message in the entry's mode, and the one that declares tools;
#: then whether every message of the tail has a turn message in the entry's mode (no None).
Tail = tuple[list[TurnMessage | None], list[TurnMessage | None], bool]


def matched(prepared: list[TurnMessage], messages: Sequence[Message], skip: int) -> list[TurnMessage | None]:
    """Each message's turn message (None where it is not replayed), after the first ``skip`` prepared
    ones (the context's); prepare emits at most one per message, in order."""
    out: list[TurnMessage | None]
    if len(prepared) - skip == len(messages):  # one each (the common case): they pair in order
        out = list(prepared[skip:])
        return out
    out = []
    pos = skip
    for m in messages:
        if pos < len(prepared) and prepared[pos].message_id == m.id:
            out.append(prepared[pos])
            pos += 1
        else:
            out.append(None)
    return out


def prepared(
    window: Sequence[Message], tail: int, mode: Mode, settings: ReplaySettings, native: bool
) -> Tail:
    """(turn message in ``mode``, the turn message that declares tools) of each of the last ``tail``
    messages of ``window``: with ``native``, the native mode's (design 8), else the same one."""
    context = {m.id for m in window[: len(window) - tail]}
    rows: list[list[TurnMessage | None]] = []
    every: list[bool] = []
    for md in dict.fromkeys((mode, "native" if native else mode)):
        turns = prepare_turn_messages(window, md, settings=settings)
        skip = 0
        while skip < len(turns) and turns[skip].message_id in context:
            skip += 1
        rows.append(matched(turns, window[len(window) - tail :], skip))
        every.append(len(turns) - skip == tail)
    return rows[0], rows[-1], every[0]


def tail_turns(messages: tuple[Message, ...], start: int, e: Entry) -> Tail | None:
    """The turn messages of ``messages[start:]`` (see :func:`prepared`).

    Prepared by :func:`prepare_turn_messages` itself, over the tail plus, outside the native mode, its
    context: the messages since the last user message before ``start`` (the ``prose`` records made there
    land in the next user message; a native turn depends on its own message and stem alone).
    ``e.alloc`` is brought to the stems of ``messages[:start]`` and continued; when the stems the tail
    gets on its own differ from the conversation's (an id collision suffix), or ids repeat, None.
    From the start (a cold render) the tail's own stems are the conversation's: nothing to compare, and
    the allocator is left to be fed if a later render resumes.
    """
    c = start
    # a native turn is made of its message and its stem alone: only the other modes need the context
    # (their records of the replies since the last user message land in the next one; design 62)
    while e.mode != "native" and c > 0 and messages[c - 1].role != "user":
        c -= 1
    window = messages[c:]
    ids = list(map(ID, window))
    if len(set(ids)) != len(ids):
        return None
    if start:
        alloc, at = e.alloc, e.alloc_at
        for m in messages[e.fed : start]:
            alloc.stem(m.id)
            at.append(len(alloc))
        stems = []
        for i in ids[start - c :]:
            stems.append(alloc.stem(i))
            at.append(len(alloc))
        e.fed = len(messages)
        if stems_for(ids)[start - c :] != stems:
            return None
    return prepared(window, len(messages) - start, e.mode, e.settings, e.native_tools)


def mapped(turns: Sequence[TurnMessage | None]) -> int:
    """How many calls the wire's call-id mapper named for ``turns`` (once per call of each rendered turn,
    the mapper's contract)."""
    return sum(len(t.calls) for t in turns if t is not None and t.role != "system")


def extend_each(e: Entry, piece: TurnPiece, turns: list[TurnMessage | None]) -> None:
    """:meth:`RenderCache._extend` for turns that hold system turns or messages not replayed."""
    items, after = e.items, e.items_after
    first = e.first is None
    for t in turns:
        if t is not None:
            if t.role == "system":
                e.system_at.append(len(after))
                e.system.append(t)
            else:
                made = piece(t, items)
                if made:
                    if first:
                        e.first, e.first_at, first = (t, len(made)), len(after), False
                    items += made
        after.append(len(items))


__all__ = ["Entry", "Key", "Tail", "extend_each", "mapped", "matched", "prepared", "tail_turns"]

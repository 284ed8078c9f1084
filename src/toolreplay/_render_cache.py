"""Incremental rendering for a conversation that grows turn by turn.

Every turn of an agent renders its whole history again, although only the end of it changed. A
:class:`RenderCache` (one per conversation) keeps what the last render produced: for each stored
message its turn message and the wire elements it rendered into, plus the running state of the wire
(the call-id mapper, the tools declared so far). The next render compares the new history with the
cached one **by content** (the same message objects, or ones that render exactly alike: equal, with the
same key order and number types), finds the first message that differs, and renders only from there
on; everything before it is reused. So:

* one more turn appended: only the new messages are prepared and rendered;
* a reply in progress that gained a call (the continuation requests inside a turn): only that reply;
* anything earlier changed (an edited text, an added or removed call, a changed answer): rendering
  resumes at the first changed message, and everything after it is rendered again;
* a different vessel, mode, model, system prompt, tool list or replay setting: its own cache entry.

There is one render path (design 29): :func:`toolreplay.render` is a :class:`RenderCache` with nothing
cached, so a cold render and a turn's incremental render run the same code and give the same bytes. The
body equals the wire's own ``render`` of every prepared turn, byte for byte after
:func:`toolreplay.encode` (property-tested over every wire and vessel). It uses each wire's own
per-turn function (``render_turn``) and the wire's own ``render`` for everything around the message
list, so no wire shape is written twice; what it needs of a wire (the body key that holds the list, the
id policy hook, the per-turn renderer, how a list that is not a list is put back) is the wire's
:class:`~toolreplay.wires.contract.Wire`. A wire whose body cannot be put together that way (a toy wire
whose list is elsewhere) is rendered whole by its own ``render``.

System turns are kept apart and rendered in the skeleton, each as it stood in its body (an Anthropic
system prompt's blocks, a Responses developer item, Gemini's instruction parts: the wire's own render
reads the layout and places them, before the first turn, as it does for plain system text), so a
conversation that opens with them resumes like any other. The wire's own render of the whole list
decides instead (:func:`mid_system`) where a system message stands after a message of another role
(Chat and Responses keep it in place in their list, the other wires send it as a user turn: either way
inside the list the cache splices), and where the skeleton's list does not end in the first turn's
elements as the cache rendered them (a wire whose render puts something after the first turn, or renders
it otherwise beside the system turns; counted in :attr:`CacheStats.fallbacks`).

What a cold render pays beyond the wire's own work is kept to a few C-speed steps per render, not per
message (design 29): the state for resuming is one count per stored message, and everything else that
resuming needs (the call-id index, the tools declared, the system turns, the stems) is recorded where it
changes or rebuilt when a render resumes.

The returned body shares its elements with the cache: treat it as read-only (copy what you change,
e.g. before adding an Anthropic ``cache_control`` marker). A cache is not thread-safe.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate, chain, islice
from pathlib import Path
from typing import Any, cast

import orjson

from toolreplay._history import History, Message, RequestSettings, load_history
from toolreplay._render_entry import (
    CALLS,
    NAME,
    ROLE,
    Entry,
    Key,
    extend_each,
    mapped,
    prepared,
    tail_turns,
)
from toolreplay._render_options import NO_ARGS, RenderArgs, for_vessel
from toolreplay._render_same import first_difference
from toolreplay._replay import (
    DEFAULT_SETTINGS,
    Mode,
    ReplaySettings,
    TurnMessage,
    prepare_turn_messages,
)
from toolreplay._vessels import Vessel, get_vessel
from toolreplay.jsonenc import Spliced
from toolreplay.wires import get_wire, render_wire
from toolreplay.wires.common import (
    RENDER_DECIDES,
    IdMapper,
    RenderOptions,
    declared_tools,
)
from toolreplay.wires.contract import TurnPiece
from toolreplay.wires.render_warnings import render_warnings

#: How many cache entries (vessel, mode, options) one conversation keeps, most recently used first.
MAX_ENTRIES = 4


def _piece_renderer(wire: str, opts: RenderOptions) -> tuple[TurnPiece, IdMapper | None]:
    """The wire's per-turn renderer, bound to a fresh call-id mapper from the wire's id policy hook."""
    w = get_wire(wire)
    ids = w.call_ids(opts) if w.call_ids is not None else None
    return w.render_turn(opts, ids), ids


@dataclass(frozen=True, slots=True)
class CacheStats:
    """What the cache did so far: renders from scratch, renders that resumed part-way, messages rendered."""

    full: int = 0
    resumed: int = 0
    reused_messages: int = 0
    rendered_messages: int = 0
    fallbacks: int = 0


def _cut(h: History, upto: str | None, mode: Mode, settings: ReplaySettings) -> tuple[Message, ...]:
    """The messages up to and including ``upto`` (all without it); a missing id raises the seam's error."""
    if upto is None:
        return h.messages
    for i, m in enumerate(h.messages):
        if m.id == upto:
            return h.messages[: i + 1]
    prepare_turn_messages(h, mode, upto=upto, settings=settings)  # raises the error a caller expects
    raise AssertionError("unreachable: prepare_turn_messages accepted a missing upto")


def _whole_body(
    messages: Sequence[Message], wire: str, opts: RenderOptions, mode: Mode, settings: ReplaySettings
) -> tuple[dict[str, Any], list[TurnMessage], RenderOptions]:
    """The wire's own render of every prepared turn (and the turns and options it got), for a wire whose
    list the cache cannot splice. Design 8, as the cache: plain and prose declare the tools the native
    replay would."""
    turns = prepare_turn_messages(messages, mode, settings=settings)
    if mode != "native":
        native = prepare_turn_messages(messages, "native", settings=settings)
        opts = replace(opts, tools=declared_tools(native, opts.tools))
    return render_wire(wire, turns, opts), turns, opts


def mid_system(messages: Sequence[Message]) -> bool:
    """Whether a system message stands after the first message of another role: the one placing the
    cache leaves to the wire's own render of the whole list (the cache keeps system turns apart as the
    prompt's, while a wire places a later one in its list, Chat and Responses in place, the others as a
    user turn). Leading system messages render through the skeleton (``RenderCache._body``): the wire's
    own render of them, however they stood in their body (an Anthropic system prompt's blocks, a Responses
    developer item), with the first turn after them, so their layout is the wire's to place."""
    seen_other = False
    for m in messages:
        if m.role != "system":
            seen_other = True
        elif seen_other:
            return True
    return False


def carry_settings(
    body: dict[str, Any], req: RequestSettings, wire: str, opts: RenderOptions, warnings: list[str] | None
) -> dict[str, Any]:
    """``body`` with the imported request's settings the wire carries (``Wire.carry_settings``; the
    render's own fields win), the others named in ``warnings``."""
    hook = get_wire(wire).carry_settings
    if hook is None:
        kept: dict[str, Any] = {}
        lost = tuple(k for k in req.fields if k not in RENDER_DECIDES)
    else:
        kept, lost = hook(req, opts)
    if kept:
        body = {**body, **{k: v for k, v in kept.items() if k not in body}}
    if lost and warnings is not None:
        warnings.append(f"request settings of the imported {req.wire} request not carried on {wire}: "
                        f"{', '.join(lost)}")  # fmt: skip
    return body


class RenderCache:
    """The rendered pieces of one conversation, reused when the conversation only grew (or changed late).

    ``cache.render(history, vessel, mode, RenderArgs(...))`` returns the body :func:`toolreplay.render`
    gives for the same arguments; see the module docstring for what is reused and when.
    """

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._stats = CacheStats()

    @property
    def stats(self) -> CacheStats:
        return self._stats

    def clear(self) -> None:
        """Forget everything (the next render starts from scratch)."""
        self._entries.clear()

    def render(
        self,
        history: History | str | Path | Mapping[str, Any],
        vessel: str | Vessel = "gemini",
        mode: Mode = "native",
        args: RenderArgs = NO_ARGS,
        *,
        warnings: list[str] | None = None,
    ) -> dict[str, Any]:
        """The request body :func:`toolreplay.render` gives for these arguments (``args`` its options,
        ``warnings`` as there), rendered incrementally. ``vessel`` is used as given when it is a
        :class:`~toolreplay.Vessel` (a render resolves it once, then passes it down)."""
        h = history if isinstance(history, History) else load_history(history)
        v = get_vessel(vessel)
        given = args.tools if args.tools is not None else (h.tools or ())
        opts = args.options(v, given)
        settings = for_vessel(args.settings, v, args.model)
        messages = _cut(h, args.upto, mode, settings)
        # design 8, as api.render does: plain and prose declare the tools the native replay would
        native_tools = mode != "native"
        # a system message in the middle of the conversation renders where it stood: the cache keeps
        # system turns apart as the prompt's, so the wire's own render decides (rare: imported bodies)
        got = None if mid_system(messages) else self._render(messages, v.wire, opts, mode, settings,
                                                             native_tools)  # fmt: skip
        if got is None:  # the wire did not render as this cache expects: its own render decides
            body, turns, whole = _whole_body(messages, v.wire, opts, mode, settings)
            declared = whole.tools
        else:
            body, entry = got
            turns = [t for t in entry.turns if t is not None] if warnings is not None else []
            declared = tuple(entry.declared) if native_tools else opts.tools
        if warnings is not None:
            warnings.extend(h.warnings)
            warnings.extend(render_warnings(turns, declared, v.wire))
        if h.requests:
            body = carry_settings(body, h.requests[-1], v.wire, opts, warnings)
        return body

    def render_body(
        self,
        messages: History | Sequence[Message],
        wire: str,
        opts: RenderOptions,
        mode: Mode = "native",
        *,
        settings: ReplaySettings = DEFAULT_SETTINGS,
    ) -> dict[str, Any]:
        """``render_wire(wire, prepare_turn_messages(messages, mode, settings=settings), opts)``, the
        body a caller that builds its own options sends (the turn loop does, once per request of a turn: the
        reply in progress, which gained a call, is the only message rendered again)."""
        msgs = messages.messages if isinstance(messages, History) else tuple(messages)
        get_wire(wire)  # the registry's own error for an unknown wire
        got = None if mid_system(msgs) else self._render(msgs, wire, opts, mode, settings, False)
        if got is None:
            return render_wire(wire, prepare_turn_messages(msgs, mode, settings=settings), opts)
        return got[0]

    def render_turns(
        self, messages: Sequence[Message], wire: str, opts: RenderOptions, *, settings: ReplaySettings
    ) -> tuple[dict[str, Any], list[TurnMessage]]:
        """:meth:`render_body` of a native replay, and the turn messages it rendered (what
        ``prepare_turn_messages`` gives: the translation's warnings and rules read them)."""
        body, turns, _ = self._native(messages, wire, opts, settings)
        return body, turns

    def render_sent(
        self, messages: Sequence[Message], wire: str, opts: RenderOptions, *, settings: ReplaySettings
    ) -> tuple[dict[str, Any], list[TurnMessage], Spliced | None]:
        """:meth:`render_turns`, and the body's list as its JSON (:class:`~toolreplay.jsonenc.Spliced`),
        for the body to be encoded with: the same bytes, but only the elements added since the last time
        are encoded (the rest are copied once, into the body's bytes). None for the list: a render by the
        wire itself, a body whose last touch made copies of some elements (Anthropic's cache markers,
        where the vessel places them), or an element ``orjson`` does not encode."""
        body, turns, entry = self._native(messages, wire, opts, settings)
        return body, turns, None if entry is None else _sent_list(body.get(get_wire(wire).list_key), entry)

    def _native(
        self, messages: Sequence[Message], wire: str, opts: RenderOptions, settings: ReplaySettings
    ) -> tuple[dict[str, Any], list[TurnMessage], Entry | None]:
        """The native replay's body and turns, and the entry that rendered them (None: the wire's own
        render, of a system message the cache leaves to it)."""
        msgs = tuple(messages)
        get_wire(wire)
        got = None if mid_system(msgs) else self._render(msgs, wire, opts, "native", settings, False)
        if got is None:
            turns = prepare_turn_messages(msgs, "native", settings=settings)
            return render_wire(wire, turns, opts), turns, None
        return got[0], [t for t in got[1].turns if t is not None], got[1]

    # ------------------------------------------------------------------------------------------------

    def _render(
        self,
        messages: tuple[Message, ...],
        wire: str,
        opts: RenderOptions,
        mode: Mode,
        settings: ReplaySettings,
        native_tools: bool,
    ) -> tuple[dict[str, Any], Entry] | None:
        """The body and the entry that made it; None when the wire did not render as expected."""
        entry = self._entry((wire, opts, mode, settings, native_tools))
        try:
            self._update(entry, messages)
            body = self._body(entry)
        except BaseException:
            self._entries.remove(entry)
            raise
        if body is None:
            self._stats = replace(self._stats, fallbacks=self._stats.fallbacks + 1)
            self._entries.remove(entry)
            return None
        return body, entry

    def _entry(self, key: Key) -> Entry:
        for i, e in enumerate(self._entries):
            if e.matches(key):
                if i:
                    self._entries.insert(0, self._entries.pop(i))
                return e
        e = Entry(*key)
        self._entries.insert(0, e)
        del self._entries[MAX_ENTRIES:]
        return e

    def _update(self, e: Entry, messages: tuple[Message, ...]) -> None:
        """Bring ``e`` to ``messages``: keep the shared leading messages, render the rest."""
        fresh = e.piece is None
        j = 0 if fresh else first_difference(e.messages, messages)
        if not fresh and j == len(e.messages) == len(messages):
            self._count(resumed=True, reused=j, rendered=0)
            return
        if fresh or j < len(e.messages):
            self._truncate(e, messages, j)
        tail = tail_turns(messages, j, e)
        if tail is None and j > 0:
            j = 0
            self._truncate(e, messages, 0)
            tail = tail_turns(messages, 0, e)
        repeated = tail is None
        if tail is None:  # message ids repeat: matched in order, and no resuming from this state
            tail = prepared(messages, len(messages), e.mode, e.settings, e.native_tools)
        self._count(resumed=j > 0, reused=j, rendered=len(messages) - j)
        self._extend(e, tail[0], tail[2])
        self._declare(e, tail[1], j)
        e.messages = messages
        if repeated:
            e.piece = None

    def _count(self, *, resumed: bool, reused: int, rendered: int) -> None:
        s = self._stats
        self._stats = CacheStats(
            full=s.full + (not resumed),
            resumed=s.resumed + resumed,
            reused_messages=s.reused_messages + reused,
            rendered_messages=s.rendered_messages + rendered,
            fallbacks=s.fallbacks,
        )

    @staticmethod
    def _truncate(e: Entry, messages: tuple[Message, ...], j: int) -> None:
        """Drop everything ``e`` holds from stored message ``j`` on; rebuild the running state at ``j``."""
        index = e.ids.index - mapped(e.turns[j:]) if e.ids is not None and j else 0
        del e.turns[j:]
        del e.items_after[j:]
        del e.items[e.items_after[-1] if j else 0 :]
        del e.encoded_ends[len(e.items) :]
        while e.declared_at and e.declared_at[-1][0] >= j:
            e.declared_at.pop()
        if j:
            del e.declared[e.declared_at[-1][1] if e.declared_at else len(e.opts.tools) :]
        else:
            e.declared[:] = e.opts.tools
        e.declared_names = {t.name for t in e.declared}
        while e.system_at and e.system_at[-1] >= j:
            e.system_at.pop()
        del e.system[len(e.system_at) :]
        if e.first_at >= j:
            e.first, e.first_at = None, -1
        if e.fed > j:  # the allocator holds later stems: back to the kept messages' (no walk over them)
            e.alloc.rewind(e.alloc_at[j - 1] if j else 0)
            del e.alloc_at[j:]
            e.fed = j
        e.piece, e.ids = _piece_renderer(e.wire, e.opts)
        if e.ids is not None:
            e.ids.resume(index)

    @staticmethod
    def _extend(e: Entry, turns: list[TurnMessage | None], every: bool) -> None:
        """Render ``turns`` (one per stored message, None where nothing is replayed) onto ``e``."""
        piece = e.piece
        assert piece is not None
        items, after = e.items, e.items_after
        e.turns.extend(turns)
        if not every or "system" in map(ROLE, turns):
            extend_each(e, piece, turns)
            return
        # Every stored message has a turn and none is a system turn (the common case): the loop a wire's
        # own render runs, and the counts taken afterwards at C speed.
        before = len(items)
        made_by: list[list[Any]] = []
        keep = made_by.append
        for t in cast(list[TurnMessage], turns):
            made = piece(t, items)
            items += made
            keep(made)
        after.extend(islice(accumulate(map(len, made_by), initial=before), 1, None))
        if e.first is None:
            k = next((k for k, made in enumerate(made_by) if made), -1)
            if k >= 0:
                e.first, e.first_at = (
                    (cast(TurnMessage, turns[k]), len(made_by[k])),
                    len(after) - len(turns) + k,
                )

    @staticmethod
    def _declare(e: Entry, declaring: list[TurnMessage | None], start: int) -> None:
        """Declare the tools the calls of ``declaring`` (stored messages ``start`` on) use that are not
        declared yet, in order of first use (see :func:`declared_tools`)."""
        names = e.declared_names
        missing = set(map(NAME, chain.from_iterable(map(CALLS, filter(None, declaring))))) - names
        for k, t in enumerate(declaring):
            if not missing:
                return
            if t is not None and not missing.isdisjoint([c.name for c in t.calls]):
                e.declared[:] = declared_tools([t], e.declared)
                names.update(s.name for s in e.declared)
                missing -= names
                e.declared_at.append((start + k, len(e.declared)))

    @staticmethod
    def _body(e: Entry) -> dict[str, Any] | None:
        """The whole body: the wire's own render of a skeleton (system turns, the first turn that renders
        anything, every declared tool), its list then replaced by the cached elements."""
        skeleton = list(e.system)
        n_first = 0
        if e.first is not None:
            skeleton.append(e.first[0])
            n_first = e.first[1]
        # the declared tools only ever grow from the given ones: as many means the same (no copy to make)
        same = len(e.declared) == len(e.opts.tools)
        opts = e.opts if same else replace(e.opts, tools=tuple(e.declared))
        w = get_wire(e.wire)
        body = _skeleton_body(e, skeleton, opts)
        if w.assemble is not None:
            whole = w.assemble(body, list(filter(None, e.turns)), e.items)
            return whole if whole is None or w.finish is None else w.finish(whole, opts)
        key = w.list_key
        shown = body.get(key)
        if not isinstance(shown, list) or len(shown) < n_first:
            return None
        head = len(shown) - n_first
        if shown[head:] != e.items[:n_first]:
            return None
        body[key] = shown[:head] + e.items
        # the wire's last touch on the whole body (Anthropic's cache markers, design 36) works on copies:
        # the cached elements stay as rendered
        return body if w.finish is None else w.finish(body, opts)


def _skeleton_body(e: Entry, skeleton: list[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The wire's render of ``skeleton`` with ``opts``: the last one again (a copy of its top level, which
    a wire's last touch sets keys of: Anthropic's markers replace the lists they mark) while its turns and
    the declared tools are the same objects (held with it, so no other object takes their place)."""
    held = (*skeleton, *e.declared)
    last = e.skeleton
    if last is None or len(last[0]) != len(held) or not all(map(operator.is_, last[0], held)):
        last = e.skeleton = (held, get_wire(e.wire).render(skeleton, opts))
    return dict(last[1])


def _sent_list(shown: object, e: Entry) -> Spliced | None:
    """A body's list ``shown`` (rendered from ``e``) as its JSON (:meth:`RenderCache.render_sent`)."""
    w = get_wire(e.wire)
    if not isinstance(shown, list) or len(shown) < len(e.items):
        return None
    n = len(shown) - len(e.items)
    if w.finish is not None and not all(map(operator.is_, shown[n:], e.items)):
        return None  # the wire's last touch made copies of some (Anthropic's markers): encoded whole
    try:
        e.encode_items()
        head = [orjson.dumps(x) for x in shown[:n]]
    except (TypeError, orjson.JSONEncodeError):
        return None  # encoded with the body (the plain encoder's reading of what orjson refuses)
    kept = e.encoded_items()
    comma: list[bytes] = [b","] if head and kept else []
    return Spliced([b"[", b",".join(head), *comma, *kept, b"]"])


__all__ = ["CacheStats", "RenderCache"]

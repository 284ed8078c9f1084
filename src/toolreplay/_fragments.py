"""Stored render fragments (design 35): what each stored message rendered into, kept per wire and settings,
so a new process renders a long conversation without preparing and rendering every message again.

A fragment set belongs to one conversation and one **key**: a digest of everything that shapes a
message's elements (the wire, the replay mode, the replay bounds and names, the vessel's id policy, id
length and quirk flags, the audience that reasoning goes back to, the names of the tools given, and
:data:`RENDER_VERSION`). It is a **chain**: row ``k`` holds what the ``k``-th message of the rendered
list rendered into, given the ``k`` messages before it (their stems, the call-id mapper's running
index, the element before it), so a row is valid only while every row before it is. A render uses the
longest prefix of the chain whose message ids are those of its own list, and renders the rest.

Why that is safe: a row is written only for a ``complete`` message whose stored content equals what was
rendered (checked in the write's transaction, under the conversation's lock), and a complete message never
changes (the store refuses calls and text on it); removing a message removes its rows. What a message
renders into depends only on the messages before it (design 29), so the same ids before it mean the same
state. A key that differs (other settings, another library render version) is another set: stale sets
are never read, only evicted.
"""

from __future__ import annotations

import bisect
import hashlib
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from itertools import accumulate, chain
from typing import Any

import orjson

from toolreplay import _jsonenc as jsonenc
from toolreplay._history import Message, ToolSpec
from toolreplay._render_entry import ROLE, Entry, prepared
from toolreplay._replay import Mode, ReplaySettings, TurnMessage
from toolreplay.wires.common import RenderOptions

#: Bumped whenever a wire renders a stored message differently (the golden digests change): every stored
#: fragment of an older version is then another key, never read. tests/test_fragments.py ties it to the
#: golden file.
RENDER_VERSION = 2  # 2: Anthropic user words as a text block when cache breakpoints are on (design 36)
#: How many fragment sets (keys) one conversation keeps, most recently written first.
MAX_SETS = 2
#: Options that shape only the body around the message list (the skeleton), never a message's elements.
SKELETON_ONLY = frozenset(
    {"system", "tools", "temperature", "max_tokens", "stream", "tool_choice", "include"}
)


def _canon(v: Any) -> Any:
    """``v`` as plain JSON values in one fixed order (sets sorted, mappings by key)."""
    if is_dataclass(v) and not isinstance(v, type):
        return {f.name: _canon(getattr(v, f.name)) for f in fields(v)}
    if isinstance(v, Mapping):
        return [[str(k), _canon(x)] for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))]
    if isinstance(v, frozenset | set):
        return sorted(_canon(x) for x in v)
    if isinstance(v, list | tuple):
        return [_canon(x) for x in v]
    return v


def _text(value: Any) -> str:
    """JSON text of ``value`` (the bytes :func:`toolreplay.encode` sends). Text orjson cannot write (an
    integer beyond 64 bits) starts with a line break, which JSON allows: orjson would not read it back
    exactly either, so :func:`_value` reads such text with the exact reader."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return "\n" + jsonenc.dumps(value)


def _value(text: str) -> Any:
    return jsonenc.loads(text) if text.startswith("\n") else orjson.loads(text)


def fragment_key(wire: str, opts: RenderOptions, mode: Mode, settings: ReplaySettings, native: bool) -> str:
    """The key of the fragments a render with these arguments makes and may use."""
    shaping = {f.name: getattr(opts, f.name) for f in fields(opts) if f.name not in SKELETON_ONLY}
    shaping["tools"] = sorted(t.name for t in opts.tools)  # which calls declare an inferred tool
    what = [RENDER_VERSION, wire, mode, native, _canon(shaping), _canon(settings)]
    return hashlib.sha256(jsonenc.encode(what)).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class FragmentRow:
    """One stored message's fragment as written: its place in the chain and its elements as JSON text."""

    seq: int
    message_id: str
    stem: str
    calls: int
    """How many calls the wire's call-id mapper named for it (Kimi's running index)."""
    declares: str | None
    """JSON text of the tools first used by it, ``[[name, description, schema], ...]``, or None."""
    items: str


@dataclass(frozen=True, slots=True)
class Fragments:
    """A fragment set as loaded: per message of its chain, in order (see the module docstring).

    ``messages`` holds the message objects it was bound to (:func:`bind`): a render uses a row only for
    that very object, so a history changed in memory after it was loaded never meets a stale row.
    """

    key: str
    ids: tuple[str, ...]
    stems: tuple[str, ...]
    calls: tuple[int, ...]
    declares: Mapping[int, tuple[ToolSpec, ...]]
    items: tuple[list[Any], ...]
    messages: tuple[Message, ...] = ()


def from_rows(key: str, rows: Sequence[Sequence[Any]]) -> Fragments:
    """A set from its stored rows ``(seq, message_id, stem, calls, declares, items)`` in seq order; the
    chain ends at the first gap."""
    n = 0
    while n < len(rows) and rows[n][0] == n:
        n += 1
    rows = rows[:n]
    declares = {
        int(r[0]): tuple(ToolSpec(name, desc, params) for name, desc, params in _value(r[4]))
        for r in rows
        if r[4]
    }
    return Fragments(
        key,
        tuple(r[1] for r in rows),
        tuple(r[2] for r in rows),
        tuple(int(r[3]) for r in rows),
        declares,
        tuple(map(_value, (r[5] for r in rows))),
    )


def bind(f: Fragments, messages: Sequence[Message]) -> Fragments:
    """``f`` bound to ``messages`` (as loaded with it): the longest prefix whose ids are the chain's and
    whose messages are complete."""
    n = 0
    for mid, m in zip(f.ids, messages, strict=False):
        if m.id != mid or m.status != "complete":
            break
        n += 1
    return replace(f, messages=tuple(messages[:n]))


#: What a history may carry (:attr:`toolreplay.History.fragments`): one set, or every set of its
#: conversation by key (the render picks its own).
Stored = Fragments | Mapping[str, Fragments]


def pick(stored: Stored | None, key: str) -> Fragments | None:
    """The set of ``key`` among ``stored`` (None when there is none)."""
    if stored is None or isinstance(stored, Fragments):
        return stored
    return stored.get(key)


def usable(f: Fragments | None, key: str, messages: Sequence[Message]) -> int:
    """How many leading ``messages`` ``f`` holds fragments for: the very objects it was bound to."""
    if f is None or f.key != key:
        return 0
    try:  # the first object that differs, found at C speed (every render of a long conversation asks)
        return operator.indexOf(map(operator.is_, f.messages, messages), False)
    except ValueError:
        return min(len(f.messages), len(messages))


def _turn(e: Entry, messages: Sequence[Message], k: int) -> TurnMessage | None:
    """The turn message of ``messages[k]`` in ``e``'s mode (prepared with the messages before it)."""
    return prepared(messages[: k + 1], 1, e.mode, e.settings, e.native_tools)[0][0]


def seed(e: Entry, f: Fragments, messages: tuple[Message, ...], n: int) -> None:
    """Make the freshly truncated ``e`` hold what rendering ``messages[:n]`` left, from ``f``."""
    lists = f.items[:n]
    e.items = list(chain.from_iterable(lists))
    e.items_after = list(accumulate(map(len, lists)))
    e.turns = [None] * n
    e.seeded = n
    e.mapped_at = list(accumulate(f.calls[:n]))
    if e.ids is not None:
        e.ids.resume(e.mapped_at[-1])
    for k in sorted(k for k in f.declares if k < n):
        new = [t for t in f.declares[k] if t.name not in e.declared_names]
        if new:
            e.declared.extend(new)
            e.declared_names.update(t.name for t in new)
            e.declared_at.append((k, len(e.declared)))
    roles, k = list(map(ROLE, messages[:n])), -1
    for _ in range(roles.count("system")):  # system messages render no elements: the skeleton has them
        k = roles.index("system", k + 1)
        t = _turn(e, messages, k)
        if t is not None:
            e.system_at.append(k)
            e.system.append(t)
    k0 = bisect.bisect_right(e.items_after, 0)  # the first message that rendered anything
    if k0 < n:
        t0 = _turn(e, messages, k0)
        if t0 is not None:
            e.first, e.first_at = (t0, e.items_after[k0]), k0
    e.alloc.resume(f.ids[:n], f.stems[:n])
    e.fed = n
    e.messages = messages[:n]


def materialize(e: Entry) -> None:
    """Prepare the turn messages of the seeded messages (warnings and assembled wires read them)."""
    s = e.seeded
    if s:
        e.turns[:s] = prepared(e.messages[:s], s, e.mode, e.settings, e.native_tools)[0]
        e.seeded = 0
        e.mapped_at.clear()


def _declares(e: Entry) -> dict[int, tuple[ToolSpec, ...]]:
    out: dict[int, tuple[ToolSpec, ...]] = {}
    prev = len(e.opts.tools)
    for k, count in e.declared_at:
        out[k] = tuple(e.declared[prev:count])
        prev = count
    return out


def export(e: Entry, start: int) -> list[FragmentRow]:
    """The rows of ``e``'s messages from ``start`` on, up to its first message that is not complete."""
    if start < e.seeded:
        materialize(e)
    msgs = e.messages
    end = next((k for k, m in enumerate(msgs) if m.status != "complete"), len(msgs))
    stem = e.alloc.stem
    for m in msgs[e.fed :]:
        stem(m.id)
    e.fed = len(msgs)
    declares = _declares(e)
    after = e.items_after
    rows: list[FragmentRow] = []
    for k in range(start, end):
        t = e.turns[k]
        calls = len(t.calls) if t is not None and t.role != "system" else 0
        d = declares.get(k)
        shown = _text([[s.name, s.description, s.parameters] for s in d]) if d else None
        items = _text(e.items[after[k - 1] if k else 0 : after[k]])
        rows.append(FragmentRow(k, msgs[k].id, stem(msgs[k].id), calls, shown, items))
    return rows


__all__ = [
    "MAX_SETS",
    "RENDER_VERSION",
    "FragmentRow",
    "Fragments",
    "Stored",
    "bind",
    "export",
    "fragment_key",
    "from_rows",
    "materialize",
    "pick",
    "seed",
    "usable",
]

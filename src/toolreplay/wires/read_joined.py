"""The read memo's groups joined (design 53): a body message a wire spreads over several list entries
(the items of one Responses model response: its reasoning, its words, its calls) is read entry by entry
through :meth:`~toolreplay.wires.read_memo.ReadMemo.listed`, each entry's events alone, and its entries'
groups joined here, the one step that looks past an entry."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toolreplay.wires.read_memo import Group, ReadMemo
from toolreplay.wires.turns import Event


def joined(memo: ReadMemo, run: Sequence[Group], join: Callable[[Sequence[Event]], Sequence[Event]]) -> Group:
    """One group of the events of the groups ``run``, as ``join`` makes them one, once per identity of
    those groups while they are kept (the joined group holds them, so their ids name no others
    meanwhile). Its warnings are theirs, in order; its cost is theirs. A group without bytes (one read
    every time) is never the same object twice: a run holding one is joined every time."""
    key = ("joined", tuple(map(id, run)))
    hit = memo.groups.get(key)
    if (
        hit is not None
        and len(hit.value) == len(run)
        and all(a is b for a, b in zip(hit.value, run, strict=True))
    ):
        return hit
    events = tuple(join([e for g in run for e in g.events]))
    made = Group(
        events, tuple(w for g in run for w in g.warnings), sum(g.cost for g in run), value=tuple(run)
    )
    if all(g.raw for g in run):
        memo.groups.put(key, made, made.cost)
    return made


__all__ = ["joined"]

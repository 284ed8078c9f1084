"""The read memo's groups joined (design 53): a body message a wire spreads over several list entries
(the items of one Responses model response: its reasoning, its words, its calls) is read entry by entry
through :meth:`~toolreplay.wires.read_memo.ReadMemo.listed`, each entry's events alone, and its entries'
groups joined here, the one step that looks past an entry."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toolreplay.wires.read_memo import Group, ReadMemo
from toolreplay.wires.turns import Event


def joined(
    memo: ReadMemo, runs: Sequence[Sequence[Group]], join: Callable[[Sequence[Event]], Sequence[Event]]
) -> list[Group]:
    """For each run of groups, one group of their events as ``join`` makes them one, once per identity
    of those groups while it is kept: the joined group holds them, so while it lives no other object has
    their ids, and a run with the same ids is the same groups. Its warnings are theirs, in order; its
    cost is theirs. A group without bytes (one read every time) is never the same object twice: a run
    holding one is joined every time."""
    keys = [("joined", *map(id, run)) for run in runs]
    out: list[Group] = []
    for run, key, hit in zip(runs, keys, memo.groups.get_many(keys), strict=True):
        if hit is None:
            events = tuple(join([e for g in run for e in g.events]))
            warnings = tuple(w for g in run for w in g.warnings)
            hit = Group(events, warnings, sum(g.cost for g in run), value=tuple(run))
            if all(g.raw for g in run):
                memo.groups.put(key, hit, hit.cost)
        out.append(hit)
    return out


__all__ = ["joined"]

"""``lab --until-clear``: trials in rounds, a cell pair stopped once a group-sequential boundary is crossed.

The planned maximum is ``--trials`` per cell. The trials are sent in rounds (looks) at equally spaced
fractions of it; after each round every pair still running (native against another mode of one vessel)
is tested with the lab's one-sided test on the trials of the rounds so far. The pair stops when its p
value is at or under that look's boundary.

The boundaries spend the error rate ``alpha`` with Lan and DeMets' O'Brien-Fleming-type function
``alpha(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t))`` over the information fraction ``t`` (trials so far
over the planned maximum): almost nothing at the first looks, nearly the whole ``alpha`` at the last, so
a pair that runs to the end is tested at nearly the level of a fixed-size run. Each look's boundary is
the z value whose crossing probability, given no earlier crossing, is the alpha spent at that look, under
the usual normal approximation (the test statistic at the looks behaves as Brownian motion in ``t``); it
is computed by numerical integration of the density of the paths not yet stopped. The one-sided exact
tests are at most as likely to cross as that normal statistic, so the false-positive rate stays at or
under ``alpha``; bench/early_stop.py measures it by simulation.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from toolreplay._lab.stats import one_sided

#: One-sided error rate each pair's early stop keeps (the lab's decision level).
ALPHA = 0.05
#: Looks at most (fewer when --trials is smaller).
ROUNDS = 5
_GRID = 200  # integration points per look: boundaries within 1e-3 in z of the exact ones
_LOW = -8.0  # the paths' lower edge: the statistic's variance is at most 1
_Paths = tuple[list[float], list[float], float]  # density, grid points, grid step
Table = tuple[tuple[int, int], tuple[int, int]]


def _cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _z(p: float) -> float:
    """The upper-tail ``p`` quantile of the standard normal (``1 - Phi(z) = p``)."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 1 - _cdf(mid) > p else (lo, mid)
    return (lo + hi) / 2


def spent(t: float, alpha: float = ALPHA) -> float:
    """Lan-DeMets O'Brien-Fleming-type alpha spent by information fraction ``t`` (one-sided)."""
    if t <= 0:
        return 0.0
    return min(alpha, 2 - 2 * _cdf(_z(alpha / 2) / math.sqrt(min(t, 1.0))))


def looks(trials: int, rounds: int = ROUNDS) -> tuple[int, ...]:
    """The trials per cell after each round: equally spaced up to ``trials`` (one look per trial at most)."""
    k = max(1, min(rounds, trials))
    return tuple(sorted({math.ceil(trials * (i + 1) / k) for i in range(k)}))


def _crossing(paths: _Paths, bound: float, gap: float) -> float:
    """P(not stopped at an earlier look, and at or over ``bound`` at this one)."""
    density, xs, step = paths
    sd = math.sqrt(gap)
    return step * sum(f * (1 - _cdf((bound - x) / sd)) for f, x in zip(density, xs, strict=True))


def _grid(top: float) -> tuple[list[float], float]:
    step = (top - _LOW) / _GRID
    return [_LOW + (i + 0.5) * step for i in range(_GRID)], step


def _first(t: float, top: float) -> _Paths:
    """The density of the statistic's path at the first look (normal, variance ``t``), under ``top``."""
    xs, step = _grid(top)
    norm = 1 / math.sqrt(2 * math.pi * t)
    return [norm * math.exp(-x * x / (2 * t)) for x in xs], xs, step


def _next(paths: _Paths, top: float, gap: float) -> _Paths:
    """The density at the next look of the paths that were under ``top`` at this one (a convolution)."""
    density, xs, step = paths
    new_xs, new_step = _grid(top)
    norm = step / math.sqrt(2 * math.pi * gap)
    new = [
        norm * sum(f * math.exp(-((y - x) ** 2) / (2 * gap)) for f, x in zip(density, xs, strict=True))
        for y in new_xs
    ]
    return new, new_xs, new_step


def _solve(paths: _Paths, target: float, gap: float) -> float:
    """The bound whose crossing probability is ``target`` (bisection: the probability falls as it rises)."""
    lo, hi = _LOW, 40.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _crossing(paths, mid, gap) > target else (lo, mid)
    return (lo + hi) / 2


@functools.cache
def boundaries(fractions: tuple[float, ...], alpha: float = ALPHA) -> tuple[float, ...]:
    """The z boundary of each look at information ``fractions`` (increasing, the last 1)."""
    out: list[float] = []
    paths: _Paths | None = None
    before = 0.0
    for k, t in enumerate(fractions):
        target = spent(t, alpha) - spent(before, alpha) if k else spent(t, alpha)
        if paths is None:
            top = _z(target) * math.sqrt(t)
            paths = _first(t, top)
        else:
            top = _solve(paths, target, t - before)
            paths = _next(paths, top, t - before)
        out.append(top / math.sqrt(t))
        before = t
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Schedule:
    """The rounds of a run: trials per cell after each, and the one-sided p at or under which a pair stops."""

    trials: int
    looks: tuple[int, ...]
    thresholds: tuple[float, ...]
    alpha: float = ALPHA

    @classmethod
    def plan(cls, trials: int, alpha: float = ALPHA, rounds: int = ROUNDS) -> Schedule:
        at = looks(trials, rounds)
        zs = boundaries(tuple(n / trials for n in at), alpha)
        return cls(trials, at, tuple(1 - _cdf(z) for z in zs), alpha)

    def as_json(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "spending": "Lan-DeMets O'Brien-Fleming type, one-sided",
            "planned_trials": self.trials,
            "looks": list(self.looks),
            "p_boundaries": list(self.thresholds),
        }


@dataclass(frozen=True, slots=True)
class Stop:
    """A pair (native against ``other`` on ``vessel``) that crossed the boundary after round ``look``."""

    vessel: str
    other: str
    look: int
    trials: int
    p: float
    boundary: float
    test: str

    def as_json(self) -> dict[str, Any]:
        return {
            "vessel": self.vessel,
            "modes": ["native", self.other],
            "round": self.look + 1,
            "trials_per_mode": self.trials,
            "p_one_sided": self.p,
            "p_boundary": self.boundary,
            "test": self.test,
        }


def table_at(records: Iterable[Mapping[str, Any]], vessel: str, other: str, n: int) -> Table:
    """``((native called, not), (other called, not))`` over the trials numbered under ``n``."""
    counts = {"native": [0, 0], other: [0, 0]}
    for r in records:
        if r.get("vessel") == vessel and r.get("mode") in counts and int(r.get("trial", n)) < n:
            counts[str(r["mode"])][0 if r.get("class") == "called" else 1] += 1
    (a1, a0), (b1, b0) = counts["native"], counts[other]
    return (a1, a0), (b1, b0)


def check_look(
    schedule: Schedule, look: int, records: Iterable[Mapping[str, Any]], pairs: Iterable[tuple[str, str]]
) -> list[Stop]:
    """The pairs (``(vessel, other mode)``) that cross the boundary after round ``look`` (from 0)."""
    rows = list(records)
    n, bound = schedule.looks[look], schedule.thresholds[look]
    out = []
    for vessel, other in pairs:
        table = table_at(rows, vessel, other, n)
        if not sum(table[0]) or not sum(table[1]):
            continue  # a mode without trials (all errored): nothing to test yet
        p, test = one_sided(table)
        if p <= bound:
            out.append(Stop(vessel, other, look, n, p, bound, test))
    return out


@dataclass(frozen=True, slots=True)
class EarlyStop:
    """What ``--until-clear`` did: the schedule, the pairs it stopped early, the pairs it did not stop."""

    schedule: Schedule
    stops: tuple[Stop, ...]
    not_stopped: tuple[tuple[str, str], ...]

    def as_json(self) -> dict[str, Any]:
        return {
            **self.schedule.as_json(),
            "stopped": [s.as_json() for s in self.stops],
            "not_stopped": [{"vessel": v, "modes": ["native", m]} for v, m in self.not_stopped],
        }

    def lines(self) -> list[str]:
        """Per pair when and why it stopped, or that it did not."""
        s = self.schedule
        out = [
            f"--until-clear: up to {len(s.looks)} rounds ({', '.join(map(str, s.looks))} trials per mode); a "
            f"pair stops when its one-sided p is at or under the round's O'Brien-Fleming-type boundary "
            f"(alpha {s.alpha} spent over {s.trials} trials)"
        ]
        for stop in self.stops:
            out.append(
                f"{stop.vessel}, native vs {stop.other}: stopped after round {stop.look + 1} of "
                f"{len(s.looks)} ({stop.trials} of {s.trials} trials per mode): one-sided p = {stop.p:.2g} "
                f"crossed the boundary {stop.boundary:.2g}"
            )
        for vessel, other in self.not_stopped:
            out.append(f"{vessel}, native vs {other}: did not cross a boundary: not stopped early")
        return out


__all__ = ["ALPHA", "EarlyStop", "Schedule", "Stop", "boundaries", "check_look", "looks", "spent", "table_at"]

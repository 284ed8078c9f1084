"""The comparison logic: medians, ratios, and interleaved repetitions so machine drift cancels.

Every comparison runs its contenders in one process, alternately: repetition ``r`` runs each contender
once (``number`` calls, timed together), in an order that rotates from one repetition to the next, so a
slow stretch of the machine (another process, a frequency change) falls on every contender alike and the
ratio of medians stays put. Garbage collection is off while a sample runs (as :mod:`timeit` does) and
collected between samples.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def median(xs: Sequence[float]) -> float:
    """The median (the mean of the two middle values for an even count); an empty list is an error."""
    if not xs:
        raise ValueError("median of no samples")
    return statistics.median(xs)


def ratio(slow: float, fast: float) -> float:
    """How many times faster ``fast`` is than ``slow`` (``slow / fast``); infinite when ``fast`` is 0."""
    return slow / fast if fast > 0 else float("inf")


@dataclass(frozen=True, slots=True)
class Contender:
    """One side of a comparison: ``run(arg)`` is timed; ``setup()`` makes its argument, untimed.

    Without ``setup`` the argument is None. With it, each timed call gets a fresh argument made before
    the sample starts (for functions that change their input).
    """

    name: str
    run: Callable[[Any], object]
    setup: Callable[[], Any] | None = None


def order(names: Sequence[str], repetition: int) -> list[str]:
    """The order of the contenders in ``repetition``: rotated by one each time (A B C, B C A, C A B)."""
    k = repetition % len(names) if names else 0
    return list(names[k:]) + list(names[:k])


def sample(c: Contender, number: int) -> float:
    """Seconds per call of ``c.run`` over ``number`` calls (setup excluded, gc off while timing)."""
    args = [c.setup() for _ in range(number)] if c.setup is not None else [None] * number
    run = c.run
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for a in args:
            run(a)
        t1 = time.perf_counter()
    finally:
        if enabled:
            gc.enable()
    return (t1 - t0) / number


def calibrate(c: Contender, min_seconds: float) -> int:
    """How many calls make one sample last at least ``min_seconds`` (1, 2, 5, 10, 20, ...)."""
    number = 1
    steps = (1, 2, 5)
    k = 0
    while True:
        if sample(c, number) * number >= min_seconds or number >= 100_000:
            return number
        k += 1
        number = steps[k % 3] * 10 ** (k // 3)


@dataclass(frozen=True, slots=True)
class Samples:
    """Per-call seconds of each contender, one sample per repetition, in run order."""

    by_name: Mapping[str, list[float]]
    number: Mapping[str, int]

    def median(self, name: str) -> float:
        return median(self.by_name[name])

    def ratio(self, slow: str, fast: str) -> float:
        """``median(slow) / median(fast)``: how many times faster ``fast`` ran."""
        return ratio(self.median(slow), self.median(fast))


def alternate(
    contenders: Sequence[Contender], *, repeats: int, min_seconds: float = 0.005, warmup: int = 1
) -> Samples:
    """Time ``contenders`` alternately: ``repeats`` rounds, each contender once per round, order rotated.

    Each contender first runs ``warmup`` untimed calls (imports, caches), then is calibrated on its own
    so that one sample lasts at least ``min_seconds``.
    """
    names = [c.name for c in contenders]
    if len(set(names)) != len(names):
        raise ValueError(f"contender names must differ: {names}")
    by = {c.name: c for c in contenders}
    for c in contenders:
        for _ in range(warmup):
            c.run(c.setup() if c.setup is not None else None)
    number = {c.name: calibrate(c, min_seconds) for c in contenders}
    out: dict[str, list[float]] = {n: [] for n in names}
    for r in range(repeats):
        for n in order(names, r):
            out[n].append(sample(by[n], number[n]))
    return Samples(out, number)

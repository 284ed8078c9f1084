"""The comparison logic: medians, ratios, and interleaved repetitions so machine drift cancels.

Every comparison runs its contenders in one process, alternately: repetition ``r`` runs each contender
once (``number`` calls, timed together), in an order that rotates from one repetition to the next, so a
slow stretch of the machine (another process, a frequency change) falls on every contender alike and the
ratio of medians stays put. Garbage collection is off while a sample runs (as :mod:`timeit` does) and
collected between samples (the heap alive before a comparison is frozen first, so that collection
only looks at what the samples made).
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

    Without ``setup`` the argument is None and a sample times ``number`` calls together. With it, each
    call gets a fresh argument from ``setup()`` made right before it, and only the call is timed (for
    functions that change their input, or that need a state prepared for each call).
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
    run, setup, clock = c.run, c.setup, time.perf_counter
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        if setup is None:
            t0 = clock()
            for _ in range(number):
                run(None)
            total = clock() - t0
        else:
            total = 0.0
            for _ in range(number):
                arg = setup()
                t0 = clock()
                run(arg)
                total += clock() - t0
    finally:
        if enabled:
            gc.enable()
    return total / number


def steps_up_to(n: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... that is at least ``n`` (at most 100,000)."""
    k = 0
    while True:
        step = (1, 2, 5)[k % 3] * 10 ** (k // 3)
        if step >= n or step >= 100_000:
            return step
        k += 1


def calibrate(c: Contender, min_seconds: float) -> int:
    """How many calls make one sample last at least ``min_seconds``: from the fastest of three single
    calls, rounded up to 1, 2, 5, 10, 20, ..."""
    one = min(sample(c, 1) for _ in range(3))
    return steps_up_to(min_seconds / one) if one > 0 else 100_000


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
    # LiteLLM's import leaves a large heap: a full collection would take longer than many samples.
    # Freezing it moves every object alive now out of the collector's way (samples stay comparable).
    gc.collect()
    gc.freeze()
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

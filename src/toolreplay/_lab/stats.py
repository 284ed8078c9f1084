"""The lab's statistics: Wilson intervals per cell; between two modes exact tests, Holm and Newcombe.

Wilson needs only the standard library. Fisher's exact test uses scipy (the ``lab`` extra) when it is
installed, imported on first use; without scipy a small exact implementation gives the same p values (the
two-sided one sums the probabilities of every table with the same margins that is no more likely than the
one observed, with scipy's relative tolerance of 1e-7 for ties).

The lab asks a one-sided question fixed before any trial is sent: does native replay *raise* the call
rate? :func:`one_sided` answers it with Boschloo's exact test where scipy is installed (the lab fixes the
trials per mode, not the number of calls, so an unconditional test is the fitting one and is uniformly more
powerful than Fisher's), and with Fisher's one-sided test otherwise; the result names the test.
:func:`holm` corrects a run's p values for the number of comparisons, and :func:`newcombe` gives the
difference in rates with Newcombe's hybrid score interval (built from the two Wilson intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from toolreplay._errors import ConfigError


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval: of a proportion (both ends in [0, 1]) or of a difference of two."""

    low: float
    high: float

    def as_json(self) -> list[float]:
        return [round(self.low, 4), round(self.high, 4)]


def wilson(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """The Wilson score interval of ``successes`` out of ``n`` (``(0, 1)`` when ``n`` is 0)."""
    if n < 0 or successes < 0 or successes > n:
        raise ConfigError(f"a proportion needs 0 <= successes <= n, not {successes} of {n}")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be between 0 and 1, not {confidence}")
    if n == 0:
        return Interval(0.0, 1.0)
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    # Clamp rounding noise: 9 of 9 must reach exactly 1.0 and 0 of n start at exactly 0.0.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low, high)


def _check_table(table: Sequence[Sequence[int]]) -> tuple[int, int, int, int]:
    if len(table) != 2 or any(len(row) != 2 for row in table):
        raise ConfigError("Fisher's exact test needs a 2x2 table")
    (a, b), (c, d) = table
    if min(a, b, c, d) < 0:
        raise ConfigError("Fisher's exact test needs counts of zero or more")
    return int(a), int(b), int(c), int(d)


def fisher_exact_fallback(table: Sequence[Sequence[int]]) -> float:
    """Two-sided p value of Fisher's exact test, in pure Python (used when scipy is absent)."""
    a, b, c, d = _check_table(table)
    row1, col1, n = a + b, a + c, a + b + c + d
    if n == 0:
        return 1.0
    lo, hi = max(0, col1 - (n - row1)), min(row1, col1)
    denom = math.comb(n, col1)

    def prob(x: int) -> float:
        return math.comb(row1, x) * math.comb(n - row1, col1 - x) / denom

    observed = prob(a)
    total = sum(p for x in range(lo, hi + 1) if (p := prob(x)) <= observed * (1 + 1e-7))
    return min(1.0, total)


def fisher_exact(table: Sequence[Sequence[int]]) -> float:
    """Two-sided p value of Fisher's exact test on ``[[a, b], [c, d]]`` (scipy when installed)."""
    a, b, c, d = _check_table(table)
    try:
        from scipy.stats import fisher_exact as scipy_fisher
    except ImportError:
        return fisher_exact_fallback(table)
    result = scipy_fisher([[a, b], [c, d]], alternative="two-sided")
    return float(result.pvalue)


def fisher_greater_fallback(table: Sequence[Sequence[int]]) -> float:
    """One-sided p value of Fisher's exact test that ``a`` is high (scipy's ``alternative="greater"``)."""
    a, b, c, d = _check_table(table)
    row1, col1, n = a + b, a + c, a + b + c + d
    if n == 0:
        return 1.0
    hi = min(row1, col1)
    denom = math.comb(n, col1)
    tail = sum(math.comb(row1, x) * math.comb(n - row1, col1 - x) for x in range(a, hi + 1))
    return min(1.0, tail / denom)


def fisher_greater(table: Sequence[Sequence[int]]) -> float:
    """One-sided p value of Fisher's exact test that ``a`` is high (scipy when installed)."""
    a, b, c, d = _check_table(table)
    try:
        from scipy.stats import fisher_exact as scipy_fisher
    except ImportError:
        return fisher_greater_fallback(table)
    return float(scipy_fisher([[a, b], [c, d]], alternative="greater").pvalue)


def one_sided(table: Sequence[Sequence[int]]) -> tuple[float, str]:
    """``(p, test)``: is the first row's rate higher than the second's? ``[[called, not], [called, not]]``.

    Boschloo's exact test where scipy is installed, else Fisher's one-sided test; ``test`` names which.
    """
    a, b, c, d = _check_table(table)
    try:
        from scipy.stats import boschloo_exact
    except ImportError:
        return fisher_greater_fallback(table), "fisher"
    if not (a + b) or not (c + d):
        return 1.0, "boschloo"  # no trials in a mode: nothing to compare (scipy answers nan)
    # scipy fixes the column totals: the modes go in the columns, the first column's rate tested higher
    return float(boschloo_exact([[a, c], [b, d]], alternative="greater").pvalue), "boschloo"


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p values, in the order given (each at most 1)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def newcombe(x1: int, n1: int, x2: int, n2: int, confidence: float = 0.95) -> tuple[float, Interval]:
    """``x1/n1 - x2/n2`` and Newcombe's hybrid score interval for it (method 10 of his 1998 paper)."""
    if not n1 or not n2:
        raise ConfigError(f"a difference of rates needs trials on both sides, not {n1} and {n2}")
    p1, p2 = x1 / n1, x2 / n2
    w1, w2 = wilson(x1, n1, confidence), wilson(x2, n2, confidence)
    diff = p1 - p2
    low = diff - math.sqrt((p1 - w1.low) ** 2 + (w2.high - p2) ** 2)
    high = diff + math.sqrt((w1.high - p1) ** 2 + (p2 - w2.low) ** 2)
    return diff, Interval(low, high)


__all__ = [
    "Interval",
    "fisher_exact",
    "fisher_exact_fallback",
    "fisher_greater",
    "fisher_greater_fallback",
    "holm",
    "newcombe",
    "one_sided",
    "wilson",
]

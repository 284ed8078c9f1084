"""The lab's statistics: a 95% Wilson score interval per cell and Fisher's exact test between two modes.

Wilson needs only the standard library. Fisher's exact test uses scipy (the ``lab`` extra) when it is
installed, imported on first use; without scipy a small exact implementation gives the same two-sided p
value (the sum of the probabilities of every table with the same margins that is no more likely than the
one observed, with scipy's relative tolerance of 1e-7 for ties).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from toolreplay._errors import ConfigError


@dataclass(frozen=True, slots=True)
class Interval:
    """A proportion's confidence interval, both ends in [0, 1]."""

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


__all__ = ["Interval", "fisher_exact", "fisher_exact_fallback", "wilson"]

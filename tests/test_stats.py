"""Wilson intervals and Fisher's exact test against known values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolreplay._errors import ConfigError
from toolreplay._lab.stats import Interval, fisher_exact, fisher_exact_fallback, wilson


def test_wilson_known_values() -> None:
    # 9 of 9 and 14 of 14 (native replay in the motivating runs), 3 of 16 (words-only replay)
    assert wilson(9, 9).low == pytest.approx(0.700855, abs=1e-6)
    assert wilson(9, 9).high == 1.0
    assert wilson(14, 14).low == pytest.approx(0.784689, abs=1e-6)
    got = wilson(3, 16)
    assert (got.low, got.high) == (pytest.approx(0.065916, abs=1e-6), pytest.approx(0.430089, abs=1e-6))
    assert wilson(0, 10) == Interval(0.0, pytest.approx(0.277533, abs=1e-6))
    assert wilson(0, 0) == Interval(0.0, 1.0)
    assert wilson(5, 10).as_json() == [0.2366, 0.7634]


def test_wilson_rejects_nonsense() -> None:
    with pytest.raises(ConfigError):
        wilson(4, 3)
    with pytest.raises(ConfigError):
        wilson(1, 3, confidence=1.5)


def test_fisher_known_values() -> None:
    # [[3, 13], [9, 0]]: only the observed table is as extreme, p = C(16,3) / C(25,12)
    assert fisher_exact([[3, 13], [9, 0]]) == pytest.approx(560 / 5200300, rel=1e-9)
    assert fisher_exact_fallback([[3, 13], [9, 0]]) == pytest.approx(560 / 5200300, rel=1e-9)
    # the lady tasting tea: 3 of 4 right each way, two-sided p = 34/70
    assert fisher_exact([[3, 1], [1, 3]]) == pytest.approx(34 / 70, rel=1e-9)
    assert fisher_exact_fallback([[3, 1], [1, 3]]) == pytest.approx(34 / 70, rel=1e-9)
    assert fisher_exact([[0, 0], [0, 0]]) == 1.0
    assert fisher_exact_fallback([[0, 0], [0, 0]]) == 1.0
    with pytest.raises(ConfigError):
        fisher_exact([[1, 2, 3], [1, 2, 3]])


@given(st.lists(st.integers(0, 25), min_size=4, max_size=4))
def test_fallback_matches_scipy(cells: list[int]) -> None:
    table = [cells[:2], cells[2:]]
    assert math.isclose(fisher_exact_fallback(table), fisher_exact(table), rel_tol=1e-9, abs_tol=1e-12)


@given(st.integers(0, 60), st.integers(1, 60))
def test_wilson_contains_the_estimate(k: int, n: int) -> None:
    k = min(k, n)
    got = wilson(k, n)
    assert 0.0 <= got.low <= k / n <= got.high <= 1.0

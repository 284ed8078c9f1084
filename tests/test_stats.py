"""Wilson intervals, the exact tests, Holm and Newcombe against known values, scipy and statsmodels."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolreplay._errors import ConfigError
from toolreplay._lab.stats import (
    Interval,
    fisher_exact,
    fisher_exact_fallback,
    fisher_greater,
    fisher_greater_fallback,
    holm,
    newcombe,
    one_sided,
    wilson,
)
from toolreplay._lab.summary import summarize


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


# The seed's comparisons (native first) and a few more shapes: a clear effect, a lower native rate, ties,
# all-or-nothing cells.
TABLES = [
    ((14, 14), (20, 27)),
    ((9, 9), (3, 16)),
    ((20, 20), (2, 20)),
    ((5, 20), (7, 20)),
    ((6, 12), (6, 12)),
    ((0, 10), (0, 10)),
    ((10, 10), (10, 10)),
    ((1, 3), (0, 25)),
]


def _records(tables: list[tuple[tuple[int, int], tuple[int, int]]]) -> list[dict[str, str]]:
    """Trial records for one vessel per table: native is the first cell, plain the second."""
    out = []
    for i, ((a, n), (b, m)) in enumerate(tables):
        for mode, called, trials in (("native", a, n), ("plain", b, m)):
            out += [{"vessel": f"v{i}", "mode": mode, "class": "called"}] * called
            out += [{"vessel": f"v{i}", "mode": mode, "class": "neither"}] * (trials - called)
    return out


def _summary_json() -> list[dict[str, Any]]:
    summary = summarize(_records(TABLES), [f"v{i}" for i in range(len(TABLES))], ["plain", "native"])
    doc = json.loads(json.dumps(summary.as_json()))  # what summary.json holds
    comparisons: list[dict[str, Any]] = doc["comparisons"]
    return comparisons


@pytest.mark.slow
def test_summary_matches_scipy_and_statsmodels() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    got = _summary_json()
    assert len(got) == len(TABLES)
    for c, ((a, n), (b, m)) in zip(got, TABLES, strict=True):
        assert c["table"] == [[a, n - a], [b, m - b]] and c["test"] == "boschloo"
        boschloo = scipy_stats.boschloo_exact([[a, b], [n - a, m - b]], alternative="greater").pvalue
        assert math.isclose(c["p_one_sided"], boschloo, rel_tol=1e-9, abs_tol=1e-12)
        two = scipy_stats.fisher_exact([[a, n - a], [b, m - b]]).pvalue
        assert math.isclose(c["p_two_sided"], two, rel_tol=1e-9, abs_tol=1e-12)
        low, high = proportion.confint_proportions_2indep(a, n, b, m, method="newcomb", compare="diff")
        assert c["rate_difference"] == pytest.approx(a / n - b / m, abs=1e-12)
        assert c["rate_difference_ci95"] == [pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9)]
    holm_sm = multitest.multipletests([c["p_one_sided"] for c in got], method="holm")[1]
    assert [c["p_holm"] for c in got] == [pytest.approx(float(p), abs=1e-12) for p in holm_sm]
    # the seed's second comparison: 14 of 14 against 20 of 27 (modes as the fixed totals)
    assert got[0]["p_one_sided"] == pytest.approx(0.0235467, abs=1e-7)
    assert got[0]["p_two_sided"] == pytest.approx(0.0745151, abs=1e-7)


@pytest.mark.slow
def test_pure_python_path_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without scipy the lab names Fisher's one-sided test, and every number still matches the references."""
    scipy_stats = pytest.importorskip("scipy.stats")
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    fisher = scipy_stats.fisher_exact
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # `from scipy.stats import ...` now fails
    got = _summary_json()
    for c, ((a, n), (b, m)) in zip(got, TABLES, strict=True):
        assert c["test"] == "fisher"
        one = fisher([[a, n - a], [b, m - b]], alternative="greater").pvalue
        assert math.isclose(c["p_one_sided"], one, rel_tol=1e-9, abs_tol=1e-12)
        two = fisher([[a, n - a], [b, m - b]]).pvalue
        assert math.isclose(c["p_two_sided"], two, rel_tol=1e-9, abs_tol=1e-12)
        low, high = proportion.confint_proportions_2indep(a, n, b, m, method="newcomb", compare="diff")
        assert c["rate_difference_ci95"] == [pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9)]
    holm_sm = multitest.multipletests([c["p_one_sided"] for c in got], method="holm")[1]
    assert [c["p_holm"] for c in got] == [pytest.approx(float(p), abs=1e-12) for p in holm_sm]
    # the seed's numbers: one-sided 0.040 where two-sided is 0.075
    assert got[0]["p_one_sided"] == pytest.approx(0.0394997, abs=1e-7)


def test_holm_and_newcombe_known_values() -> None:
    # Holm: sorted 0.01, 0.02, 0.04 times 3, 2, 1, made monotone; the order given is kept
    assert holm([0.04, 0.01, 0.02]) == [pytest.approx(0.04), pytest.approx(0.03), pytest.approx(0.04)]
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []
    diff, ci = newcombe(14, 14, 20, 27)
    assert diff == pytest.approx(7 / 27) and (ci.low, ci.high) == (
        pytest.approx(0.0090011, abs=1e-7),
        pytest.approx(0.4467857, abs=1e-7),
    )
    with pytest.raises(ConfigError, match="trials on both sides"):
        newcombe(0, 0, 1, 2)
    assert one_sided([[0, 0], [3, 4]]) in ((1.0, "boschloo"), (1.0, "fisher"))


@given(st.lists(st.integers(0, 25), min_size=4, max_size=4))
def test_one_sided_fallback_matches_scipy(cells: list[int]) -> None:
    table = [cells[:2], cells[2:]]
    assert math.isclose(fisher_greater_fallback(table), fisher_greater(table), rel_tol=1e-9, abs_tol=1e-12)
